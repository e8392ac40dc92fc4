// The tokenizer.json reader on hand-written files: what it maps and what it rejects. The
// Python test tests/tools/hf_tokenizer_json_test.py checks real files of the tokenizers library
// against its own tokenization.

#include "models/hf_import/tokenizer_json_vocab.h"

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
  EXPECT_EQ(pre_tokenizer_name(
                {{"type", "Sequence"},
                 {"pretokenizers",
                  json::array({{{"type", "Digits"}, {"individual_digits", true}}, kByteLevel})}}),
            "starcoder");
  EXPECT_THROW(pre_tokenizer_name(split_then_byte_level(R"(\p{L}+)")), Error);
  EXPECT_THROW(pre_tokenizer_name({{"type", "Metaspace"}}), Error);
}

TEST_F(TokenizerJsonVocab, RejectsWhatItCannotConvertNamingIt) {
  json t = tokenizer_json();
  t["model"]["byte_fallback"] = true;
  expect_error(t, ErrorCategory::kUnsupported, "byte_fallback");

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
}

}  // namespace
}  // namespace baton::hf
