// Every op of the op table (core/runtime/op.h) is one the backend under test runs: for a typical
// node of each op, built as models build them, the backend's supports() must say yes, unless the
// op is among the refusals this file names for that backend. A new op without a kernel on some
// backend fails here, naming the op and the backend, until it gets one or a named refusal.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "core/runtime/comm/communicator.h"
#include "tests/backends/gpu/gpu_test_util.h"

namespace baton {
namespace {

using testing::BackendTest;
using testing::i32_tensor;
using testing::random_f32;
using testing::random_weight;

// Ops a backend does not run yet, by backend: Gemma 2's have no GPU kernels.
const std::map<std::string, std::set<std::string>> kRefusedOps = {
    {"cuda", {"geglu", "scale", "softcap"}},
    {"rocm", {"geglu", "scale", "softcap"}},
    {"gpusim", {"geglu", "scale", "softcap"}},
    {"gpusim64", {"geglu", "scale", "softcap"}},
};

// A one-rank group: all_reduce nodes need one to be runnable anywhere.
class SoloGroup final : public Communicator {
 public:
  int32_t rank() const override { return 0; }
  int32_t size() const override { return 1; }
  int32_t world_rank(int32_t) const override { return 0; }
  void all_reduce_sum(std::span<float>) override {}
  void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) override {
    std::copy(mine.begin(), mine.end(), all.begin());
  }
  void gather(std::span<const std::byte> mine, std::span<std::byte> all, int32_t) override {
    std::copy(mine.begin(), mine.end(), all.begin());
  }
  void broadcast(std::span<std::byte>, int32_t) override {}
  void send(std::span<const std::byte>, int32_t) override {}
  void recv(std::span<std::byte>, int32_t) override {}
  void wait_broadcast(std::span<std::byte>, int32_t) override {}
  std::unique_ptr<Communicator> split(int32_t, int32_t) override {
    return std::make_unique<SoloGroup>();
  }
  double seconds_in_operations() const override { return 0; }
  [[noreturn]] void abort() override { std::abort(); }
};

class OpCoverage : public BackendTest {};

TEST_F(OpCoverage, EveryOpOfTheTableRunsOrIsANamedRefusal) {
  constexpr int64_t kTokens = 4, kDim = 32, kHeads = 2, kHeadDim = 16, kBlock = 4;
  Backend& b = backend();
  Graph g = testing::graph_on(b);
  const Tensor x = device(random_f32({kTokens, kDim}, 1));
  const Tensor ids = device(i32_tensor({1, 0, 3, 2}));
  const Tensor positions = device(i32_tensor({0, 1, 2, 3}));
  const Tensor heads = device(random_f32({kTokens, kHeads, kHeadDim}, 2));
  const Tensor k_cache = b.allocate_tensor(DType::kF32, {2, kBlock, kHeads, kHeadDim});
  const Tensor v_cache = b.allocate_tensor(DType::kF32, {2, kBlock, kHeads, kHeadDim});
  auto batch = std::make_shared<PagedBatch>();
  batch->block_size = kBlock;
  batch->token_seq = {0, 0, 0, 0};
  batch->token_pos = {0, 1, 2, 3};
  batch->block_tables = {{1}};
  SoloGroup group;

  g.embedding(device(random_weight(DType::kF16, {8, kDim}, 3)), ids);
  g.matmul(x, device(random_weight(DType::kF16, {kDim, kDim}, 4)));
  g.rms_norm(x, device(random_f32({kDim}, 5)), 1e-5f);
  g.rope(heads, positions, testing::rope_params(kHeadDim));
  g.kv_write(heads, heads, k_cache, v_cache, batch);
  g.attention(heads, k_cache, v_cache, {.scale = 0.25f, .batch = batch});
  g.swiglu(x, x);
  g.geglu(x, x);
  g.scale(x, 2.0f);
  g.softcap(x, 30.0f);
  g.add(x, x);
  g.softmax(x);
  g.argmax(x);
  g.get_rows(x, device(i32_tensor({3, 0})));
  g.all_reduce(x, group);
  g.lora(x, x, device(random_f32({1, 4, kDim}, 6)), device(random_f32({1, 4, kDim}, 7)),
         device(i32_tensor({0, -1, 0, -1})));

  const auto refused = kRefusedOps.find(testing::gpu_backend_name());
  for (const OpSchema& op : kOpSchemas) {
    const auto node = std::ranges::find(g.nodes(), op.kind, &Node::op);
    if (node == g.nodes().end()) {
      ADD_FAILURE() << "op " << op.name << " has no node in this test: add one";
      continue;
    }
    EXPECT_TRUE(matches_schema(*node)) << op.name;
    const bool expected_refusal =
        refused != kRefusedOps.end() && refused->second.contains(std::string(op.name));
    EXPECT_EQ(b.supports(*node), !expected_refusal)
        << "backend " << testing::gpu_backend_name() << (expected_refusal ? " now runs" : " lacks")
        << " op " << op.name << " (" << op.summary << ")";
  }
}

}  // namespace
}  // namespace baton
