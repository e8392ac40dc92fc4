#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/llm_options.h"
#include "core/runtime/backend.h"
#include "core/runtime/dtype.h"
#include "models/model.h"

namespace baton {

struct KvCacheShape {
  int32_t n_layers = 0;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t block_size = 16;  // tokens per block
  int32_t n_blocks = 0;
  // F32, F16, Q8_0 (blocks of 32 along each head's row, llama.cpp's `-ctk q8_0` layout; the
  // head size must be a multiple of 32 so that no block spans two heads) or F8E4M3 (vLLM's
  // `fp8`: one byte a value, no scale).
  DType dtype = DType::kF32;
};

// K and V of one token over all layers: what sizing a pool in MiB divides by.
size_t kv_bytes_per_token(const KvCacheShape& shape);

// The dtype of LLMOptions::kv_cache_dtype.
DType kv_cache_dtype(KvCacheType type);
// Throws Error(kInvalidArgument) naming the dtype and head size when `dtype` cannot hold rows of
// `head_dim` elements, or is not a cache dtype.
void check_kv_cache_dtype(DType dtype, int32_t head_dim);

// One pool of fixed-size blocks per layer for keys and values, on the backend that runs the
// model: each layer's K and V are [n_blocks, block_size, n_kv_heads, head_dim]. Which sequence
// owns which block is the BlockManager's business; attention reads K/V through block tables.
class PagedKvCache {
 public:
  PagedKvCache(const KvCacheShape& shape, Backend& backend);

  const KvCacheShape& shape() const { return shape_; }
  const Tensor& keys(int32_t layer) const { return keys_.at(layer); }
  const Tensor& values(int32_t layer) const { return values_.at(layer); }
  // Every layer's K and V, as a model step reads them.
  KvTensors tensors() const { return {keys_, values_}; }
  // Copies every layer's K and V of block `source` into block `destination` (copy-on-write).
  void copy_block(int32_t source, int32_t destination, Backend& backend) const;
  size_t bytes_per_token() const { return kv_bytes_per_token(shape_); }

 private:
  KvCacheShape shape_;
  std::vector<Tensor> keys_;
  std::vector<Tensor> values_;
};

}  // namespace baton
