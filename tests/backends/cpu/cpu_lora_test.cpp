// The CPU LoRA update against the reference on random inputs, with tokens of several adapters
// and of none interleaved in one batch, slots of f32 and of f16, at every ISA level the host
// runs (the f16 loads and their tails differ per level).

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "backends/cpu/isa/cpu_isa.h"
#include "baton/error.h"
#include "ops/reference.h"
#include "tests/backends/cpu/cpu_test_util.h"
#include "tests/backends/cpu/isa_test_util.h"

namespace baton {
namespace {

using testing::expect_close;
using testing::i32_tensor;
using testing::random_f32;
using testing::random_weight;
using testing::run_cpu;

struct LoraCase {
  int64_t n, k, m, slots, rank;
};

class CpuLora : public ::testing::TestWithParam<std::tuple<LoraCase, DType, cpu::Isa>> {};

TEST_P(CpuLora, MatchesReference) {
  const auto& [c, dtype, isa] = GetParam();
  const cpu::ScopedIsaOverride level(isa);
  const Tensor y = random_f32({c.n, c.m}, 21);
  const Tensor x = random_f32({c.n, c.k}, 22);
  // The reference widens the same f16 values, so either type is held to the f32 tolerance.
  const Tensor a = random_weight(dtype, {c.slots, c.rank, c.k}, 23);
  const Tensor bt = random_weight(dtype, {c.slots, c.rank, c.m}, 24);
  // Slots interleaved token by token (a batch of decodes), then in runs (prompts, whose tokens
  // come in slot order already).
  std::vector<int32_t> slot_of(static_cast<size_t>(c.n));
  for (int64_t t = 0; t < c.n; ++t) {
    slot_of[t] = static_cast<int32_t>((t * 7 + 3) % (c.slots + 1)) - 1;  // -1 .. slots-1, mixed
  }
  for (const bool in_runs : {false, true}) {
    SCOPED_TRACE(in_runs ? "in runs" : "interleaved");
    if (in_runs) std::sort(slot_of.begin(), slot_of.end());
    const Tensor slots = i32_tensor(slot_of);
    const Tensor out = run_cpu([&](Graph& g) { return g.lora(y, x, a, bt, slots); });
    Tensor ref = Tensor::host(DType::kF32, {c.n, c.m});
    reference::lora(y, x, a, bt, slots, ref);
    // fp32 sums of k then r products of values in [-1, 1] against double: the error grows with
    // k * r * 6e-8 at most; base-model rows (slot -1) are copied exactly.
    expect_close(out, ref, 1e-5, 1e-7 * static_cast<double>(c.k * c.rank));
    for (int64_t t = 0; t < c.n; ++t) {
      if (slot_of[t] >= 0) continue;
      for (int64_t o = 0; o < c.m; ++o) {
        ASSERT_EQ(out.data<float>()[t * c.m + o], y.data<float>()[t * c.m + o]);
      }
    }
    // Tokens of one slot share tiles in a batch; each gets the same bits alone, so a request's
    // output does not depend on what it is batched with.
    for (int64_t t = 0; t < c.n; t += 5) {
      const Tensor alone = run_cpu([&](Graph& g) {
        return g.lora(y.slice_rows(t, 1), x.slice_rows(t, 1), a, bt, i32_tensor({slot_of[t]}));
      });
      for (int64_t o = 0; o < c.m; ++o) {
        ASSERT_EQ(alone.data<float>()[o], out.data<float>()[t * c.m + o]) << "token " << t;
      }
    }
  }
}

// The prefill chunk is large enough for the kernel's parallel region; the others run on the
// calling thread.
INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuLora,
    ::testing::Combine(::testing::Values(LoraCase{1, 64, 48, 1, 4},      // one decode token
                                         LoraCase{9, 100, 37, 3, 8},     // odd sizes
                                         LoraCase{64, 256, 512, 4, 16},  // a prefill chunk
                                         LoraCase{5, 32, 16, 8, 1},
                                         // ranks and widths past the kernels' blocks of four
                                         LoraCase{6, 70, 200, 2, 7}),
                       ::testing::Values(DType::kF32, DType::kF16),
                       ::testing::ValuesIn(testing::supported_isas())),
    [](const ::testing::TestParamInfo<std::tuple<LoraCase, DType, cpu::Isa>>& info) {
      const LoraCase& c = std::get<0>(info.param);
      const DType dtype = std::get<1>(info.param);
      return "n" + std::to_string(c.n) + "_k" + std::to_string(c.k) + "_m" + std::to_string(c.m) +
             "_slots" + std::to_string(c.slots) + "_r" + std::to_string(c.rank) + "_" +
             std::string(to_string(dtype)) + "_" +
             std::string(cpu::to_string(std::get<2>(info.param)));
    });

TEST(CpuLora, RejectsASlotOutsideTheStacks) {
  const Tensor y = random_f32({2, 8}, 1), x = random_f32({2, 4}, 2);
  const Tensor a = random_f32({2, 2, 4}, 3), bt = random_f32({2, 2, 8}, 4);
  const Tensor slots = i32_tensor({0, 2});
  EXPECT_THROW(run_cpu([&](Graph& g) { return g.lora(y, x, a, bt, slots); }), Error);
}

TEST(GraphLora, RejectsMismatchedShapes) {
  Graph g([](DType dtype, Shape shape) { return Tensor::host(dtype, std::move(shape)); });
  const Tensor y = random_f32({2, 8}, 1), x = random_f32({2, 4}, 2);
  const Tensor a = random_f32({2, 2, 4}, 3), bt = random_f32({2, 2, 8}, 4);
  EXPECT_THROW(g.lora(y, x, random_f32({2, 2, 5}, 5), bt, i32_tensor({0, 1})), Error);
  EXPECT_THROW(g.lora(y, x, a, random_f32({2, 3, 8}, 6), i32_tensor({0, 1})), Error);
  EXPECT_THROW(g.lora(y, x, a, bt, i32_tensor({0})), Error);
  // a and bt of different types, and a type slots never hold.
  EXPECT_THROW(g.lora(y, x, a, random_weight(DType::kF16, {2, 2, 8}, 7), i32_tensor({0, 1})),
               Error);
  EXPECT_THROW(g.lora(y, x, random_weight(DType::kBF16, {2, 2, 4}, 8),
                      random_weight(DType::kBF16, {2, 2, 8}, 9), i32_tensor({0, 1})),
               Error);
}

}  // namespace
}  // namespace baton
