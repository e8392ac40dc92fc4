#include "tools/plan/hardware_specs.h"

namespace baton {
namespace {

// Kunlunxin's P800 and Enflame's S60 are left out: neither vendor publishes their memory,
// bandwidth or throughput (docs/scheduling.md).
const HardwareSpec kHardware[] = {
    {"NVIDIA H20", 96, 4000, 148, "retail listing via Tom's Hardware", true},
    {"NVIDIA L20", 48, 864, 119.5, "retail listing via Tom's Hardware", true},
    {"NVIDIA A10", 24, 600, 125, "NVIDIA A10 product page (sparse figures halved)"},
    {"NVIDIA H800 SXM", 80, 3350, 989, "NVIDIA aiconfigurator system spec"},
    {"NVIDIA H200 SXM", 141, 4800, 989, "NVIDIA H200 page (sparse figures halved)"},
    // No published bandwidth: decode cannot be estimated, prefill and memory can.
    {"Huawei Ascend 910B", 64, 0, 280, "a cloud provider's documentation", true},
};

}  // namespace

std::span<const HardwareSpec> published_hardware() {
  return kHardware;
}

}  // namespace baton
