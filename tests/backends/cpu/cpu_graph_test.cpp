// A small Llama-style step (embedding, attention block with rope and a paged cache, SwiGLU
// FFN, logits, softmax, argmax) run by CpuBackend::execute and checked node by node against
// reference::run_node fed the CPU's own inputs, so each node's error is its own.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/isa/cpu_isa.h"
#include "ops/reference.h"
#include "tests/backends/cpu/cpu_test_util.h"

namespace baton {
namespace {

using testing::copy_of;
using testing::expect_close;
using testing::expect_identical;
using testing::random_f32;
using testing::random_weight;

constexpr int64_t kDim = 64, kHeads = 4, kKvHeads = 2, kHeadDim = 16, kFfn = 96, kVocab = 40;
constexpr int kBlockSize = 4;

struct Step {
  Tensor tok_embd = random_weight(DType::kQ8_0, {kVocab, kDim}, 71);
  Tensor attn_norm = random_f32({kDim}, 72, 0.5f, 1.5f);
  Tensor wq = random_weight(DType::kF16, {kHeads * kHeadDim, kDim}, 73);
  Tensor wk = random_weight(DType::kQ4_0, {kKvHeads * kHeadDim, kDim}, 74);
  Tensor wv = random_weight(DType::kBF16, {kKvHeads * kHeadDim, kDim}, 75);
  Tensor wo = random_weight(DType::kQ8_0, {kDim, kHeads* kHeadDim}, 76);
  Tensor ffn_norm = random_f32({kDim}, 77, 0.5f, 1.5f);
  Tensor w_gate = random_weight(DType::kQ4_0, {kFfn, kDim}, 78);
  Tensor w_up = random_weight(DType::kF32, {kFfn, kDim}, 79);
  Tensor w_down = random_weight(DType::kQ8_0, {kDim, kFfn}, 80);
  Tensor out_norm = random_f32({kDim}, 81, 0.5f, 1.5f);
  Tensor output = random_weight(DType::kF16, {kVocab, kDim}, 82);
  // Sequence 0 starts with a 5-token prompt; sequence 1 decodes 2 tokens after 3 cached ones.
  Tensor ids = testing::i32_tensor({1, 7, 7, 39, 0, 12, 30});
  Tensor positions = testing::i32_tensor({0, 1, 2, 3, 4, 3, 4});
  Tensor last_rows = testing::i32_tensor({4, 6});
  std::shared_ptr<PagedBatch> batch = [] {
    auto b = std::make_shared<PagedBatch>();
    b->block_size = kBlockSize;
    b->token_seq = {0, 0, 0, 0, 0, 1, 1};
    b->token_pos = {0, 1, 2, 3, 4, 3, 4};
    b->block_tables = {{5, 2}, {0, 4}};
    return b;
  }();
  Tensor k_cache = random_f32({6, kBlockSize, kKvHeads, kHeadDim}, 83);
  Tensor v_cache = random_f32({6, kBlockSize, kKvHeads, kHeadDim}, 84);

  void build(Graph& g, const Tensor& kc, const Tensor& vc) const {
    const int64_t n = ids.dim(0);
    const RopeParams rope = testing::rope_params(kHeadDim);
    Tensor x = g.embedding(tok_embd, ids, "tok_embd");
    Tensor h = g.rms_norm(x, attn_norm, 1e-5f, "attn_norm");
    Tensor q =
        g.rope(g.matmul(h, wq, "wq").reshape({n, kHeads, kHeadDim}), positions, rope, "rope_q");
    Tensor k =
        g.rope(g.matmul(h, wk, "wk").reshape({n, kKvHeads, kHeadDim}), positions, rope, "rope_k");
    Tensor v = g.matmul(h, wv, "wv").reshape({n, kKvHeads, kHeadDim});
    g.kv_write(k, v, kc, vc, batch, "kv_write");
    Tensor attn = g.attention(q, kc, vc, {.scale = 0.25f, .batch = batch}, "attention");
    x = g.add(x, g.matmul(attn.reshape({n, kHeads * kHeadDim}), wo, "wo"), "attn_residual");
    h = g.rms_norm(x, ffn_norm, 1e-5f, "ffn_norm");
    Tensor ffn = g.swiglu(g.matmul(h, w_gate, "w_gate"), g.matmul(h, w_up, "w_up"), "swiglu");
    x = g.add(x, g.matmul(ffn, w_down, "w_down"), "ffn_residual");
    h = g.rms_norm(g.get_rows(x, last_rows, "last_rows"), out_norm, 1e-5f, "out_norm");
    Tensor logits = g.matmul(h, output, "output");
    g.softmax(logits, "probs");
    g.argmax(logits, "next_token");
  }
};

// f32 tolerances per node: matmuls sum up to 96 fp32 products, the rest are a few fp32 ops
// per element (see the per-op tests for each op's bound).
void expect_node_close(const Node& node, const Tensor& cpu, const Tensor& ref) {
  SCOPED_TRACE(node.name);
  if (cpu.dtype() != DType::kF32) return expect_identical(cpu, ref);
  const double atol = node.op == OpKind::kMatMul ? 1e-4 : 2e-6;
  expect_close(cpu, ref, 1e-5, atol);
}

TEST(CpuGraph, ExecuteMatchesReferenceNodeByNode) {
  // The step has a Q4_0 weight; its AVX kernels quantize x to int8 and are checked against
  // bounds of their own (quantized_matmul_test.cpp), the fused AVX kernels in cpu_fused_test.cpp.
  const cpu::ScopedIsaOverride exact_path(cpu::Isa::kGeneric);
  const Step step;
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 2});
  Graph g = testing::graph_on(*backend);
  Tensor kc = copy_of(step.k_cache), vc = copy_of(step.v_cache);
  step.build(g, kc, vc);
  backend->execute(g);

  for (const Node& node : g.nodes()) {
    Node ref = node;
    if (node.op == OpKind::kKvWrite) {
      // Replays the write on the caches as they were before the step.
      ref.inputs[2] = copy_of(step.k_cache);
      ref.inputs[3] = copy_of(step.v_cache);
      reference::run_node(ref);
      expect_identical(node.inputs[2], ref.inputs[2]);
      expect_identical(node.inputs[3], ref.inputs[3]);
      continue;
    }
    ref.output = Tensor::host(node.output.dtype(), node.output.shape());
    reference::run_node(ref);
    expect_node_close(node, node.output, ref.output);
  }
}

TEST(CpuGraph, OneAndTwoThreadsGiveIdenticalResults) {
  const Step step;
  std::vector<std::vector<Tensor>> results;
  for (int threads : {1, 2}) {
    std::unique_ptr<Backend> backend = make_cpu_backend({.threads = threads});
    Graph g = testing::graph_on(*backend);
    Tensor kc = copy_of(step.k_cache), vc = copy_of(step.v_cache);
    step.build(g, kc, vc);
    backend->execute(g);
    std::vector<Tensor> outputs = {kc, vc};
    for (const Node& node : g.nodes()) {
      if (node.output.defined()) outputs.push_back(node.output);
    }
    results.push_back(outputs);
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t i = 0; i < results[0].size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    expect_identical(results[0][i], results[1][i]);
  }
}

// The step on a backend of its own, on copies of the caches, with its last two outputs (the
// probabilities and the next token) at hand.
struct StepOnBackend {
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 2});
  Graph graph = testing::graph_on(*backend);
  Tensor kc, vc, probs, next;

  explicit StepOnBackend(const Step& step) : kc(copy_of(step.k_cache)), vc(copy_of(step.v_cache)) {
    step.build(graph, kc, vc);
    probs = graph.nodes()[graph.nodes().size() - 2].output;
    next = graph.nodes().back().output;
  }
};

// With its outputs declared, the step's intermediates give their memory back after their last
// reader, and the declared outputs come out as when every node output is kept.
TEST(CpuGraph, DeclaredOutputsKeepTheirValuesWhileIntermediatesAreDiscarded) {
  const Step step;
  std::vector<Tensor> kept_all, declared;
  std::vector<size_t> memory_held;
  for (bool declare : {false, true}) {
    StepOnBackend run(step);
    const Tensor &probs = run.probs, &next = run.next;
    if (declare) run.graph.set_outputs({probs, next});
    run.backend->execute(run.graph);
    (declare ? declared : kept_all) = {probs, next, run.kc, run.vc};
    // A discarded buffer takes fresh, zeroed memory when read again.
    size_t held = 0;
    for (const Node& node : run.graph.nodes()) {
      const Tensor& out = node.output;
      if (!out.defined() || out.buffer() == probs.buffer() || out.buffer() == next.buffer()) {
        continue;
      }
      held += std::any_of(out.materialize(), out.materialize() + out.nbytes(),
                          [](std::byte b) { return b != std::byte{0}; });
    }
    memory_held.push_back(held);
  }
  for (size_t i = 0; i < declared.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    expect_identical(kept_all[i], declared[i]);
  }
  EXPECT_EQ(memory_held[1], 0u) << "intermediates kept their values";
  EXPECT_GT(memory_held[0], 10u);
}

// Node outputs take pooled memory without a zero fill: a step whose pool holds blocks of NaN
// bytes must give the outputs of a step on fresh memory, so no kernel leaves part of its output
// unwritten.
TEST(CpuGraph, OutputsTakingDirtyPooledMemoryComeOutAsOnFreshMemory) {
  const Step step;
  std::vector<std::vector<Tensor>> results;
  for (bool dirty : {false, true}) {
    StepOnBackend run(step);
    run.graph.set_outputs({run.probs, run.next});
    if (dirty) {
      // Blocks of every output's size go back to the pool full of 0xff bytes (NaN as f32).
      std::vector<Tensor> garbage;
      for (const Node& node : run.graph.nodes()) {
        if (!node.output.defined()) continue;
        garbage.push_back(run.backend->allocate_tensor(node.output.dtype(), node.output.shape()));
        std::fill_n(garbage.back().materialize(), garbage.back().nbytes(), std::byte{0xff});
      }
    }
    run.backend->execute(run.graph);
    results.push_back({run.probs, run.next, run.kc, run.vc});
  }
  for (size_t i = 0; i < results[0].size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    expect_identical(results[0][i], results[1][i]);
  }
}

}  // namespace
}  // namespace baton
