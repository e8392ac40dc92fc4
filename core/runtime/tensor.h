#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/runtime/buffer.h"
#include "core/runtime/dtype.h"

namespace baton {

// Dimensions, outermost first: a weight matrix of `out` rows by `in` columns is {out, in}.
using Shape = std::vector<int64_t>;

std::string to_string(const Shape& shape);

// A dense, row-major view of a buffer. Rows are contiguous; the innermost dimension of a
// block-quantized tensor is a whole number of blocks, so a row is `row_bytes()` bytes.
class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t offset = 0);

  // A new zero-filled tensor in host memory.
  static Tensor host(DType dtype, Shape shape);

  bool defined() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_.at(i < 0 ? shape_.size() + i : i); }
  int64_t numel() const;
  // Elements in the innermost dimension, and the number of such rows.
  int64_t row_length() const { return shape_.empty() ? 1 : shape_.back(); }
  int64_t rows() const { return numel() / row_length(); }
  size_t row_bytes() const { return baton::row_bytes(dtype_, row_length()); }
  size_t nbytes() const {
    return row_length() == 0 ? 0 : static_cast<size_t>(rows()) * row_bytes();
  }

  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  size_t offset() const { return offset_; }
  // The tensor's first byte. Named for what the first call may do: a buffer that takes its
  // memory at first use (the CPU backend's pooled activations) takes it here, zero-filled, even
  // through a const Tensor. Taking it earlier would hold all of a graph's activations at once,
  // so the behaviour stays and the name says it. A caller that writes every byte before reading
  // any skips the fill with buffer()->data_for_overwrite(). data<T>() and span<T>() come here.
  std::byte* materialize() const { return buffer_->data() + offset_; }
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(materialize());
  }
  template <typename T>
  std::span<T> span() const {
    return {data<T>(), static_cast<size_t>(numel())};
  }

  // The same bytes seen with another shape of equal element count.
  Tensor reshape(Shape shape) const;
  // Rows [first, first + count) of the outermost dimension.
  Tensor slice_rows(int64_t first, int64_t count) const;

 private:
  DType dtype_ = DType::kF32;
  Shape shape_;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
};

}  // namespace baton
