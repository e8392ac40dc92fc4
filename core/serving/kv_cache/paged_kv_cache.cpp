#include "core/serving/kv_cache/paged_kv_cache.h"

#include <string>
#include <vector>

#include "baton/error.h"

namespace baton {

PagedKvCache::PagedKvCache(const KvCacheShape& shape, Backend& backend) : shape_(shape) {
  if (shape.n_layers <= 0 || shape.n_kv_heads <= 0 || shape.head_dim <= 0 ||
      shape.block_size <= 0 || shape.n_blocks <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "invalid KV cache shape: layers " + std::to_string(shape.n_layers) + ", kv heads " +
                    std::to_string(shape.n_kv_heads) + ", head dim " +
                    std::to_string(shape.head_dim) + ", block size " +
                    std::to_string(shape.block_size) + ", blocks " +
                    std::to_string(shape.n_blocks));
  }
  check_kv_cache_dtype(shape.dtype, shape.head_dim);
  const Shape pool = {shape.n_blocks, shape.block_size, shape.n_kv_heads, shape.head_dim};
  for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
    keys_.push_back(backend.allocate_tensor(shape.dtype, pool));
    values_.push_back(backend.allocate_tensor(shape.dtype, pool));
    // Pooled host memory is taken at first use: take it now, so that a pool too large for the
    // machine fails here, naming its size, rather than in the first step.
    keys_.back().materialize();
    values_.back().materialize();
  }
}

void PagedKvCache::copy_block(int32_t source, int32_t destination, Backend& backend) const {
  std::vector<std::byte> staging;
  for (const std::vector<Tensor>* pool : {&keys_, &values_}) {
    for (const Tensor& layer : *pool) {
      const Tensor from = layer.slice_rows(source, 1);
      const Tensor to = layer.slice_rows(destination, 1);
      staging.resize(from.nbytes());
      backend.download(staging.data(), from, staging.size());
      backend.upload(to, staging.data(), staging.size());
    }
  }
}

size_t kv_bytes_per_token(const KvCacheShape& shape) {
  return 2 * static_cast<size_t>(shape.n_layers) * shape.n_kv_heads *
         row_bytes(shape.dtype, shape.head_dim);
}

DType kv_cache_dtype(KvCacheType type) {
  switch (type) {
    case KvCacheType::kF32:
      return DType::kF32;
    case KvCacheType::kF16:
      return DType::kF16;
    case KvCacheType::kBF16:
      return DType::kBF16;
    case KvCacheType::kQ8_0:
      return DType::kQ8_0;
    case KvCacheType::kInt8Scaled:
      return DType::kI8Scaled;
    case KvCacheType::kFp8E4M3:
      return DType::kF8E4M3;
  }
  throw Error(ErrorCategory::kInternal, "an unknown KV cache type");
}

void check_kv_cache_dtype(DType dtype, int32_t head_dim) {
  if (!is_kv_cache_dtype(dtype)) {
    throw Error(ErrorCategory::kInvalidArgument, "a KV cache cannot be " +
                                                     std::string(to_string(dtype)) + " (use " +
                                                     kv_cache_dtype_names() + ")");
  }
  if (dtype == DType::kQ8_0 && head_dim % kQK8_0 != 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "a q8_0 KV cache needs a head size that is a multiple of 32; this model's is " +
                    std::to_string(head_dim) + " (use int8_scaled or f16)");
  }
}

}  // namespace baton
