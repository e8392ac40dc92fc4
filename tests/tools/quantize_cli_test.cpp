// `baton quantize`: progress, the summary with per-tensor fallbacks, and its errors.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/formats/gguf/gguf_file.h"
#include "core/formats/gguf/gguf_writer.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"
#include "tests/tools/baton_command.h"

namespace {

using baton::testing::Capture;
using baton::testing::CommandResult;
using baton::testing::run_baton;
using baton::testing::TempFile;

std::string demo() {
  return baton::testing::demo_model().string();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// An F32 model of stories260K's shape, with the demo model's vocabulary: rows of 64 and 172,
// which are not whole K-quant blocks.
TEST(CliQuantize, RowsOf64And172PrintProgressFallbacksAndSummary) {
  TempFile in("rows_f32.gguf"), out("q4_k_m.gguf");
  ASSERT_EQ(run_baton("synth --n-embd 64 --n-layer 5 --n-head 8 --n-head-kv 4 --n-ff 172 "
                      "--type f32 --vocab-from " +
                      demo() + " -o " + in.str())
                .exit_code,
            0);
  const CommandResult summary =
      run_baton("quantize " + in.str() + " " + out.str() + " --type q4_k_m --threads 2");
  ASSERT_EQ(summary.exit_code, 0) << summary.out;
  EXPECT_TRUE(contains(summary.out, "tensors: 48 (")) << summary.out;
  EXPECT_TRUE(contains(summary.out,
                       "fallback: output.weight has rows of 64, not whole q6_K "
                       "blocks: q8_0"))
      << summary.out;
  EXPECT_TRUE(contains(summary.out,
                       "fallback: blk.2.ffn_down.weight has rows of 172, not whole "
                       "q6_K blocks: f16"))
      << summary.out;
  EXPECT_TRUE(contains(summary.out, "size: 1.87 MiB -> ")) << summary.out;
  EXPECT_TRUE(contains(summary.out, "bits per weight")) << summary.out;

  // stderr is not a terminal here: one line per tensor, no carriage returns.
  const CommandResult progress =
      run_baton("quantize " + in.str() + " " + out.str() + " --type q4_k_m", Capture::kStderr);
  EXPECT_TRUE(contains(progress.out, "[1/48] token_embd.weight f32 -> q5_0\n")) << progress.out;
  EXPECT_TRUE(contains(progress.out, "[2/48] blk.0.attn_norm.weight f32 (copied)\n"))
      << progress.out;
  EXPECT_FALSE(contains(progress.out, "\r"));

  const baton::gguf::GgufFile file = baton::gguf::GgufFile::open(out.str());
  EXPECT_EQ(file.get_int("general.file_type"), 15);
  const CommandResult run = run_baton("run -m " + out.str() + " -p 'In the beginning' -n 8 -q");
  EXPECT_EQ(run.exit_code, 0);
}

TEST(CliQuantize, DemoModelQ4KMNeedsNoFallbackAndGenerates) {
  TempFile out("demo_q4_k_m.gguf");
  const CommandResult summary =
      run_baton("quantize " + demo() + " " + out.str() + " --type q4_k_m --threads 2");
  ASSERT_EQ(summary.exit_code, 0) << summary.out;
  EXPECT_TRUE(contains(summary.out, "tensors: 75 (")) << summary.out;
  EXPECT_FALSE(contains(summary.out, "fallback")) << summary.out;
  const baton::gguf::GgufFile file = baton::gguf::GgufFile::open(out.str());
  EXPECT_EQ(file.get_int("general.file_type"), 15);
  const CommandResult run =
      run_baton("run -m " + out.str() + " -p 'In the beginning' -n 8 --temp 0 -q");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(contains(run.out, "In the beginning")) << run.out;
}

TEST(CliQuantize, UnknownTypeListsTheValidOnes) {
  TempFile out("unknown.gguf");
  const CommandResult r = run_baton("quantize " + demo() + " " + out.str() + " --type q3_k_xl",
                                    Capture::kStdoutAndStderr);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "error: --type 'q3_k_xl' is not one of q8_0, q4_0,")) << r.out;
  EXPECT_TRUE(contains(r.out, "q4_k_m, q5_k_m, f32, f16, bf16")) << r.out;
}

TEST(CliQuantize, UnreadableInputNamesIt) {
  TempFile out("unreadable.gguf");
  const CommandResult r =
      run_baton("quantize /nonexistent-baton/in.gguf " + out.str() + " --type q8_0",
                Capture::kStdoutAndStderr);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "error: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "/nonexistent-baton/in.gguf")) << r.out;
}

TEST(CliQuantize, UnwritableOutputFailsBeforeQuantizing) {
  const CommandResult r = run_baton(
      "quantize " + demo() + " /nonexistent-baton/out.gguf --type q8_0", Capture::kStdoutAndStderr);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "error: cannot write /nonexistent-baton/out.gguf")) << r.out;
  EXPECT_FALSE(contains(r.out, "[1/75]")) << r.out;
}

TEST(CliQuantize, InputOfATypeItCannotDecodeNamesTensorAndType) {
  TempFile in("iq2.gguf"), out("iq2_out.gguf");
  baton::gguf::GgufWriter writer;
  writer.add_string("general.architecture", "llama");
  // IQ2_XXS (ggml type 16): 66 bytes per 256 elements.
  writer.add_tensor("blk.0.attn_q.weight", {2, 256}, uint32_t{16}, std::vector<std::byte>(2 * 66));
  writer.write(in.str());
  const CommandResult r = run_baton("quantize " + in.str() + " " + out.str() + " --type q4_0",
                                    Capture::kStdoutAndStderr);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "error: tensor blk.0.attn_q.weight is iq2_xxs")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out.str()));
}

}  // namespace
