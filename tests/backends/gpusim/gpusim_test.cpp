// The simulator's own rules, on small kernels written here: what a kernel computes, and that
// each mistake it exists to catch (an access out of bounds, a read of memory never written, a
// missing or unreachable __syncthreads, a bad launch) fails naming the kernel, the block and
// the thread. This file is compiled as a kernel pass (gpu_runtime.h's device vocabulary and the
// per-access checks), with 32-lane warps.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "backends/gpu/gpu_runtime.h"

namespace gpusim {
int warp_size() {
  return BATON_GPUSIM_WARP_SIZE;
}
}  // namespace gpusim

namespace baton::gpu {
namespace {

__global__ void scale_by_two(const float* in, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = 2.0f * in[i];
}

// Reads one element past the end for the last thread: an off-by-one in a bound.
__global__ void read_one_past(const float* in, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i <= n) out[i < n ? i : 0] = in[i];
}

// Reverses a block's 64 values through shared memory; `barrier` false drops the
// __syncthreads() between the writes and the reads of other threads' values.
template <bool barrier>
__global__ void reverse_block(const float* in, float* out) {
  GPU_SHARED_ARRAY(float, tile, [64]);
  const int t = static_cast<int>(threadIdx.x);
  tile[t] = in[t];
  if (barrier) __syncthreads();
  out[t] = tile[63 - t];
}

// Threads past `active` leave before the barrier that the others wait at.
__global__ void early_exit(float* out, int active) {
  const int t = static_cast<int>(threadIdx.x);
  if (t >= active) return;
  out[t] = 1.0f;
  __syncthreads();
}

__global__ void shared_overrun(float* out) {
  GPU_SHARED_ARRAY(float, tile, [32]);
  const int t = static_cast<int>(threadIdx.x);
  tile[t] = 1.0f;
  __syncthreads();
  out[t] = tile[t + 1] + tile[t];  // thread 31 reads tile[32]
}

__global__ void reduce_warps(const float* in, float* sums, float* group_max) {
  const int t = static_cast<int>(threadIdx.x);
  const float value = in[blockIdx.x * blockDim.x + t];
  const float sum = warp_reduce_sum(value);
  const float max8 = warp_reduce_max<8>(value);
  if (t % kWarpSize == 0) sums[(blockIdx.x * blockDim.x + t) / kWarpSize] = sum;
  group_max[blockIdx.x * blockDim.x + t] = max8;
}

__global__ void dynamic_fill(float* out, int n) {
  GPU_DYNAMIC_SHARED(float, buffer);
  const int t = static_cast<int>(threadIdx.x);
  for (int i = t; i < n; i += static_cast<int>(blockDim.x)) buffer[i] = static_cast<float>(i);
  __syncthreads();
  if (t == 0) out[0] = buffer[n - 1];
}

class Gpusim : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)gpusim::get_last_error();  // an earlier test's fault may still be this thread's
    ASSERT_EQ(gpusim::stream_create_with_flags(&stream_, 0), gpusim::kSuccess);
  }
  void TearDown() override {
    for (void* p : allocations_) gpusim::free(p);
    gpusim::stream_destroy(stream_);
  }

  float* device(size_t count) {
    void* p = nullptr;
    EXPECT_EQ(gpusim::malloc(&p, count * sizeof(float)), gpusim::kSuccess);
    allocations_.push_back(p);
    return static_cast<float*>(p);
  }
  float* upload(const std::vector<float>& host) {
    float* p = device(host.size());
    EXPECT_EQ(gpusim::memcpy_async(p, host.data(), host.size() * sizeof(float),
                                   gpusim::kMemcpyHostToDevice, stream_),
              gpusim::kSuccess);
    return p;
  }
  std::vector<float> download(const float* p, size_t count) {
    std::vector<float> host(count);
    EXPECT_EQ(gpusim::memcpy_async(host.data(), p, count * sizeof(float),
                                   gpusim::kMemcpyDeviceToHost, stream_),
              gpusim::kSuccess);
    return host;
  }
  // The fault the stream stopped with ("" when it finished cleanly).
  std::string fault() {
    const gpusim::Error e = gpusim::stream_synchronize(stream_);
    return e == gpusim::kSuccess ? "" : gpusim::get_error_string(e);
  }

  gpusim::Stream stream_ = nullptr;
  std::vector<void*> allocations_;
};

TEST_F(Gpusim, RunsEveryThreadOfEveryBlock) {
  std::vector<float> in(1000);
  std::iota(in.begin(), in.end(), 0.0f);
  const float* d_in = upload(in);
  float* d_out = device(in.size());
  launch<&scale_by_two>(dim3(4), dim3(256), 0, stream_, d_in, d_out, 1000);
  ASSERT_EQ(gpusim::get_last_error(), gpusim::kSuccess);
  const std::vector<float> out = download(d_out, in.size());
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], 2.0f * in[i]) << i;
}

TEST_F(Gpusim, AReadPastAnAllocationNamesKernelBlockAndThread) {
  const float* d_in = upload(std::vector<float>(100, 1.0f));
  float* d_out = device(100);
  launch<&read_one_past>(dim3(1), dim3(128), 0, stream_, d_in, d_out, 100);
  const std::string report = fault();
  EXPECT_NE(report.find("kernel read_one_past, block (0, 0, 0), thread (100, 0, 0)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("out of bounds: 0 bytes past the end of a 400-byte allocation"),
            std::string::npos)
      << report;
}

TEST_F(Gpusim, AReadFarBeyondEveryAllocationIsAFaultNotACrash) {
  const float* d_in = upload(std::vector<float>(8, 1.0f));
  float* d_out = device(8);
  // A row stride gone wrong: 1 GiB past the input, where no shadow page was ever mapped.
  launch<&scale_by_two>(dim3(1), dim3(8), 0, stream_, d_in + (size_t{1} << 28), d_out, 8);
  const std::string report = fault();
  EXPECT_NE(report.find("kernel scale_by_two, block (0, 0, 0), thread (0, 0, 0): read of 4 bytes"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("is out of bounds"), std::string::npos) << report;
}

TEST_F(Gpusim, AFaultStopsItsStreamAndLaterCallsReportIt) {
  const float* d_in = upload(std::vector<float>(10, 1.0f));
  float* d_out = device(10);
  launch<&read_one_past>(dim3(1), dim3(32), 0, stream_, d_in, d_out, 10);
  EXPECT_NE(fault(), "");
  launch<&scale_by_two>(dim3(1), dim3(32), 0, stream_, d_in, d_out, 10);
  EXPECT_EQ(gpusim::get_last_error(), gpusim::kErrorKernelFault);
  gpusim::Stream fresh = nullptr;
  ASSERT_EQ(gpusim::stream_create_with_flags(&fresh, 0), gpusim::kSuccess);
  launch<&scale_by_two>(dim3(1), dim3(32), 0, fresh, d_in, d_out, 10);
  EXPECT_EQ(gpusim::stream_synchronize(fresh), gpusim::kSuccess);
  gpusim::stream_destroy(fresh);
}

TEST_F(Gpusim, AReadOfMemoryNeverWrittenIsAFault) {
  const float* never_written = device(64);
  float* d_out = device(64);
  launch<&scale_by_two>(dim3(1), dim3(64), 0, stream_, never_written, d_out, 64);
  const std::string report = fault();
  EXPECT_NE(report.find("kernel scale_by_two, block (0, 0, 0), thread (0, 0, 0)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("reads memory never written: byte 0 of a 256-byte allocation"),
            std::string::npos)
      << report;
}

TEST_F(Gpusim, SharedMemoryWithItsBarrierReversesABlock) {
  std::vector<float> in(64);
  std::iota(in.begin(), in.end(), 0.0f);
  const float* d_in = upload(in);
  float* d_out = device(64);
  launch<&reverse_block<true>>(dim3(1), dim3(64), 0, stream_, d_in, d_out);
  const std::vector<float> out = download(d_out, 64);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], 63.0f - i);
}

TEST_F(Gpusim, AMissingBarrierReadsSharedMemoryNotYetWritten) {
  const float* d_in = upload(std::vector<float>(64, 1.0f));
  float* d_out = device(64);
  launch<&reverse_block<false>>(dim3(1), dim3(64), 0, stream_, d_in, d_out);
  const std::string report = fault();
  EXPECT_NE(report.find("kernel reverse_block<false>, block (0, 0, 0), thread (0, 0, 0)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("never written: byte 252 of shared array 0 (256 bytes)"), std::string::npos)
      << report;
}

TEST_F(Gpusim, ABarrierSomeThreadsNeverReachIsAFault) {
  float* d_out = device(64);
  launch<&early_exit>(dim3(1), dim3(64), 0, stream_, d_out, 40);
  const std::string report = fault();
  EXPECT_NE(report.find("kernel early_exit, block (0, 0, 0), thread (40, 0, 0): exited without "
                        "reaching the __syncthreads() that 40 of the block's 64 threads wait at"),
            std::string::npos)
      << report;
}

TEST_F(Gpusim, ASharedArrayOverrunIsAFault) {
  float* d_out = device(32);
  launch<&shared_overrun>(dim3(1), dim3(32), 0, stream_, d_out);
  const std::string report = fault();
  EXPECT_NE(report.find("thread (31, 0, 0): read of 4 bytes"), std::string::npos) << report;
  EXPECT_NE(report.find("0 bytes past the end of shared array 0 (128 bytes)"), std::string::npos)
      << report;
}

TEST_F(Gpusim, WarpReductionsCombineLanesOfTheirGroup) {
  std::vector<float> in(128);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 37) % 101);
  const float* d_in = upload(in);
  float* sums = device(4);
  float* max8 = device(128);
  launch<&reduce_warps>(dim3(2), dim3(64), 0, stream_, d_in, sums, max8);
  const std::vector<float> got_sums = download(sums, 4), got_max = download(max8, 128);
  for (size_t w = 0; w < 4; ++w) {
    EXPECT_EQ(got_sums[w], std::accumulate(in.begin() + 32 * w, in.begin() + 32 * (w + 1), 0.0f));
  }
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t group = i / 8 * 8;
    EXPECT_EQ(got_max[i], *std::max_element(in.begin() + group, in.begin() + group + 8)) << i;
  }
}

TEST_F(Gpusim, LaunchesOutsideTheDeviceLimitsFailAtTheLaunch) {
  float* d_out = device(1);
  launch<&dynamic_fill>(dim3(1), dim3(2048), 0, stream_, d_out, 1);
  EXPECT_EQ(gpusim::get_last_error(), gpusim::kErrorInvalidConfiguration);
  constexpr int kBig = 60 * 1024 / 4;
  launch<&dynamic_fill>(dim3(1), dim3(128), kBig * sizeof(float), stream_, d_out, kBig);
  const gpusim::Error refused = gpusim::get_last_error();
  ASSERT_EQ(refused, gpusim::kErrorInvalidConfiguration);
  EXPECT_NE(std::string(gpusim::get_error_string(refused)).find("over the 49152 bytes"),
            std::string::npos);
  ASSERT_EQ(gpusim::func_set_attribute(reinterpret_cast<const void*>(&dynamic_fill),
                                       gpusim::kFuncAttributeMaxDynamicSharedMemorySize,
                                       kBig * static_cast<int>(sizeof(float))),
            gpusim::kSuccess);
  launch<&dynamic_fill>(dim3(1), dim3(128), kBig * sizeof(float), stream_, d_out, kBig);
  EXPECT_EQ(gpusim::get_last_error(), gpusim::kSuccess);
  EXPECT_EQ(download(d_out, 1)[0], kBig - 1.0f);
}

TEST_F(Gpusim, CopiesOutsideDeviceMemoryAreRefused) {
  std::vector<float> host(8, 1.0f), other(8);
  EXPECT_EQ(
      gpusim::memcpy_async(other.data(), host.data(), 32, gpusim::kMemcpyHostToDevice, stream_),
      gpusim::kErrorInvalidValue);
  float* d = device(8);
  EXPECT_EQ(gpusim::memcpy_async(d, host.data(), 64, gpusim::kMemcpyHostToDevice, stream_),
            gpusim::kErrorInvalidValue);
  float* e = device(8);
  EXPECT_EQ(gpusim::memcpy_async(d, e, 32, gpusim::kMemcpyHostToDevice, stream_),
            gpusim::kErrorInvalidValue)
      << "the host side of a copy is device memory";
  EXPECT_EQ(gpusim::get_last_error(), gpusim::kErrorInvalidValue);
}

TEST_F(Gpusim, PinnedCopiesRunInStreamOrder) {
  float* d = upload(std::vector<float>(4, 3.0f));
  void* pinned = nullptr;
  ASSERT_EQ(gpusim::malloc_host(&pinned, 4 * sizeof(float)), gpusim::kSuccess);
  gpusim::Event done = nullptr;
  ASSERT_EQ(gpusim::event_create_with_flags(&done, gpusim::kEventDisableTiming), gpusim::kSuccess);
  ASSERT_EQ(
      gpusim::memcpy_async(pinned, d, 4 * sizeof(float), gpusim::kMemcpyDeviceToHost, stream_),
      gpusim::kSuccess);
  ASSERT_EQ(gpusim::event_record(done, stream_), gpusim::kSuccess);
  ASSERT_EQ(gpusim::event_synchronize(done), gpusim::kSuccess);
  EXPECT_EQ(static_cast<float*>(pinned)[3], 3.0f);
  gpusim::event_destroy(done);
  gpusim::free_host(pinned);
}

}  // namespace
}  // namespace baton::gpu
