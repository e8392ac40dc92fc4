#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

namespace baton {

// A block of memory owned by one device. Tensors hold buffers by shared_ptr so that views and
// graph nodes keep their storage alive; the buffer frees its memory when the last holder goes.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual std::byte* data() = 0;
  // data() for a caller that writes every byte before it reads any (a kernel's output): a
  // buffer that takes pooled memory at first use skips the zero fill.
  virtual std::byte* data_for_overwrite() { return data(); }
  virtual size_t size() const = 0;
  // Name of the device family whose memory this is ("cpu" for host memory, mapped files too).
  virtual std::string_view device() const = 0;
  bool is_host() const { return device() == "cpu"; }
  // Lets the OS reclaim the resident pages of [offset, offset + bytes) where that loses nothing:
  // a read-only file mapping reads them back from the file when touched again. A no-op for
  // memory that holds the only copy of its contents.
  virtual void release_pages(size_t offset, size_t bytes);
  // The contents are no longer needed: pooled memory goes back to its pool, and a later data()
  // gives zeroed memory again (a later data_for_overwrite(), memory as some other buffer left
  // it). A no-op for memory that is not pooled.
  virtual void discard() {}
};

// Aligned, zero-initialised host memory.
std::shared_ptr<Buffer> allocate_host_buffer(size_t bytes);

// Part of a read-only memory-mapped file; `keep_alive` is held until the buffer goes so the
// mapping outlives every tensor that views it.
std::shared_ptr<Buffer> wrap_mapped_file(std::byte* data, size_t bytes,
                                         std::shared_ptr<const void> keep_alive);

}  // namespace baton
