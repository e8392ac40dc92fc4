// Reference swiglu, geglu, scale, softcap, add, softmax, argmax, and run_node's dispatch and error
// messages.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "baton/error.h"
#include "ops/reference.h"
#include "tests/ops/op_test_util.h"

namespace baton {
namespace {

using testing::f32_tensor;
using testing::values_of;

TEST(ReferenceSwiGlu, IsSiluOfGateTimesUp) {
  Tensor out = Tensor::host(DType::kF32, {1, 3});
  reference::swiglu(f32_tensor({1, 3}, {0, 1, -1}), f32_tensor({1, 3}, {5, 2, 3}), out);
  EXPECT_FLOAT_EQ(out.data<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(out.data<float>()[1], static_cast<float>(2 / (1 + std::exp(-1.0))));
  EXPECT_FLOAT_EQ(out.data<float>()[2], static_cast<float>(-3 / (1 + std::exp(1.0))));
}

TEST(ReferenceGeGlu, IsTanhGeluOfGateTimesUp) {
  Tensor out = Tensor::host(DType::kF32, {1, 3});
  reference::geglu(f32_tensor({1, 3}, {0, 1, -2}), f32_tensor({1, 3}, {5, 2, 3}), out);
  // gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): gelu(1) = 0.841192,
  // gelu(-2) = -0.0454023.
  EXPECT_FLOAT_EQ(out.data<float>()[0], 0.0f);
  EXPECT_NEAR(out.data<float>()[1], 2 * 0.841192, 1e-6);
  EXPECT_NEAR(out.data<float>()[2], 3 * -0.0454023, 1e-6);
}

TEST(ReferenceScaleAndSoftcap, ScaleMultipliesAndSoftcapBoundsByTheCap) {
  Tensor x = f32_tensor({1, 4}, {0, 3, -30, 1e6f});
  Tensor out = Tensor::host(DType::kF32, {1, 4});
  reference::scale(x, 0.5f, out);
  EXPECT_EQ(values_of(out), (std::vector<float>{0, 1.5f, -15, 5e5f}));
  reference::softcap(x, 30.0f, out);
  EXPECT_FLOAT_EQ(out.data<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(out.data<float>()[1], static_cast<float>(30 * std::tanh(0.1)));
  EXPECT_FLOAT_EQ(out.data<float>()[2], static_cast<float>(-30 * std::tanh(1.0)));
  EXPECT_FLOAT_EQ(out.data<float>()[3], 30.0f);
}

TEST(ReferenceAdd, SameShapeAndRowBroadcast) {
  Tensor a = f32_tensor({2, 2}, {1, 2, 3, 4});
  Tensor out = Tensor::host(DType::kF32, {2, 2});
  reference::add(a, f32_tensor({2, 2}, {10, 20, 30, 40}), out);
  EXPECT_EQ(values_of(out), (std::vector<float>{11, 22, 33, 44}));
  reference::add(a, f32_tensor({2}, {10, 20}), out);
  EXPECT_EQ(values_of(out), (std::vector<float>{11, 22, 13, 24}));
  EXPECT_THROW(reference::add(a, f32_tensor({3}, {1, 2, 3}), out), Error);
}

TEST(ReferenceSoftmax, NormalisesEachRowStably) {
  Tensor out = Tensor::host(DType::kF32, {2, 2});
  reference::softmax(f32_tensor({2, 2}, {0, std::log(2.0f), 1000, 1000}), out);
  EXPECT_FLOAT_EQ(out.data<float>()[0], 1.0f / 3);
  EXPECT_FLOAT_EQ(out.data<float>()[1], 2.0f / 3);
  EXPECT_FLOAT_EQ(out.data<float>()[2], 0.5f);  // exp(1000) would overflow without the max shift
  EXPECT_FLOAT_EQ(out.data<float>()[3], 0.5f);
}

TEST(ReferenceArgmax, FirstMaximumWinsPerRow) {
  Tensor out = Tensor::host(DType::kI32, {2});
  reference::argmax(f32_tensor({2, 3}, {1, 3, 3, -5, -6, -7}), out);
  EXPECT_EQ(out.data<int32_t>()[0], 1);
  EXPECT_EQ(out.data<int32_t>()[1], 0);
}

Graph host_graph() {
  return Graph([](DType dtype, Shape shape) { return Tensor::host(dtype, std::move(shape)); });
}

TEST(ReferenceRunNode, RunsAGraphsNodesInOrder) {
  Graph g = host_graph();
  Tensor sum = g.add(f32_tensor({1, 2}, {0, 0}), f32_tensor({2}, {0, std::log(3.0f)}));
  Tensor probs = g.softmax(sum);
  Tensor best = g.argmax(probs);
  for (const Node& node : g.nodes()) reference::run_node(node);
  EXPECT_FLOAT_EQ(probs.data<float>()[0], 0.25f);
  EXPECT_FLOAT_EQ(probs.data<float>()[1], 0.75f);
  EXPECT_EQ(best.data<int32_t>()[0], 1);
}

// Graph-building checks of Gemma 2's ops: a bad parameter names the node and the value.
TEST(GraphChecks, ScaleSoftcapAndAttentionRefuseBadParameters) {
  Graph g = host_graph();
  const Tensor x = f32_tensor({1, 2}, {1, 2});
  auto message = [](const std::function<void()>& build) {
    try {
      build();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { g.scale(x, INFINITY, "emb_scale"); }).find("emb_scale: factor inf"),
            std::string::npos);
  EXPECT_NE(message([&] { g.softcap(x, 0.0f, "cap"); }).find("cap: cap 0"), std::string::npos);
  const Tensor q = Tensor::host(DType::kF32, {1, 1, 2});
  const Tensor cache = Tensor::host(DType::kF32, {1, 1, 1, 2});
  auto batch = std::make_shared<PagedBatch>();
  batch->block_size = 1;
  batch->token_seq = {0};
  batch->token_pos = {0};
  batch->block_tables = {{0}};
  EXPECT_NE(message([&] {
              g.attention(q, cache, cache, {.window = -1, .batch = batch}, "a");
            }).find("a: window -1 must not be negative"),
            std::string::npos);
  EXPECT_NE(message([&] {
              g.attention(q, cache, cache, {.softcap = -2, .batch = batch}, "a");
            }).find("a: softcap -2"),
            std::string::npos);
}

TEST(ReferenceRunNode, ErrorNamesTheNodeAndTheBadDtype) {
  Graph g = host_graph();
  g.rms_norm(Tensor::host(DType::kF16, {2, 4}), f32_tensor({4}, {1, 1, 1, 1}), 1e-5f,
             "blk0.attn_norm");
  try {
    reference::run_node(g.nodes().at(0));
    FAIL() << "f16 rms_norm input accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.category(), ErrorCategory::kUnsupported);
    EXPECT_NE(message.find("blk0.attn_norm"), std::string::npos) << message;
    EXPECT_NE(message.find("f16"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace baton
