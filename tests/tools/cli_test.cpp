#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/models/reference_cases.h"
#include "tests/test_data.h"
#include "tests/tools/baton_command.h"

namespace {

using baton::testing::CommandResult;

CommandResult baton(const std::string& args, bool merge_stderr = false,
                    const std::string& environment = "") {
  return baton::testing::run_baton(
      args,
      merge_stderr ? baton::testing::Capture::kStdoutAndStderr : baton::testing::Capture::kStdout,
      environment);
}

// The bundled demo model, present in every clone; the end-to-end checks run on it.
std::string model_arg() {
  return "-m " + baton::testing::demo_model().string();
}

// stories260K from ../shared, for the checks against llama2.c's reference outputs.
std::string stories_arg() {
  return "-m " + baton::testing::shared_model("stories260K.gguf").string();
}

#define REQUIRE_STORIES() \
  BATON_REQUIRE_SHARED_FILE(baton::testing::shared_model("stories260K.gguf"))

TEST(Cli, RunGreedyEmptyPromptPrintsTheLlama2cReferenceText) {
  REQUIRE_STORIES();
  const auto ref = baton::testing::reference_case("doc_greedy_empty_prompt");
  const CommandResult r = baton("run " + stories_arg() + " -n 256 --temp 0 -q");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, ref.expected);
}

// The continuation is the one PyTorch computed at export (assets/models/kjv-7m-reference.json).
TEST(Cli, VersionNamesTheVersionCommitCpuKernelsAndPlugins) {
  const CommandResult r = baton("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("baton 0."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(commit "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu kernels: generic avx2 avx512; this CPU runs "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plugins configured: "), std::string::npos) << r.out;
}

TEST(Cli, ConvertHelpNamesEveryFamilyItConverts) {
  const CommandResult r = baton("convert --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Llama/Mistral/Qwen2/Phi-3/Gemma 2"), std::string::npos) << r.out;
}

TEST(Cli, RunWithPromptPrintsPromptAndContinuation) {
  const CommandResult r = baton("run " + model_arg() + " -p 'In the beginning' -n 8 --temp 0 -t 1");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("In the beginning of the LORD, and the LORD,", 0), 0u) << r.out;
}

TEST(Cli, TokenizePrintsIdsAsJson) {
  CommandResult r = baton("tokenize " + model_arg() + " -p 'In the beginning'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json({1, 1038, 261, 1781, 1232}));
  r = baton("tokenize " + model_arg() + " -p 'In the beginning' --no-add-special");
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json({1038, 261, 1781, 1232}));
}

TEST(Cli, TokenizeTreatsSpecialTextAsTextUnlessAsked) {
  const auto plain =
      nlohmann::json::parse(baton("tokenize " + model_arg() + " -p '<s>' --no-add-special").out);
  const auto parsed = nlohmann::json::parse(
      baton("tokenize " + model_arg() + " -p '<s>' --no-add-special --parse-special").out);
  EXPECT_EQ(parsed, nlohmann::json({1}));
  EXPECT_NE(plain, parsed);
}

TEST(Cli, InfoShowsArchitectureShapesAndMetadata) {
  const CommandResult r = baton("info " + model_arg());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("model: llama, 8 layers, n_embd 256, 8 heads (4 kv heads"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("blk.0.attn_q.weight"), std::string::npos);
  EXPECT_NE(r.out.find("tokenizer.ggml.model"), std::string::npos);
}

TEST(Cli, BackendsListsCpuAsUsable) {
  const CommandResult r = baton("backends");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("cpu          usable"), std::string::npos) << r.out;
}

TEST(Cli, BackendsNamesTheKernelLevelAndRejectsAnIsaTheCpuLacks) {
  EXPECT_NE(baton("backends").out.find(" kernels"), std::string::npos);
  const CommandResult r = baton("backends", false, "BATON_CPU_ISA=avx1024");
  EXPECT_NE(r.out.find("cpu          unusable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("BATON_CPU_ISA='avx1024' is not one of generic, avx2, avx512"),
            std::string::npos)
      << r.out;
}

TEST(Cli, UnknownBackendFailsWithTheAvailableList) {
  const CommandResult r = baton("run " + model_arg() + " --backend tpu9 -n 1", true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("unknown backend 'tpu9'; available: cpu"), std::string::npos) << r.out;
}

TEST(Cli, CorruptModelFailsCleanly) {
  const auto path = std::filesystem::temp_directory_path() / "baton_cli_corrupt.gguf";
  std::ofstream(path, std::ios::binary) << "GGUF\x03\0\0\0garbage";
  const CommandResult r = baton("run -m " + path.string() + " -n 1", true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("error: "), std::string::npos) << r.out;
  std::filesystem::remove(path);
}

TEST(Cli, BatchRunsAJsonlFileAndWritesResultsInOrder) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto in = dir / "baton_batch_in.jsonl", out = dir / "baton_batch_out.jsonl";
  std::ofstream(in) << R"({"prompt": "In the beginning", "max_tokens": 16, "temperature": 0})"
                    << "\n\n"
                    << R"({"prompt": "In the beginning", "max_tokens": 30, "temperature": 0,)"
                    << R"( "stop": ["and"]})"
                    << "\n";
  const CommandResult r =
      baton("batch " + model_arg() + " --input " + in.string() + " --output " + out.string());
  ASSERT_EQ(r.exit_code, 0);
  std::ifstream results(out);
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(results, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["index"], 0);
  EXPECT_EQ(lines[0]["token_ids"].size(), 16u);
  EXPECT_EQ(lines[0]["finish_reason"], "length");
  EXPECT_EQ(lines[1]["text"], " of the LORD, ");
  EXPECT_EQ(lines[1]["finish_reason"], "stop");
  std::filesystem::remove(in);
  std::filesystem::remove(out);
}

TEST(Cli, BatchRejectsABadLineNamingItAndTheField) {
  const auto in = std::filesystem::temp_directory_path() / "baton_batch_bad.jsonl";
  std::ofstream(in) << R"({"prompt": "ok"})"
                    << "\n"
                    << R"({"prompt": "x", "top_p": "high"})";
  const CommandResult r = baton("batch " + model_arg() + " --input " + in.string(), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("line 2: field 'top_p'"), std::string::npos) << r.out;
  std::filesystem::remove(in);
}

TEST(Cli, WithoutModelFlagRunsTheBundledDemoModel) {
  const CommandResult r = baton("run -p \"In the beginning\" -n 8 --temp 0", true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("using the bundled demo model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("In the beginning"), std::string::npos) << r.out;
}

}  // namespace
