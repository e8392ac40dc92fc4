#pragma once

// Argument checks shared by the reference kernels. They run before any memory is touched so
// that a bad tensor gives an Error naming it rather than an out-of-bounds access.

#include <string>
#include <string_view>

#include "baton/error.h"
#include "core/runtime/tensor.h"

namespace baton::reference::detail {

inline void require(bool ok, const std::string& message) {
  if (!ok) throw Error(ErrorCategory::kInvalidArgument, message);
}

// A defined host tensor of `dtype`.
inline void require_input(const Tensor& t, DType dtype, std::string_view what) {
  require(t.defined() && t.buffer()->is_host(), std::string(what) + " must be a host tensor");
  if (t.dtype() != dtype) {
    throw Error(ErrorCategory::kUnsupported, std::string(what) + " must be " +
                                                 std::string(to_string(dtype)) + ", got " +
                                                 std::string(to_string(t.dtype())));
  }
}

inline void require_shape(const Tensor& t, const Shape& shape, std::string_view what) {
  require(t.shape() == shape, std::string(what) + " must have shape " + to_string(shape) +
                                  ", got " + to_string(t.shape()));
}

inline void require_rank(const Tensor& t, int rank, std::string_view what) {
  require(t.rank() == rank, std::string(what) + " must have rank " + std::to_string(rank) +
                                ", got shape " + to_string(t.shape()));
}

}  // namespace baton::reference::detail
