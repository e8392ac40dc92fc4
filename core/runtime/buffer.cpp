#include "core/runtime/buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "baton/error.h"

namespace baton {
namespace {

// 64 bytes: one cache line and one AVX-512 vector, so kernels may use aligned loads.
constexpr size_t kHostAlignment = 64;

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

class HostBuffer final : public Buffer {
 public:
  explicit HostBuffer(size_t bytes) : size_(bytes) {
    const size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    data_.reset(static_cast<std::byte*>(
        std::aligned_alloc(kHostAlignment, rounded ? rounded : kHostAlignment)));
    if (!data_) {
      throw Error(ErrorCategory::kOutOfMemory,
                  "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
    }
    std::memset(data_.get(), 0, rounded);
  }
  std::byte* data() override { return data_.get(); }
  size_t size() const override { return size_; }
  std::string_view device() const override { return "cpu"; }

 private:
  std::unique_ptr<std::byte, FreeDeleter> data_;
  size_t size_;
};

class MappedFileBuffer final : public Buffer {
 public:
  MappedFileBuffer(std::byte* data, size_t bytes, std::shared_ptr<const void> keep_alive)
      : data_(data), size_(bytes), keep_alive_(std::move(keep_alive)) {}
  std::byte* data() override { return data_; }
  size_t size() const override { return size_; }
  std::string_view device() const override { return "cpu"; }

  // Only whole pages inside the range: the pages at its ends may hold neighbouring tensors.
  void release_pages(size_t offset, size_t bytes) override {
    if (offset >= size_) return;
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<uintptr_t>(data_ + offset);
    const uintptr_t first = (begin + page - 1) / page * page;
    const uintptr_t last = (begin + std::min(bytes, size_ - offset)) / page * page;
    // Advice only: on failure the pages simply stay resident.
    if (first < last) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }

 private:
  std::byte* data_;
  size_t size_;
  std::shared_ptr<const void> keep_alive_;
};

}  // namespace

std::shared_ptr<Buffer> allocate_host_buffer(size_t bytes) {
  return std::make_shared<HostBuffer>(bytes);
}

std::shared_ptr<Buffer> wrap_mapped_file(std::byte* data, size_t bytes,
                                         std::shared_ptr<const void> keep_alive) {
  return std::make_shared<MappedFileBuffer>(data, bytes, std::move(keep_alive));
}

void Buffer::release_pages(size_t, size_t) {}

}  // namespace baton
