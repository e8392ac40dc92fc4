#pragma once

#include <memory>

#include "backends/gpu/device_collectives.h"

namespace baton::cuda {

// All-reduces over NCCL, in device memory on the backend's stream. libnccl.so.2 is opened at
// the first join (only distributed runs need it), so a host without NCCL still runs one
// process; a join there fails naming the library. Each group's NCCL unique id is broadcast over
// the group itself (MPI). Null when the plugin was built without nccl.h.
std::unique_ptr<gpu::DeviceCollectives> make_nccl_collectives();

}  // namespace baton::cuda
