#pragma once

// Caching device-memory allocator shared by the GPU backends. cudaMalloc/hipMalloc and their
// frees synchronise the device and cost tens of microseconds, and a step allocates every
// activation afresh; so freed blocks go to a free list per size class and serve later requests
// of that class. Reuse needs no event: a backend runs all its work on one stream, so work that
// used a block is ordered before any later work on the block's next owner.

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/runtime/buffer.h"

namespace baton::gpu {

class DeviceAllocator : public std::enable_shared_from_this<DeviceAllocator> {
 public:
  // Memory of the current device; buffers report `device_name` as their device().
  static std::shared_ptr<DeviceAllocator> create(std::string device_name);
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // At least `bytes` of device memory with undefined contents; every buffer holds the
  // allocator, so blocks return here even after the backend is gone. When the device is full,
  // cached blocks are freed and the allocation retried; then Error(kOutOfMemory).
  std::shared_ptr<Buffer> allocate(size_t bytes);

 private:
  // Bytes a request of `bytes` occupies: powers of two up to 1 MiB, then four classes per
  // doubling, so a reused block wastes at most a quarter.
  static size_t size_class(size_t bytes);

  explicit DeviceAllocator(std::string device_name) : device_name_(std::move(device_name)) {}
  friend class DeviceBuffer;
  void recycle(void* ptr, size_t class_bytes);
  void* take_cached(size_t class_bytes);
  // Frees every cached block (after the device has finished all work).
  void release_cached();

  const std::string device_name_;
  std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;  // size class -> cached blocks
};

}  // namespace baton::gpu
