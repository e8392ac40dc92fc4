// Matmul over Q4_1, Q5_0, Q5_1, the K-quants and Baton's own int8, int4 and fp8 types on every
// CPU instruction-set path against the dequantize-then-f64 reference, over decode (1, 3 rows of
// x) and prefill (17 rows) shapes whose sizes are not multiples of the kernels' tiles.

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "backends/cpu/isa/cpu_isa.h"
#include "ops/reference.h"
#include "tests/backends/cpu/activation_quantization.h"
#include "tests/backends/cpu/cpu_test_util.h"
#include "tests/backends/cpu/isa_test_util.h"
#include "tests/ops/quant_affine.h"

namespace baton {
namespace {

using cpu::Isa;
using testing::quantized_like_kernels;
using testing::random_f32;
using testing::random_weight;
using testing::run_cpu;

constexpr int64_t kBlock = testing::kActivationBlock;

// Above the generic level, every type here but fp8 (a float GEMV) quantizes x to int8 blocks.
bool quantizes_x(Isa isa, DType dtype) {
  if (isa == Isa::kGeneric) return false;
  return dtype != DType::kF8Row;
}

// Checks out[r, j] against
//  - ref_q, the double-precision reference on the quantized x. The K-quant kernels sum
//    d_x * s * (u · q) and o * d_x * Σ q separately (backends/cpu/matmul/kquant.h), so their
//    fp32 roundings scale with those terms, not with the weights they make up: with
//    M_k = |s_k u_k| + |o_k|, each group adds at most ~4 roundings relative to its running sum,
//    plus a few for the final horizontal sum:
//    |out - ref_q| <= 1e-7 * (groups + 8) * Σ_k |x'_k| M_k;
//  - ref, the reference on x itself, within the activation quantization error: each x_k moves
//    by at most half a quant step d_b / 2 of its block b, so
//    |out - ref| <= Σ_b 0.5001 d_b Σ_{k in b} |w_k| + the fp32 bound above (with M_k = |w_k|
//    for the paths that decode weights to fp32).
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
    const std::vector<testing::AffineElement> a =
        quantizes ? testing::affine_elements(w, j) : std::vector<testing::AffineElement>{};
    for (int64_t r = 0; r < n && failures < 5; ++r) {
      const float* xr = (quantizes ? xq : x).data<float>() + r * k;
      double magnitude = 0.0, quant_error = 0.0;
      for (int64_t b = 0; b < blocks; ++b) {
        double block_w = 0.0;
        for (int64_t i = b * kBlock; i < (b + 1) * kBlock; ++i) {
          const double mk = quantizes ? std::abs(a[i].scale * a[i].code) + std::abs(a[i].offset)
                                      : std::abs(w_row[i]);
          magnitude += std::abs(double{xr[i]}) * mk;
          block_w += std::abs(w_row[i]);
        }
        quant_error += 0.5001 * d[r * blocks + b] * block_w;
      }
      const double fp32_bound = 1e-7 * static_cast<double>(k / 16 + 8) * magnitude + 1e-30;
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

class QuantizedTypesMatMul : public ::testing::TestWithParam<std::tuple<Isa, DType>> {};

TEST_P(QuantizedTypesMatMul, MatchesReferenceWithinActivationQuantizationError) {
  const auto [isa, dtype] = GetParam();
  cpu::ScopedIsaOverride pin(isa);
  const bool quantizes = quantizes_x(isa, dtype);
  const int64_t block = traits(dtype).block_size;
  uint32_t seed = 1;
  for (int64_t k : {block, 3 * block}) {
    for (int64_t n : {1, 3, 5, 17}) {
      for (int64_t m : {1, 7, 33, 100}) {
        std::ostringstream where;
        where << "n=" << n << " k=" << k << " m=" << m;
        SCOPED_TRACE(where.str());
        Tensor x = random_f32({n, k}, ++seed);
        // A zero block exercises the scale-0 case of the activation quantization.
        for (int64_t i = 0; i < kBlock; ++i) x.data<float>()[(n - 1) * k + i] = 0.0f;
        Tensor w = random_weight(dtype, {m, k}, ++seed);
        Tensor out = run_cpu([&](Graph& g) { return g.matmul(x, w); });
        expect_within_bounds(out, x, w, quantizes);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryIsaAndDtype, QuantizedTypesMatMul,
    ::testing::Combine(::testing::ValuesIn(testing::supported_isas()),
                       ::testing::Values(DType::kQ4_1, DType::kQ5_0, DType::kQ5_1, DType::kQ2_K,
                                         DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K,
                                         DType::kI8Row, DType::kI4G32, DType::kI4G128,
                                         DType::kF8Row)),
    [](const auto& info) {
      return std::string(cpu::to_string(std::get<0>(info.param))) + "_" +
             std::string(to_string(std::get<1>(info.param)));
    });

}  // namespace
}  // namespace baton
