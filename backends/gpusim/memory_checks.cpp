// The checks behind every load and store of a kernel. gpusim compiles the kernel sources with
// GCC's -fsanitize=kernel-address and --param asan-instrumentation-with-call-threshold=0, which
// turns each memory access into a call of the __asan_{load,store}N_noabort hooks below and
// links no sanitizer runtime: this file is that runtime. Accesses outside simulated device
// memory (the fibers' stacks, the host's memory) pass unchecked.

#include <cstdint>
#include <sstream>
#include <string>

#include "backends/gpusim/block_runner.h"
#include "backends/gpusim/device_memory.h"

namespace gpusim {
namespace {

std::string place(const void* ptr) {
  std::string shared = describe_shared(ptr);
  return shared.empty() ? DeviceMemory::instance().describe(ptr) : shared;
}

std::string access(const char* kind, size_t bytes, const void* ptr) {
  std::ostringstream s;
  s << kind << " of " << bytes << " byte" << (bytes == 1 ? "" : "s") << " at " << ptr;
  return s.str();
}

void check(uintptr_t address, size_t bytes, bool store) {
  const auto* ptr = reinterpret_cast<const void*>(address);
  DeviceMemory& memory = DeviceMemory::instance();
  if (current_thread == nullptr || !memory.in_range(ptr)) return;
  const std::byte* bad = memory.first_below(ptr, bytes, Shadow::kUninitialized);
  if (bad != nullptr) {
    fault(access(store ? "write" : "read", bytes, ptr) + " is out of bounds: " + place(bad));
  }
  if (store) {
    memory.mark(ptr, bytes, Shadow::kWritten);
  } else if ((bad = memory.first_below(ptr, bytes, Shadow::kWritten)) != nullptr) {
    fault(access("read", bytes, ptr) + " reads memory never written: " + place(bad));
  }
}

}  // namespace
}  // namespace gpusim

extern "C" {

#define GPUSIM_ACCESS_HOOKS(size)                        \
  void __asan_load##size##_noabort(uintptr_t address) {  \
    gpusim::check(address, size, false);                 \
  }                                                      \
  void __asan_store##size##_noabort(uintptr_t address) { \
    gpusim::check(address, size, true);                  \
  }

GPUSIM_ACCESS_HOOKS(1)
GPUSIM_ACCESS_HOOKS(2)
GPUSIM_ACCESS_HOOKS(4)
GPUSIM_ACCESS_HOOKS(8)
GPUSIM_ACCESS_HOOKS(16)

void __asan_loadN_noabort(uintptr_t address, size_t size) {
  gpusim::check(address, size, false);
}
void __asan_storeN_noabort(uintptr_t address, size_t size) {
  gpusim::check(address, size, true);
}
// Called before a function that does not return (a throw), and around a translation unit's
// dynamic initialisation (for init-order checks): nothing for the simulator to do.
void __asan_handle_no_return() {}
void __asan_before_dynamic_init(const char*) {}
void __asan_after_dynamic_init() {}

}  // extern "C"
