#pragma once

// Page-locked host memory for host-to-device copies that must not block the host: a copy from
// pageable memory waits for the stream first, one from pinned memory is queued like a kernel.
// The staging area is reused; before it is overwritten, the previous copy must have finished.

#include <cstddef>

#include "backends/gpu/gpu_runtime.h"

namespace baton::gpu {

class PinnedStaging {
 public:
  PinnedStaging();
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Queues a copy of `bytes` from `src` (any host memory, free to reuse on return) to the
  // device address `dst` on `stream`.
  void copy_to_device(void* dst, const void* src, size_t bytes, gpuStream_t stream);

 private:
  void* host_ = nullptr;
  size_t capacity_ = 0;
  gpuEvent_t copied_ = nullptr;  // recorded after the last copy out of host_
};

}  // namespace baton::gpu
