// CpuBackend as a Backend: registration, devices, supports(), memory copies and errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/host_buffer_pool.h"
#include "baton/error.h"
#include "core/runtime/backend_registry.h"
#include "tests/backends/cpu/cpu_test_util.h"

namespace baton {
namespace {

TEST(CpuBackend, IsRegisteredAndUsable) {
  const std::vector<std::string> names = BackendRegistry::global().names();
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  std::unique_ptr<Backend> backend = BackendRegistry::global().create("cpu", {.threads = 2});
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->name(), "cpu");
}

TEST(CpuBackend, ReportsOneDeviceWithItsThreadCount) {
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 3});
  const std::vector<DeviceInfo> devices = backend->devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "cpu0");
  EXPECT_NE(devices[0].description.find("3 threads"), std::string::npos) << devices[0].description;
  EXPECT_GT(devices[0].memory_bytes, 0u);
  // threads = 0 picks the hardware's count, at least one.
  EXPECT_EQ(make_cpu_backend({}).get()->devices()[0].description.find(" 0 threads"),
            std::string::npos);
}

TEST(CpuBackend, RejectsNegativeThreads) {
  EXPECT_THROW(make_cpu_backend({.threads = -1}), Error);
}

TEST(CpuBackend, UploadAndDownloadCopyBytesAndCheckSizes) {
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 1});
  Tensor t = backend->allocate_tensor(DType::kF32, {2, 3});
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};
  backend->upload(t, in.data(), 24);
  std::vector<float> out(6);
  backend->download(out.data(), t, 24);
  EXPECT_EQ(out, in);
  EXPECT_THROW(backend->upload(t, in.data(), 28), Error);
  EXPECT_THROW(backend->download(out.data(), Tensor(), 4), Error);
}

TEST(CpuBackend, SupportsTheWeightDtypesAndRejectsOthers) {
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 1});
  Graph g = testing::graph_on(*backend);
  Tensor x = Tensor::host(DType::kF32, {1, 32});
  for (DType w : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ4_0}) {
    g.matmul(x, Tensor::host(w, {2, 32}), "matmul_" + std::string(to_string(w)));
  }
  g.matmul(x, Tensor::host(DType::kI32, {2, 32}), "matmul_i32");
  const std::vector<Node>& nodes = g.nodes();
  for (size_t i = 0; i + 1 < nodes.size(); ++i)
    EXPECT_TRUE(backend->supports(nodes[i])) << nodes[i].name;
  EXPECT_FALSE(backend->supports(nodes.back()));
}

TEST(CpuBackend, UnsupportedNodeIsAnErrorNamingNodeAndDtype) {
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 1});
  Graph g = testing::graph_on(*backend);
  g.rms_norm(Tensor::host(DType::kBF16, {2, 8}), Tensor::host(DType::kF32, {8}), 1e-5f,
             "blk0.ffn_norm");
  try {
    backend->execute(g);
    FAIL() << "bf16 rms_norm input accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.category(), ErrorCategory::kUnsupported);
    EXPECT_NE(message.find("blk0.ffn_norm"), std::string::npos) << message;
    EXPECT_NE(message.find("bf16"), std::string::npos) << message;
  }
}

TEST(CpuBackend, F16CachesAreSupportedButMixedCacheDtypesAreNot) {
  std::unique_ptr<Backend> backend = make_cpu_backend({.threads = 1});
  Graph g = testing::graph_on(*backend);
  auto batch = std::make_shared<PagedBatch>();
  batch->block_size = 1;
  batch->token_seq = {0};
  batch->token_pos = {0};
  batch->block_tables = {{0}};
  Tensor q = Tensor::host(DType::kF32, {1, 2, 4});
  Tensor f16 = Tensor::host(DType::kF16, {1, 1, 2, 4});
  Tensor f32 = Tensor::host(DType::kF32, {1, 1, 2, 4});
  g.attention(q, f16, f16, {.scale = 1.0f, .batch = batch});
  g.attention(q, f16, f32, {.scale = 1.0f, .batch = batch});
  EXPECT_TRUE(backend->supports(g.nodes()[0]));
  EXPECT_FALSE(backend->supports(g.nodes()[1]));
}

TEST(HostBufferPool, BuffersTakeMemoryAtFirstUseAndGiveItBackOnDiscard) {
  cpu::HostBufferPool pool(size_t{1} << 20);
  const std::shared_ptr<Buffer> buffer = pool.allocate(1000);
  EXPECT_EQ(pool.cached_bytes(), 0u);
  buffer->data()[0] = std::byte{7};
  buffer->discard();
  EXPECT_EQ(pool.cached_bytes(), 1024u) << "1000 bytes rounded up to whole cache lines";
  EXPECT_EQ(buffer->data()[0], std::byte{0}) << "memory taken again is zeroed";
  EXPECT_EQ(pool.cached_bytes(), 0u);
}

TEST(HostBufferPool, MemoryTakenForOverwriteSkipsTheZeroFill) {
  cpu::HostBufferPool pool(size_t{1} << 20);
  const std::shared_ptr<Buffer> first = pool.allocate(1000);
  first->data()[0] = std::byte{7};
  first->discard();
  const std::shared_ptr<Buffer> second = pool.allocate(1000);
  std::byte* memory = second->data_for_overwrite();
  EXPECT_EQ(memory[0], std::byte{7}) << "the pooled block is handed back as it was left";
  EXPECT_EQ(second->data(), memory) << "later data() calls see the same memory";
  EXPECT_EQ(pool.cached_bytes(), 0u);
}

// A KV cache's first write comes from a kernel's parallel loop: every thread must see one block.
TEST(HostBufferPool, ThreadsTouchingAFreshBufferAtOnceShareItsMemory) {
  cpu::HostBufferPool pool(size_t{1} << 20);
  for (int round = 0; round < 20; ++round) {
    const std::shared_ptr<Buffer> buffer = pool.allocate(4096);
    std::vector<std::byte*> seen(8);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < seen.size(); ++t) {
      threads.emplace_back([&, t] { seen[t] = buffer->data(); });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(std::count(seen.begin(), seen.end(), seen[0]), 8);
  }
}

}  // namespace
}  // namespace baton
