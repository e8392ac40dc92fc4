// GPU row-wise and element-wise ops against the reference on random inputs of odd sizes:
// embedding (every weight dtype) and get_rows, the LoRA update, rms_norm, rope (normal and NeoX,
// partial rotation, linear scaling, frequency factors, positions in the thousands), swiglu, add
// (same shape and one broadcast row), softmax and argmax.

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "ops/reference.h"
#include "tests/backends/gpu/gpu_test_util.h"

namespace baton {
namespace {

using testing::BackendParamTest;
using testing::BackendTest;
using testing::expect_close;
using testing::expect_identical;
using testing::random_f32;
using testing::random_i32;
using testing::random_weight;

// f32 kernels sum in fp32 where the reference sums in double: a few ulps of each result, and
// an absolute floor for results that cancel to near zero.
constexpr double kF32Rel = 1e-5, kF32Abs = 1e-6;

class GpuEmbedding : public BackendParamTest<DType> {};

TEST_P(GpuEmbedding, MatchesReferenceExactly) {
  const DType dtype = GetParam();
  const int64_t dim = is_quantized(dtype) ? 96 : 37;
  const Tensor table = random_weight(dtype, {50, dim}, 21);
  const Tensor device_table = device(table);
  for (int64_t n : {1, 9, 300}) {
    const Tensor ids = random_i32(n, 50, 22);
    const Tensor out = run([&](Graph& g) { return g.embedding(device_table, device(ids)); });
    Tensor ref = Tensor::host(DType::kF32, {n, dim});
    reference::embedding(table, ids, ref);
    expect_identical(out, ref);  // the same single f32 multiply (or widening) per element
  }
}

INSTANTIATE_TEST_SUITE_P(AllWeightDtypes, GpuEmbedding,
                         ::testing::Values(DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0,
                                           DType::kQ4_0),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST_F(BackendTest, EmbeddingIdOutOfRangeIsAnErrorNamingNodeAndId) {
  Graph g = testing::graph_on(backend());
  g.embedding(device(random_weight(DType::kF32, {4, 8}, 1)), device(testing::i32_tensor({1, 4})),
              "tok_embd");
  try {
    backend().execute(g);
    FAIL() << "id 4 of 4 rows accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("tok_embd"), std::string::npos) << message;
    EXPECT_NE(message.find("id 4 at index 1"), std::string::npos) << message;
  }
  // The report is cleared: the next step runs normally.
  const Tensor ok = run([&](Graph& g2) {
    return g2.embedding(device(random_weight(DType::kF32, {4, 8}, 1)),
                        device(testing::i32_tensor({3})));
  });
  EXPECT_EQ(ok.shape(), (Shape{1, 8}));
}

TEST_F(BackendTest, GetRowsMatchesReferenceExactly) {
  for (auto [n, d, m] : {std::tuple{1, 1, 1}, {7, 33, 3}, {20, 1000, 25}}) {
    const Tensor x = random_f32({n, d}, 31);
    const Tensor rows = random_i32(m, n, 32);
    const Tensor out = run([&](Graph& g) { return g.get_rows(device(x), device(rows)); });
    Tensor ref = Tensor::host(DType::kF32, {m, d});
    reference::get_rows(x, rows, ref);
    expect_identical(out, ref);
  }
}

TEST_F(BackendTest, GetRowsRowOutOfRangeIsAnError) {
  Graph g = testing::graph_on(backend());
  g.get_rows(device(random_f32({3, 4}, 1)), device(testing::i32_tensor({0, -1})), "logit_rows");
  try {
    backend().execute(g);
    FAIL() << "row -1 accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("logit_rows"), std::string::npos) << message;
    EXPECT_NE(message.find("row -1 at index 1"), std::string::npos) << message;
  }
}

// Tokens of three adapters and of none, interleaved one by one (as a batch of decodes) and in
// runs that start and end inside the kernel's tiles (as prompts), in batches below and above
// kLoraTiledFrom, so both forms of the kernel run: each run reduces r dot products of k in fp32
// (tolerance as for f32 sums), base-model rows are copied exactly.
TEST_F(BackendTest, LoraMatchesReference) {
  using SlotOfToken = int (*)(int token, int slots);
  const SlotOfToken interleaved = [](int t, int slots) { return (t * 5 + 1) % (slots + 1) - 1; };
  const SlotOfToken in_runs = [](int t, int slots) {
    return (t / 11 + t / 17 + 1) % (slots + 1) - 1;
  };
  for (auto [n, k, m, slots, rank, dtype] : {std::tuple{1, 16, 8, 1, 1, DType::kF32},
                                             {9, 100, 37, 3, 8, DType::kF32},
                                             {33, 300, 70, 3, 16, DType::kF32},
                                             {70, 130, 45, 2, 128, DType::kF32},
                                             // from kLoraTiledFrom tokens, in tiles of 8
                                             {1100, 40, 24, 3, 128, DType::kF32},
                                             {1030, 70, 33, 2, 16, DType::kF16},
                                             {9, 100, 37, 3, 8, DType::kF16},
                                             {33, 300, 70, 3, 16, DType::kF16}}) {
    const Tensor y = random_f32({n, m}, 51), x = random_f32({n, k}, 52);
    // f16 slots widen to the same values the reference reads, so one tolerance serves both.
    const Tensor a = random_weight(dtype, {slots, rank, k}, 53);
    const Tensor b = random_weight(dtype, {slots, rank, m}, 54);
    for (const SlotOfToken slot_of_token : {interleaved, in_runs}) {
      std::vector<int32_t> slot_of;
      for (int t = 0; t < n; ++t) slot_of.push_back(slot_of_token(t, slots));
      const Tensor token_slots = testing::i32_tensor(slot_of);
      const Tensor out = run([&](Graph& g) {
        return g.lora(device(y), device(x), device(a), device(b), device(token_slots));
      });
      Tensor ref = Tensor::host(DType::kF32, {n, m});
      reference::lora(y, x, a, b, token_slots, ref);
      expect_close(out, ref, kF32Rel, kF32Abs * k * rank);
    }
  }
}

TEST_F(BackendTest, LoraSlotOutOfRangeIsAnError) {
  Graph g = testing::graph_on(backend());
  g.lora(device(random_f32({2, 4}, 1)), device(random_f32({2, 3}, 2)),
         device(random_f32({2, 1, 3}, 3)), device(random_f32({2, 1, 4}, 4)),
         device(testing::i32_tensor({0, 2})), "blk.0.q_lora");
  try {
    backend().execute(g);
    FAIL() << "slot 2 of 2 accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("blk.0.q_lora"), std::string::npos) << message;
    EXPECT_NE(message.find("lora slot 2 of token 1"), std::string::npos) << message;
  }
}

TEST_F(BackendTest, RmsNormMatchesReference) {
  for (auto [n, d] : {std::pair{1, 1}, {3, 37}, {5, 4096}, {2, 5003}}) {
    const Tensor x = random_f32({n, d}, 41, -3.0f, 3.0f);
    const Tensor w = random_f32({d}, 42);
    const Tensor out = run([&](Graph& g) { return g.rms_norm(device(x), device(w), 1e-5f); });
    Tensor ref = Tensor::host(DType::kF32, {n, d});
    reference::rms_norm(x, w, 1e-5f, ref);
    expect_close(out, ref, kF32Rel, kF32Abs);
  }
}

struct RopeCase {
  std::string name;
  int64_t heads, head_dim;
  RopeParams params;
  int32_t max_pos;
};

class GpuRope : public BackendParamTest<RopeCase> {};

TEST_P(GpuRope, MatchesReference) {
  const RopeCase& c = GetParam();
  const int64_t n = 19;
  const Tensor x = random_f32({n, c.heads, c.head_dim}, 51);
  const Tensor pos = random_i32(n, c.max_pos + 1, 52);
  const Tensor out = run([&](Graph& g) { return g.rope(device(x), device(pos), c.params); });
  Tensor ref = Tensor::host(DType::kF32, x.shape());
  reference::rope(x, pos, c.params, ref);
  // Angles and rotations are computed in double as in the reference; only the final f32
  // rounding (and the last bits of sin/cos) can differ.
  expect_close(out, ref, kF32Rel, kF32Abs);
}

std::vector<RopeCase> rope_cases() {
  using testing::rope_params;
  RopeParams llama3 = rope_params(64, RopeMode::kNormal, 500000.0f);
  for (int i = 0; i < 32; ++i) llama3.freq_factors.push_back(1.0f + 0.25f * static_cast<float>(i));
  RopeParams yarn = rope_params(48, RopeMode::kNeox, 1000000.0f, 0.125f);
  yarn.yarn_ext_factor = 1.0f;
  yarn.yarn_original_context = 4096;
  yarn.attn_factor = 0.75f;
  return {
      {"yarn_partial_scaled", 3, 64, yarn, 30000},
      {"normal_full", 4, 16, rope_params(16), 50},
      {"neox_full", 3, 64, rope_params(64, RopeMode::kNeox, 1000000.0f), 4000},
      {"normal_partial_odd_rest", 2, 38, rope_params(24), 300},
      {"neox_partial", 5, 80, rope_params(32, RopeMode::kNeox), 100},
      {"linear_scaling", 2, 32, rope_params(32, RopeMode::kNormal, 10000.0f, 0.25f), 8000},
      {"llama3_freq_factors", 2, 64, llama3, 6000},
  };
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuRope, ::testing::ValuesIn(rope_cases()),
                         [](const auto& info) { return info.param.name; });

TEST_F(BackendTest, SwiGluMatchesReference) {
  const Tensor gate = random_f32({7, 301}, 61, -8.0f, 8.0f);
  const Tensor up = random_f32({7, 301}, 62);
  const Tensor out = run([&](Graph& g) { return g.swiglu(device(gate), device(up)); });
  Tensor ref = Tensor::host(DType::kF32, gate.shape());
  reference::swiglu(gate, up, ref);
  expect_close(out, ref, kF32Rel, kF32Abs);
}

TEST_F(BackendTest, AddMatchesReferenceExactlyWithAndWithoutBroadcast) {
  const Tensor a = random_f32({9, 133}, 71);
  for (const Tensor& b : {random_f32({9, 133}, 72), random_f32({133}, 73)}) {
    const Tensor out = run([&](Graph& g) { return g.add(device(a), device(b)); });
    Tensor ref = Tensor::host(DType::kF32, a.shape());
    reference::add(a, b, ref);
    expect_identical(out, ref);  // one correctly rounded f32 addition, as the reference's
  }
}

TEST_F(BackendTest, SoftmaxMatchesReference) {
  for (auto [n, d] : {std::pair{1, 1}, {4, 37}, {3, 32000}}) {
    const Tensor x = random_f32({n, d}, 81, -20.0f, 20.0f);
    const Tensor out = run([&](Graph& g) { return g.softmax(device(x)); });
    Tensor ref = Tensor::host(DType::kF32, x.shape());
    reference::softmax(x, ref);
    expect_close(out, ref, kF32Rel, 1e-9);
  }
}

TEST_F(BackendTest, ArgmaxMatchesReferenceExactlyAndTakesTheFirstMaximum) {
  Tensor x = random_f32({6, 50001}, 91);
  // Row 1: ties at 7 and 40000 -> 7. Row 2: all equal -> 0. Row 3: maximum at the end.
  x.data<float>()[50001 + 7] = 5.0f;
  x.data<float>()[50001 + 40000] = 5.0f;
  for (int64_t i = 0; i < 50001; ++i) x.data<float>()[2 * 50001 + i] = -1.5f;
  x.data<float>()[3 * 50001 + 50000] = 9.0f;
  const Tensor out = run([&](Graph& g) { return g.argmax(device(x)); });
  Tensor ref = Tensor::host(DType::kI32, {6});
  reference::argmax(x, ref);
  expect_identical(out, ref);
  EXPECT_EQ(out.data<int32_t>()[1], 7);
  EXPECT_EQ(out.data<int32_t>()[2], 0);
  EXPECT_EQ(out.data<int32_t>()[3], 50000);
}

}  // namespace
}  // namespace baton
