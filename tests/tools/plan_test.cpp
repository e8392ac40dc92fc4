// `baton plan`: its memory figures against what Baton writes and allocates for the demo model,
// the estimates' arithmetic on hand-made footprints, and the command's output and errors.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/option_values.h"
#include "core/api/loaded_model.h"
#include "core/formats/gguf/gguf_file.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"
#include "tests/tools/baton_command.h"
#include "tools/model_tools/quantize_model.h"
#include "tools/model_tools/synthetic_model.h"
#include "tools/plan/capacity_plan.h"

namespace baton {
namespace {

const WeightChoice& choice(const ModelFootprint& f, const std::string& name) {
  for (const WeightChoice& w : f.weights) {
    if (w.name == name) return w;
  }
  throw std::runtime_error("no weight choice " + name);
}

uint64_t tensor_bytes(const gguf::GgufFile& file) {
  uint64_t bytes = 0;
  for (const gguf::TensorInfo& t : file.tensors()) bytes += t.nbytes;
  return bytes;
}

TEST(PlanMemory, WeightBytesAreWhatTheFileAndBatonQuantizeHold) {
  const ModelFootprint f = model_footprint(gguf::GgufFile::open(testing::demo_model()));
  EXPECT_EQ(choice(f, "as stored").bytes,
            tensor_bytes(gguf::GgufFile::open(testing::demo_model())));
  for (const char* preset : {"q8_0", "q4_k_m"}) {
    testing::TempFile out(std::string("plan_") + preset + ".gguf");
    quantize_model(testing::demo_model(), out.path(), *find_quantize_preset(preset));
    EXPECT_EQ(choice(f, preset).bytes, tensor_bytes(gguf::GgufFile::open(out.path()))) << preset;
  }
}

// A named shape is counted from a file of holes: the same footprint as a file of that layout
// written in full, here a small custom shape, and the f16 bytes `baton synth` counts for a named
// one.
TEST(PlanMemory, ANamedShapeCountsAsAFileOfItsLayout) {
  const SyntheticShape small{
      .n_embd = 64, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 96, .n_vocab = 400};
  testing::TempFile full("plan_full.gguf"), holes("plan_holes.gguf");
  write_synthetic_model({.shape = small}, full.path());
  write_synthetic_model({.shape = small, .layout_only = true}, holes.path());
  const ModelFootprint written = model_footprint(gguf::GgufFile::open(full.path()));
  const ModelFootprint counted = model_footprint(gguf::GgufFile::open(holes.path()));
  ASSERT_EQ(written.weights.size(), counted.weights.size());
  for (size_t i = 0; i < written.weights.size(); ++i) {
    EXPECT_EQ(written.weights[i].bytes, counted.weights[i].bytes) << written.weights[i].name;
    EXPECT_EQ(written.weights[i].decode_bytes, counted.weights[i].decode_bytes);
  }
  ASSERT_EQ(written.kv.size(), counted.kv.size());
  for (size_t i = 0; i < written.kv.size(); ++i) {
    EXPECT_EQ(written.kv[i].bytes_per_token, counted.kv[i].bytes_per_token);
  }

  const ModelFootprint tinyllama = shape_footprint("tinyllama-1.1b");
  testing::TempFile summary_only("plan_tinyllama.gguf");
  const SynthSummary synth = write_synthetic_model(
      {.shape = synthetic_shape("tinyllama-1.1b"), .layout_only = true}, summary_only.path());
  EXPECT_EQ(tinyllama.name, "tinyllama-1.1b");
  EXPECT_EQ(choice(tinyllama, "as stored").type, DType::kF16);
  EXPECT_EQ(choice(tinyllama, "as stored").bytes, synth.weight_bytes);
  EXPECT_EQ(tinyllama.n_params, synth.n_params);
  EXPECT_EQ(tinyllama.config.n_layer, 22);
  EXPECT_THROW(shape_footprint("no-such-shape"), Error);
}

TEST(PlanMemory, KvBytesAreWhatTheEnginesPoolTakes) {
  const ModelFootprint f = model_footprint(gguf::GgufFile::open(testing::demo_model()));
  for (const char* dtype : {"f32", "f16", "q8_0"}) {
    const PlanTarget target{
        .context = 256,
        .concurrency = 3,
        .kv_dtype = kv_cache_dtype(parse_option_value<KvCacheType>("kv_cache_dtype", dtype))};
    const uint64_t per_token = kv_bytes_per_token(f, target.kv_dtype);
    // A pool sized to the plan's figure holds exactly the plan's tokens.
    const double mib =
        static_cast<double>(per_token) * target.context * target.concurrency / 1048576.0;
    const LoadedModel loaded(
        LLMOptions{.model = testing::demo_model().string(),
                   .threads = 1,
                   .kv_cache_mib = mib,
                   .kv_cache_dtype = parse_option_value<KvCacheType>("kv_cache_dtype", dtype)});
    const ModelSummary s = loaded.summary();
    EXPECT_EQ(static_cast<uint64_t>(s.kv_bytes_per_token), per_token) << dtype;
    EXPECT_EQ(s.kv_cache_tokens, int64_t{target.context} * target.concurrency) << dtype;
  }
}

ModelFootprint hand_made(uint64_t weight_bytes, int64_t prefill_params) {
  ModelFootprint f;
  f.config.n_layer = 32;
  f.config.n_head_kv = 8;
  f.config.head_dim = 128;
  f.prefill_params = prefill_params;
  f.weights.push_back(
      {.name = "f16", .type = DType::kF16, .bytes = weight_bytes, .decode_bytes = weight_bytes});
  f.kv.push_back({DType::kF16, 131072});  // 32 layers x 8 heads x 128 x 2 (K, V) x 2 bytes
  return f;
}

Device device(double memory_gib, double bandwidth_gbps, double tflops) {
  return {.spec = {.name = "d",
                   .memory_gib = memory_gib,
                   .bandwidth_gbps = bandwidth_gbps,
                   .fp16_tflops = tflops},
          .usable_memory_fraction = 1.0};
}

TEST(CapacityPlan, DecodeReadsWeightsAndKvOverBandwidthUntilComputeTakesOver) {
  const ModelFootprint f = hand_made(16'000'000'000, 8'000'000'000);  // an 8B model in f16
  const Device gpu = device(80, 2000, 400);
  const PlanRow one = plan_capacity(f, {gpu}, {.context = 1000, .concurrency = 1})[0];
  // 16 GB of weights and half of 1000 tokens' K/V (65.5 MB) over 2000 GB/s.
  EXPECT_NEAR(one.tpot_ms, 1e3 * (16e9 + 0.5 * 131072 * 1000) / 2000e9, 1e-9);
  EXPECT_TRUE(one.bandwidth_bound);
  EXPECT_NEAR(one.prefill_tokens_per_s, 400e12 / 16e9, 1e-6);
  // 256 sequences of 100 tokens: 2 x 8e9 x 256 FLOP over 400 TFLOP/s (10.2 ms) exceed 16 GB
  // and 1.7 GB of K/V over 2000 GB/s (8.8 ms): compute-bound.
  const PlanRow many = plan_capacity(f, {gpu}, {.context = 100, .concurrency = 256})[0];
  EXPECT_FALSE(many.bandwidth_bound);
  EXPECT_NEAR(many.tpot_ms, 1e3 * 2 * 8e9 * 256 / 400e12, 1e-9);
}

TEST(CapacityPlan, AModelTooBigForOneDeviceIsSplitByHeadsThenStages) {
  const ModelFootprint f = hand_made(140'000'000'000, 70'000'000'000);
  const PlanRow row = plan_capacity(f, {device(80, 2000, 400)}, {.context = 1000})[0];
  EXPECT_EQ(row.devices, 2);
  EXPECT_EQ(row.tensor_parallel, 2);
  const PlanRow small = plan_capacity(f, {device(10, 2000, 400)}, {.context = 1000})[0];
  EXPECT_EQ(small.devices, 16);
  EXPECT_EQ(small.tensor_parallel, 8) << "8 KV heads";
  EXPECT_EQ(small.pipeline_parallel, 2);
  EXPECT_TRUE(plan_capacity(f, {device(1, 2000, 400)}, {.context = 1000}).empty())
      << "more than 64 devices is no plan";
}

TEST(CapacityPlan, MoreDevicesAreTakenToMeetTheLatencyTarget) {
  const ModelFootprint f = hand_made(16'000'000'000, 8'000'000'000);
  // 8.0 ms on one device, 4.0 on two, 2.0 on four: a 3 ms target takes four.
  const PlanRow row =
      plan_capacity(f, {device(80, 2000, 400)}, {.context = 1000, .target_tpot_ms = 3})[0];
  EXPECT_EQ(row.devices, 4);
  EXPECT_EQ(row.tensor_parallel, 4);
  EXPECT_TRUE(row.meets_target);
  // Beyond the 8 KV heads tensor parallelism stops: a target no split reaches is not met.
  const PlanRow unmet =
      plan_capacity(f, {device(80, 2000, 400)}, {.context = 1000, .target_tpot_ms = 0.1})[0];
  EXPECT_EQ(unmet.tensor_parallel, 8);
  EXPECT_FALSE(unmet.meets_target);
}

TEST(CapacityPlan, WithoutAPublishedBandwidthThereIsNoDecodeEstimate) {
  const ModelFootprint f = hand_made(16'000'000'000, 8'000'000'000);
  const PlanRow row =
      plan_capacity(f, {device(64, 0, 280)}, {.context = 1000, .target_tpot_ms = 50})[0];
  EXPECT_EQ(row.tpot_ms, 0);
  EXPECT_FALSE(row.meets_target);
  EXPECT_GT(row.prefill_tokens_per_s, 0);
}

TEST(PlanCli, PrintsTheFootprintAndAPlanAsJson) {
  const auto r =
      testing::run_baton("plan -m " + testing::demo_model().string() +
                         " --no-host --ctx 256 --concurrency 4 --target-tpot-ms 20 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("weights").at(0).at("name"), "as stored");
  EXPECT_FALSE(j.at("plan").empty());
  EXPECT_TRUE(j.at("plan").at(0).at("meets_target").get<bool>()) << "7M parameters on any GPU";
}

TEST(PlanCli, PlansANamedShape) {
  const auto r = testing::run_baton("plan --shape llama-110m --no-host --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("model"), "llama-110m");
  EXPECT_EQ(j.at("weights").at(0).at("type"), "f16");
  const auto unknown =
      testing::run_baton("plan --shape llama-7000b --no-host", testing::Capture::kStdoutAndStderr);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.out.find("tinyllama-1.1b"), std::string::npos) << unknown.out;
  const auto neither = testing::run_baton("plan --no-host", testing::Capture::kStdoutAndStderr);
  EXPECT_EQ(neither.exit_code, 1);
  EXPECT_NE(neither.out.find("--shape"), std::string::npos) << neither.out;
  const auto both = testing::run_baton(
      "plan -m " + testing::demo_model().string() + " --shape llama-110m --no-host",
      testing::Capture::kStdoutAndStderr);
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.out.find("excludes"), std::string::npos) << both.out;
}

TEST(PlanCli, BadFlagsFailWithOneLine) {
  const auto zero =
      testing::run_baton("plan -m " + testing::demo_model().string() + " --no-host --ctx 0",
                         testing::Capture::kStdoutAndStderr);
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.out.find("must be positive"), std::string::npos) << zero.out;
  const auto missing =
      testing::run_baton("plan -m /nonexistent.gguf --no-host", testing::Capture::kStdoutAndStderr);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("/nonexistent.gguf"), std::string::npos) << missing.out;
}

}  // namespace
}  // namespace baton
