#include "backends/gpu/pinned_staging.h"

#include <cstring>

namespace baton::gpu {

PinnedStaging::PinnedStaging() {
  GPU_CHECK(gpuEventCreateWithFlags(&copied_, gpuEventDisableTiming));
}

PinnedStaging::~PinnedStaging() {
  // Errors are ignored: at process exit the runtime may already be unloading.
  GPU_IGNORE(gpuEventSynchronize(copied_));
  if (host_ != nullptr) GPU_IGNORE(gpuFreeHost(host_));
  GPU_IGNORE(gpuEventDestroy(copied_));
}

void PinnedStaging::copy_to_device(void* dst, const void* src, size_t bytes, gpuStream_t stream) {
  if (bytes == 0) return;
  GPU_CHECK(gpuEventSynchronize(copied_));
  if (bytes > capacity_) {
    if (host_ != nullptr) GPU_CHECK(gpuFreeHost(host_));
    host_ = nullptr;
    capacity_ = 0;
    const size_t grown = bytes < 65536 ? 65536 : bytes * 2;
    GPU_CHECK(gpuMallocHost(&host_, grown));
    capacity_ = grown;
  }
  std::memcpy(host_, src, bytes);
  GPU_CHECK(gpuMemcpyAsync(dst, host_, bytes, gpuMemcpyHostToDevice, stream));
  GPU_CHECK(gpuEventRecord(copied_, stream));
}

}  // namespace baton::gpu
