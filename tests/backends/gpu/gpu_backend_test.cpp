// The GPU backend's memory and interface: copies, zero-filled allocations, which nodes it takes
// and the errors for those it does not, and a chain of nodes whose intermediate tensors live
// only on the device.

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ops/reference.h"
#include "tests/backends/gpu/gpu_test_util.h"

namespace baton {
namespace {

using testing::BackendTest;
using testing::expect_identical;
using testing::GpuOnlyTest;
using testing::random_f32;
using testing::random_weight;

TEST_F(BackendTest, NamesItselfAndADevice) {
  EXPECT_EQ(backend().name(), testing::gpu_backend_name());
  const std::vector<DeviceInfo> devices = backend().devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_GT(devices[0].memory_bytes, 0u);
}

TEST_F(GpuOnlyTest, UploadDownloadRoundTripsAndSlicesAddressTheirRows) {
  const Tensor x = random_f32({5, 7}, 1);
  const Tensor d = device(x);
  EXPECT_FALSE(d.buffer()->is_host());
  expect_identical(host(d), x);
  // Rows 2..3 of the device tensor, overwritten from the host, then read back whole.
  const Tensor rows = random_f32({2, 7}, 2);
  backend().upload(d.slice_rows(2, 2), rows.materialize(), rows.nbytes());
  const Tensor back = host(d);
  EXPECT_EQ(
      std::memcmp(back.materialize() + 2 * 7 * sizeof(float), rows.materialize(), rows.nbytes()),
      0);
  EXPECT_EQ(std::memcmp(back.materialize(), x.materialize(), 2 * 7 * sizeof(float)), 0);
}

TEST_F(BackendTest, AllocationsAreZeroFilledEvenWhenMemoryIsReused) {
  for (int round = 0; round < 3; ++round) {
    Tensor t = backend().allocate_tensor(DType::kF32, {1000});
    expect_identical(host(t), Tensor::host(DType::kF32, {1000}));
    const Tensor ones = testing::f32_tensor({1000}, std::vector<float>(1000, 1.0f));
    backend().upload(t, ones.materialize(),
                     ones.nbytes());  // dirty it before it returns to the cache
  }
}

TEST_F(GpuOnlyTest, CopiesBeyondTheTensorAreErrors) {
  const Tensor d = backend().allocate_tensor(DType::kF32, {4});
  std::vector<float> buffer(8);
  EXPECT_THROW(backend().upload(d, buffer.data(), 8 * sizeof(float)), Error);
  EXPECT_THROW(backend().download(buffer.data(), d, 8 * sizeof(float)), Error);
  EXPECT_THROW(backend().upload(Tensor::host(DType::kF32, {4}), buffer.data(), 4), Error);
}

TEST_F(GpuOnlyTest, HostTensorsAreNotSupportedAndTheErrorNamesTheNode) {
  Graph g = testing::graph_on(backend());
  g.matmul(device(random_f32({2, 8}, 1)), random_weight(DType::kF32, {3, 8}, 2), "wq_on_host");
  EXPECT_FALSE(backend().supports(g.nodes()[0]));
  try {
    backend().execute(g);
    FAIL() << "a host weight was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kUnsupported);
    const std::string message = e.what();
    EXPECT_NE(message.find("wq_on_host"), std::string::npos) << message;
    EXPECT_NE(message.find("not " + testing::gpu_backend_name() + " memory"), std::string::npos)
        << message;
  }
}

TEST_F(BackendTest, ImportingADeviceTensorKeepsIt) {
  const Tensor d = device(random_f32({3}, 1));
  EXPECT_EQ(backend().import_tensor(d).buffer(), d.buffer());
}

// rms_norm -> matmul (q8_0) -> swiglu -> matmul (f16) -> add: each node reads what the one
// before wrote on the device; the result equals the reference chain within the last GEMM's
// rounding of its input to f16 (the q8_0 GEMV is exact in its inputs).
TEST_F(GpuOnlyTest, AChainOfNodesMatchesTheReferenceChain) {
  const int64_t n = 3, d = 64, f = 96;
  const Tensor x = random_f32({n, d}, 1), norm_w = random_f32({d}, 2);
  const Tensor w_gate = random_weight(DType::kQ8_0, {f, d}, 3);
  const Tensor w_up = random_weight(DType::kQ8_0, {f, d}, 4);
  const Tensor w_down = random_weight(DType::kF16, {d, f}, 5);
  const Tensor out = run([&](Graph& g) {
    const Tensor x_dev = device(x);
    const Tensor h = g.rms_norm(x_dev, device(norm_w), 1e-5f);
    const Tensor act = g.swiglu(g.matmul(h, device(w_gate)), g.matmul(h, device(w_up)));
    return g.add(x_dev, g.matmul(act, device(w_down)));
  });
  Tensor h = Tensor::host(DType::kF32, {n, d}), gate = Tensor::host(DType::kF32, {n, f});
  Tensor up = Tensor::host(DType::kF32, {n, f}), act = Tensor::host(DType::kF32, {n, f});
  Tensor down = Tensor::host(DType::kF32, {n, d}), ref = Tensor::host(DType::kF32, {n, d});
  reference::rms_norm(x, norm_w, 1e-5f, h);
  reference::matmul(h, w_gate, gate);
  reference::matmul(h, w_up, up);
  reference::swiglu(gate, up, act);
  reference::matmul(act, w_down, down);
  reference::add(x, down, ref);
  // The f16 rounding of act for the f16 weight (2^-11 relative), plus what the f32 steps before
  // it (relative ~1e-6 each) carry into act, bounded by 1e-4 relative.
  testing::expect_matmul_close(out, ref, act, w_down, 1.0 / 2048 + 1e-4);
}

}  // namespace
}  // namespace baton
