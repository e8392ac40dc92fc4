// llama.cpp's tokenizer test vectors (../shared/models/vocab/*.gguf.inp/.out): every input must
// tokenize to exactly the recorded ids with add_special=false and parse_special=false.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/formats/tokenizer/tokenizer.h"
#include "tests/core/formats/tokenizer/tokenizer_test_util.h"
#include "tests/test_data.h"

namespace baton {
namespace {

std::vector<std::string> split_inputs(const std::string& text) {
  constexpr std::string_view kSeparator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  size_t start = 0;
  for (size_t at = text.find(kSeparator); at != std::string::npos;
       at = text.find(kSeparator, start)) {
    inputs.push_back(text.substr(start, at - start));
    start = at + kSeparator.size();
  }
  return inputs;
}

std::vector<std::vector<int32_t>> parse_outputs(const std::string& text) {
  std::vector<std::vector<int32_t>> outputs;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream numbers(line);
    std::vector<int32_t>& ids = outputs.emplace_back();
    for (int32_t id; numbers >> id;) ids.push_back(id);
  }
  return outputs;
}

std::string join(const std::vector<int32_t>& ids) {
  std::string text;
  for (const int32_t id : ids) {
    text += ' ';
    text += std::to_string(id);
  }
  return text;
}

class ReferenceVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceVectors, ReproducesEveryTokenSequence) {
  BATON_REQUIRE_SHARED_VOCABULARY(GetParam(), "llama.cpp's tokenizer test vectors");
  const std::string name = "vocab/ggml-vocab-" + GetParam() + ".gguf";
  const auto inp = testing::shared_model(name + ".inp");
  const auto gguf = testing::shared_model(name);
  const auto tokenizer = testing::load_tokenizer(gguf);
  const std::vector<std::string> inputs = split_inputs(testing::read_file(inp));
  const auto outputs = parse_outputs(testing::read_file(testing::shared_model(name + ".out")));
  ASSERT_EQ(inputs.size(), outputs.size());

  size_t passed = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int32_t> ids = tokenizer->encode(inputs[i], false, false);
    if (ids == outputs[i]) {
      ++passed;
    } else {
      ADD_FAILURE() << GetParam() << " input " << i << " '" << inputs[i] << "'\n  expected"
                    << join(outputs[i]) << "\n  got     " << join(ids);
    }
  }
  std::printf("[ %s ] %zu/%zu reference inputs match\n", GetParam().c_str(), passed, inputs.size());
}

// ../shared also has vectors for llama-bpe and qwen2, but not their GGUFs.
INSTANTIATE_TEST_SUITE_P(Vocabularies, ReferenceVectors,
                         ::testing::ValuesIn(testing::shared_vocabularies(
                             {"llama-spm", "phi-3", "gpt-2", "falcon", "mpt", "starcoder", "refact",
                              "deepseek-llm", "deepseek-coder", "bert-bge"},
                             ".inp")),
                         testing::vocabulary_test_name);

// Every vocabulary in ../shared, including those without vectors (Baichuan, GPT-NeoX), must
// give the reference inputs back unchanged from decode(encode(text)).
class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, DecodeGivesBackTheEncodedText) {
  BATON_REQUIRE_SHARED_VOCABULARY(GetParam(), "Round trips through llama.cpp's vocabularies");
  const auto gguf = testing::shared_model("vocab/ggml-vocab-" + GetParam() + ".gguf");
  const auto inp = testing::shared_model("vocab/ggml-vocab-gpt-2.gguf.inp");
  BATON_REQUIRE_SHARED_FILE(inp);
  const auto tokenizer = testing::load_tokenizer(gguf);
  for (const std::string& input : split_inputs(testing::read_file(inp))) {
    EXPECT_EQ(tokenizer->decode(tokenizer->encode(input, true, false)), input);
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, RoundTrip,
                         ::testing::ValuesIn(testing::shared_vocabularies(
                             {"llama-spm", "phi-3", "baichuan", "gpt-2", "gpt-neox", "falcon",
                              "mpt", "starcoder", "refact", "deepseek-llm", "deepseek-coder"})),
                         testing::vocabulary_test_name);

}  // namespace
}  // namespace baton
