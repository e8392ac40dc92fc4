#pragma once

// The attention kernel, written once over a Simd level (backends/cpu/simd/) and instantiated by
// attention_{generic,avx2,avx512}.cpp. Include only from those files.
//
// FlashAttention-style: a work item holds its query rows (every query head of one KV head, for
// up to kQueryTile tokens, so each K/V tile is loaded once for the whole GQA group) and walks the
// cache in tiles of kKvTile positions with an online softmax: a running max m and sum l per row,
// the accumulator rescaled by exp(m_old - m_new) whenever the max grows. A K tile is converted to
// f32 and transposed to [head_dim][kKvTile] so scores come out as whole vectors of positions
// without horizontal sums; a V tile is converted to rows padded to a multiple of 4 vectors.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/attention/attention.h"
#include "backends/cpu/simd/simd_tanh.h"
#include "core/runtime/dtype.h"
#include "core/runtime/fp8.h"
#include "core/runtime/half.h"

namespace baton::cpu::attn {

template <class S>
class Kernel {
  using V = typename S::V;
  static constexpr int kW = S::kWidth;
  static constexpr int kCols = static_cast<int>(kKvTile) / kW;  // vectors per row of scores
  // Query rows per score block: enough accumulators to hide FMA latency, few enough to stay in
  // registers (32 on AVX-512, 16 on AVX2).
  static constexpr int kRows = kW == 16 ? 4 : kW == 8 ? 2 : 1;
  static constexpr float kNegInf = -std::numeric_limits<float>::infinity();

 public:
  Kernel(const Args& args, int64_t group)
      : a_(args),
        group_(group),
        hd_(args.head_dim),
        hdp_((args.head_dim + 4 * kW - 1) / (4 * kW) * (4 * kW)),
        head_bytes_(row_bytes(args.cache_dtype, args.head_dim)),
        max_rows_(kQueryTile * group),
        q_(static_cast<size_t>(max_rows_ * hd_)),
        kt_(static_cast<size_t>(hd_ * kKvTile)),
        v_(static_cast<size_t>(kKvTile * hdp_)),
        s_(static_cast<size_t>(max_rows_ * kKvTile)),
        acc_(static_cast<size_t>(max_rows_ * hdp_)),
        m_(static_cast<size_t>(max_rows_)),
        l_(static_cast<size_t>(max_rows_)),
        pos_(static_cast<size_t>(max_rows_)),
        first_(static_cast<size_t>(max_rows_)),
        active_rows_(static_cast<size_t>(max_rows_)),
        active_hidden_(static_cast<size_t>(max_rows_)),
        active_valid_(static_cast<size_t>(max_rows_)),
        alpha_(static_cast<size_t>(max_rows_)),
        row_tmp_(static_cast<size_t>(hd_)) {}

  int64_t partial_stride() const { return hdp_ + 2; }

  // Runs one work item; `partials` is the slot array (row stride partial_stride()).
  void run(const Plan& plan, const WorkItem& item, float* partials) {
    const int64_t rows = item.count * group_;
    load_queries(plan, item);
    for (int32_t begin = item.kv_begin; begin < item.kv_end; begin += kKvTile) {
      const int64_t n = std::min<int64_t>(kKvTile, item.kv_end - begin);
      // Rows before the tile's first position (causal), or whose window starts after its last,
      // have nothing to add from it; a tile no row sees is not loaded.
      int64_t active = 0;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t valid = std::min<int64_t>(n, pos_[r] + 1 - begin);
        const int64_t hidden = std::max<int64_t>(0, first_[r] - begin);
        if (hidden >= valid) continue;
        active_rows_[active] = r;
        active_hidden_[active] = hidden;
        active_valid_[active++] = valid;
      }
      if (active == 0) continue;
      load_tile(item, begin, n);
      in_row_groups(rows, [&]<int R>(int64_t r) { scores<R>(r); });
      for (int64_t i = 0; i < active; ++i)
        alpha_[i] = softmax_step(active_rows_[i], active_hidden_[i], active_valid_[i]);
      in_row_groups(active, [&]<int R>(int64_t i) { accumulate_pv<R>(i); });
    }
    if (item.partial < 0) {
      for (int64_t r = 0; r < rows; ++r) {
        const int32_t t = plan.tokens[item.first + r / group_];
        float* o = a_.out + (t * a_.heads + item.kv_head * group_ + r % group_) * hd_;
        const float inv = 1.0f / l_[r];
        for (int64_t d = 0; d < hd_; ++d) o[d] = acc_[r * hdp_ + d] * inv;
      }
      return;
    }
    for (int64_t r = 0; r < rows; ++r) {
      float* slot = partials + (item.partial * group_ + r) * partial_stride();
      slot[0] = m_[r];
      slot[1] = l_[r];
      std::memcpy(slot + 2, acc_.data() + r * hdp_, static_cast<size_t>(hdp_) * sizeof(float));
    }
  }

  // Combines the partial states of one token and KV head: rescale each to the common max.
  void merge(const Merge& merge, const float* partials) const {
    for (int64_t g = 0; g < group_; ++g) {
      float m = kNegInf;
      for (int32_t i = 0; i < merge.count; ++i)
        m = std::max(m, partials[((merge.first + i) * group_ + g) * partial_stride()]);
      float* o = a_.out + (merge.token * a_.heads + merge.kv_head * group_ + g) * hd_;
      std::fill(o, o + hd_, 0.0f);
      float l = 0.0f;
      for (int32_t i = 0; i < merge.count; ++i) {
        const float* slot = partials + ((merge.first + i) * group_ + g) * partial_stride();
        const float w = std::exp(slot[0] - m);
        l += slot[1] * w;
        for (int64_t d = 0; d < hd_; ++d) o[d] += slot[2 + d] * w;
      }
      const float inv = 1.0f / l;
      for (int64_t d = 0; d < hd_; ++d) o[d] *= inv;
    }
  }

 private:
  // step<kRows>(i) over whole groups of kRows from 0, then step<1>(i) over the rest.
  template <class Step>
  static void in_row_groups(int64_t count, Step step) {
    int64_t i = 0;
    for (; i + kRows <= count; i += kRows) step.template operator()<kRows>(i);
    for (; i < count; ++i) step.template operator()<1>(i);
  }

  void load_queries(const Plan& plan, const WorkItem& item) {
    for (int32_t i = 0; i < item.count; ++i) {
      const int32_t t = plan.tokens[item.first + i];
      // The group's heads are adjacent in q, so its rows for one token are contiguous.
      const float* src = a_.q + (t * a_.heads + item.kv_head * group_) * hd_;
      float* dst = q_.data() + i * group_ * hd_;
      for (int64_t e = 0; e < group_ * hd_; ++e) dst[e] = src[e] * a_.scale;
      for (int64_t g = 0; g < group_; ++g) {
        const int64_t r = i * group_ + g;
        pos_[r] = a_.batch->token_pos[t];
        first_[r] = first_attended(a_.window, pos_[r]);
        m_[r] = kNegInf;
        l_[r] = 0.0f;
        std::fill_n(acc_.data() + r * hdp_, hdp_, 0.0f);
      }
    }
  }

  // K rows transposed into kt_, V rows into v_; columns/rows past n keep stale finite values
  // that masking turns into zero weights.
  void load_tile(const WorkItem& item, int32_t begin, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t row = cache_row(*a_.batch, item.seq, static_cast<int32_t>(begin + j));
      const size_t at = static_cast<size_t>(row * a_.kv_heads + item.kv_head) * head_bytes_;
      const auto* k_row = static_cast<const std::byte*>(a_.k_cache) + at;
      const auto* v_row = static_cast<const std::byte*>(a_.v_cache) + at;
      float* v_out = v_.data() + j * hdp_;
      const float* k = row_tmp_.data();
      switch (a_.cache_dtype) {
        case DType::kF16:
          S::f16_to_f32(reinterpret_cast<const uint16_t*>(k_row), row_tmp_.data(), hd_);
          S::f16_to_f32(reinterpret_cast<const uint16_t*>(v_row), v_out, hd_);
          break;
        case DType::kBF16:
          bf16_to_f32(k_row, row_tmp_.data());
          bf16_to_f32(v_row, v_out);
          break;
        case DType::kQ8_0:  // a head's row is whole blocks (the cache checks head_dim % 32 == 0)
          q8_0_to_f32(k_row, row_tmp_.data());
          q8_0_to_f32(v_row, v_out);
          break;
        case DType::kI8Scaled:
          int8_to_f32(k_row, row_tmp_.data());
          int8_to_f32(v_row, v_out);
          break;
        case DType::kF8E4M3:
          fp8_to_f32(k_row, row_tmp_.data());
          fp8_to_f32(v_row, v_out);
          break;
        default:
          k = reinterpret_cast<const float*>(k_row);
          std::memcpy(v_out, v_row, static_cast<size_t>(hd_) * sizeof(float));
      }
      for (int64_t d = 0; d < hd_; ++d) kt_[d * kKvTile + j] = k[d];
    }
  }

  // Widen one head's cache row (its bytes from `head_row`) to f32.
  void bf16_to_f32(const std::byte* head_row, float* out) const {
    const auto* bits = reinterpret_cast<const uint16_t*>(head_row);
    for (int64_t d = 0; d < hd_; ++d) out[d] = baton::bf16_to_fp32(bits[d]);
  }

  // Its f32 scale, then head_dim int8 quants.
  void int8_to_f32(const std::byte* head_row, float* out) const {
    float scale;
    std::memcpy(&scale, head_row, sizeof(scale));
    const auto* q = reinterpret_cast<const int8_t*>(head_row + sizeof(scale));
    for (int64_t d = 0; d < hd_; ++d) out[d] = scale * static_cast<float>(q[d]);
  }

  void fp8_to_f32(const std::byte* head_row, float* out) const {
    const auto* codes = reinterpret_cast<const uint8_t*>(head_row);
    for (int64_t d = 0; d < hd_; ++d) out[d] = fp8_table_[codes[d]];
  }

  void q8_0_to_f32(const std::byte* head_row, float* out) const {
    const auto* blocks = reinterpret_cast<const BlockQ8_0*>(head_row);
    for (int64_t b = 0; b < hd_ / kQK8_0; ++b) {
      const float d = fp16_to_fp32(blocks[b].d);
      for (int64_t i = 0; i < kQK8_0; ++i) out[b * kQK8_0 + i] = d * blocks[b].qs[i];
    }
  }

  // Scores of query rows [r, r + R) against the tile: sums over head_dim of a broadcast query
  // element times a vector of positions.
  template <int R>
  void scores(int64_t r) {
    V acc[R][kCols];
    for (int i = 0; i < R; ++i)
      for (int c = 0; c < kCols; ++c) acc[i][c] = S::zero();
    const float* q = q_.data() + r * hd_;
    for (int64_t d = 0; d < hd_; ++d) {
      V k[kCols];
      for (int c = 0; c < kCols; ++c) k[c] = S::load(kt_.data() + d * kKvTile + c * kW);
      for (int i = 0; i < R; ++i) {
        const V qv = S::set1(q[i * hd_ + d]);
        for (int c = 0; c < kCols; ++c) acc[i][c] = S::fmadd(qv, k[c], acc[i][c]);
      }
    }
    for (int i = 0; i < R; ++i)
      for (int c = 0; c < kCols; ++c) S::store(s_.data() + (r + i) * kKvTile + c * kW, acc[i][c]);
  }

  // Online softmax step for one row over its positions [hidden, valid): its scores become
  // p = exp(s - m_new), the others 0, and the result is exp(m_old - m_new), the factor by which
  // the row's accumulator must shrink before p · V is added.
  float softmax_step(int64_t r, int64_t hidden, int64_t valid) {
    float* s = s_.data() + r * kKvTile;
    if (a_.softcap > 0.0f) {
      const V cap = S::set1(a_.softcap), inv = S::set1(1.0f / a_.softcap);
      for (int c = 0; c < kCols; ++c)
        S::store(s + c * kW, S::mul(cap, simd_tanh<S>(S::mul(S::load(s + c * kW), inv))));
    }
    for (int64_t j = 0; j < hidden; ++j) s[j] = kNegInf;
    for (int64_t j = valid; j < kKvTile; ++j) s[j] = kNegInf;
    V mv = S::load(s);
    for (int c = 1; c < kCols; ++c) mv = S::max(mv, S::load(s + c * kW));
    const float m_new = std::max(m_[r], S::reduce_max(mv));
    // exp(0) is 1 exactly: the common case of an unchanged max skips the scalar exp.
    const float alpha = m_new == m_[r] ? 1.0f : std::exp(m_[r] - m_new);
    const V mn = S::set1(m_new);
    V sum = S::zero();
    for (int c = 0; c < kCols; ++c) {
      const V p = S::exp(S::sub(S::load(s + c * kW), mn));
      S::store(s + c * kW, p);
      sum = S::add(sum, p);
    }
    l_[r] = l_[r] * alpha + S::reduce_add(sum);
    m_[r] = m_new;
    return alpha;
  }

  // acc = acc * alpha + p · V for the R active rows from `first`. The rows share each V load,
  // and their 4R accumulator chains keep the FMA units busy where one row's 4 chains wait on
  // FMA latency. Each row still adds its positions in order, so its result does not depend on
  // which rows it was grouped with.
  template <int R>
  void accumulate_pv(int64_t first) {
    int64_t common = kKvTile;
    for (int i = 0; i < R; ++i) common = std::min(common, active_valid_[first + i]);
    for (int64_t d = 0; d < hdp_; d += 4 * kW) {
      V o[R][4];
      float* acc[R];
      const float* s[R];
      for (int i = 0; i < R; ++i) {
        const int64_t r = active_rows_[first + i];
        acc[i] = acc_.data() + r * hdp_ + d;
        s[i] = s_.data() + r * kKvTile;
        const V scale = S::set1(alpha_[first + i]);
        for (int e = 0; e < 4; ++e) o[i][e] = S::mul(S::load(acc[i] + e * kW), scale);
      }
      for (int64_t j = 0; j < common; ++j) {
        const float* v = v_.data() + j * hdp_ + d;
        V vv[4];
        for (int e = 0; e < 4; ++e) vv[e] = S::load(v + e * kW);
        for (int i = 0; i < R; ++i) {
          const V p = S::set1(s[i][j]);
          for (int e = 0; e < 4; ++e) o[i][e] = S::fmadd(p, vv[e], o[i][e]);
        }
      }
      for (int i = 0; i < R; ++i) {
        for (int64_t j = common; j < active_valid_[first + i]; ++j) {
          const V p = S::set1(s[i][j]);
          const float* v = v_.data() + j * hdp_ + d;
          for (int e = 0; e < 4; ++e) o[i][e] = S::fmadd(p, S::load(v + e * kW), o[i][e]);
        }
        for (int e = 0; e < 4; ++e) S::store(acc[i] + e * kW, o[i][e]);
      }
    }
  }

  const Args& a_;
  const int64_t group_, hd_, hdp_;
  const size_t head_bytes_;  // one head's K or V row in the cache's type
  const int64_t max_rows_;
  std::vector<float> q_, kt_, v_, s_, acc_, m_, l_;
  std::vector<int32_t> pos_, first_;  // per row: its position and the first one it attends to
  // This tile's rows with positions to add: their index, how many of the tile's positions lie
  // before their window and how many up to their own, and their rescale.
  std::vector<int64_t> active_rows_, active_hidden_, active_valid_;
  std::vector<float> alpha_;
  std::vector<float> row_tmp_;
  const std::array<float, 256>& fp8_table_ = fp8_e4m3_table();
};

template <class S>
void run(const Context& ctx, const Args& args, const Plan& plan) {
  const int64_t group = args.heads / args.kv_heads;
  const int64_t n_items = static_cast<int64_t>(plan.items.size());
  const int64_t n_merges = static_cast<int64_t>(plan.merges.size());
  std::vector<float> partials;
#pragma omp parallel num_threads(ctx.threads)
  {
    Kernel<S> kernel(args, group);
#pragma omp single
    partials.resize(static_cast<size_t>(plan.partials * group * kernel.partial_stride()));
#pragma omp for schedule(dynamic)
    for (int64_t i = 0; i < n_items; ++i) kernel.run(plan, plan.items[i], partials.data());
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n_merges; ++i) kernel.merge(plan.merges[i], partials.data());
  }
}

}  // namespace baton::cpu::attn
