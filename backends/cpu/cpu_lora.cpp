// LoRA's low-rank update, y + Bᵀ-rows · (a · x), for a batch whose tokens use different adapters.
//
// The update is about r / k of the base matmul's work (1-2% at rank 16); what matters is that it
// runs at the ISA's vector width (the row kernels of elementwise.h) and that a token reads its
// adapter's a and bt while they are still in cache from the token before, so tokens are visited
// grouped by slot.

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/elementwise/elementwise.h"
#include "baton/error.h"

namespace baton::cpu {
namespace {

// Slots are checked before the parallel loop: an exception must not leave an OpenMP region.
void check_slots(const Tensor& slots, int64_t n_slots) {
  const int32_t* s = slots.data<int32_t>();
  for (int64_t t = 0; t < slots.dim(0); ++t) {
    if (s[t] < -1 || s[t] >= n_slots) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "lora slot " + std::to_string(s[t]) + " of token " + std::to_string(t) +
                      " is outside the " + std::to_string(n_slots) + " slots");
    }
  }
}

// Every token, those of the base model first, then by slot (stable within a slot).
std::vector<int64_t> tokens_by_slot(const Tensor& slots) {
  const int32_t* s = slots.data<int32_t>();
  std::vector<int64_t> tokens(static_cast<size_t>(slots.dim(0)));
  for (size_t t = 0; t < tokens.size(); ++t) tokens[t] = static_cast<int64_t>(t);
  std::stable_sort(tokens.begin(), tokens.end(), [s](int64_t a, int64_t b) { return s[a] < s[b]; });
  return tokens;
}

// The row kernels for slots of element type T: f32, or f16 as uint16_t.
struct SlotKernels {
  const RowKernels& row;
  float dot(const float* a, const float* x, int64_t n) const { return row.dot(a, x, n); }
  float dot(const uint16_t* a, const float* x, int64_t n) const { return row.dot_f16(a, x, n); }
  void add_weighted_rows(const float* y, const float* w, const float* rows, int64_t count,
                         int64_t stride, float* o, int64_t n) const {
    row.add_weighted_rows(y, w, rows, count, stride, o, n);
  }
  void add_weighted_rows(const float* y, const float* w, const uint16_t* rows, int64_t count,
                         int64_t stride, float* o, int64_t n) const {
    row.add_weighted_rows_f16(y, w, rows, count, stride, o, n);
  }
};

// Updates below this many multiply-adds run without a parallel region.
constexpr int64_t kSerialMultiplyAdds = int64_t{1} << 16;

template <class T>
void lora_rows(const Context& ctx, const Tensor& y, const Tensor& x, const Tensor& a,
               const Tensor& bt, const Tensor& slots, const Tensor& out) {
  const int64_t n = x.dim(0), k = x.dim(1), r = a.dim(1), m = bt.dim(2);
  const std::vector<int64_t> tokens = tokens_by_slot(slots);
  const int32_t* slot = slots.data<int32_t>();
  const float* xs = x.data<float>();
  const float* ys = y.data<float>();
  const T* as = a.data<T>();
  const T* bs = bt.data<T>();
  float* os = reinterpret_cast<float*>(out.buffer()->data_for_overwrite() + out.offset());
  const SlotKernels kernels{row_kernels()};
  const auto token_rows = [&](int64_t i, std::vector<float>& shrunk) {
    const int64_t t = tokens[i];
    if (slot[t] < 0) {
      std::memcpy(os + t * m, ys + t * m, static_cast<size_t>(m) * sizeof(float));
      return;
    }
    const T* at = as + slot[t] * r * k;
    for (int64_t j = 0; j < r; ++j) shrunk[j] = kernels.dot(at + j * k, xs + t * k, k);
    kernels.add_weighted_rows(ys + t * m, shrunk.data(), bs + slot[t] * r * m, r, m, os + t * m, m);
  };
  // A small update (one decode token of a small model: microseconds of work) runs on the
  // calling thread: entering a parallel region at all, even one that an OpenMP `if` clause makes
  // serial, costs about as much, and on the demo model that cost made decoding with an adapter
  // 0.71x the base's speed against 0.85x without it (docs/lora.md).
  if (n * r * (k + m) < kSerialMultiplyAdds) {
    std::vector<float> shrunk(static_cast<size_t>(r));
    for (int64_t i = 0; i < n; ++i) token_rows(i, shrunk);
    return;
  }
#pragma omp parallel num_threads(ctx.threads)
  {
    std::vector<float> shrunk(static_cast<size_t>(r));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) token_rows(i, shrunk);
  }
}

}  // namespace

void lora(const Context& ctx, const Tensor& y, const Tensor& x, const Tensor& a, const Tensor& bt,
          const Tensor& slots, const Tensor& out) {
  check_slots(slots, a.dim(0));
  if (a.dtype() == DType::kF16) {
    lora_rows<uint16_t>(ctx, y, x, a, bt, slots, out);
  } else {
    lora_rows<float>(ctx, y, x, a, bt, slots, out);
  }
}

}  // namespace baton::cpu
