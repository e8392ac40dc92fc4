// Reference rms_norm and rope on hand-computed cases.

#include <gtest/gtest.h>

#include <cmath>

#include "baton/error.h"
#include "ops/reference.h"
#include "tests/ops/op_test_util.h"

namespace baton {
namespace {

using testing::f32_tensor;
using testing::i32_tensor;
using testing::rope_params;
using testing::values_of;

TEST(ReferenceRmsNorm, DividesByRootMeanSquareAndScales) {
  Tensor x = f32_tensor({2, 2}, {3, 4, 1, 1});
  Tensor w = f32_tensor({2}, {1, 2});
  Tensor out = Tensor::host(DType::kF32, {2, 2});
  reference::rms_norm(x, w, 0.0f, out);
  const float rms = std::sqrt(12.5f);
  EXPECT_FLOAT_EQ(out.data<float>()[0], 3 / rms);
  EXPECT_FLOAT_EQ(out.data<float>()[1], 8 / rms);
  EXPECT_FLOAT_EQ(out.data<float>()[2], 1.0f);
  EXPECT_FLOAT_EQ(out.data<float>()[3], 2.0f);
}

TEST(ReferenceRmsNorm, EpsGuardsAZeroRow) {
  Tensor out = Tensor::host(DType::kF32, {1, 2});
  reference::rms_norm(f32_tensor({1, 2}, {0, 0}), f32_tensor({2}, {1, 1}), 1e-5f, out);
  EXPECT_EQ(values_of(out), (std::vector<float>{0, 0}));
}

// Rotates x with one head at position `pos` and returns the result.
std::vector<float> rope_one(std::vector<float> x, int pos, const RopeParams& params) {
  const int64_t head_dim = static_cast<int64_t>(x.size());
  Tensor in = f32_tensor({1, 1, head_dim}, x);
  Tensor out = Tensor::host(DType::kF32, {1, 1, head_dim});
  reference::rope(in, i32_tensor({pos}), params, out);
  return values_of(out);
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
}

TEST(ReferenceRope, NormalModeRotatesAdjacentPairs) {
  // head_dim 4, base 10000, pos 1: theta_0 = 1, theta_1 = 10000^(-1/2) = 0.01.
  const RopeParams p = rope_params(4);
  expect_near_all(rope_one({1, 0, 1, 0}, 1, p),
                  {std::cos(1.0), std::sin(1.0), std::cos(0.01), std::sin(0.01)});
  expect_near_all(rope_one({0, 1, 0, 1}, 1, p),
                  {-std::sin(1.0), std::cos(1.0), -std::sin(0.01), std::cos(0.01)});
}

TEST(ReferenceRope, NeoxModeRotatesHalves) {
  // Pairs (0, 2) with theta 1 and (1, 3) with theta 0.01.
  const RopeParams p = rope_params(4, RopeMode::kNeox);
  expect_near_all(rope_one({1, 1, 0, 0}, 1, p),
                  {std::cos(1.0), std::cos(0.01), std::sin(1.0), std::sin(0.01)});
}

TEST(ReferenceRope, PositionZeroIsIdentity) {
  const RopeParams p = rope_params(4);
  expect_near_all(rope_one({0.5f, -2, 3, 7}, 0, p), {0.5, -2, 3, 7});
}

TEST(ReferenceRope, FreqScaleAndFreqFactorsDivideTheAngle) {
  // pos 2, scale 0.5, factors {1, 4}: theta_0 = 2*0.5*1/1 = 1, theta_1 = 2*0.5*0.01/4 = 0.0025.
  RopeParams p = rope_params(4, RopeMode::kNormal, 10000.0f, 0.5f);
  p.freq_factors = {1, 4};
  expect_near_all(rope_one({1, 0, 0, 1}, 2, p),
                  {std::cos(1.0), std::sin(1.0), -std::sin(0.0025), std::cos(0.0025)});
}

TEST(ReferenceRope, AttnFactorScalesTheRotatedDimensionsOnly) {
  RopeParams p = rope_params(2);
  p.attn_factor = 1.5f;
  expect_near_all(rope_one({1, 0, 5, 6}, 1, p), {1.5 * std::cos(1.0), 1.5 * std::sin(1.0), 5, 6});
}

// YaRN as ggml's rope_yarn defines it, worked by hand for n_rot 8, base 10000, an original
// context of 64 and factor 4 (freq_scale 1/4), beta_fast 32, beta_slow 1: the correction
// dimensions are 8 ln(64 / (2π·r)) / (2 ln 10000) for r = 32 and 1, floor(-0.497) -> 0 and
// ceil(1.008) = 2, so pair i's ramp is 1 - i/2 clamped: pair 0 keeps its frequency, pair 1
// blends half and half, pairs 2 and 3 are divided by 4; the magnitude is 1 + 0.1 ln 4.
TEST(ReferenceRope, YarnBlendsScaledAndUnscaledFrequencies) {
  RopeParams p = rope_params(8, RopeMode::kNormal, 10000.0f, 0.25f);
  p.yarn_ext_factor = 1.0f;
  p.yarn_original_context = 64;
  const double pos = 3, magnitude = 1 + 0.1 * std::log(4.0);
  const double theta[] = {pos * 1.0, pos * 0.1 * (0.5 + 0.5 / 4), pos * 0.01 / 4, pos * 0.001 / 4};
  std::vector<double> want;
  for (double t : theta) {
    want.push_back(magnitude * std::cos(t));
    want.push_back(magnitude * std::sin(t));
  }
  expect_near_all(rope_one({1, 0, 1, 0, 1, 0, 1, 0}, 3, p), want);
}

TEST(ReferenceRope, DimensionsPastNRotPassThroughInEveryHead) {
  const RopeParams p = rope_params(2);
  Tensor x = f32_tensor({1, 2, 4}, {1, 0, 5, 6, 0, 1, 7, 8});
  Tensor out = Tensor::host(DType::kF32, {1, 2, 4});
  reference::rope(x, i32_tensor({1}), p, out);
  const std::vector<float> got = values_of(out);
  expect_near_all(got, {std::cos(1.0), std::sin(1.0), 5, 6, -std::sin(1.0), std::cos(1.0), 7, 8});
}

TEST(ReferenceRope, RejectsOddNRot) {
  const RopeParams p = rope_params(3);
  EXPECT_THROW(rope_one({1, 2, 3, 4}, 1, p), Error);
}

}  // namespace
}  // namespace baton
