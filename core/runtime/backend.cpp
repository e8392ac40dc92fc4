#include "core/runtime/backend.h"

namespace baton {

Tensor Backend::allocate_tensor(DType dtype, Shape shape) {
  const size_t bytes = Tensor(dtype, shape, nullptr).nbytes();
  return Tensor(dtype, std::move(shape), allocate(bytes));
}

Tensor Backend::import_tensor(const Tensor& host) {
  Tensor device = allocate_tensor(host.dtype(), host.shape());
  upload(device, host.materialize(), host.nbytes());
  return device;
}

}  // namespace baton
