#include "core/formats/tokenizer/wordpiece_tokenizer.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>

#include "baton/error.h"
#include "core/formats/tokenizer/special_tokens.h"
#include "core/formats/tokenizer/utf8.h"

namespace baton {

namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // U+2581 "▁"

// The CJK ranges BERT's tokenizer gives a word each (Hugging Face's list, including its
// 0x2B920 lower bound for Extension E).
bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_whitespace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || u_charType(c) == U_SPACE_SEPARATOR;
}

// Control and format characters (but not tab and newlines, which count as whitespace) are
// dropped, as are NUL and U+FFFD.
bool is_dropped(char32_t c) {
  if (c == 0 || c == utf8::kReplacement) return true;
  if (c == '\t' || c == '\n' || c == '\r') return false;
  const int8_t type = u_charType(c);
  return type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_UNASSIGNED ||
         type == U_PRIVATE_USE_CHAR || type == U_SURROGATE;
}

bool is_punctuation(char32_t c) {
  // ASCII symbols such as "$" and "^" split words too, as in BERT.
  if (c < 0x7F && c > 0x20 && !u_isalnum(c)) return true;
  return u_ispunct(c);
}

// NFD, then drop combining marks: "é" becomes "e".
std::u32string strip_accents(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  if (U_FAILURE(status)) throw Error(ErrorCategory::kInternal, "ICU NFD normalizer unavailable");
  const icu::UnicodeString decomposed = nfd->normalize(
      icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), text.size())), status);
  if (U_FAILURE(status)) throw Error(ErrorCategory::kInternal, "ICU NFD normalization failed");
  std::u32string out;
  for (int32_t i = 0; i < decomposed.length(); i = decomposed.moveIndex32(i, 1)) {
    const char32_t c = decomposed.char32At(i);
    if (u_charType(c) != U_NON_SPACING_MARK) out += c;
  }
  return out;
}

}  // namespace

std::vector<std::string> bert_words(std::string_view text) {
  std::vector<std::string> words(1);
  const auto end_word = [&] {
    if (!words.back().empty()) words.emplace_back();
  };
  for (const char32_t original : strip_accents(utf8::sanitize(text))) {
    if (is_whitespace(original)) {
      end_word();
      continue;
    }
    if (is_dropped(original)) continue;
    const auto c = static_cast<char32_t>(u_tolower(original));
    if (is_punctuation(c) || is_cjk(c)) {
      end_word();
      utf8::append(words.back(), c);
      words.emplace_back();
    } else {
      utf8::append(words.back(), c);
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

WordPieceTokenizer::WordPieceTokenizer(Vocabulary vocabulary)
    : Tokenizer(std::move(vocabulary)),
      index_(vocabulary_),
      pieces_(vocabulary_, [](std::string_view text) {
        std::string piece(text);
        if (piece.starts_with(kWordStart)) piece.replace(0, kWordStart.size(), " ");
        return piece;
      }) {
  for (const std::string& token : vocabulary_.tokens) {
    longest_token_ = std::max(longest_token_, token.size());
  }
}

std::vector<int32_t> WordPieceTokenizer::encode(std::string_view text, bool add_special,
                                                bool parse_special) const {
  std::vector<int32_t> out;
  const int32_t start = vocabulary_.cls >= 0 ? vocabulary_.cls : vocabulary_.bos;
  if (add_special && start >= 0) out.push_back(start);
  for (const Fragment& fragment : split_special_tokens(text, vocabulary_, index_, parse_special)) {
    if (fragment.token >= 0) {
      out.push_back(fragment.token);
      continue;
    }
    for (const std::string& word : bert_words(fragment.text)) encode_word(word, out);
  }
  if (add_special && vocabulary_.sep >= 0) out.push_back(vocabulary_.sep);
  return out;
}

void WordPieceTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  const std::string spelled = std::string(kWordStart) + std::string(word);
  const size_t start = out.size();
  for (size_t pos = 0; pos < spelled.size();) {
    int32_t id = -1;
    size_t length = std::min(longest_token_, spelled.size() - pos);
    for (; length > 0; --length) {
      id = index_.find(std::string_view(spelled).substr(pos, length));
      if (id >= 0) break;
    }
    if (id < 0) {
      out.resize(start);
      if (vocabulary_.unk >= 0) out.push_back(vocabulary_.unk);
      return;
    }
    out.push_back(id);
    pos += length;
  }
}

std::string WordPieceTokenizer::token_to_piece(int32_t id, bool render_special) const {
  return pieces_.piece(id, render_special);
}

}  // namespace baton
