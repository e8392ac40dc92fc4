// LoRA's low-rank update, y + Bᵀ-rows · (a · x), for a batch whose tokens use different adapters.
//
// The update is about r / k of the base matmul's work (1-2% at rank 16, 10% on the demo model);
// what matters is that it runs at the ISA's vector width (the row kernels of elementwise.h) and
// that its weights are read as few times as they can be: tokens are visited grouped by slot, in
// tiles of up to kLoraTileTokens tokens of one slot that share each load of a and bt (SGMV-style,
// as the GPU kernel does).

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

// Every token, those of the base model first, then by slot (stable within a slot); empty when
// the tokens are in that order already (one token, or one sequence's), so that a decode step
// does not allocate for it.
std::vector<int64_t> tokens_by_slot(const Tensor& slots) {
  const int32_t* s = slots.data<int32_t>();
  if (std::is_sorted(s, s + slots.dim(0))) return {};
  std::vector<int64_t> tokens(static_cast<size_t>(slots.dim(0)));
  for (size_t t = 0; t < tokens.size(); ++t) tokens[t] = static_cast<int64_t>(t);
  std::stable_sort(tokens.begin(), tokens.end(), [s](int64_t a, int64_t b) { return s[a] < s[b]; });
  return tokens;
}

// The token at position i of the slot order.
int64_t token_at(const std::vector<int64_t>& order, int64_t i) {
  return order.empty() ? i : order[static_cast<size_t>(i)];
}

// Up to kLoraTileTokens tokens of one slot, consecutive in slot order from `first`.
struct Tile {
  int64_t first;
  int count;
};

// Calls f(tile) over the tokens in slot order, each run of one slot cut into tiles of at most
// `most` tokens.
template <class F>
void for_each_tile(const std::vector<int64_t>& order, const int32_t* slot, int64_t n, int most,
                   F f) {
  for (int64_t i = 0; i < n;) {
    int count = 1;
    while (count < most && i + count < n &&
           slot[token_at(order, i + count)] == slot[token_at(order, i)]) {
      ++count;
    }
    f(Tile{i, count});
    i += count;
  }
}

// The row kernels for slots of element type T: f32, or f16 as uint16_t.
struct SlotKernels {
  const RowKernels& row;
  void shrink(const float* a, int64_t r, int64_t k, const float* const* x, int tokens,
              float* s) const {
    row.lora_shrink(a, r, k, x, tokens, s);
  }
  void shrink(const uint16_t* a, int64_t r, int64_t k, const float* const* x, int tokens,
              float* s) const {
    row.lora_shrink_f16(a, r, k, x, tokens, s);
  }
  void expand(const float* bt, int64_t r, int64_t m, const float* s, const float* const* y,
              float* const* o, int tokens) const {
    row.lora_expand(bt, r, m, s, y, o, tokens);
  }
  void expand(const uint16_t* bt, int64_t r, int64_t m, const float* s, const float* const* y,
              float* const* o, int tokens) const {
    row.lora_expand_f16(bt, r, m, s, y, o, tokens);
  }
};

// Updates below this many multiply-adds run without a parallel region.
constexpr int64_t kSerialMultiplyAdds = int64_t{1} << 16;

template <class T>
void lora_rows(const Context& ctx, const Tensor& y, const Tensor& x, const Tensor& a,
               const Tensor& bt, const Tensor& slots, const Tensor& out) {
  const int64_t n = x.dim(0), k = x.dim(1), r = a.dim(1), m = bt.dim(2);
  const std::vector<int64_t> order = tokens_by_slot(slots);
  const int32_t* slot = slots.data<int32_t>();
  const float* xs = x.data<float>();
  const float* ys = y.data<float>();
  const T* as = a.data<T>();
  const T* bs = bt.data<T>();
  float* os = reinterpret_cast<float*>(out.buffer()->data_for_overwrite() + out.offset());
  const SlotKernels kernels{row_kernels()};
  // `shrunk` holds kLoraTileTokens * r values.
  const auto tile_rows = [&](Tile tile, float* shrunk) {
    const float* x_rows[kLoraTileTokens];
    const float* y_rows[kLoraTileTokens];
    float* o_rows[kLoraTileTokens];
    for (int c = 0; c < tile.count; ++c) {
      const int64_t t = token_at(order, tile.first + c);
      x_rows[c] = xs + t * k;
      y_rows[c] = ys + t * m;
      o_rows[c] = os + t * m;
    }
    const int32_t s = slot[token_at(order, tile.first)];
    if (s < 0) {
      for (int c = 0; c < tile.count; ++c) {
        std::memcpy(o_rows[c], y_rows[c], static_cast<size_t>(m) * sizeof(float));
      }
      return;
    }
    kernels.shrink(as + s * r * k, r, k, x_rows, tile.count, shrunk);
    kernels.expand(bs + s * r * m, r, m, shrunk, y_rows, o_rows, tile.count);
  };
  const size_t shrunk_size = static_cast<size_t>(kLoraTileTokens * r);
  // A small update (one decode token of a small model: microseconds of work) runs on the
  // calling thread: entering a parallel region at all, even one that an OpenMP `if` clause makes
  // serial, costs about as much, and on the demo model that cost made decoding with an adapter
  // 0.71x the base's speed against 0.85x without it (docs/lora.md).
  if (n * r * (k + m) < kSerialMultiplyAdds) {
    std::vector<float> shrunk(shrunk_size);
    for_each_tile(order, slot, n, kLoraTileTokens,
                  [&](Tile tile) { tile_rows(tile, shrunk.data()); });
    return;
  }
  // Smaller tiles where there are fewer tokens than threads would have tiles of four, so that
  // every thread has one (a tile's results do not depend on its size); taken as they come, since
  // base-model tiles (a copy) cost little beside adapted ones.
  const int most =
      static_cast<int>(std::clamp<int64_t>(n / std::max(ctx.threads, 1), 1, kLoraTileTokens));
  std::vector<Tile> tiles;
  for_each_tile(order, slot, n, most, [&](Tile tile) { tiles.push_back(tile); });
  const auto tile_count = static_cast<int64_t>(tiles.size());
#pragma omp parallel num_threads(ctx.threads)
  {
    std::vector<float> shrunk(shrunk_size);
#pragma omp for schedule(dynamic)
    for (int64_t i = 0; i < tile_count; ++i) tile_rows(tiles[i], shrunk.data());
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
