#pragma once

#include <cstddef>

#include "backends/gpu/gpu_runtime.h"
#include "core/runtime/comm/communicator.h"

namespace baton::gpu {

// A vendor's device-side collectives (NCCL): all-reduces that stay in device memory, queued on
// the backend's stream, instead of being staged through the host.
class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;
  // Sets up a device communicator for `group`; collective over the group's ranks. Joining a
  // group again keeps the communicator it has.
  virtual void join(Communicator& group) = 0;
  // Queues out = the sum over `group` of every rank's `in` (`count` floats) on `stream`; false
  // when `group` was never joined, so the caller stages through the host instead.
  virtual bool all_reduce(const float* in, float* out, size_t count, const Communicator& group,
                          gpuStream_t stream) = 0;
};

}  // namespace baton::gpu
