#include <cstring>

#include "backends/cpu/cpu_kernels.h"
#include "core/runtime/comm/communicator.h"

namespace baton::cpu {

void all_reduce(const Tensor& x, Communicator& group, const Tensor& out) {
  const size_t n = static_cast<size_t>(x.numel());
  if (out.data<float>() != x.data<float>()) {
    std::memcpy(out.data<float>(), x.data<float>(), n * sizeof(float));
  }
  group.all_reduce_sum(std::span<float>(out.data<float>(), n));
}

}  // namespace baton::cpu
