#include "core/kv_cache/paged_kv_cache.h"

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
  const Shape pool = {shape.n_blocks, shape.block_size, shape.n_kv_heads, shape.head_dim};
  for (int32_t layer = 0; layer < shape.n_layers; ++layer) {
    keys_.push_back(backend.allocate_tensor(DType::kF32, pool));
    values_.push_back(backend.allocate_tensor(DType::kF32, pool));
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
  return 2 * sizeof(float) * static_cast<size_t>(shape.n_layers) * shape.n_kv_heads *
         shape.head_dim;
}

}  // namespace baton
