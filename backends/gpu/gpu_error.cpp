// GPU_CHECK's failure path, shared by the GPU backends: turns a runtime error code into the
// baton::Error the rest of Baton reports.

#include <string>

#include "backends/gpu/gpu_runtime.h"
#include "baton/error.h"

namespace baton::gpu {

void throw_gpu_error(gpuError_t error, const char* call, const char* file, int line) {
  // The failed call also left `error` as this thread's last error; it is reported here, so a
  // later launch check must not report it again against another kernel.
  (void)gpuGetLastError();
  throw Error(ErrorCategory::kBackend, std::string(call) + " failed at " + file + ":" +
                                           std::to_string(line) + ": " + gpuGetErrorString(error));
}

}  // namespace baton::gpu
