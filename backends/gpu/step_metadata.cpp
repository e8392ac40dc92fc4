#include "backends/gpu/step_metadata.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <variant>

#include "baton/error.h"

namespace baton::gpu {
namespace {

constexpr size_t kNone = SIZE_MAX;

// Offsets into the staged bytes, turned into device pointers once the copy has a home.
struct PagedOffsets {
  size_t tables = kNone, seq = kNone, pos = kNone;
  int32_t stride = 0, block_size = 0;
};
struct PlanOffsets {
  size_t decode = kNone, tiles = kNone;
  int32_t n_decode = 0, decode_max_len = 0, n_tiles = 0;
};
struct NodeOffsets {
  PagedOffsets paged;
  PlanOffsets plan;
  size_t rope = kNone;
};

class Staging {
 public:
  // Appends `count` values at a 16-byte boundary and returns their offset.
  template <typename T>
  size_t append(const T* values, size_t count) {
    const size_t offset = (bytes_.size() + 15) / 16 * 16;
    bytes_.resize(offset + sizeof(T) * count);
    if (count > 0) std::memcpy(bytes_.data() + offset, values, sizeof(T) * count);
    return offset;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

PagedOffsets stage_batch(const PagedBatch& batch, Staging& staging) {
  size_t stride = 1;
  for (const std::vector<int32_t>& table : batch.block_tables)
    stride = std::max(stride, table.size());
  std::vector<int32_t> tables(batch.block_tables.size() * stride, 0);
  for (size_t s = 0; s < batch.block_tables.size(); ++s) {
    std::copy(batch.block_tables[s].begin(), batch.block_tables[s].end(),
              tables.begin() + static_cast<ptrdiff_t>(s * stride));
  }
  PagedOffsets out;
  out.tables = staging.append(tables.data(), tables.size());
  out.seq = staging.append(batch.token_seq.data(), batch.token_seq.size());
  out.pos = staging.append(batch.token_pos.data(), batch.token_pos.size());
  out.stride = static_cast<int32_t>(stride);
  out.block_size = batch.block_size;
  return out;
}

PlanOffsets stage_plan(const PagedBatch& batch, int group, Staging& staging) {
  const int tokens_per_tile = kPrefillRows / prefill_heads_per_block(group);
  std::vector<int32_t> decode;
  std::vector<QueryTile> tiles;
  int32_t decode_max_len = 0;
  const auto n = static_cast<int32_t>(batch.token_seq.size());
  for (int32_t first = 0; first < n;) {
    int32_t end = first + 1;
    while (end < n && batch.token_seq[end] == batch.token_seq[first]) ++end;
    if (end - first == 1) {
      decode.push_back(first);
      decode_max_len = std::max(decode_max_len, batch.token_pos[first] + 1);
    } else {
      for (int32_t t = first; t < end; t += tokens_per_tile) {
        const int32_t count = std::min(tokens_per_tile, end - t);
        const int32_t max_pos =
            *std::max_element(batch.token_pos.begin() + t, batch.token_pos.begin() + t + count);
        tiles.push_back(QueryTile{t, count, batch.token_seq[first], max_pos});
      }
    }
    first = end;
  }
  PlanOffsets out;
  out.decode = staging.append(decode.data(), decode.size());
  out.tiles = staging.append(tiles.data(), tiles.size());
  out.n_decode = static_cast<int32_t>(decode.size());
  out.decode_max_len = decode_max_len;
  out.n_tiles = static_cast<int32_t>(tiles.size());
  return out;
}

bool same_rope(const RopeParams& a, const RopeParams& b) {
  return a.n_rot == b.n_rot && a.freq_base == b.freq_base && a.freq_scale == b.freq_scale &&
         a.freq_factors == b.freq_factors && a.yarn_ext_factor == b.yarn_ext_factor &&
         a.yarn_original_context == b.yarn_original_context &&
         a.yarn_beta_fast == b.yarn_beta_fast && a.yarn_beta_slow == b.yarn_beta_slow;
}

// Angle per unit of position of each rotated pair, as the reference computes it in double.
size_t stage_rope(const RopeParams& p, Staging& staging) {
  const std::vector<double> inv_freq = rope_inv_freq(p);
  return staging.append(inv_freq.data(), inv_freq.size());
}

const PagedBatch& batch_of(const Node& node) {
  return *std::get<AttentionParams>(node.params).batch;
}

}  // namespace

StepMetadata::StepMetadata(std::span<const Node> nodes, DeviceAllocator& allocator,
                           PinnedStaging& staging_area, gpuStream_t stream) {
  Staging staging;
  std::vector<NodeOffsets> offsets(nodes.size());
  std::map<const PagedBatch*, PagedOffsets> batches;
  std::map<std::pair<const PagedBatch*, int>, PlanOffsets> plans;
  std::vector<std::pair<const RopeParams*, size_t>> ropes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    try {
      if (node.op == OpKind::kKvWrite || node.op == OpKind::kAttention) {
        const PagedBatch& batch = batch_of(node);
        const Tensor& cache = node.inputs[node.op == OpKind::kKvWrite ? 2 : 1];
        validate_paged_batch(batch, node.inputs[0].dim(0), cache.dim(0), cache.dim(1));
        auto [it, added] = batches.try_emplace(&batch);
        if (added) it->second = stage_batch(batch, staging);
        offsets[i].paged = it->second;
      }
      if (node.op == OpKind::kAttention) {
        const auto group = static_cast<int>(node.inputs[0].dim(1) / node.inputs[1].dim(2));
        auto [it, added] = plans.try_emplace({&batch_of(node), group});
        if (added) it->second = stage_plan(batch_of(node), group, staging);
        offsets[i].plan = it->second;
      }
      if (node.op == OpKind::kRope) {
        const RopeParams& params = std::get<RopeParams>(node.params);
        const auto same = std::find_if(ropes.begin(), ropes.end(),
                                       [&](const auto& r) { return same_rope(*r.first, params); });
        offsets[i].rope = same != ropes.end() ? same->second : stage_rope(params, staging);
        if (same == ropes.end()) ropes.emplace_back(&params, offsets[i].rope);
      }
    } catch (const Error& e) {
      throw Error(e.category(), "node '" + node.name + "' (" + std::string(to_string(node.op)) +
                                    "): " + e.what());
    }
  }

  const std::vector<std::byte>& bytes = staging.bytes();
  if (bytes.empty()) {
    nodes_.resize(nodes.size());
    return;
  }
  device_ = allocator.allocate(bytes.size());
  staging_area.copy_to_device(device_->data(), bytes.data(), bytes.size(), stream);
  std::byte* base = device_->data();
  auto at = [base](size_t offset) { return offset == kNone ? nullptr : base + offset; };
  nodes_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeOffsets& o = offsets[i];
    NodeMetadata& m = nodes_[i];
    m.paged = PagedView{reinterpret_cast<const int32_t*>(at(o.paged.tables)), o.paged.stride,
                        o.paged.block_size, reinterpret_cast<const int32_t*>(at(o.paged.seq)),
                        reinterpret_cast<const int32_t*>(at(o.paged.pos))};
    m.attention = AttentionPlan{
        reinterpret_cast<const int32_t*>(at(o.plan.decode)), o.plan.n_decode, o.plan.decode_max_len,
        reinterpret_cast<const QueryTile*>(at(o.plan.tiles)), o.plan.n_tiles};
    m.rope_inv_freq = reinterpret_cast<const double*>(at(o.rope));
  }
}

}  // namespace baton::gpu
