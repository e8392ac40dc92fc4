#include "core/runtime/tensor.h"

#include "baton/error.h"

namespace baton {

std::string to_string(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return out + "]";
}

Tensor::Tensor(DType dtype, Shape shape, std::shared_ptr<Buffer> buffer, size_t offset)
    : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)), offset_(offset) {
  for (int64_t d : shape_) {
    if (d < 0)
      throw Error(ErrorCategory::kInvalidArgument, "negative dimension in " + to_string(shape_));
  }
  if (buffer_ && offset_ + nbytes() > buffer_->size()) {
    throw Error(ErrorCategory::kInvalidArgument,
                "tensor " + to_string(shape_) + " of " + std::string(to_string(dtype_)) +
                    " at offset " + std::to_string(offset_) + " does not fit its buffer of " +
                    std::to_string(buffer_->size()) + " bytes");
  }
}

Tensor Tensor::host(DType dtype, Shape shape) {
  Tensor probe(dtype, shape, nullptr);
  return Tensor(dtype, std::move(shape), allocate_host_buffer(probe.nbytes()));
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

Tensor Tensor::reshape(Shape shape) const {
  Tensor out(dtype_, std::move(shape), nullptr, offset_);
  // Types with per-row headers size a tensor by its rows, so their rows must stay whole.
  const bool rows_kept = traits(dtype_).row_header_bytes == 0 || out.row_length() == row_length();
  if (out.numel() != numel() || !rows_kept) {
    throw Error(ErrorCategory::kInvalidArgument,
                "cannot reshape " + to_string(shape_) + " to " + to_string(out.shape_));
  }
  out.buffer_ = buffer_;
  return out;
}

Tensor Tensor::slice_rows(int64_t first, int64_t count) const {
  if (shape_.empty() || first < 0 || count < 0 || first + count > shape_[0]) {
    throw Error(ErrorCategory::kInvalidArgument, "row slice [" + std::to_string(first) + ", " +
                                                     std::to_string(first + count) +
                                                     ") out of range for " + to_string(shape_));
  }
  Shape shape = shape_;
  shape[0] = count;
  const size_t row_stride = shape_[0] ? nbytes() / static_cast<size_t>(shape_[0]) : 0;
  return Tensor(dtype_, std::move(shape), buffer_,
                offset_ + row_stride * static_cast<size_t>(first));
}

}  // namespace baton
