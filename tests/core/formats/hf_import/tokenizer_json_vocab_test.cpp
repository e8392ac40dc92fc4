// The tokenizer.json reader on hand-written files: what it maps and what it rejects. The
// Python test tests/tools/hf_tokenizer_json_test.py checks real files of the tokenizers library
// against its own tokenization.

#include "core/formats/hf_import/tokenizer_json_vocab.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "baton/error.h"
#include "tests/temp_file.h"

namespace baton::hf {
namespace {

using nlohmann::json;

const json kByteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};

json tokenizer_json() {
  return {
      {"model",
       {{"type", "BPE"},
        {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}, {"<|end|>", 3}}},
        {"merges", json::array({"a b"})}}},
      {"pre_tokenizer", kByteLevel},
      {"added_tokens", json::array({{{"id", 3}, {"content", "<|end|>"}, {"special", true}},
                                    {{"id", 4}, {"content", "user word"}, {"special", false}}})}};
}

class TokenizerJsonVocab : public ::testing::Test {
 protected:
  HfVocab read(const json& tokenizer, const json& tokenizer_config = json::object()) {
    std::ofstream(dir_.path() / "tokenizer.json") << tokenizer.dump();
    std::ofstream(dir_.path() / "tokenizer_config.json") << tokenizer_config.dump();
    return read_tokenizer_json_vocab(dir_.path(), config_);
  }
  void expect_error(const json& tokenizer, ErrorCategory category, const std::string& part) {
    try {
      read(tokenizer);
      ADD_FAILURE() << "no error; expected one containing: " << part;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), category) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
  LlamaConfig config_{.vocab_size = 6};

 private:
  testing::TempDir dir_{"tokenizer_json_vocab"};
};

TEST_F(TokenizerJsonVocab, MapsTokensMergesAddedTokensAndPadding) {
  const HfVocab v = read(tokenizer_json(), {{"eos_token", "<|end|>"}});
  EXPECT_EQ(v.model, "gpt2");
  EXPECT_EQ(v.pre, "gpt-2");
  EXPECT_EQ(v.tokens, (std::vector<std::string>{"a", "b", "ab", "<|end|>", "user word", "[PAD5]"}));
  EXPECT_EQ(v.types, (std::vector<int32_t>{1, 1, 1, 3, 4, 5}));
  EXPECT_EQ(v.merges, std::vector<std::string>{"a b"});
  EXPECT_TRUE(v.scores.empty());
  EXPECT_EQ(v.eos, 3);
  EXPECT_EQ(v.bos, -1);
  EXPECT_FALSE(v.add_bos);
}

TEST_F(TokenizerJsonVocab, KeepsTheAddedTokensLstripRstripAndSingleWordFlags) {
  json t = tokenizer_json();
  t["added_tokens"][0]["rstrip"] = true;
  t["added_tokens"][1]["lstrip"] = true;
  t["added_tokens"][1]["single_word"] = true;
  EXPECT_EQ(read(t).token_flags,
            (std::vector<uint8_t>{0, 0, 0, kTokenRstrip, kTokenLstrip | kTokenSingleWord, 0}));
  // Flags that are all false are still a statement: no per-model rule may add any.
  EXPECT_EQ(read(tokenizer_json()).token_flags, std::vector<uint8_t>(6, 0));
  t["added_tokens"][0]["rstrip"] = "yes";
  expect_error(t, ErrorCategory::kInvalidModel, "rstrip");
}

TEST_F(TokenizerJsonVocab, PairMergesAndATemplateThatAddsBos) {
  json t = tokenizer_json();
  t["model"]["merges"] = json::array({json::array({"a", "b"})});
  t["post_processor"] = {{"type", "TemplateProcessing"},
                         {"single", json::array({{{"SpecialToken", {{"id", "<|end|>"}}}},
                                                 {{"Sequence", {{"id", "A"}}}}})}};
  config_.bos_token_id = 3;
  const HfVocab v = read(t);
  EXPECT_EQ(v.merges, std::vector<std::string>{"a b"});
  EXPECT_TRUE(v.add_bos);
  EXPECT_EQ(v.bos, 3);
}

TEST_F(TokenizerJsonVocab, NamesThePreTokenizersItImplements) {
  const auto split_then_byte_level = [](const std::string& regex) {
    return json{
        {"type", "Sequence"},
        {"pretokenizers",
         json::array(
             {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}},
              {{"type", "ByteLevel"}, {"use_regex", false}}})}};
  };
  EXPECT_EQ(
      pre_tokenizer_name(split_then_byte_level(
          R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)")),
      "llama-bpe");
  EXPECT_EQ(
      pre_tokenizer_name(split_then_byte_level(
          R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)")),
      "qwen2");
  // Phi-4-mini's (GPT-4o's o200k).
  EXPECT_EQ(
      pre_tokenizer_name(split_then_byte_level(
          R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)")),
      "gpt-4o");
  EXPECT_EQ(pre_tokenizer_name(
                {{"type", "Sequence"},
                 {"pretokenizers",
                  json::array({{{"type", "Digits"}, {"individual_digits", true}}, kByteLevel})}}),
            "starcoder");
  EXPECT_THROW(pre_tokenizer_name(split_then_byte_level(R"(\p{L}+)")), Error);
  EXPECT_THROW(pre_tokenizer_name({{"type", "Metaspace"}}), Error);
}

// Llama 2's tokenizer.json layout: byte fallback, "▁" for spaces, <unk> <s> </s> as added
// tokens, then <0xXX> byte tokens.
json sentencepiece_style() {
  const std::string space = "\u2581";
  return {{"model",
           {{"type", "BPE"},
            {"byte_fallback", true},
            {"unk_token", "<unk>"},
            {"vocab",
             {{"<unk>", 0},
              {"<s>", 1},
              {"</s>", 2},
              {"<0x0A>", 3},
              {space, 4},
              {"a", 5},
              {space + "a", 6}}},
            {"merges", json::array({space + " a"})}}},
          {"normalizer",
           {{"type", "Sequence"},
            {"normalizers",
             json::array(
                 {{{"type", "Prepend"}, {"prepend", space}},
                  {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", space}}})}}},
          {"pre_tokenizer", nullptr},
          {"added_tokens", json::array({{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                                        {{"id", 1}, {"content", "<s>"}, {"special", true}},
                                        {{"id", 2}, {"content", "</s>"}, {"special", true}}})}};
}

TEST_F(TokenizerJsonVocab, SentencePieceStyleBpeBecomesALlamaVocabularyScoredByMergeRank) {
  config_.vocab_size = 8;
  const HfVocab v = read(sentencepiece_style(), {{"bos_token", "<s>"}, {"eos_token", "</s>"}});
  EXPECT_EQ(v.model, "llama");
  EXPECT_TRUE(v.merges.empty());
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(v.unk, 0);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  const auto type = [&](int id) { return static_cast<TokenType>(v.types[id]); };
  EXPECT_EQ(type(0), TokenType::kUnknown);
  EXPECT_EQ(type(1), TokenType::kControl);
  EXPECT_EQ(type(3), TokenType::kByte);
  EXPECT_EQ(type(6), TokenType::kNormal);
  EXPECT_EQ(type(7), TokenType::kUnused);
  ASSERT_EQ(v.scores.size(), 8u);
  EXPECT_EQ(v.scores[6], 0.0f);   // made by merge 0
  EXPECT_LT(v.scores[5], -1e6f);  // no merge makes "a"

  json metaspace = sentencepiece_style();
  metaspace["normalizer"] = nullptr;
  metaspace["pre_tokenizer"] = {
      {"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "never"}};
  EXPECT_FALSE(read(metaspace).add_space_prefix);
  metaspace["pre_tokenizer"]["prepend_scheme"] = "first";
  EXPECT_TRUE(read(metaspace).add_space_prefix);
  metaspace["normalizer"] = {{"type", "NFKC"}};
  expect_error(metaspace, ErrorCategory::kUnsupported, "before a Metaspace pre-tokenizer");
}

TEST_F(TokenizerJsonVocab, RejectsWhatItCannotConvertNamingIt) {
  json t = tokenizer_json();
  t["model"]["byte_fallback"] = true;  // SentencePiece-style, but with a byte-level pre-tokenizer
  expect_error(t, ErrorCategory::kUnsupported, "not supported with a SentencePiece-style BPE");
  t["pre_tokenizer"] = nullptr;
  t["normalizer"] = {{"type", "Lowercase"}};
  expect_error(t, ErrorCategory::kUnsupported, "normalizer {\"type\":\"Lowercase\"}");

  t = tokenizer_json();
  t["normalizer"] = {{"type", "NFKC"}};
  expect_error(t, ErrorCategory::kUnsupported, "normalizer {\"type\":\"NFKC\"}");

  t = tokenizer_json();
  t["model"]["merges"] = json::array({"a c"});
  expect_error(t, ErrorCategory::kInvalidModel, "uses 'c', which model.vocab lacks");

  t = tokenizer_json();
  t["model"]["merges"] = json::array({"abc"});
  expect_error(t, ErrorCategory::kInvalidModel, "merge \"abc\" is not two tokens");

  t = tokenizer_json();
  t["model"]["vocab"]["zz"] = 9;
  expect_error(t, ErrorCategory::kInvalidModel,
               "token 'zz' has id 9, outside config.json's vocab_size 6");

  t = tokenizer_json();
  t["model"].erase("vocab");
  expect_error(t, ErrorCategory::kInvalidModel, "model.vocab is not an object");

  // Found by tests/fuzz: a value of another type where a setting is read escaped the reader as
  // nlohmann's exception rather than an Error.
  t = tokenizer_json();
  t["model"]["byte_fallback"] = json::array();
  expect_error(t, ErrorCategory::kInvalidModel, "a field holds a value of the wrong type");
  t = tokenizer_json();
  t["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", json::array({1, 2})}};
  expect_error(t, ErrorCategory::kInvalidModel, "a field holds a value of the wrong type");
}

}  // namespace
}  // namespace baton::hf
