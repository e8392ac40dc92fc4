#include "backends/gpusim/device_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace gpusim {
namespace {

// Address space only: pages are made accessible as they are allocated, so the reservation costs
// no memory, and tests stay far below it.
constexpr size_t kReservedBytes = size_t{16} << 30;

size_t page_size() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

size_t round_to_pages(size_t bytes) {
  return (bytes + page_size() - 1) / page_size() * page_size();
}

void* reserve(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

}  // namespace

DeviceMemory& DeviceMemory::instance() {
  static DeviceMemory memory;
  return memory;
}

DeviceMemory::DeviceMemory()
    : base_(reinterpret_cast<uintptr_t>(reserve(kReservedBytes))),
      size_(kReservedBytes),
      shadow_(static_cast<uint8_t*>(reserve(kReservedBytes))) {
  // The range starts with a guard page, as every allocation is followed by one; its shadow is
  // mapped (all unaddressable) like the guards that allocations bring.
  if (mprotect(shadow_, page_size(), PROT_READ | PROT_WRITE) != 0) throw std::bad_alloc();
  mapped_end_.store(page_size());
  free_[page_size()] = size_ - page_size();
}

void* DeviceMemory::allocate(size_t bytes) {
  // One guard page after the data catches overruns; the one before is the previous
  // allocation's guard (or the start of the range).
  if (bytes > size_ / 2) return nullptr;
  const size_t span = round_to_pages(bytes == 0 ? 1 : bytes) + page_size();
  std::lock_guard lock(mutex_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < span) continue;
    const uintptr_t at = it->first;
    if (it->second > span) free_[at + span] = it->second - span;
    free_.erase(it);
    auto* data = reinterpret_cast<uint8_t*>(base_ + at);
    const size_t data_pages = span - page_size();
    if (mprotect(shadow_ + at, span, PROT_READ | PROT_WRITE) != 0 ||
        mprotect(data, data_pages, PROT_READ | PROT_WRITE) != 0) {
      throw std::bad_alloc();  // the address space is reserved: only the OS's memory can lack
    }
    if (at + span > mapped_end_.load()) mapped_end_.store(at + span);
    std::memset(shadow_ + at, static_cast<int>(Shadow::kUninitialized), bytes);
    live_[at] = bytes;
    return data;
  }
  return nullptr;
}

bool DeviceMemory::release(void* ptr) {
  if (!in_range(ptr)) return false;
  std::lock_guard lock(mutex_);
  const auto it = live_.find(offset(ptr));
  if (it == live_.end()) return false;
  const uintptr_t at = it->first;
  const size_t span = round_to_pages(it->second == 0 ? 1 : it->second) + page_size();
  live_.erase(it);
  // Dropping the pages zeroes the shadow (kUnaddressable) and frees the memory; PROT_NONE makes
  // a stray host access through a stale pointer fault at once.
  madvise(ptr, span, MADV_DONTNEED);
  madvise(shadow_ + at, span, MADV_DONTNEED);
  mprotect(ptr, span, PROT_NONE);
  const auto slot = free_.emplace(at, span).first;
  // Coalesce with the free neighbours.
  if (const auto next = std::next(slot); next != free_.end() && at + span == next->first) {
    slot->second += next->second;
    free_.erase(next);
  }
  if (slot != free_.begin()) {
    const auto prev = std::prev(slot);
    if (prev->first + prev->second == at) {
      prev->second += slot->second;
      free_.erase(slot);
    }
  }
  return true;
}

bool DeviceMemory::allocated(const void* ptr, size_t bytes) const {
  if (!in_range(ptr) || bytes > size_ - offset(ptr)) return false;
  return first_below(ptr, bytes, Shadow::kUninitialized) == nullptr;
}

void DeviceMemory::mark(const void* ptr, size_t bytes, Shadow state) {
  if (!in_range(ptr) || offset(ptr) + bytes > mapped_end_.load()) {
    throw std::logic_error("gpusim: shadow of memory outside the device's mapped range");
  }
  std::memset(shadow_ + offset(ptr), static_cast<int>(state), bytes);
}

const std::byte* DeviceMemory::first_below(const void* ptr, size_t bytes, Shadow needed) const {
  const uintptr_t start = offset(ptr), mapped = mapped_end_.load();
  for (size_t i = 0; i < bytes; ++i) {
    if (start + i >= mapped || shadow_[start + i] < static_cast<uint8_t>(needed)) {
      return static_cast<const std::byte*>(ptr) + i;
    }
  }
  return nullptr;
}

std::string DeviceMemory::describe(const void* ptr) const {
  if (!in_range(ptr)) return "outside device memory";
  const uintptr_t at = offset(ptr);
  std::lock_guard lock(mutex_);
  auto it = live_.upper_bound(at);
  if (it == live_.begin()) return "before every allocation";
  --it;
  const std::string size = std::to_string(it->second) + "-byte allocation";
  if (at < it->first + it->second)
    return "byte " + std::to_string(at - it->first) + " of a " + size;
  return std::to_string(at - it->first - it->second) + " bytes past the end of a " + size;
}

}  // namespace gpusim
