#include "backends/gpu/gpu_probe.h"

namespace baton::gpu {

BackendStatus probe_first_device(
    const char* vendor, const char* hint,
    const std::function<DeviceVerdict(const gpuDeviceProp_t&)>& judge) {
  int count = 0;
  if (const gpuError_t e = gpuGetDeviceCount(&count); e != gpuSuccess) {
    (void)gpuGetLastError();  // a failed call is also the last error; later checks would see it
    return {false, std::string("no usable ") + vendor + " device: " + gpuGetErrorString(e) + " (" +
                       hint + ")"};
  }
  if (count == 0)
    return {false, std::string("no usable ") + vendor + " device: the driver reports none"};
  gpuDeviceProp_t props{};
  if (const gpuError_t e = gpuGetDeviceProperties(&props, 0); e != gpuSuccess) {
    (void)gpuGetLastError();
    return {false, std::string("cannot query ") + vendor + " device 0: " + gpuGetErrorString(e)};
  }
  const DeviceVerdict verdict = judge(props);
  if (!verdict.refusal.empty()) return {false, verdict.name + " " + verdict.refusal};
  return {true, verdict.name + (count > 1 ? ", device 0 of " + std::to_string(count) : "")};
}

}  // namespace baton::gpu
