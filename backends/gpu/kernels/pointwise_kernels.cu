// Element-wise kernels: rope, swiglu, add, kv_write, and the f32 -> f16/bf16 conversion that
// feeds 16-bit GEMMs. One thread per output element (or rotated pair), grid-strided.

#include "backends/gpu/kernels/device_types.cuh"

namespace baton::gpu {
namespace {

// Item i of n, striding by the whole grid.
#define FOR_EACH_ITEM(i, n)                                                              \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Items per head: n_rot / 2 rotated pairs, then the head_dim - n_rot dimensions copied as is.
__global__ void rope_kernel(const float* x, const int32_t* positions, float* out, RopeArgs a) {
  const int half = a.n_rot / 2;
  const int64_t per_head = half + (a.head_dim - a.n_rot);
  FOR_EACH_ITEM(item, a.tokens * a.heads * per_head) {
    const int64_t head = item / per_head;  // token * heads + head index
    const int64_t j = item % per_head;
    const float* in = x + head * a.head_dim;
    float* o = out + head * a.head_dim;
    if (j >= half) {
      const int64_t d = a.n_rot + (j - half);
      o[d] = in[d];
      continue;
    }
    const int i = static_cast<int>(j);
    const double theta = static_cast<double>(positions[head / a.heads]) * a.inv_freq[i];
    double sin_theta, cos_theta;
    sincos(theta, &sin_theta, &cos_theta);
    sin_theta *= a.magnitude;
    cos_theta *= a.magnitude;
    const int first = a.neox ? i : 2 * i;
    const int second = a.neox ? i + half : 2 * i + 1;
    const double x0 = in[first], x1 = in[second];
    o[first] = static_cast<float>(x0 * cos_theta - x1 * sin_theta);
    o[second] = static_cast<float>(x0 * sin_theta + x1 * cos_theta);
  }
}

__global__ void swiglu_kernel(const float* gate, const float* up, float* out, int64_t n) {
  FOR_EACH_ITEM(i, n) {
    const float g = gate[i];
    out[i] = g / (1.0f + expf(-g)) * up[i];
  }
}

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n,
                           int64_t b_period) {
  FOR_EACH_ITEM(i, n) out[i] = a[i] + b[i % b_period];
}

template <typename CacheT>
__global__ void kv_write_kernel(const float* k, const float* v, CacheT* k_cache, CacheT* v_cache,
                                int64_t tokens, int64_t row_elems, PagedView paged) {
  FOR_EACH_ITEM(item, tokens * row_elems) {
    const int64_t t = item / row_elems, e = item % row_elems;
    const int64_t row = paged_row(paged, paged.token_seq[t], paged.token_pos[t]);
    store_cache(k_cache + row * row_elems + e, k[item]);
    store_cache(v_cache + row * row_elems + e, v[item]);
  }
}

__global__ void convert_half_kernel(const float* x, gpu_half* out, int64_t n) {
  FOR_EACH_ITEM(i, n) out[i] = float_to_half(x[i]);
}

__global__ void convert_bf16_kernel(const float* x, gpu_bf16* out, int64_t n) {
  FOR_EACH_ITEM(i, n) out[i] = float_to_bf16(x[i]);
}

#undef FOR_EACH_ITEM

}  // namespace

void rope(const float* x, const int32_t* positions, float* out, const RopeArgs& args,
          gpuStream_t stream) {
  const int64_t items = args.tokens * args.heads * (args.head_dim - args.n_rot / 2);
  if (items == 0) return;
  launch<&rope_kernel>(blocks_for(items), kThreads, 0, stream, x, positions, out, args);
  GPU_CHECK(gpuGetLastError());
}

void swiglu(const float* gate, const float* up, float* out, int64_t n, gpuStream_t stream) {
  if (n == 0) return;
  launch<&swiglu_kernel>(blocks_for(n), kThreads, 0, stream, gate, up, out, n);
  GPU_CHECK(gpuGetLastError());
}

void add(const float* a, const float* b, float* out, int64_t n, int64_t b_period,
         gpuStream_t stream) {
  if (n == 0) return;
  launch<&add_kernel>(blocks_for(n), kThreads, 0, stream, a, b, out, n, b_period);
  GPU_CHECK(gpuGetLastError());
}

void kv_write(CacheType cache, const float* k, const float* v, void* k_cache, void* v_cache,
              int64_t tokens, int64_t row_elems, const PagedView& paged, gpuStream_t stream) {
  const int64_t n = tokens * row_elems;
  if (n == 0) return;
  if (cache == CacheType::kF16) {
    launch<&kv_write_kernel<gpu_half>>(blocks_for(n), kThreads, 0, stream, k, v,
                                       static_cast<gpu_half*>(k_cache),
                                       static_cast<gpu_half*>(v_cache), tokens, row_elems, paged);
  } else {
    launch<&kv_write_kernel<float>>(blocks_for(n), kThreads, 0, stream, k, v,
                                    static_cast<float*>(k_cache), static_cast<float*>(v_cache),
                                    tokens, row_elems, paged);
  }
  GPU_CHECK(gpuGetLastError());
}

void convert_to_half(const float* x, gpu_half* out, int64_t n, gpuStream_t stream) {
  if (n == 0) return;
  launch<&convert_half_kernel>(blocks_for(n), kThreads, 0, stream, x, out, n);
  GPU_CHECK(gpuGetLastError());
}

void convert_to_bf16(const float* x, gpu_bf16* out, int64_t n, gpuStream_t stream) {
  if (n == 0) return;
  launch<&convert_bf16_kernel>(blocks_for(n), kThreads, 0, stream, x, out, n);
  GPU_CHECK(gpuGetLastError());
}

}  // namespace baton::gpu
