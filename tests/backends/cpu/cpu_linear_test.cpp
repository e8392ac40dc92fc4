// CPU matmul, embedding and get_rows against the reference on random inputs.

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "backends/cpu/isa/cpu_isa.h"
#include "baton/error.h"
#include "ops/reference.h"
#include "tests/backends/cpu/cpu_test_util.h"

namespace baton {
namespace {

using testing::expect_close;
using testing::expect_identical;
using testing::random_f32;
using testing::random_i32;
using testing::random_weight;
using testing::run_cpu;

struct MatMulCase {
  DType dtype;
  int64_t n, k, m;
};

void PrintTo(const MatMulCase& c, std::ostream* os) {
  *os << to_string(c.dtype) << " n=" << c.n << " k=" << c.k << " m=" << c.m;
}

std::string case_name(const ::testing::TestParamInfo<MatMulCase>& info) {
  const MatMulCase& c = info.param;
  return std::string(to_string(c.dtype)) + "_n" + std::to_string(c.n) + "_k" + std::to_string(c.k) +
         "_m" + std::to_string(c.m);
}

class CpuMatMul : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(CpuMatMul, MatchesReference) {
  const MatMulCase& c = GetParam();
  // The AVX paths for quantized weights quantize x to int8 blocks as llama.cpp does, so they
  // are checked against bounds of their own in quantized_matmul_test.cpp; here the generic path
  // must match the f32 reference.
  std::optional<cpu::ScopedIsaOverride> exact_path;
  if (is_quantized(c.dtype)) exact_path.emplace(cpu::Isa::kGeneric);
  Tensor x = random_f32({c.n, c.k}, 11);
  Tensor w = random_weight(c.dtype, {c.m, c.k}, 12);
  Tensor out = run_cpu([&](Graph& g) { return g.matmul(x, w); });
  Tensor ref = Tensor::host(DType::kF32, {c.n, c.m});
  reference::matmul(x, w, ref);
  // Both sides decode identical weight values (every dtype); the CPU sums in fp32 over 8
  // lanes, the reference in double. With |x|, |w| <= ~1 the fp32 error is about k * 3e-8
  // (observed at most 1.5e-6 at k = 257); atol 2e-7 * k leaves a margin for other summation
  // orders while any decoding slip (errors ~1e-2 and up) still fails.
  expect_close(out, ref, 1e-5, 2e-7 * static_cast<double>(c.k));
}

// Plain dtypes take row lengths that are not multiples of the 8-lane or 32-element chunks;
// quantized row lengths are whole 32-element blocks. n covers decode (1), a partial x block
// (3, 6) and several blocks with a remainder (17).
std::vector<MatMulCase> matmul_cases() {
  std::vector<MatMulCase> cases;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (auto [n, k, m] :
         {std::tuple{1, 5, 3}, {3, 33, 17}, {6, 100, 50}, {17, 64, 1}, {4, 257, 31}}) {
      cases.push_back({d, n, k, m});
    }
  }
  for (DType d : {DType::kQ8_0, DType::kQ4_0}) {
    for (auto [n, k, m] :
         {std::tuple{1, 32, 1}, {1, 96, 13}, {6, 320, 40}, {17, 64, 33}, {4, 32, 7}}) {
      cases.push_back({d, n, k, m});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllWeightDtypes, CpuMatMul, ::testing::ValuesIn(matmul_cases()),
                         case_name);

class CpuEmbedding : public ::testing::TestWithParam<DType> {};

TEST_P(CpuEmbedding, MatchesReferenceExactly) {
  const DType dtype = GetParam();
  const int64_t dim = is_quantized(dtype) ? 3 * traits(dtype).block_size : 37;
  Tensor table = random_weight(dtype, {50, dim}, 21);
  for (int64_t n : {1, 9}) {
    Tensor ids = random_i32(n, 50, 22);
    Tensor out = run_cpu([&](Graph& g) { return g.embedding(table, ids); });
    Tensor ref = Tensor::host(DType::kF32, {n, dim});
    reference::embedding(table, ids, ref);
    expect_identical(out, ref);  // decoding is exact in fp32 for every dtype
  }
}

INSTANTIATE_TEST_SUITE_P(AllWeightDtypes, CpuEmbedding,
                         ::testing::Values(DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0,
                                           DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1,
                                           DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K,
                                           DType::kQ6_K, DType::kI8Row, DType::kI4G32,
                                           DType::kI4G128, DType::kF8Row),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(CpuEmbedding, IdOutOfRangeIsAnErrorNamingNodeAndId) {
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 2});
  Graph g = testing::graph_on(*backend);
  g.embedding(random_weight(DType::kF32, {4, 8}, 1), testing::i32_tensor({1, 4}), "tok_embd");
  try {
    backend->execute(g);
    FAIL() << "id 4 of 4 rows accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("tok_embd"), std::string::npos) << message;
    EXPECT_NE(message.find("id 4"), std::string::npos) << message;
  }
}

TEST(CpuGetRows, MatchesReferenceExactly) {
  for (auto [n, d, m] : {std::tuple{1, 1, 1}, {7, 33, 3}, {20, 100, 25}}) {
    Tensor x = random_f32({n, d}, 31);
    Tensor rows = random_i32(m, n, 32);
    Tensor out = run_cpu([&](Graph& g) { return g.get_rows(x, rows); });
    Tensor ref = Tensor::host(DType::kF32, {m, d});
    reference::get_rows(x, rows, ref);
    expect_identical(out, ref);
  }
}

}  // namespace
}  // namespace baton
