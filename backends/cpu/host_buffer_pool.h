#pragma once

#include <cstddef>
#include <memory>

#include "core/runtime/buffer.h"

namespace baton::cpu {

// Reuses host memory across steps. Each step's graph allocates its activations afresh; taking
// new pages from the OS every time made the kernel's page clearing and faults about a third of a
// 512-token prefill. Released buffers return here and serve later requests of a similar size.
class HostBufferPool {
 public:
  explicit HostBufferPool(size_t max_cached_bytes);
  ~HostBufferPool();
  HostBufferPool(const HostBufferPool&) = delete;
  HostBufferPool& operator=(const HostBufferPool&) = delete;

  // Zero-filled, 64-byte aligned, like allocate_host_buffer. The memory is taken at the
  // buffer's first data() (or data_for_overwrite(), which skips the zero fill) and returns here
  // on discard() (the executor discards a step's intermediates after their last reader) or when
  // the buffer goes.
  std::shared_ptr<Buffer> allocate(size_t bytes);
  size_t cached_bytes() const;

  struct State;  // shared with the buffers handed out, which hold it weakly

 private:
  std::shared_ptr<State> state_;
};

}  // namespace baton::cpu
