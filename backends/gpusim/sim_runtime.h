#pragma once

// gpusim's runtime API: the host side of a simulated GPU, in the shape of the CUDA runtime
// calls that backends/gpu uses. gpu_runtime.h maps its gpu* names onto these when it is
// compiled with BATON_GPU_SIM, exactly as it maps them onto CUDA or HIP otherwise.
//
// What it models, so that the shared host code and kernels meet a device's rules:
// - device memory is its own address range; every byte is tracked as unallocated, allocated or
//   written, so kernels that read outside an allocation or read bytes never written fail;
// - each stream is an ordered queue run by its own host thread, so host code that reads a
//   result before synchronising sees stale data, as it would on a GPU; events mark points in
//   a stream's queue;
// - copies from pageable host memory are staged at the call (host to device) or complete before
//   the call returns (device to host); copies to and from pinned memory (malloc_host) run in
//   the stream's order, like DMA;
// - a kernel fault (a bad access, a barrier not reached by every thread) stops the stream's
//   work, and every later call on that stream returns kErrorKernelFault, whose message names
//   the kernel, the block and the thread.
// It is slow: it runs the kernels' threads one after another on the host. It tests logic, not
// speed. Builds as C++17 (the kernels' language).

#include <cstddef>
#include <cstdint>
#include <functional>

namespace gpusim {

enum Error : int {
  kSuccess = 0,
  kErrorInvalidValue,
  kErrorMemoryAllocation,
  kErrorInvalidConfiguration,
  kErrorKernelFault,
  kErrorInvalidDevice,
};

struct Dim3 {
  unsigned int x, y, z;
  constexpr Dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1)
      : x(x_), y(y_), z(z_) {}
};

// Storage of 16-bit floats; sim_device.h converts them for kernels.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

struct StreamState;
struct EventState;
using Stream = StreamState*;
using Event = EventState*;

enum MemcpyKind { kMemcpyHostToDevice = 1, kMemcpyDeviceToHost = 2 };
constexpr unsigned int kStreamNonBlocking = 1;
constexpr unsigned int kEventDisableTiming = 2;
enum FuncAttribute { kFuncAttributeMaxDynamicSharedMemorySize = 8 };

struct DeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;  // without opt-in (func_set_attribute)
  size_t sharedMemPerBlockOptin;
  int warpSize;
  int maxThreadsPerBlock;
  int multiProcessorCount;
  int major;
  int minor;
};

// Lanes of a warp: 32 as CUDA, 64 as CDNA wavefronts. Defined by whoever links the simulator
// (each plugin from BATON_GPUSIM_WARP_SIZE), since its kernels fix it when they compile.
int warp_size();

// The last error of a call from this host thread, which the call resets to kSuccess.
Error get_last_error();
// A fixed message per error; for kErrorKernelFault, the last fault's full description.
const char* get_error_string(Error error);

Error get_device_count(int* count);
Error get_device_properties(DeviceProp* props, int device);
Error set_device(int device);
// Waits for every stream's queued work.
Error device_synchronize();

Error malloc(void** ptr, size_t bytes);
// Waits for every stream first, as cudaFree does, so no queued kernel outlives its memory.
Error free(void* ptr);
Error malloc_host(void** ptr, size_t bytes);
Error free_host(void* ptr);
template <typename T>
Error malloc(T** ptr, size_t bytes) {
  return malloc(reinterpret_cast<void**>(ptr), bytes);
}
template <typename T>
Error malloc_host(T** ptr, size_t bytes) {
  return malloc_host(reinterpret_cast<void**>(ptr), bytes);
}

Error memcpy_async(void* dst, const void* src, size_t bytes, MemcpyKind kind, Stream stream);
Error memset_async(void* ptr, int value, size_t bytes, Stream stream);

Error stream_create_with_flags(Stream* stream, unsigned int flags);
Error stream_destroy(Stream stream);
Error stream_synchronize(Stream stream);
Error event_create_with_flags(Event* event, unsigned int flags);
Error event_destroy(Event event);
Error event_record(Event event, Stream stream);
Error event_synchronize(Event event);

// Kernels need the opt-in above DeviceProp::sharedMemPerBlock of dynamic shared memory.
Error func_set_attribute(const void* kernel, FuncAttribute attribute, int value);

// Host work queued on `stream` in order with its kernels and copies: the simulator's stand-in
// for a vendor library call (cuBLAS). Faults it reports with check_device_read stop the stream
// as a kernel's would.
Error enqueue_host_task(Stream stream, const char* name, std::function<void()> task);
// Inside a host task: faults, naming `what`, unless [ptr, ptr + bytes) is allocated device
// memory (that has been written, for a read); and marks such a range written.
void check_device_read(const void* ptr, size_t bytes, const char* what);
void check_device_write(const void* ptr, size_t bytes, const char* what);
void mark_device_written(void* ptr, size_t bytes);

}  // namespace gpusim
