// Float-weight matmul (F32, F16, BF16): the GEMV kernel of every ISA level, and oneDNN's GEMM on
// weights prepacked by import_tensor, against the double-accumulating reference.

#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/matmul_float.h"
#include "backends/cpu/matmul/packed_weights.h"
#include "ops/reference.h"
#include "tests/backends/cpu/cpu_test_util.h"
#include "tests/backends/cpu/isa_test_util.h"

namespace baton {
namespace {

using testing::expect_identical;
using testing::graph_on;
using testing::random_f32;
using testing::random_weight;
using testing::run_cpu;

constexpr DType kFloatDtypes[] = {DType::kF32, DType::kF16, DType::kBF16};
constexpr int64_t kRows[] = {1, 2, 3, 5, 8, 17, 64, 200};
// Odd lengths: partial vectors of every width and rows past a whole group of weight rows.
constexpr int64_t kLengths[] = {1, 7, 33, 100, 257};

// The same tensor with every sign bit cleared (sign is the top bit of f32, f16 and bf16).
Tensor abs_of(const Tensor& t) {
  Tensor out = testing::copy_of(t);
  if (t.dtype() == DType::kF32) {
    for (float& v : out.span<float>()) v = std::abs(v);
  } else {
    auto* p = out.data<uint16_t>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] &= 0x7fffu;
  }
  return out;
}

Tensor reference_matmul(const Tensor& x, const Tensor& w) {
  Tensor out = Tensor::host(DType::kF32, {x.dim(0), w.dim(0)});
  reference::matmul(x, w, out);
  return out;
}

// Checks |actual - expected| <= rel * sum_i |x_i w_i| elementwise: the error a computation with
// relative rounding `rel` per product and per partial sum can make, however the terms cancel.
void expect_within(const Tensor& actual, const Tensor& x, const Tensor& w, double rel) {
  const Tensor expected = reference_matmul(x, w),
               magnitude = reference_matmul(abs_of(x), abs_of(w));
  int reported = 0;
  for (int64_t i = 0; i < actual.numel() && reported < 5; ++i) {
    const double a = actual.data<float>()[i], e = expected.data<float>()[i];
    const double bound = rel * magnitude.data<float>()[i] + 1e-30;
    if (std::abs(a - e) <= bound) continue;
    ADD_FAILURE() << "element " << i << " of " << to_string(actual.shape()) << ": got " << a
                  << ", expected " << e << " (diff " << std::abs(a - e) << ", bound " << bound
                  << ")";
    ++reported;
  }
}

// fp32 sums of k products: each partial sum rounds by at most 2^-24 relative, k of them.
double fp32_bound(int64_t k) {
  return static_cast<double>(k + 2) * std::ldexp(1.0, -24);
}
// The bf16 GEMM rounds x to bf16 (2^-8 relative: bf16 keeps 8 significant bits) and, for F16
// weights, w too; plus the fp32 sum.
double bf16_gemm_bound(DType dtype, int64_t k) {
  return (dtype == DType::kF16 ? 2 : 1) * std::ldexp(1.0, -8) + fp32_bound(k);
}
// The packed GEMM this host runs for w: bf16 as above, or f32 on exactly widened weights.
double packed_gemm_bound(const Tensor& w) {
  const int64_t k = w.dim(1);
  return cpu::packed_gemm_dtype(w.dim(0), k) == DType::kBF16 ? bf16_gemm_bound(w.dtype(), k)
                                                             : fp32_bound(k);
}

struct IsaCase {
  cpu::Isa isa;
  DType dtype;
};

std::string isa_case_name(const ::testing::TestParamInfo<IsaCase>& info) {
  return std::string(cpu::to_string(info.param.isa)) + "_" +
         std::string(to_string(info.param.dtype));
}

class FloatGemv : public ::testing::TestWithParam<IsaCase> {};

// Without import_tensor there is no packed copy, so every n runs the ISA's GEMV kernel; run_cpu
// also checks that 1 and 2 threads agree bit for bit.
TEST_P(FloatGemv, EveryShapeMatchesReferenceAtFp32Accuracy) {
  const IsaCase& c = GetParam();
  const cpu::ScopedIsaOverride isa(c.isa);
  uint32_t seed = 1;
  for (int64_t n : kRows) {
    for (int64_t m : kLengths) {
      for (int64_t k : kLengths) {
        SCOPED_TRACE("n=" + std::to_string(n) + " m=" + std::to_string(m) +
                     " k=" + std::to_string(k));
        const Tensor x = random_f32({n, k}, ++seed);
        const Tensor w = random_weight(c.dtype, {m, k}, ++seed);
        const Tensor out = run_cpu([&](Graph& g) { return g.matmul(x, w); });
        expect_within(out, x, w, fp32_bound(k));
      }
    }
  }
}

// Work is split into one run of weight rows per thread asked for (backends/cpu/stealing_split.h);
// a lone nested thread must take the runs nobody owns and give the same bits.
TEST_P(FloatGemv, ATeamSmallerThanAskedForComputesEveryOutput) {
  const IsaCase& c = GetParam();
  const cpu::ScopedIsaOverride isa(c.isa);
  const int64_t n = 3, k = 100, m = 200;
  const Tensor x = random_f32({n, k}, 51), w = random_weight(c.dtype, {m, k}, 52);
  Tensor alone = Tensor::host(DType::kF32, {n, m});
  cpu::matmul(cpu::Context{.threads = 1}, x, w, alone);
  Tensor nested = Tensor::host(DType::kF32, {n, m});
  ASSERT_EQ(testing::run_in_lone_nested_thread(
                [&] { cpu::matmul(cpu::Context{.threads = 4}, x, w, nested); }),
            1);
  expect_identical(nested, alone);
}

std::vector<IsaCase> isa_cases() {
  std::vector<IsaCase> cases;
  for (cpu::Isa isa : testing::supported_isas()) {
    for (DType dtype : kFloatDtypes) cases.push_back({isa, dtype});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryIsaAndDtype, FloatGemv, ::testing::ValuesIn(isa_cases()),
                         isa_case_name);

// Runs x · wᵀ on a fresh backend that imported w, as a model load does.
Tensor run_imported(const Tensor& x, const Tensor& w, int threads, bool prepack) {
  std::unique_ptr<Backend> backend =
      make_cpu_backend({.threads = threads, .prepack_weights = prepack});
  const Tensor imported = backend->import_tensor(w);
  Graph graph = graph_on(*backend);
  const Tensor out = graph.matmul(x, imported);
  backend->execute(graph);
  return out;
}

class PrepackedGemm : public ::testing::TestWithParam<DType> {};

TEST_P(PrepackedGemm, MatchesReferenceWithinItsPrecision) {
  const DType dtype = GetParam();
  uint32_t seed = 100;
  // kRows from 3 up and 40: the GEMM's rows on every host (bf16 from 3 rows, f32 from 32); below
  // its threshold the GEMV runs, which meets the bound too.
  for (int64_t n : {3, 5, 8, 17, 40, 64, 200}) {
    for (int64_t m : kLengths) {
      for (int64_t k : kLengths) {
        SCOPED_TRACE("n=" + std::to_string(n) + " m=" + std::to_string(m) +
                     " k=" + std::to_string(k));
        const Tensor x = random_f32({n, k}, ++seed);
        const Tensor w = random_weight(dtype, {m, k}, ++seed);
        const double bound = packed_gemm_bound(w);
        // oneDNN may split the work differently for another thread count, so 1 and 2 threads
        // agree only within the bound, not bit for bit.
        for (int threads : {1, 2}) expect_within(run_imported(x, w, threads, true), x, w, bound);
      }
    }
  }
}

// A team smaller than the threads the backend was made with must still compute every output:
// here a region inside another one (the backend made, and its GEMM run and planned, outside it);
// OMP_THREAD_LIMIT in the ctest entry cpu_float_matmul_under_omp_thread_limit, the case that
// once left outputs unwritten.
TEST_P(PrepackedGemm, MatchesReferenceInsideAnotherParallelRegion) {
  const Tensor x = random_f32({64, 100}, 11), w = random_weight(GetParam(), {96, 100}, 12);
  const double bound = packed_gemm_bound(w);
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 2, .prepack_weights = true});
  const Tensor imported = backend->import_tensor(w);
  const auto run = [&] {
    Graph graph = graph_on(*backend);
    const Tensor out = graph.matmul(x, imported);
    backend->execute(graph);
    return out;
  };
  expect_within(run(), x, w, bound);
  const int nesting = omp_get_max_active_levels();
  for (const int levels : {1, 2}) {
    SCOPED_TRACE("max active levels " + std::to_string(levels));
    omp_set_max_active_levels(levels);
#pragma omp parallel num_threads(2)
    {
#pragma omp single
      expect_within(run(), x, w, bound);
    }
  }
  omp_set_max_active_levels(nesting);
}

// After import_tensor the backend's result is exactly the packed GEMM's (where this host has
// one); with prepacking off it is exactly the GEMV kernel's.
TEST_P(PrepackedGemm, IsUsedAfterImportUnlessDisabled) {
  const DType dtype = GetParam();
  const Tensor x = random_f32({64, 100}, 7), w = random_weight(dtype, {33, 100}, 8);
  const Tensor gemv = run_cpu([&](Graph& g) { return g.matmul(x, w); });
  expect_identical(run_imported(x, w, 2, false), gemv);

  const std::optional<DType> gemm = cpu::packed_gemm_dtype(33, 100);
  cpu::PackedWeights packed;
  ASSERT_EQ(packed.add(w, 2), gemm.has_value());
  if (!gemm) {
    EXPECT_EQ(packed.bytes(), 0u);
    expect_identical(run_imported(x, w, 2, true), gemv);
    return;
  }
  EXPECT_GE(packed.bytes(), bytes_for(*gemm, w.numel()));
  Tensor direct = Tensor::host(DType::kF32, {64, 33});
  ASSERT_TRUE(packed.matmul(x, w, direct, 2));
  expect_identical(run_imported(x, w, 2, true), direct);
}

// Below gemm_min_rows of the copy's precision the GEMV on the weights as loaded runs (bit for bit),
// from it the packed GEMM (bit for bit against the copy's own matmul).
TEST_P(PrepackedGemm, RunsFromTheRowsItPaysOffAt) {
  const std::optional<DType> gemm = cpu::packed_gemm_dtype(40, 96);
  if (!gemm) GTEST_SKIP() << "oneDNN has only reference GEMMs on this host";
  const int64_t rows = cpu::gemm_min_rows(*gemm);
  const Tensor w = random_weight(GetParam(), {40, 96}, 9);
  cpu::PackedWeights packed;
  ASSERT_TRUE(packed.add(w, 2));
  for (int64_t n : {rows - 1, rows}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const Tensor x = random_f32({n, 96}, 10 + static_cast<uint32_t>(n));
    Tensor direct = Tensor::host(DType::kF32, {n, 40});
    ASSERT_EQ(packed.matmul(x, w, direct, 2), n >= rows);
    const Tensor expected = n >= rows ? direct : run_cpu([&](Graph& g) { return g.matmul(x, w); });
    expect_identical(run_imported(x, w, 2, true), expected);
  }
}

// bf16 where the CPU (at the kernel level Baton runs) has native bf16, f32 on AVX2: oneDNN's
// bf16 matmul is then only its reference kernel, slower than the GEMV.
TEST(PackedWeights, PacksForTheGemmThisHostRuns) {
  const std::optional<DType> gemm = cpu::packed_gemm_dtype(5632, 2048);
  const cpu::Isa isa = cpu::active_isa();
  if (isa == cpu::Isa::kAvx512 && cpu::cpu_features().avx512bf16) {
    EXPECT_EQ(gemm, DType::kBF16);
  } else if (isa == cpu::Isa::kAvx2) {
    EXPECT_EQ(gemm, DType::kF32);
  } else if (isa == cpu::Isa::kAvx512) {
    EXPECT_TRUE(gemm.has_value()) << "oneDNN has an f32 GEMM on every AVX-512 CPU";
  }
}

INSTANTIATE_TEST_SUITE_P(PackedDtypes, PrepackedGemm, ::testing::Values(DType::kF16, DType::kBF16),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Past its budget a weight is left unpacked (its matmuls stay on the GEMV) instead of growing
// the process without bound.
TEST(PackedWeights, StopsPackingAtItsBudget) {
  if (!cpu::packed_gemm_dtype(64, 64)) GTEST_SKIP() << "oneDNN has only reference GEMMs here";
  const Tensor first = random_weight(DType::kF16, {64, 64}, 1),
               second = random_weight(DType::kF16, {64, 64}, 2);
  cpu::PackedWeights unbounded;
  ASSERT_TRUE(unbounded.add(first, 1));
  const size_t one = unbounded.bytes();
  cpu::PackedWeights packed(one + one / 2);
  EXPECT_TRUE(packed.add(first, 1));
  EXPECT_FALSE(packed.add(second, 1));
  EXPECT_EQ(packed.bytes(), one);
  Tensor out = Tensor::host(DType::kF32, {64, 64});
  EXPECT_FALSE(packed.matmul(random_f32({64, 64}, 3), second, out, 1));
}

TEST(PackedWeights, LeavesOtherTensorsAlone) {
  cpu::PackedWeights packed;
  EXPECT_FALSE(packed.add(random_f32({64}, 1), 1));                      // a norm, not a matrix
  EXPECT_FALSE(packed.add(random_weight(DType::kQ8_0, {4, 32}, 2), 1));  // quantized
  EXPECT_FALSE(packed.add(random_f32({4, 32}, 5), 1));  // f32 stays on the batch-invariant GEMV
  EXPECT_EQ(packed.bytes(), 0u);
  const Tensor x = random_f32({8, 32}, 3), w = random_f32({4, 32}, 4);
  Tensor out = Tensor::host(DType::kF32, {8, 4});
  EXPECT_FALSE(packed.matmul(x, w, out, 1));  // never added
}

// Packing runs its OpenMP team on a thread of its own, so the caller's thread (a model's loading
// thread) keeps none: libgomp keeps a team until its thread ends, and one left beside the team
// the steps use would cut every barrier's spin short (omp_team.h).
TEST(PackedWeights, LeavesNoOpenMPTeamOnTheCallersThread) {
  if (!cpu::packed_gemm_dtype(64, 96)) GTEST_SKIP() << "oneDNN has only reference GEMMs here";
  const Tensor w = random_weight(DType::kF16, {64, 96}, 11);
  const auto threads_in_process = [] {
    const std::filesystem::directory_iterator tasks("/proc/self/task");
    return std::distance(begin(tasks), end(tasks));
  };
  // From a fresh thread: on one with a team already (the main thread after earlier tests),
  // packing there would reuse that team and add no thread. Threads that are exiting (the
  // packing's, an earlier test's) may stay listed for a moment, hence the wait.
  std::thread([&] {
    const auto before = threads_in_process();
    cpu::PackedWeights packed;
    ASSERT_TRUE(packed.add(w, 2));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (threads_in_process() > before && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_LE(threads_in_process(), before);
  }).join();
}

}  // namespace
}  // namespace baton
