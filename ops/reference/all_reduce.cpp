#include <vector>

#include "core/runtime/comm/communicator.h"
#include "ops/reference.h"
#include "ops/reference/checks.h"

namespace baton::reference {

void all_reduce(const Tensor& x, Communicator& group, const Tensor& out) {
  detail::require_input(x, DType::kF32, "all_reduce x");
  detail::require_input(out, DType::kF32, "all_reduce output");
  detail::require_shape(out, x.shape(), "all_reduce output");
  const size_t n = static_cast<size_t>(x.numel());
  std::vector<float> all(n * static_cast<size_t>(group.size()));
  group.all_gather(std::as_bytes(std::span<const float>(x.data<float>(), n)),
                   std::as_writable_bytes(std::span<float>(all)));
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (size_t r = 0; r < static_cast<size_t>(group.size()); ++r) sum += all[r * n + i];
    out.data<float>()[i] = static_cast<float>(sum);
  }
}

}  // namespace baton::reference
