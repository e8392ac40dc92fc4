// Q8_0 / Q4_0 matmul on every CPU instruction-set path against the reference, over decode (few
// rows of x) and prefill (many rows) shapes whose sizes are not multiples of the kernels' tiles.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/panel_weights.h"
#include "ops/reference.h"
#include "tests/backends/cpu/activation_quantization.h"
#include "tests/backends/cpu/cpu_test_util.h"
#include "tests/backends/cpu/isa_test_util.h"

namespace baton {
namespace {

using cpu::Isa;
using testing::expect_identical;
using testing::quantized_like_kernels;
using testing::random_f32;
using testing::random_weight;
using testing::run_cpu;

constexpr int64_t kBlock = testing::kActivationBlock;

// Checks out[r, j] against
//  - ref_q, the double-precision reference on the quantized x: the kernels' block dots are exact
//    in int32, and each block adds at most ~2 fp32 roundings (d_w * d_x, the fma) relative to
//    the running sum, plus a few for the final horizontal sum, so
//    |out - ref_q| <= 1e-7 * (blocks + 8) * sum_k |x'_k w_k|;
//  - ref, the reference on x itself, within the activation quantization error: each x_k moves
//    by at most half a quant step d_b / 2 of its block b, so
//    |out - ref| <= sum_b 0.5001 * d_b * sum_{k in b} |w_k| + the fp32 bound above.
// The generic path does not quantize x and only has to meet the second bound.
void expect_within_bounds(const Tensor& out, const Tensor& x, const Tensor& w, bool quantizes) {
  const int64_t n = x.dim(0), k = x.dim(1), m = w.dim(0), blocks = k / kBlock;
  std::vector<float> d;
  const Tensor xq = quantized_like_kernels(x, d);
  Tensor ref = Tensor::host(DType::kF32, {n, m}), ref_q = Tensor::host(DType::kF32, {n, m});
  reference::matmul(x, w, ref);
  reference::matmul(xq, w, ref_q);
  std::vector<float> w_row(k);
  int failures = 0;
  for (int64_t j = 0; j < m && failures < 5; ++j) {
    reference::dequantize_row(w, j, w_row.data());
    for (int64_t r = 0; r < n && failures < 5; ++r) {
      double abs_dot = 0.0, quant_error = 0.0;
      for (int64_t b = 0; b < blocks; ++b) {
        double block_w = 0.0;
        for (int64_t i = b * kBlock; i < (b + 1) * kBlock; ++i) {
          abs_dot += std::abs(double{xq.data<float>()[r * k + i]} * w_row[i]);
          block_w += std::abs(w_row[i]);
        }
        quant_error += 0.5001 * d[r * blocks + b] * block_w;
      }
      const double fp32_bound = 1e-7 * static_cast<double>(blocks + 8) * abs_dot + 1e-30;
      const double got = out.data<float>()[r * m + j];
      const double err = std::abs(got - ref.data<float>()[r * m + j]);
      const double err_q = std::abs(got - ref_q.data<float>()[r * m + j]);
      const bool ok = err <= quant_error + fp32_bound && (!quantizes || err_q <= fp32_bound);
      if (!ok) {
        ++failures;
        ADD_FAILURE() << "out[" << r << ", " << j << "] = " << got << ": |out - ref| = " << err
                      << " (bound " << quant_error + fp32_bound << "), |out - ref_q| = " << err_q
                      << " (bound " << fp32_bound << ")";
      }
    }
  }
}

class QuantizedMatMul : public ::testing::TestWithParam<std::tuple<Isa, DType>> {};

// The levels whose kernels read repacked panels (the generic kernel reads the file's blocks).
class PanelMatMul : public QuantizedMatMul {};

// The kernels that read the file's blocks in place (every ISA; on AVX-512 they serve backends
// without prepacking).
TEST_P(QuantizedMatMul, MatchesReferenceWithinActivationQuantizationError) {
  const auto [isa, dtype] = GetParam();
  cpu::ScopedIsaOverride pin(isa);
  uint32_t seed = 1;
  for (int64_t k : {32, 64, 96, 4096}) {
    for (int64_t n : {1, 2, 3, 5, 8, 17, 64}) {
      for (int64_t m : {1, 7, 33, 100}) {
        std::ostringstream where;
        where << "n=" << n << " k=" << k << " m=" << m;
        SCOPED_TRACE(where.str());
        Tensor x = random_f32({n, k}, ++seed);
        // A zero block exercises the scale-0 case of the activation quantization.
        for (int64_t i = 0; i < kBlock; ++i) x.data<float>()[(n - 1) * k + i] = 0.0f;
        Tensor w = random_weight(dtype, {m, k}, ++seed);
        Tensor out = run_cpu([&](Graph& g) { return g.matmul(x, w); }, false);
        expect_within_bounds(out, x, w, isa != Isa::kGeneric);
      }
    }
  }
}

// With prepacking (the default), AVX-512 and AVX2 run a panel kernel on a repacked copy, with the
// same bounds: n covers every row count of AVX2's tiles of 8 and 4 rows and their tails, m = 33,
// 50 and 100 partial last panels (1, 18 and 4 columns).
TEST_P(QuantizedMatMul, PrepackedWeightsMatchReferenceWithinActivationQuantizationError) {
  const auto [isa, dtype] = GetParam();
  cpu::ScopedIsaOverride pin(isa);
  uint32_t seed = 100;
  for (int64_t k : {32, 96, 2048}) {
    for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 21}) {
      for (int64_t m : {7, 33, 50, 100}) {
        std::ostringstream where;
        where << "n=" << n << " k=" << k << " m=" << m;
        SCOPED_TRACE(where.str());
        Tensor x = random_f32({n, k}, ++seed);
        Tensor w = random_weight(dtype, {m, k}, ++seed);
        Tensor out = run_cpu([&](Graph& g) { return g.matmul(x, w); });
        expect_within_bounds(out, x, w, isa != Isa::kGeneric);
      }
    }
  }
}

// Each row of x gets the same bits alone as in a batch of 13: a request's greedy output must not
// depend on which requests share its step.
TEST_P(PanelMatMul, PrepackedWeightsGiveEachRowTheSameBitsAloneAndBatched) {
  const auto [isa, dtype] = GetParam();
  cpu::ScopedIsaOverride pin(isa);
  const int64_t n = 13, k = 256, m = 70;
  Tensor x = random_f32({n, k}, 7);
  Tensor w = random_weight(dtype, {m, k}, 8);
  Tensor batched = run_cpu([&](Graph& g) { return g.matmul(x, w); });
  for (int64_t r = 0; r < n; ++r) {
    Tensor row = Tensor::host(DType::kF32, {1, k});
    std::copy_n(x.data<float>() + r * k, k, row.data<float>());
    Tensor alone = run_cpu([&](Graph& g) { return g.matmul(row, w); });
    for (int64_t j = 0; j < m; ++j) {
      ASSERT_EQ(alone.data<float>()[j], batched.data<float>()[r * m + j])
          << "row " << r << ", " << j;
    }
  }
}

// The first matmul repacks the weight once, to the same size for Q4_0, and later ones reuse it;
// other dtypes are left alone. A backend's matmul gives the same bits as the kernel on a
// PanelWeights of the test's own, so the backend does read the repacked copy.
TEST_P(PanelMatMul, FirstMatmulRepacksTheWeightIntoPanelsOnce) {
  const auto [isa, dtype] = GetParam();
  cpu::ScopedIsaOverride pin(isa);
  const int64_t n = 3, k = 512, m = 64;
  Tensor x = random_f32({n, k}, 11);
  Tensor w = random_weight(dtype, {m, k}, 12);
  cpu::PanelWeights panels;
  const std::byte* first = panels.find_or_add(w, 1);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(panels.find_or_add(w, 1), first);
  if (dtype == DType::kQ4_0) {
    EXPECT_EQ(panels.bytes(), w.nbytes());
  }
  EXPECT_EQ(panels.find_or_add(random_f32({m, k}, 13), 1), nullptr);
  EXPECT_EQ(panels.find_or_add(random_weight(DType::kQ4_K, {m, 256}, 14), 1), nullptr);

  Tensor direct = Tensor::host(DType::kF32, {n, m});
  cpu::matmul(cpu::Context{.threads = 1, .panels = &panels}, x, w, direct);
  expect_identical(direct, run_cpu([&](Graph& g) { return g.matmul(x, w); }));
  // The in-place kernels sum in another order, so equal bits here would not tell the paths apart.
  const Tensor in_place = run_cpu([&](Graph& g) { return g.matmul(x, w); }, false);
  EXPECT_NE(std::memcmp(direct.materialize(), in_place.materialize(), direct.nbytes()), 0);
}

// Work is split into one run of weight rows per thread asked for (backends/cpu/stealing_split.h);
// a team smaller than that, here a lone thread in a region nested inside another, must take the
// runs nobody owns and give the same bits, on panels and in place.
TEST_P(QuantizedMatMul, ATeamSmallerThanAskedForComputesEveryOutput) {
  const auto [isa, dtype] = GetParam();
  cpu::ScopedIsaOverride pin(isa);
  const int64_t n = 5, k = 256, m = 200;
  const Tensor x = random_f32({n, k}, 41), w = random_weight(dtype, {m, k}, 42);
  for (const bool prepack : {true, false}) {
    SCOPED_TRACE(prepack ? "panels" : "in place");
    cpu::PanelWeights panels;
    cpu::PanelWeights* used = prepack ? &panels : nullptr;
    Tensor alone = Tensor::host(DType::kF32, {n, m});
    cpu::matmul(cpu::Context{.threads = 1, .panels = used}, x, w, alone);
    Tensor nested = Tensor::host(DType::kF32, {n, m});
    ASSERT_EQ(testing::run_in_lone_nested_thread(
                  [&] { cpu::matmul(cpu::Context{.threads = 4, .panels = used}, x, w, nested); }),
              1);
    expect_identical(nested, alone);
  }
}

// The AVX2 and AVX-512 panel kernels read the same panels and scale each exact int32 block dot
// the same way, so a developer on either host sees the other's bits.
TEST(PanelKernels, Avx2AndAvx512GiveTheSameBits) {
  if (!cpu::is_supported(Isa::kAvx512)) GTEST_SKIP() << "this CPU lacks avx512";
  for (DType dtype : {DType::kQ4_0, DType::kQ8_0}) {
    SCOPED_TRACE(std::string(to_string(dtype)));
    const Tensor x = random_f32({13, 256}, 31), w = random_weight(dtype, {70, 256}, 32);
    Tensor outs[2];
    for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
      cpu::ScopedIsaOverride pin(isa);
      outs[isa == Isa::kAvx512] = run_cpu([&](Graph& g) { return g.matmul(x, w); });
    }
    expect_identical(outs[0], outs[1]);
  }
}

// The largest quants against the largest x quants: Q8_0's -128 (|w| * 127 twice in one int16
// pair) and Q4_0's code 15 (eight pairs of 2 * 15 * 127 summed in int16) must not saturate.
// Every x block is +-max, so it quantizes to +-127 exactly and a saturated pair would show as an
// error far past the fp32 bound of expect_within_bounds.
TEST_P(QuantizedMatMul, ExtremeQuantsDoNotSaturate) {
  const auto [isa, dtype] = GetParam();
  cpu::ScopedIsaOverride pin(isa);
  const int64_t k = 256, m = 40;
  for (int64_t n : {1, 2, 3, 5, 8, 12}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    Tensor x = Tensor::host(DType::kF32, {n, k});
    for (int64_t i = 0; i < n * k; ++i) x.data<float>()[i] = (i / 2) % 3 == 0 ? -2.0f : 2.0f;
    Tensor w = random_weight(dtype, {m, k}, 21);
    for (int64_t j = 0; j < m; ++j) {
      std::byte* row = w.materialize() + j * w.row_bytes();
      for (int64_t b = 0; b < k / kBlock; ++b) {
        if (dtype == DType::kQ8_0) {
          auto* block = reinterpret_cast<BlockQ8_0*>(row) + b;
          for (int i = 0; i < 32; ++i) block->qs[i] = (i + j) % 5 == 0 ? 127 : -128;
        } else {
          auto* block = reinterpret_cast<BlockQ4_0*>(row) + b;
          for (int i = 0; i < 16; ++i) block->qs[i] = (i + j) % 7 == 0 ? 0x0f : 0xf0 | (j % 16);
        }
      }
    }
    for (bool prepack : {false, true}) {
      SCOPED_TRACE(prepack ? "prepacked" : "in place");
      const Tensor out = run_cpu([&](Graph& g) { return g.matmul(x, w); }, prepack);
      expect_within_bounds(out, x, w, isa != Isa::kGeneric);
    }
  }
}

std::string isa_and_dtype(const ::testing::TestParamInfo<std::tuple<Isa, DType>>& info) {
  return std::string(cpu::to_string(std::get<0>(info.param))) + "_" +
         std::string(to_string(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(EveryIsaAndDtype, QuantizedMatMul,
                         ::testing::Combine(::testing::ValuesIn(testing::supported_isas()),
                                            ::testing::Values(DType::kQ8_0, DType::kQ4_0)),
                         isa_and_dtype);
INSTANTIATE_TEST_SUITE_P(EveryIsaAndDtype, PanelMatMul,
                         ::testing::Combine(::testing::ValuesIn(testing::panel_isas()),
                                            ::testing::Values(DType::kQ8_0, DType::kQ4_0)),
                         isa_and_dtype);
// A CPU without AVX2 has no panel kernel to test.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PanelMatMul);

}  // namespace
}  // namespace baton
