#include "core/formats/tokenizer/pre_tokenizer.h"

#include <algorithm>

#include "baton/error.h"

namespace baton {

namespace {

// Regex lists per variant, as llama.cpp's llama-vocab.cpp applies them (which follow each
// model's tokenizer.json). Non-ASCII characters are written as \x{...} escapes.

// GPT-2: contractions, letter runs, digit runs, other symbols, each with an optional leading
// space; trailing whitespace stays separate from the next word.
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Llama 3: case-insensitive contractions, numbers in groups of up to three, newlines kept with
// the whitespace before them.
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Qwen2: as Llama 3, but every digit is its own word.
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+)"
    R"(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// GPT-4o's o200k (Phi-4-mini): a word is a run of upper-case letters then lower-case ones, or
// lower-case ones alone, with a contraction after it rather than before; numbers in groups of
// three; a slash kept with the symbols before a newline. Written as its tokenizer.json has it.
constexpr const char* kGpt4o =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)"
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+)"
    R"([\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+)"
    R"([\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// CJK ideographs, a wide block before them, and Hangul syllables (DeepSeek).
constexpr const char* kDeepSeekCjk = R"([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";

// DeepSeek LLM: cased letters of Latin, Greek, Cyrillic, Armenian, Georgian, Cherokee and other
// bicameral scripts, spelled as explicit ranges.
constexpr const char* kDeepSeekLlmLetters =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})"
    R"(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A})"
    R"(\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556})"
    R"(\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})"
    R"(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D})"
    R"(\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D})"
    R"(\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4})"
    R"(\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4})"
    R"(\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124})"
    R"(\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F})"
    R"(\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4})"
    R"(\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F})"
    R"(\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17})"
    R"(\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3})"
    R"(\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF})"
    R"(\x{1E900}-\x{1E943}]+)";

// DeepSeek LLM: ASCII and full-width punctuation, curly quotes, ideographic space and stops.
constexpr const char* kDeepSeekLlmPunctuation =
    R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)";

struct Variant {
  std::vector<std::string_view> names;
  std::vector<const char*> regexes;
  bool ignore_merges = false;
  // The Split regex of a tokenizer.json whose words these are, as the file writes it.
  std::string_view tokenizer_json_split = {};
};

// Llama 3's and Qwen2's Split regexes as their tokenizer.json files write them.
constexpr std::string_view kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*)"
    R"(|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*)"
    R"(|\s*[\r\n]+|\s+(?!\S)|\s+)";

const std::vector<Variant>& variants() {
  static const std::vector<Variant> table = {
      // GPT-NeoX and GGUFs converted without a pre-tokenizer name.
      {{"default", ""}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
      {{"gpt-2", "phi-2", "mpt", "olmo", "jais", "jina-es", "jina-de", "jina-v1-en", "jina-v2-es",
        "jina-v2-de", "jina-v2-code", "roberta-bpe", "exaone4"},
       {kGpt2}},
      {{"llama-bpe", "llama3", "llama-v3", "falcon3", "pixtral"}, {kLlama3}, true, kLlama3Split},
      {{"dbrx", "smaug-bpe", "chatglm-bpe", "glm4"}, {kLlama3}},
      {{"qwen2", "stablelm2", "deepseek-r1-qwen", "megrez", "hunyuan"},
       {kQwen2},
       false,
       kQwen2Split},
      {{"gpt-4o", "llama4"}, {kGpt4o}, false, kGpt4o},
      {{"deepseek-llm"},
       {R"([\r\n])", kDeepSeekLlmLetters, kDeepSeekLlmPunctuation, R"(\s+$)", kDeepSeekCjk,
        R"(\p{N}+)"}},
      {{"deepseek-coder"}, {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepSeekCjk, R"(\p{N})"}},
      {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
       {R"(\p{N})", kGpt2}},
  };
  return table;
}

const Variant* find_variant(std::string_view name) {
  for (const Variant& variant : variants()) {
    if (std::find(variant.names.begin(), variant.names.end(), name) != variant.names.end()) {
      return &variant;
    }
  }
  return nullptr;
}

}  // namespace

bool PreTokenizer::is_known(std::string_view variant) {
  return find_variant(variant) != nullptr;
}

std::string_view PreTokenizer::variant_of_split(std::string_view regex) {
  for (const Variant& variant : variants()) {
    if (!variant.tokenizer_json_split.empty() && variant.tokenizer_json_split == regex) {
      return variant.names.front();
    }
  }
  return {};
}

PreTokenizer::PreTokenizer(std::string_view variant) {
  const Variant* found = find_variant(variant);
  if (found == nullptr) {
    throw Error(ErrorCategory::kUnsupported,
                "unknown pre-tokenizer '" + std::string(variant) + "' (tokenizer.ggml.pre)");
  }
  for (const char* regex : found->regexes) regexes_.emplace_back(regex);
  ignore_merges_ = found->ignore_merges;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (text.empty()) return pieces;
  pieces.push_back(text);
  std::vector<std::string_view> next;
  for (const RegexSplitter& regex : regexes_) {
    next.clear();
    for (const std::string_view piece : pieces) regex.split(piece, next);
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace baton
