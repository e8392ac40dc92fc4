#pragma once

// The part of a GPU plugin's probe that does not depend on the vendor: is there a device 0, and
// can this build's kernels run on it (which each plugin answers for its own architectures).

#include <functional>
#include <string>

#include "backends/gpu/gpu_runtime.h"
#include "core/runtime/backend.h"

namespace baton::gpu {

// What a plugin makes of device 0: its name for messages ("NVIDIA H200 (compute capability
// 9.0)") and, when this build cannot run on it, why ("is older than ..."; empty when it can).
struct DeviceVerdict {
  std::string name;
  std::string refusal;
};

// Never throws. `vendor` names the devices in messages ("CUDA"); `hint` says what is likely
// missing when the runtime cannot even count devices ("driver not installed?").
BackendStatus probe_first_device(const char* vendor, const char* hint,
                                 const std::function<DeviceVerdict(const gpuDeviceProp_t&)>& judge);

}  // namespace baton::gpu
