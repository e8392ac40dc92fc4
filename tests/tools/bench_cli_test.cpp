// `baton synth` and `baton bench` end to end: files they write, tables and JSON they print.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/matmul.h"
#include "tests/test_data.h"
#include "tests/tools/baton_command.h"

namespace {

using baton::testing::CommandResult;

CommandResult baton(const std::string& args, bool stderr_only = false) {
  return baton::testing::run_baton(
      args, stderr_only ? baton::testing::Capture::kStderr : baton::testing::Capture::kStdout);
}

// A tiny synthesized q8_0 model shared by the bench tests, removed at the end.
class BenchCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const CommandResult r = baton(
        "synth --n-embd 64 --n-layer 2 --n-head 4 --n-head-kv 2 --n-ff 128 --n-vocab 320 "
        "--ctx 128 --type q8_0 -o " +
        model());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    ASSERT_NE(r.out.find("wrote"), std::string::npos) << r.out;
  }
  static void TearDownTestSuite() { std::filesystem::remove(model()); }
  static std::string model() {
    return (std::filesystem::temp_directory_path() /
            ("baton_bench_" + std::to_string(::getpid()) + ".gguf"))
        .string();
  }
};

TEST_F(BenchCli, PrintsOneTableRowPerTestAndPeakRss) {
  const CommandResult r = baton("bench -m " + model() + " -p 8 -n 4 -r 1 -t 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("| model | size | params | backend | threads | test | t/s | median |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| synthetic q8_0 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| cpu | 2 | pp8 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| cpu | 2 | tg4 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak RSS: "), std::string::npos) << r.out;
}

// The table and each JSON result name the matmul kernel this host runs for the model's weights,
// at the level BATON_CPU_ISA (inherited by the child) selects: on AVX2 and AVX-512, Q8_0 is
// repacked into panels.
TEST_F(BenchCli, NamesTheMatmulKernelThisHostRuns) {
  const std::string expected = baton::cpu::describe_matmul_path(baton::DType::kQ8_0, true);
  switch (baton::cpu::active_isa()) {
    case baton::cpu::Isa::kAvx512:
      EXPECT_NE(expected.find("AVX-512 VNNI kernel for any rows of x on panels"),
                std::string::npos);
      break;
    case baton::cpu::Isa::kAvx2:
      EXPECT_NE(expected.find("AVX2 maddubs kernel for any rows of x on panels"),
                std::string::npos);
      break;
    case baton::cpu::Isa::kGeneric:
      EXPECT_NE(expected.find("generic kernel"), std::string::npos);
      break;
  }
  const CommandResult table = baton("bench -m " + model() + " -p 8 -n 2 -r 1 -t 1");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("q8_0 matmul: " + expected + "\n"), std::string::npos) << table.out;
  const CommandResult json = baton("bench -m " + model() + " -p 8 -n 2 -r 1 -t 1 --json");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  for (const nlohmann::json& result : nlohmann::json::parse(json.out)) {
    EXPECT_EQ(result["kernel"], expected);
  }
}

TEST_F(BenchCli, JsonHasOneResultPerTestWithPositiveRates) {
  const CommandResult r = baton("bench -m " + model() + " -p 8,16 -n 4 -r 2 -t 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json results = nlohmann::json::parse(r.out);
  ASSERT_TRUE(results.is_array());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["test"], "pp8");
  EXPECT_EQ(results[1]["test"], "pp16");
  EXPECT_EQ(results[2]["test"], "tg4");
  EXPECT_EQ(results[2]["n_gen"], 4);
  for (const nlohmann::json& result : results) {
    EXPECT_EQ(result["weight_type"], "q8_0");
    EXPECT_EQ(result["threads"], 1);
    EXPECT_EQ(result["samples_ts"].size(), 2u);
    EXPECT_GT(result["median_ts"].get<double>(), 0);
    EXPECT_GT(result["peak_rss_bytes"].get<double>(), 0);
  }
}

TEST_F(BenchCli, RooflineGivesEachResultAFraction) {
  const CommandResult r = baton("bench -m " + model() +
                                " -p 8 -n 2 -r 1 -t 1 --json --roofline --roofline-mib 16 "
                                "--roofline-gemm 32x128x128 --roofline-runs 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json results = nlohmann::json::parse(r.out);
  ASSERT_EQ(results.size(), 2u);
  for (const nlohmann::json& result : results) {
    EXPECT_GT(result["roofline_fraction"].get<double>(), 0) << result;
    EXPECT_GT(result["read_gbps"].get<double>(), 0) << result;
    EXPECT_GT(result["matmul_gflops"].get<double>(), 0) << result;
  }
  EXPECT_FALSE(results[0].contains("read_gbps_samples")) << "pp is held against the matmul peak";
  ASSERT_EQ(results[1]["read_gbps_samples"].size(), 1u) << "tg measures bandwidth before its run";
  EXPECT_EQ(results[1]["read_gbps_samples"][0], results[1]["read_gbps"]);
}

// --no-repack keeps F16 weights as loaded: no bf16 copy for prefill, so the process holds
// about one weight's bytes less than with repacking (here 2 layers of 512x1536 FFN and 512x512
// attention matrices: 12 MiB of f16).
TEST(BenchNoRepack, HoldsF16WeightsOnce) {
  const std::string f16 = (std::filesystem::temp_directory_path() /
                           ("baton_bench_f16_" + std::to_string(::getpid()) + ".gguf"))
                              .string();
  ASSERT_EQ(baton("synth --n-embd 512 --n-layer 2 --n-head 8 --n-ff 1536 --n-vocab 320 --ctx 64 "
                  "--type f16 -o " +
                  f16)
                .exit_code,
            0);
  uint64_t peak[2] = {};
  for (int no_repack = 0; no_repack < 2; ++no_repack) {
    const CommandResult r = baton("bench -m " + f16 + " -p 8 -n 2 -r 1 -t 2 --json" +
                                  (no_repack ? " --no-repack" : ""));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const nlohmann::json results = nlohmann::json::parse(r.out);
    ASSERT_EQ(results.size(), 2u);
    EXPECT_GT(results[0]["median_ts"].get<double>(), 0);
    peak[no_repack] = results[0]["peak_rss_bytes"].get<uint64_t>();
  }
  std::filesystem::remove(f16);
  const uint64_t weight_bytes = 2 * (3 * 512 * 1536 + 4 * 512 * 512) * 2;
  EXPECT_GT(peak[0], peak[1] + weight_bytes / 2)
      << "repacked " << peak[0] << " bytes, in place " << peak[1];
}

TEST(BenchRoofline, AloneMeasuresBandwidthAndEveryWeightType) {
  const CommandResult r =
      baton("bench --roofline -t 1 --roofline-mib 16 --roofline-gemm 32x64x64 --roofline-runs 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("read bandwidth"), std::string::npos) << r.out;
  for (const char* type : {"f32", "f16", "bf16", "q8_0", "q4_0"}) {
    EXPECT_NE(r.out.find(std::string("matmul ") + type + " 32x64x64: "), std::string::npos)
        << r.out;
  }
  const nlohmann::json json = nlohmann::json::parse(
      baton("bench --roofline -t 1 --roofline-mib 16 --roofline-gemm 32x64x64 --roofline-runs 1 "
            "--json")
          .out);
  ASSERT_EQ(json.size(), 6u);
  EXPECT_GT(json[0]["gbps"].get<double>(), 0);
  for (size_t i = 1; i < json.size(); ++i) EXPECT_GT(json[i]["gflops"].get<double>(), 0);
}

TEST(BenchCliErrors, NamesTheBadValue) {
  EXPECT_EQ(baton("bench").exit_code, 1);  // neither a model nor --roofline
  const CommandResult r = baton("bench --roofline --roofline-gemm 12x34", true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("12x34"), std::string::npos) << r.out;
}

// `bench schedule` needs no model: one row per policy and load, each seed's figures in the
// JSON, and ratios to the fcfs row of the same load.
TEST(BenchSchedule, ComparesThePoliciesOnEachSeedsWorkload) {
  const CommandResult r = baton(
      "bench schedule --seeds 2 --requests 200 --load 0.9,1 --sjf-overtake 0,4 "
      "--kv-reservation none,predicted --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 12u) << "(fcfs, sjf, sjf overtake 4) x 2 reservations x 2 loads";
  EXPECT_EQ(rows[0]["variant"], "fcfs");
  EXPECT_EQ(rows[2]["variant"], "sjf, overtake 4");
  EXPECT_EQ(rows[3]["variant"], "fcfs, reservation predicted");
  EXPECT_EQ(rows[11]["load"], 1.0);
  for (const auto& row : rows) {
    ASSERT_EQ(row["seeds"].size(), 2u);
    for (const auto& seed : row["seeds"]) {
      EXPECT_GT(seed["mean_latency_steps"].get<double>(), 16) << "no request is shorter";
      EXPECT_GE(seed["p99_latency_steps"], seed["mean_latency_steps"]);
      EXPECT_EQ(seed["empty_steps"], 0);
    }
    if (row["variant"].get<std::string>().starts_with("fcfs")) {
      EXPECT_EQ(row["mean_ratio"], 1.0);
      EXPECT_EQ(row["throughput_ratio"], 1.0);
    }
  }
  EXPECT_GT(rows[2]["seeds"][0]["suspensions"].get<double>(), 0);
  const CommandResult table = baton("bench schedule --seeds 1 --requests 100 --load 0.8");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("| 0.80 | sjf, overtake 4 |"), std::string::npos) << table.out;
}

TEST(BenchSchedule, RefusesAnEmptyRunNamingTheBadValue) {
  for (const auto& [flags, named] :
       {std::pair("--seeds 0", "--seeds"), std::pair("--kv-tokens 8", "--kv-tokens"),
        std::pair("--step-ms 0", "--step-ms"), std::pair("--requests 0", "request (0)"),
        std::pair("--prefill-tokens-per-step -1", "--prefill-tokens-per-step")}) {
    const CommandResult r = baton(std::string("bench schedule ") + flags, true);
    EXPECT_EQ(r.exit_code, 1) << flags;
    EXPECT_NE(r.out.find(named), std::string::npos) << flags << ": " << r.out;
  }
  // A value the option does not take is a usage error, as for every flag of the option table.
  const CommandResult r = baton("bench schedule --kv-reservation some", true);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("unknown --kv-reservation 'some' (use none, predicted or max)"),
            std::string::npos)
      << r.out;
}

TEST(SynthCli, RejectsUnknownShapesAndTypes) {
  const std::string out = (std::filesystem::temp_directory_path() / "baton_never.gguf").string();
  EXPECT_EQ(baton("synth gpt-9 -o " + out).exit_code, 1);
  EXPECT_EQ(baton("synth llama-110m --type iq4_xs -o " + out).exit_code, 1);
  EXPECT_EQ(baton("synth --n-embd 64 -o " + out).exit_code, 1);  // dimensions missing
  EXPECT_FALSE(std::filesystem::exists(out));
}

// K-quants need rows of whole 256-element super-blocks; a Q4_K_M-like file keeps its output
// projection in Q6_K.
TEST(SynthCli, KQuantTypesWithAnOutputTypeAndTheirRowLengths) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("baton_k_" + std::to_string(::getpid()) + ".gguf"))
          .string();
  const std::string dims = "--n-layer 1 --n-head 4 --n-ff 512 --n-vocab 320 --ctx 64 ";
  const CommandResult bad = baton("synth --n-embd 64 " + dims + "--type q4_k -o " + out, true);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("n_embd = 64 is not a multiple of the q4_K block size 256"),
            std::string::npos)
      << bad.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  const CommandResult r =
      baton("synth --n-embd 256 " + dims + "--type q4_k --output-type Q6_K -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const CommandResult bench = baton("bench -m " + out + " -p 8 -n 2 -r 1 -t 2");
  std::filesystem::remove(out);
  ASSERT_EQ(bench.exit_code, 0) << bench.out;
  EXPECT_NE(bench.out.find("| synthetic q4_K |"), std::string::npos) << bench.out;
}

}  // namespace
