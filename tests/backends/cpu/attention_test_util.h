#pragma once

// Attention test cases: sequences with cached context and new tokens, batched with scattered
// block tables, and caches of random values.

#include <algorithm>
#include <memory>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "core/runtime/op.h"
#include "core/runtime/quantize/quantize.h"
#include "tests/ops/op_test_util.h"

namespace baton::testing {

struct Sequence {
  int cached;  // positions already in the cache before this step
  int added;   // new tokens in this step (1: decode; more: prefill or a prefill chunk)
};

struct AttentionCase {
  std::string name;
  int64_t heads, kv_heads, head_dim;
  int block_size;
  DType cache_dtype;
  std::vector<Sequence> seqs;
  float softcap = 0.0f;  // AttentionParams::softcap
  int32_t window = 0;    // AttentionParams::window
};

inline void PrintTo(const AttentionCase& c, std::ostream* os) {
  *os << c.name;
}

// The step's batch: the sequences' new tokens one after another, each sequence's blocks drawn
// from a shuffled pool so that its table is not contiguous.
inline std::shared_ptr<PagedBatch> make_batch(const AttentionCase& c, int64_t n_blocks) {
  auto batch = std::make_shared<PagedBatch>();
  batch->block_size = c.block_size;
  std::vector<int32_t> pool(static_cast<size_t>(n_blocks));
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), std::mt19937(61));
  size_t next = 0;
  for (size_t s = 0; s < c.seqs.size(); ++s) {
    const int length = c.seqs[s].cached + c.seqs[s].added;
    std::vector<int32_t> table;
    for (int b = 0; b * c.block_size < length; ++b) table.push_back(pool[next++]);
    batch->block_tables.push_back(table);
    for (int p = c.seqs[s].cached; p < length; ++p) {
      batch->token_seq.push_back(static_cast<int32_t>(s));
      batch->token_pos.push_back(p);
    }
  }
  return batch;
}

// A cache of random values: rows of earlier steps hold context, the rest is noise that
// attention must never read.
inline Tensor random_cache(DType dtype, Shape shape, uint32_t seed) {
  Tensor f32 = random_f32(shape, seed);
  if (dtype == DType::kF32) return f32;
  Tensor out = Tensor::host(dtype, shape);
  for (int64_t r = 0; r < f32.rows(); ++r) {  // row by row: int8 rows carry their own scale
    quantize_row(dtype, f32.data<float>() + r * f32.row_length(),
                 out.materialize() + r * out.row_bytes(), f32.row_length());
  }
  return out;
}

}  // namespace baton::testing
