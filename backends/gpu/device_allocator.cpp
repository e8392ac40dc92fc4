#include "backends/gpu/device_allocator.h"

#include <bit>

#include "backends/gpu/gpu_runtime.h"
#include "baton/error.h"

namespace baton::gpu {

class DeviceBuffer final : public Buffer {
 public:
  DeviceBuffer(std::shared_ptr<DeviceAllocator> owner, void* ptr, size_t bytes, size_t class_bytes)
      : owner_(std::move(owner)), ptr_(ptr), bytes_(bytes), class_bytes_(class_bytes) {}
  ~DeviceBuffer() override { owner_->recycle(ptr_, class_bytes_); }

  // A device address: host code must never dereference it, only pass it to kernels and copies.
  std::byte* data() override { return static_cast<std::byte*>(ptr_); }
  size_t size() const override { return bytes_; }
  std::string_view device() const override { return owner_->device_name_; }

 private:
  std::shared_ptr<DeviceAllocator> owner_;
  void* ptr_;
  size_t bytes_;
  size_t class_bytes_;
};

std::shared_ptr<DeviceAllocator> DeviceAllocator::create(std::string device_name) {
  return std::shared_ptr<DeviceAllocator>(new DeviceAllocator(std::move(device_name)));
}

DeviceAllocator::~DeviceAllocator() {
  // Errors are ignored: at process exit the runtime may already be unloading.
  for (auto& [size, blocks] : free_) {
    for (void* ptr : blocks) GPU_IGNORE(gpuFree(ptr));
  }
}

size_t DeviceAllocator::size_class(size_t bytes) {
  constexpr size_t kSmallest = 256, kLargeFrom = size_t{1} << 20;
  if (bytes <= kSmallest) return kSmallest;
  if (bytes <= kLargeFrom) return std::bit_ceil(bytes);
  const size_t step = std::bit_floor(bytes) / 4;
  return (bytes + step - 1) / step * step;
}

void* DeviceAllocator::take_cached(size_t class_bytes) {
  std::lock_guard lock(mutex_);
  const auto it = free_.find(class_bytes);
  if (it == free_.end() || it->second.empty()) return nullptr;
  void* ptr = it->second.back();
  it->second.pop_back();
  return ptr;
}

std::shared_ptr<Buffer> DeviceAllocator::allocate(size_t bytes) {
  const size_t class_bytes = size_class(bytes);
  void* ptr = take_cached(class_bytes);
  if (ptr == nullptr && gpuMalloc(&ptr, class_bytes) != gpuSuccess) {
    (void)gpuGetLastError();  // the failure is also the last error; later launch checks read it
    release_cached();
    const gpuError_t error = gpuMalloc(&ptr, class_bytes);
    if (error != gpuSuccess) {
      (void)gpuGetLastError();
      throw Error(ErrorCategory::kOutOfMemory, "cannot allocate " + std::to_string(bytes) +
                                                   " bytes of " + device_name_ +
                                                   " device memory: " + gpuGetErrorString(error));
    }
  }
  return std::make_shared<DeviceBuffer>(shared_from_this(), ptr, bytes, class_bytes);
}

void DeviceAllocator::recycle(void* ptr, size_t class_bytes) {
  std::lock_guard lock(mutex_);
  free_[class_bytes].push_back(ptr);
}

void DeviceAllocator::release_cached() {
  std::lock_guard lock(mutex_);
  // A cached block may still be read by queued work of its previous owner.
  GPU_CHECK(gpuDeviceSynchronize());
  for (auto& [size, blocks] : free_) {
    for (void* ptr : blocks) GPU_CHECK(gpuFree(ptr));
  }
  free_.clear();
}

}  // namespace baton::gpu
