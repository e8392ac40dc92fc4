#pragma once

// The host-side parameters of a step's nodes, on the device: each paged batch's block tables,
// token sequences and positions; each attention node's tokens split into decode tokens and
// prefill query tiles; each rope node's angle table. They are gathered from the graph before
// any kernel runs and copied in one transfer, so no node waits for a copy of its own.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backends/gpu/device_allocator.h"
#include "backends/gpu/kernels/kernels.h"
#include "backends/gpu/pinned_staging.h"
#include "core/runtime/graph.h"

namespace baton::gpu {

// How attention runs a step's tokens: tokens that are the only one of their sequence in the
// step take the split-K decode kernel; runs of consecutive tokens of one sequence are cut into
// query tiles for the prefill kernel.
struct AttentionPlan {
  const int32_t* decode_tokens = nullptr;
  int32_t n_decode = 0;
  int32_t decode_max_len = 0;  // the longest context among the decode tokens
  const QueryTile* tiles = nullptr;
  int32_t n_tiles = 0;
};

struct NodeMetadata {
  PagedView paged{};                      // kv_write, attention
  AttentionPlan attention;                // attention
  const double* rope_inv_freq = nullptr;  // rope
};

class StepMetadata {
 public:
  // Validates each paged batch against its node's caches (Error naming the node and the bad
  // value) and queues the copy on `stream`. The device copy is released with this object;
  // that is safe as soon as the nodes using it are queued, because device memory is reused
  // only by later work on the same stream.
  StepMetadata(std::span<const Node> nodes, DeviceAllocator& allocator, PinnedStaging& staging,
               gpuStream_t stream);

  const NodeMetadata& operator[](size_t node) const { return nodes_[node]; }

 private:
  std::shared_ptr<Buffer> device_;
  std::vector<NodeMetadata> nodes_;
};

}  // namespace baton::gpu
