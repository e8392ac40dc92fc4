// Texts with special tokens and whitespace beside them, tokenized with parse_special=true, must
// give the ids that SentencePiece and Hugging Face `tokenizers` gave
// (tests/core/formats/tokenizer/special_tokens/make_vectors.py wrote the fixtures; llama.cpp agreed
// on every one when they were made).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/core/formats/tokenizer/tokenizer_test_util.h"

namespace baton {
namespace {

std::filesystem::path fixture_dir() {
  return std::filesystem::path(BATON_SOURCE_DIR) / "tests" / "core" / "formats" / "tokenizer" /
         "special_tokens";
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(fixture_dir())) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class SpecialTokenVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(SpecialTokenVectors, MatchSentencePieceAndHuggingFace) {
  BATON_REQUIRE_SHARED_VOCABULARY(
      GetParam(), "Special-token vectors (tests/core/formats/tokenizer/special_tokens)");
  const auto tokenizer =
      testing::load_tokenizer(testing::shared_model("vocab/ggml-vocab-" + GetParam() + ".gguf"));
  const auto cases =
      nlohmann::json::parse(testing::read_file(fixture_dir() / (GetParam() + ".json")));
  ASSERT_GT(cases.size(), 10u);
  for (const auto& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    EXPECT_EQ(tokenizer->encode(text, false, true), c.at("ids").get<std::vector<int32_t>>())
        << GetParam() << ": '" << text << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, SpecialTokenVectors,
                         ::testing::ValuesIn(testing::shared_vocabularies(fixture_names())),
                         testing::vocabulary_test_name);

}  // namespace
}  // namespace baton
