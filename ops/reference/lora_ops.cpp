// Reference LoRA update: y + bt[s]ᵀ · (a[s] · x) per token, accumulated in double.

#include <vector>

#include "core/runtime/graph.h"
#include "core/runtime/half.h"
#include "ops/reference.h"
#include "ops/reference/checks.h"

namespace baton::reference {
namespace {

// The slot stacks' elements as doubles, whether they are kept in f32 or f16.
std::vector<double> slot_values(const Tensor& t) {
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = t.dtype() == DType::kF16 ? fp16_to_fp32(t.data<uint16_t>()[i]) : t.data<float>()[i];
  }
  return values;
}

}  // namespace

using detail::require;
using detail::require_input;
using detail::require_rank;
using detail::require_shape;

void lora(const Tensor& y, const Tensor& x, const Tensor& a, const Tensor& bt, const Tensor& slots,
          const Tensor& out) {
  require_input(y, DType::kF32, "lora y");
  require_input(x, DType::kF32, "lora x");
  require(a.defined() && is_lora_slot_dtype(a.dtype()),
          "lora a must be f32 or f16, got " + std::string(to_string(a.dtype())));
  require_input(bt, a.dtype(), "lora bt");
  require_input(slots, DType::kI32, "lora slots");
  require_rank(x, 2, "lora x");
  require_rank(a, 3, "lora a");
  const int64_t n = x.dim(0), k = x.dim(1), n_slots = a.dim(0), r = a.dim(1);
  require(a.dim(2) == k,
          "lora a " + to_string(a.shape()) + " does not match x " + to_string(x.shape()));
  require_rank(bt, 3, "lora bt");
  const int64_t m = bt.dim(2);
  require_shape(bt, {n_slots, r, m}, "lora bt");
  require_shape(y, {n, m}, "lora y");
  require_shape(slots, {n}, "lora slots");
  require_input(out, DType::kF32, "lora output");
  require_shape(out, {n, m}, "lora output");
  const int32_t* slot = slots.data<int32_t>();
  const std::vector<double> a_values = slot_values(a), bt_values = slot_values(bt);
  std::vector<double> shrunk(static_cast<size_t>(r));
  for (int64_t t = 0; t < n; ++t) {
    const int32_t s = slot[t];
    require(s >= -1 && s < n_slots, "lora slot " + std::to_string(s) + " of token " +
                                        std::to_string(t) + " is outside the " +
                                        std::to_string(n_slots) + " slots");
    const float* yt = y.data<float>() + t * m;
    float* ot = out.data<float>() + t * m;
    if (s < 0) {
      for (int64_t o = 0; o < m; ++o) ot[o] = yt[o];
      continue;
    }
    const double* as = a_values.data() + s * r * k;
    const double* bs = bt_values.data() + s * r * m;
    const float* xt = x.data<float>() + t * k;
    for (int64_t j = 0; j < r; ++j) {
      double sum = 0.0;
      for (int64_t c = 0; c < k; ++c) sum += as[j * k + c] * xt[c];
      shrunk[j] = sum;
    }
    for (int64_t o = 0; o < m; ++o) {
      double sum = yt[o];
      for (int64_t j = 0; j < r; ++j) sum += bs[j * m + o] * shrunk[j];
      ot[o] = static_cast<float>(sum);
    }
  }
}

}  // namespace baton::reference
