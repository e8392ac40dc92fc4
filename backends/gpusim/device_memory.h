#pragma once

// Simulated device memory: one reserved address range that allocations are carved from, each
// followed by an inaccessible guard page, and a shadow byte per byte of it that says whether
// the byte is allocated and whether anything has written it since. Accesses are checked
// against the shadow before they happen, so a bad one is reported rather than performed.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace gpusim {

enum class Shadow : uint8_t {
  kUnaddressable = 0,  // guard, free, or between shared arrays
  kUninitialized = 1,  // allocated, never written
  kWritten = 2,
};

class DeviceMemory {
 public:
  static DeviceMemory& instance();

  // Page-aligned, shadowed kUninitialized; null when the range is exhausted.
  void* allocate(size_t bytes);
  // False when `ptr` is not the start of a live allocation.
  bool release(void* ptr);

  // Whether `ptr` is in the simulated device's address range (allocated or not).
  bool in_range(const void* ptr) const { return reinterpret_cast<uintptr_t>(ptr) - base_ < size_; }
  // Whether [ptr, ptr + bytes) lies in live allocations.
  bool allocated(const void* ptr, size_t bytes) const;
  void mark(const void* ptr, size_t bytes, Shadow state);
  // The first byte of [ptr, ptr + bytes) whose shadow is below `needed`, or null; `ptr` must be
  // in range.
  const std::byte* first_below(const void* ptr, size_t bytes, Shadow needed) const;
  // Where `ptr` is, for a report: "byte 12 of a 4096-byte allocation", "4 bytes past the end
  // of a 256-byte allocation", "outside every allocation".
  std::string describe(const void* ptr) const;
  size_t capacity() const { return size_; }

 private:
  DeviceMemory();
  uintptr_t offset(const void* ptr) const { return reinterpret_cast<uintptr_t>(ptr) - base_; }

  uintptr_t base_ = 0;
  size_t size_ = 0;
  uint8_t* shadow_ = nullptr;
  // Shadow pages below this offset are mapped (allocations only ever raise it); beyond it every
  // byte is unaddressable without a look.
  std::atomic<uintptr_t> mapped_end_{0};
  mutable std::mutex mutex_;
  std::map<uintptr_t, size_t> live_;  // offset -> bytes requested
  std::map<uintptr_t, size_t> free_;  // offset -> bytes of free pages
};

}  // namespace gpusim
