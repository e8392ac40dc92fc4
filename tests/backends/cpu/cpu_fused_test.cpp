// The executor's fused pairs (residual add + rms_norm, rope of K + KV-cache write) against the
// reference replayed node by node on the CPU run's own inputs: every tensor either node of a
// pair writes (the residual sum, the rotated K, the caches) must match, at every ISA level.

#include <gtest/gtest.h>

#include <cmath>

#include "ops/reference.h"
#include "tests/backends/cpu/cpu_test_util.h"
#include "tests/backends/cpu/isa_test_util.h"

namespace baton {
namespace {

using testing::copy_of;
using testing::random_f32;

constexpr int64_t kDim = 96, kHeads = 6, kKvHeads = 2, kHeadDim = 16, kFfn = 80;

// One Llama layer (with q/k/v biases, as Qwen2) on a batch of a 9-token prompt and a decode
// step of a sequence with 20 cached positions, followed by the next layer's norm so that both
// residual adds feed an rms_norm.
struct Layer {
  Tensor x = random_f32({10, kDim}, 1);
  Tensor attn_norm = random_f32({kDim}, 2, 0.5f, 1.5f);
  Tensor wq = random_f32({kHeads * kHeadDim, kDim}, 3, -0.2f, 0.2f);
  Tensor wk = random_f32({kKvHeads * kHeadDim, kDim}, 4, -0.2f, 0.2f);
  Tensor wv = random_f32({kKvHeads * kHeadDim, kDim}, 5, -0.2f, 0.2f);
  Tensor bq = random_f32({kHeads * kHeadDim}, 6), bk = random_f32({kKvHeads * kHeadDim}, 7);
  Tensor bv = random_f32({kKvHeads * kHeadDim}, 8);
  Tensor wo = random_f32({kDim, kHeads* kHeadDim}, 9, -0.2f, 0.2f);
  Tensor ffn_norm = random_f32({kDim}, 10, 0.5f, 1.5f);
  Tensor w_gate = random_f32({kFfn, kDim}, 11, -0.2f, 0.2f);
  Tensor w_up = random_f32({kFfn, kDim}, 12, -0.2f, 0.2f);
  Tensor w_down = random_f32({kDim, kFfn}, 13, -0.2f, 0.2f);
  Tensor positions = testing::i32_tensor({0, 1, 2, 3, 4, 5, 6, 7, 8, 20});
  std::shared_ptr<PagedBatch> batch = [] {
    auto b = std::make_shared<PagedBatch>();
    b->block_size = 8;
    b->token_seq = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    b->token_pos = {0, 1, 2, 3, 4, 5, 6, 7, 8, 20};
    b->block_tables = {{4, 1}, {0, 5, 2}};
    return b;
  }();

  void build(Graph& g, const Tensor& kc, const Tensor& vc) const {
    const int64_t n = x.dim(0);
    const RopeParams rope = testing::rope_params(kHeadDim, RopeMode::kNeox);
    const Tensor h = g.rms_norm(x, attn_norm, 1e-5f, "attn_norm");
    auto project = [&](const Tensor& w, const Tensor& b, int64_t heads, const char* name) {
      return g.add(g.matmul(h, w, name), b, std::string(name) + "_bias")
          .reshape({n, heads, kHeadDim});
    };
    // The model's order: rope of K directly before the cache write.
    const Tensor q_lin = project(wq, bq, kHeads, "q");
    const Tensor k_lin = project(wk, bk, kKvHeads, "k");
    const Tensor v = project(wv, bv, kKvHeads, "v");
    const Tensor q = g.rope(q_lin, positions, rope, "rope_q");
    const Tensor k = g.rope(k_lin, positions, rope, "rope_k");
    g.kv_write(k, v, kc, vc, batch, "kv_write");
    const Tensor attn = g.attention(q, kc, vc, {.scale = 0.25f, .batch = batch}, "attention");
    Tensor y = g.add(x, g.matmul(attn.reshape({n, kHeads * kHeadDim}), wo, "wo"), "attn_res");
    const Tensor h2 = g.rms_norm(y, ffn_norm, 1e-5f, "ffn_norm");
    const Tensor ffn = g.swiglu(g.matmul(h2, w_gate, "gate"), g.matmul(h2, w_up, "up"), "swiglu");
    y = g.add(y, g.matmul(ffn, w_down, "down"), "ffn_res");
    g.rms_norm(y, attn_norm, 1e-5f, "next_attn_norm");
  }
};

class CpuFused : public ::testing::TestWithParam<std::tuple<cpu::Isa, DType>> {};

TEST_P(CpuFused, FusedPairsWriteWhatTheirNodesWrite) {
  const auto& [isa, cache_dtype] = GetParam();
  const cpu::ScopedIsaOverride pin(isa);
  const Layer layer;
  const Shape cache_shape = {6, 8, kKvHeads, kHeadDim};
  Tensor kc0 = Tensor::host(cache_dtype, cache_shape), vc0 = Tensor::host(cache_dtype, cache_shape);
  reference::kv_write(
      random_f32({48, kKvHeads, kHeadDim}, 14), random_f32({48, kKvHeads, kHeadDim}, 15),
      kc0.reshape({48, 1, kKvHeads, kHeadDim}), vc0.reshape({48, 1, kKvHeads, kHeadDim}), [] {
        PagedBatch b;
        b.block_size = 1;
        for (int32_t i = 0; i < 48; ++i) {
          b.token_seq.push_back(0);
          b.token_pos.push_back(i);
          b.block_tables.resize(1);
          b.block_tables[0].push_back(i);
        }
        return b;
      }());
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 2});
  Graph g = testing::graph_on(*backend);
  const Tensor kc = copy_of(kc0), vc = copy_of(vc0);
  layer.build(g, kc, vc);
  backend->execute(g);

  const std::vector<Node>& nodes = g.nodes();
  int pairs = 0;
  for (size_t i = 0; i + 1 < nodes.size(); ++i) {
    const bool rope_kv = nodes[i].op == OpKind::kRope && nodes[i + 1].op == OpKind::kKvWrite;
    const bool add_norm = nodes[i].op == OpKind::kAdd && nodes[i + 1].op == OpKind::kRmsNorm;
    pairs += rope_kv || add_norm;
  }
  ASSERT_EQ(pairs, 3) << "the graph no longer has the pairs under test";
  for (const Node& node : nodes) {
    SCOPED_TRACE(node.name);
    Node ref = node;
    if (node.op == OpKind::kKvWrite) {
      ref.inputs[2] = copy_of(kc0);
      ref.inputs[3] = copy_of(vc0);
      reference::run_node(ref);
      testing::expect_identical(node.inputs[2], ref.inputs[2]);
      testing::expect_identical(node.inputs[3], ref.inputs[3]);
      continue;
    }
    ref.output = Tensor::host(node.output.dtype(), node.output.shape());
    reference::run_node(ref);
    // Matmuls sum up to 96 fp32 products; the rest are a few fp32 operations per element, the
    // same tolerances as the unfused kernels' own tests.
    testing::expect_close(node.output, ref.output, 1e-5, node.op == OpKind::kMatMul ? 1e-4 : 2e-6);
  }
}

INSTANTIATE_TEST_SUITE_P(IsasAndCaches, CpuFused,
                         ::testing::Combine(::testing::ValuesIn(testing::supported_isas()),
                                            ::testing::Values(DType::kF32, DType::kF16,
                                                              DType::kBF16, DType::kF8E4M3,
                                                              DType::kI8Scaled)),
                         [](const auto& info) {
                           return testing::isa_name(std::get<0>(info.param)) + "_" +
                                  std::string(to_string(std::get<1>(info.param)));
                         });

}  // namespace
}  // namespace baton
