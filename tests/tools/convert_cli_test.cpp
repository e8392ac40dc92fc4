// `baton convert`: the summary of a conversion and the errors for directories it cannot read.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/core/formats/hf_import/tiny_hf_llama.h"
#include "tests/temp_file.h"
#include "tests/tools/baton_command.h"

namespace {

using baton::testing::Capture;
using baton::testing::CommandResult;
using baton::testing::run_baton;
using baton::testing::TempDir;
using baton::testing::TempFile;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

CommandResult convert(const std::string& args) {
  return run_baton("convert " + args, Capture::kStdoutAndStderr);
}

// Converts `dir` to a file inside it, which the failing cases must not leave behind.
CommandResult convert_failing(const TempDir& dir) {
  const CommandResult r = convert(dir.str() + " -o " + dir.str() + "/out.gguf");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out.gguf"));
  return r;
}

void write_config(const std::filesystem::path& dir, const std::string& architecture) {
  std::ofstream(dir / "config.json")
      << nlohmann::json{{"architectures", {architecture}}, {"hidden_size", 64},
                        {"intermediate_size", 96},         {"num_hidden_layers", 2},
                        {"num_attention_heads", 4},        {"vocab_size", 300}}
             .dump();
}

TEST(CliConvert, TinyCheckpointPrintsSummaryAndRuns) {
  const TempDir dir("cli_convert_tiny");
  const baton::testing::TinyHfLlama model(dir.path(), {}, 1);
  const TempFile out("cli_convert.gguf");
  const CommandResult r = convert(dir.str() + " -o " + out.str());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "wrote " + out.str() + " (f16) in ")) << r.out;
  EXPECT_TRUE(contains(r.out, "tensors: 21, parameters: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "vocabulary: " + std::to_string(model.vocab_size()) + " tokens"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "size: ")) << r.out;
  const CommandResult run = run_baton("run -m " + out.str() + " -p 'the cat' -n 4 -q");
  EXPECT_EQ(run.exit_code, 0);
}

TEST(CliConvert, CheckpointDirectoryAsModelIsConvertedOnceIntoTheCache) {
  const TempDir dir("cli_convert_as_model");
  const baton::testing::TinyHfLlama model(dir.path(), {}, 1);
  const TempDir cache("cli_convert_cache");
  const TempFile out("cli_convert_f32.gguf");
  ASSERT_EQ(convert(dir.str() + " -o " + out.str() + " --outtype f32").exit_code, 0);
  const std::string generate = " -p 'the cat' -n 8 --temp 0 -q";
  const std::string env = "BATON_CACHE_DIR=" + cache.str();

  const CommandResult first = run_baton("run -m " + dir.str() + generate, Capture::kStderr, env);
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_TRUE(contains(first.out, "converting the Hugging Face checkpoint " + dir.str()))
      << first.out;
  // The checkpoint is float32 (its torch_dtype), so the cached file equals --outtype f32's.
  const CommandResult expected = run_baton("run -m " + out.str() + generate);
  const CommandResult cached = run_baton("run -m " + dir.str() + generate, Capture::kStdout, env);
  EXPECT_EQ(cached.out, expected.out);
  const CommandResult again = run_baton("info -m " + dir.str(), Capture::kStderr, env);
  EXPECT_TRUE(contains(again.out, "using its conversion")) << again.out;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(cache.path() / "converted"),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(CliConvert, MissingDirectoryIsNamed) {
  const CommandResult r = convert("/nonexistent-baton/llama -o /tmp/never.gguf");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "error: /nonexistent-baton/llama does not exist")) << r.out;
}

TEST(CliConvert, DirectoryWithoutConfigIsNamed) {
  const TempDir dir("cli_convert_noconfig");
  const CommandResult r = convert_failing(dir);
  EXPECT_TRUE(contains(r.out, "error: " + dir.str() + " has no config.json")) << r.out;
}

TEST(CliConvert, UnsupportedArchitectureIsNamed) {
  const TempDir dir("cli_convert_gpt2");
  write_config(dir.path(), "GPT2LMHeadModel");
  const CommandResult r = convert_failing(dir);
  EXPECT_TRUE(contains(r.out,
                       "error: config.json: architecture 'GPT2LMHeadModel' is not supported "
                       "(supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
                       "Phi3ForCausalLM, Gemma2ForCausalLM, Qwen3ForCausalLM, "
                       "Gemma3ForCausalLM, Gemma3ForConditionalGeneration, "
                       "SmolLM3ForCausalLM, Olmo2ForCausalLM)"))
      << r.out;
}

TEST(CliConvert, UnigramTokenizerJsonIsNamed) {
  const TempDir dir("cli_convert_tokjson");
  write_config(dir.path(), "LlamaForCausalLM");
  std::ofstream(dir.path() / "tokenizer.json") << R"({"model": {"type": "Unigram"}})";
  const CommandResult r = convert_failing(dir);
  EXPECT_TRUE(contains(r.out,
                       "error: tokenizer.json: model type 'Unigram' is not supported (supported: "
                       "byte-level BPE, SentencePiece-style BPE)"))
      << r.out;
}

TEST(CliConvert, DirectoryWithoutTokenizerIsNamed) {
  const TempDir dir("cli_convert_notok");
  write_config(dir.path(), "LlamaForCausalLM");
  const CommandResult r = convert_failing(dir);
  EXPECT_TRUE(contains(r.out, "has neither tokenizer.model nor tokenizer.json")) << r.out;
}

TEST(CliConvert, UnknownOutTypeIsRejected) {
  const CommandResult r = convert("/tmp -o /tmp/never.gguf --outtype q8_0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "--outtype")) << r.out;
}

}  // namespace
