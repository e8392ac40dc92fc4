// The device, its memory and per-kernel attributes.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "backends/gpusim/device_memory.h"
#include "backends/gpusim/device_state.h"
#include "backends/gpusim/runtime_errors.h"

namespace gpusim {
namespace {

constexpr size_t kDefaultSharedBytes = 48 * 1024;
constexpr size_t kOptInSharedBytes = 96 * 1024;

std::mutex state_mutex;
std::map<const std::byte*, size_t> pinned;    // start -> bytes
std::map<const void*, size_t> shared_limits;  // kernel -> opted-in bytes

}  // namespace

Error get_device_count(int* count) {
  *count = 1;
  return kSuccess;
}

Error get_device_properties(DeviceProp* props, int device) {
  if (device != 0) return fail(kErrorInvalidDevice, "device " + std::to_string(device) + " of 1");
  *props = DeviceProp{};
  std::snprintf(props->name, sizeof(props->name), "gpusim host simulator, warp %d", warp_size());
  props->totalGlobalMem = DeviceMemory::instance().capacity();
  props->sharedMemPerBlock = kDefaultSharedBytes;
  props->sharedMemPerBlockOptin = kOptInSharedBytes;
  props->warpSize = warp_size();
  props->maxThreadsPerBlock = 1024;
  props->multiProcessorCount = 1;
  return kSuccess;
}

Error set_device(int device) {
  return device == 0 ? kSuccess
                     : fail(kErrorInvalidDevice, "device " + std::to_string(device) + " of 1");
}

Error malloc(void** ptr, size_t bytes) {
  *ptr = DeviceMemory::instance().allocate(bytes);
  if (*ptr == nullptr) {
    return fail(kErrorMemoryAllocation,
                "cannot allocate " + std::to_string(bytes) + " bytes of device memory");
  }
  return kSuccess;
}

Error free(void* ptr) {
  if (ptr == nullptr) return kSuccess;
  const Error pending = device_synchronize();
  if (!DeviceMemory::instance().release(ptr)) {
    return fail(kErrorInvalidValue, "free of " + DeviceMemory::instance().describe(ptr) +
                                        ", not the start of a live allocation");
  }
  return pending;
}

Error malloc_host(void** ptr, size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  *ptr = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (*ptr == nullptr) {
    return fail(kErrorMemoryAllocation,
                "cannot allocate " + std::to_string(bytes) + " bytes of pinned host memory");
  }
  std::lock_guard lock(state_mutex);
  pinned[static_cast<const std::byte*>(*ptr)] = bytes;
  return kSuccess;
}

Error free_host(void* ptr) {
  if (ptr == nullptr) return kSuccess;
  {
    std::lock_guard lock(state_mutex);
    if (pinned.erase(static_cast<const std::byte*>(ptr)) == 0) {
      return fail(kErrorInvalidValue, "free_host of memory malloc_host did not return");
    }
  }
  std::free(ptr);
  return kSuccess;
}

bool is_pinned(const void* ptr, size_t bytes) {
  const auto* p = static_cast<const std::byte*>(ptr);
  std::lock_guard lock(state_mutex);
  auto it = pinned.upper_bound(p);
  if (it == pinned.begin()) return false;
  --it;
  return p >= it->first && p + bytes <= it->first + it->second;
}

Error func_set_attribute(const void* kernel, FuncAttribute attribute, int value) {
  if (attribute != kFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
      static_cast<size_t>(value) > kOptInSharedBytes) {
    return fail(kErrorInvalidValue, "func_set_attribute " + std::to_string(attribute) + " = " +
                                        std::to_string(value) +
                                        " (dynamic shared memory is at most " +
                                        std::to_string(kOptInSharedBytes) + " bytes)");
  }
  std::lock_guard lock(state_mutex);
  shared_limits[kernel] = static_cast<size_t>(value);
  return kSuccess;
}

size_t dynamic_shared_limit(const void* kernel) {
  std::lock_guard lock(state_mutex);
  const auto it = shared_limits.find(kernel);
  return it == shared_limits.end() ? kDefaultSharedBytes : it->second;
}

}  // namespace gpusim
