// GPU matmul against the reference for every weight dtype, on the decode path (few rows of x)
// and the prefill path (many rows), with bounds derived from each path's roundings; and the
// tiled GEMM (ROCm's, chosen on any GPU backend with BATON_GPU_GEMM=tiled) on tile edges.

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ops/reference.h"
#include "tests/backends/gpu/gpu_test_util.h"

namespace baton {
namespace {

using testing::BackendParamTest;
using testing::BackendTest;
using testing::GpuOnlyTest;
using testing::random_f32;
using testing::random_weight;

struct MatMulCase {
  DType dtype;
  int64_t n, k, m;
};

void PrintTo(const MatMulCase& c, std::ostream* os) {
  *os << to_string(c.dtype) << " n=" << c.n << " k=" << c.k << " m=" << c.m;
}

// Unit roundoff of the inputs a backend multiplies. On a GPU backend: f16 and bf16 weights take
// x rounded to their own type; quantized weights on the prefill path are decoded to f16 and
// take x in f16; f32 weights and the quantized GEMV use x and the weights exactly. The tiled
// GEMM (ROCm's) rounds no input, so it meets these bounds too. On the CPU backend: quantized
// weights take x as int8 blocks with an f16 scale (expect_matmul_close's int8_x, plus the
// scale's 2^-11), and f16 / bf16 weights may go through a bf16 GEMM, both inputs rounded to
// bf16, on hosts with native bf16.
double input_roundoff(const MatMulCase& c) {
  constexpr double kF16 = 1.0 / 2048, kBF16 = 1.0 / 256;
  const bool cpu = testing::backend_quantizes_activations();
  switch (c.dtype) {
    case DType::kF16:
      return cpu ? 2 * kBF16 : kF16;
    case DType::kBF16:
      return cpu ? 2 * kBF16 : kBF16;
    case DType::kQ8_0:
    case DType::kQ4_0:
      if (cpu) return kF16;
      return c.n > 8 ? 2 * kF16 : 0.0;  // weight and x each rounded once to f16
    default:
      return 0.0;
  }
}

// Sets an environment variable for its lifetime, then restores the previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string case_name(const ::testing::TestParamInfo<MatMulCase>& info) {
  const MatMulCase& c = info.param;
  return std::string(to_string(c.dtype)) + "_n" + std::to_string(c.n) + "_k" + std::to_string(c.k) +
         "_m" + std::to_string(c.m);
}

class GpuMatMul : public BackendParamTest<MatMulCase> {
 protected:
  // out = x * w^T against the reference within `roundoff` (see expect_matmul_close).
  void check(const MatMulCase& c, double roundoff, bool int8_x = false) {
    const Tensor x = random_f32({c.n, c.k}, 11);
    const Tensor w = random_weight(c.dtype, {c.m, c.k}, 12);
    const Tensor w_device = device(w);
    const Tensor out = run([&](Graph& g) { return g.matmul(device(x), w_device); });
    Tensor ref = Tensor::host(DType::kF32, {c.n, c.m});
    reference::matmul(x, w, ref);
    testing::expect_matmul_close(out, ref, x, w, roundoff, int8_x);
  }
};

TEST_P(GpuMatMul, MatchesReferenceWithinTheDerivedBound) {
  const MatMulCase& c = GetParam();
  check(c, input_roundoff(c), testing::backend_quantizes_activations() && is_quantized(c.dtype));
}

// n <= 8 is the quantized GEMV (decode), n > 8 the dequantize + GEMM path (prefill); odd k and
// m for the plain dtypes; k = 2048 with m = 16400 makes the quantized prefill decode its f16
// weight in two chunks of rows.
std::vector<MatMulCase> matmul_cases() {
  std::vector<MatMulCase> cases;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (auto [n, k, m] :
         {std::tuple{1, 5, 3}, {3, 33, 17}, {8, 100, 50}, {17, 64, 1}, {40, 257, 131}}) {
      cases.push_back({d, n, k, m});
    }
  }
  for (DType d : {DType::kQ8_0, DType::kQ4_0}) {
    for (auto [n, k, m] : {std::tuple{1, 32, 1},
                           {1, 4096, 37},
                           {3, 96, 13},
                           {8, 320, 40},
                           {9, 64, 33},
                           {33, 320, 70},
                           {9, 2048, 16400}}) {
      cases.push_back({d, n, k, m});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllWeightDtypes, GpuMatMul, ::testing::ValuesIn(matmul_cases()),
                         case_name);

// The backend with the tiled GEMM, whatever its own: the variable is read when the backend is
// made, so it is restored right after.
class GpuOnlyTiledMatMul : public GpuMatMul {
 protected:
  void SetUp() override {
    const ScopedEnv tiled("BATON_GPU_GEMM", "tiled");
    GpuMatMul::SetUp();
  }
};

// The tiled GEMM multiplies f32 x by weights decoded exactly to f32, in fp32: no input is
// rounded, for any weight dtype, so only the fp32 accumulation bound remains.
TEST_P(GpuOnlyTiledMatMul, MatchesReferenceWithUnroundedInputs) {
  check(GetParam(), 0.0);
}

// Both tile heights (x of at most 16 rows, and more), rows and columns that end mid-tile, k that
// ends mid-step (steps of 32) or is a single step; quantized weights with n > 8, where the GEMV
// hands over to the GEMM.
std::vector<MatMulCase> tiled_cases() {
  std::vector<MatMulCase> cases;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (auto [n, k, m] :
         {std::tuple{1, 5, 3}, {16, 33, 65}, {17, 1, 64}, {65, 257, 131}, {130, 100, 63}}) {
      cases.push_back({d, n, k, m});
    }
  }
  for (DType d : {DType::kQ8_0, DType::kQ4_0}) {
    for (auto [n, k, m] : {std::tuple{9, 64, 33}, {16, 4096, 37}, {65, 320, 130}, {200, 96, 65}}) {
      cases.push_back({d, n, k, m});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllWeightDtypes, GpuOnlyTiledMatMul, ::testing::ValuesIn(tiled_cases()),
                         case_name);

TEST_F(GpuOnlyTest, AnUnknownGemmChoiceIsAnErrorNamingIt) {
  const ScopedEnv bogus("BATON_GPU_GEMM", "fastest");
  try {
    BackendRegistry::global().create(testing::gpu_backend_name(), {});
    FAIL() << "BATON_GPU_GEMM=fastest accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("BATON_GPU_GEMM='fastest'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace baton
