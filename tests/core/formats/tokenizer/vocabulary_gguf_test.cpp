#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <functional>

#include "baton/error.h"
#include "core/formats/gguf/gguf_writer.h"
#include "core/formats/tokenizer/tokenizer.h"

namespace baton {
namespace {

// Writes a vocabulary-only GGUF with the keys `fill` adds and reads its Vocabulary back.
Vocabulary read_back(const std::function<void(gguf::GgufWriter&)>& fill) {
  gguf::GgufWriter writer;
  writer.add_string("general.architecture", "llama");
  fill(writer);
  const auto path = std::filesystem::temp_directory_path() /
                    ("baton_vocab_test_" + std::to_string(getpid()) + ".gguf");
  writer.write(path);
  struct Remove {
    std::filesystem::path path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{path};
  return vocabulary_from_gguf(gguf::GgufFile::open(path));
}

void expect_error(const std::function<void(gguf::GgufWriter&)>& fill, ErrorCategory category,
                  const std::string& named) {
  try {
    read_back(fill);
    FAIL() << "expected an error naming " << named;
  } catch (const Error& error) {
    EXPECT_EQ(error.category(), category) << error.what();
    EXPECT_NE(std::string(error.what()).find(named), std::string::npos) << error.what();
  }
}

void spm_tokens(gguf::GgufWriter& w) {
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>",
                                               "\xE2\x96\x81"
                                               "a",
                                               "<|im_end|>"});
}

TEST(VocabularyFromGguf, AppliesLlamaCppDefaultsForSentencePiece) {
  const Vocabulary v = read_back(spm_tokens);
  EXPECT_EQ(v.model, "llama");
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_FALSE(v.add_eos);
  EXPECT_TRUE(v.add_space_prefix);
  // Found by its spelling, as llama.cpp does.
  EXPECT_EQ(v.eot, 4);
}

TEST(VocabularyFromGguf, ReadsIdsAndFlagsAndTreatsAllOnesAsNone) {
  const Vocabulary v = read_back([](gguf::GgufWriter& w) {
    spm_tokens(w);
    w.add_uint32("tokenizer.ggml.bos_token_id", 3);
    w.add_uint32("tokenizer.ggml.seperator_token_id", 0xFFFFFFFF);
    w.add_bool("tokenizer.ggml.add_bos_token", false);
    w.add_bool("tokenizer.ggml.add_eos_token", true);
    w.add_bool("tokenizer.ggml.add_space_prefix", false);
    w.add_float32_array("tokenizer.ggml.scores", std::vector<float>{0, 0, 0, -1, 0});
    w.add_int32_array("tokenizer.ggml.token_type", std::vector<int32_t>{2, 3, 3, 1, 3});
  });
  EXPECT_EQ(v.bos, 3);
  EXPECT_EQ(v.sep, -1);
  EXPECT_FALSE(v.add_bos);
  EXPECT_TRUE(v.add_eos);
  EXPECT_FALSE(v.add_space_prefix);
  EXPECT_EQ(v.scores[3], -1.0f);
  EXPECT_EQ(v.token_types[1], TokenType::kControl);
}

TEST(VocabularyFromGguf, ByteLevelBpeNeedsMergesAndAKnownPreTokenizer) {
  const auto bpe = [](const char* pre) {
    return [pre](gguf::GgufWriter& w) {
      w.add_string("tokenizer.ggml.model", "gpt2");
      if (pre) w.add_string("tokenizer.ggml.pre", pre);
      w.add_string_array("tokenizer.ggml.tokens", {"a", "b", "ab"});
      w.add_string_array("tokenizer.ggml.merges", {"a b"});
    };
  };
  const Vocabulary v = read_back(bpe("llama-bpe"));
  EXPECT_EQ(v.merges, std::vector<std::string>{"a b"});
  EXPECT_FALSE(v.add_space_prefix);
  EXPECT_TRUE(v.add_bos);  // Llama 3 adds BOS when the flag is absent
  EXPECT_FALSE(read_back(bpe("gpt-2")).add_bos);
  EXPECT_EQ(read_back(bpe(nullptr)).pre, "");
  expect_error(bpe("mystery-pre"), ErrorCategory::kUnsupported, "mystery-pre");
  expect_error(
      [](gguf::GgufWriter& w) {
        w.add_string("tokenizer.ggml.model", "gpt2");
        w.add_string("tokenizer.ggml.pre", "gpt-2");
        w.add_string_array("tokenizer.ggml.tokens", {"a"});
      },
      ErrorCategory::kInvalidModel, "tokenizer.ggml.merges");
}

TEST(VocabularyFromGguf, NamesBadKeys) {
  expect_error(
      [](gguf::GgufWriter& w) {
        w.add_string("tokenizer.ggml.model", "t5");
        w.add_string_array("tokenizer.ggml.tokens", {"a"});
      },
      ErrorCategory::kUnsupported, "t5");
  expect_error([](gguf::GgufWriter&) {}, ErrorCategory::kInvalidModel, "tokenizer.ggml.model");
  expect_error(
      [](gguf::GgufWriter& w) {
        spm_tokens(w);
        w.add_int32_array("tokenizer.ggml.token_type", std::vector<int32_t>{1, 1});
      },
      ErrorCategory::kInvalidModel, "tokenizer.ggml.token_type");
}

// "<unk>", "<s>", "</s>" (user-defined, as in the phi-3 GGUF), "<|end|>", "<|endoftext|>", "a".
void phi3_tokens(gguf::GgufWriter& w) {
  w.add_string("general.name", "Phi3");
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string_array("tokenizer.ggml.tokens",
                     {"<unk>", "<s>", "</s>", "<|end|>", "<|endoftext|>", "a"});
  w.add_int32_array("tokenizer.ggml.token_type", std::vector<int32_t>{3, 3, 4, 3, 3, 1});
}

TEST(VocabularyFromGguf, TokenFlagsFollowLlamaCppPerModelRulesWhenTheFileHasNone) {
  EXPECT_EQ(read_back(phi3_tokens).token_flags,
            (std::vector<uint8_t>{0, 0, kTokenRstrip, kTokenRstrip, 0, 0}));
  EXPECT_TRUE(read_back(spm_tokens).token_flags.empty());
  const Vocabulary modern_bert = read_back([](gguf::GgufWriter& w) {
    w.add_string("general.name", "Modern-BERT base");
    w.add_string("tokenizer.ggml.model", "bert");
    w.add_string_array("tokenizer.ggml.tokens", {"[PAD]", "[MASK]", "a"});
  });
  EXPECT_EQ(modern_bert.token_flags, (std::vector<uint8_t>{0, kTokenLstrip, 0}));
}

TEST(VocabularyFromGguf, TokenFlagKeysOverrideThePerModelRules) {
  const Vocabulary v = read_back([](gguf::GgufWriter& w) {
    phi3_tokens(w);
    w.add_int32_array(std::string(kLstripIdsKey), std::vector<int32_t>{4});
    w.add_int32_array(std::string(kRstripIdsKey), std::vector<int32_t>{});
    w.add_int32_array(std::string(kSingleWordIdsKey), std::vector<int32_t>{3, 4});
  });
  EXPECT_EQ(v.token_flags,
            (std::vector<uint8_t>{0, 0, 0, kTokenSingleWord, kTokenLstrip | kTokenSingleWord, 0}));
  const Vocabulary none = read_back([](gguf::GgufWriter& w) {
    phi3_tokens(w);
    w.add_int32_array(std::string(kRstripIdsKey), std::vector<int32_t>{});
  });
  EXPECT_TRUE(none.token_flags.empty());
  expect_error(
      [](gguf::GgufWriter& w) {
        phi3_tokens(w);
        w.add_int32_array(std::string(kRstripIdsKey), std::vector<int32_t>{6});
      },
      ErrorCategory::kInvalidModel, std::string(kRstripIdsKey) + " names token 6");
}

}  // namespace
}  // namespace baton
