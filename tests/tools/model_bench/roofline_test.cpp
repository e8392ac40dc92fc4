#include "tools/model_bench/roofline.h"

#include <gtest/gtest.h>

#include "baton/error.h"

namespace baton {
namespace {

ModelCost cost_of_one_gigabyte_per_token() {
  ModelCost cost;
  cost.decode_bytes = 1'000'000'000;
  cost.prefill_params = 500'000'000;
  cost.weight_type = DType::kQ8_0;
  return cost;
}

BenchResult generation(std::vector<double> tps, std::vector<double> bandwidth) {
  BenchResult r{.kind = BenchKind::kGeneration, .n_tokens = 16, .test = "tg16"};
  r.samples_tps = std::move(tps);
  r.median_tps = median(r.samples_tps);
  r.read_bytes_per_second = std::move(bandwidth);
  return r;
}

TEST(RooflineFraction, DecodeWithoutItsOwnBandwidthUsesTheRooflines) {
  const Roofline roofline{.read_bytes_per_second = 40e9};
  const BenchResult r = generation({30, 36, 38}, {});
  EXPECT_DOUBLE_EQ(roofline_fraction(r, cost_of_one_gigabyte_per_token(), roofline), 0.9);
  EXPECT_DOUBLE_EQ(read_bandwidth_for(r, roofline), 40e9);
}

// The host's bandwidth drifts: each run is held against the bandwidth measured just before it,
// and the median of those fractions is the result.
TEST(RooflineFraction, DecodeWithItsOwnBandwidthPairsEachRunWithIt) {
  const Roofline roofline{.read_bytes_per_second = 60e9};
  const BenchResult r = generation({30, 45, 40}, {40e9, 50e9, 36e9});
  // 0.75, 0.9 and 1.11: the median is 0.9, where the medians of tps and bandwidth give 40/40.
  EXPECT_DOUBLE_EQ(roofline_fraction(r, cost_of_one_gigabyte_per_token(), roofline), 0.9);
  EXPECT_DOUBLE_EQ(read_bandwidth_for(r, roofline), 40e9);
}

TEST(RooflineFraction, DecodeWithABandwidthPerRunNeedsOneForEachRun) {
  const BenchResult r = generation({30, 45, 40}, {40e9, 50e9});
  EXPECT_THROW(roofline_fraction(r, cost_of_one_gigabyte_per_token(), Roofline{}), Error);
  const BenchResult unmeasured = generation({30}, {0});
  EXPECT_EQ(roofline_fraction(unmeasured, cost_of_one_gigabyte_per_token(), Roofline{}), 0.0);
}

TEST(RooflineFraction, PrefillIsHeldAgainstTheMatmulPeak) {
  Roofline roofline;
  roofline.matmul_flops[DType::kQ8_0] = 1e12;
  BenchResult r{.kind = BenchKind::kPrompt, .n_tokens = 512, .test = "pp512"};
  r.median_tps = 500;
  EXPECT_DOUBLE_EQ(roofline_fraction(r, cost_of_one_gigabyte_per_token(), roofline), 0.5);
  roofline.matmul_flops.clear();
  EXPECT_EQ(roofline_fraction(r, cost_of_one_gigabyte_per_token(), roofline), 0.0);
}

TEST(ReadBandwidthProbe, MeasuresAPositiveBandwidthAsOftenAsAsked) {
  const ReadBandwidthProbe probe(size_t{4} << 20, 1);
  EXPECT_EQ(probe.bytes(), size_t{4} << 20);
  EXPECT_GT(probe.measure(1), 0);
  EXPECT_GT(probe.measure(2), 0);
  EXPECT_THROW(probe.measure(0), Error);
  EXPECT_THROW(ReadBandwidthProbe(4, 1), Error) << "less than one word to read";
}

}  // namespace
}  // namespace baton
