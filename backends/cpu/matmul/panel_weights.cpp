#include "backends/cpu/matmul/panel_weights.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "baton/error.h"

namespace baton::cpu {
namespace {

constexpr size_t kAlignment = 64;  // panel blocks are whole zmm loads
constexpr int kLanes = 16;         // weight rows per zmm

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

struct Panels {
  std::weak_ptr<Buffer> source;  // once it expires the address may hold another tensor
  DType dtype;
  Shape shape;
  std::unique_ptr<std::byte, FreeDeleter> data;
  size_t bytes;
};

// Writes block b of weight rows [row0, row0 + 32) to `dst`; rows past `rows` stay zero.
template <typename Block>
void pack_block(const std::byte* w, size_t w_stride, int64_t row0, int64_t rows, int64_t b,
                std::byte* dst) {
  constexpr bool kNibbles = std::is_same_v<Block, BlockQ4_0>;
  constexpr int kDwords = sizeof(Block::qs) / 4;  // 4 for Q4_0, 8 for Q8_0
  auto* scales = reinterpret_cast<uint16_t*>(dst);
  auto* quants = reinterpret_cast<uint32_t*>(dst + 64);
  for (int64_t j = 0; j < kPanelRows && row0 + j < rows; ++j) {
    const auto* block =
        reinterpret_cast<const Block*>(w + static_cast<size_t>(row0 + j) * w_stride) + b;
    scales[j] = block->d;
    const int64_t h = j / kLanes, lane = j % kLanes;
    for (int t = 0; t < kDwords; ++t) {
      uint32_t four;
      std::memcpy(&four, block->qs + 4 * t, sizeof(four));
      if constexpr (!kNibbles) four ^= 0x80808080u;  // signed w to unsigned w + 128
      quants[(2 * t + h) * kLanes + lane] = four;
    }
  }
}

template <typename Block>
void pack(const Tensor& w, std::byte* out, int threads) {
  const int64_t rows = w.dim(0), blocks = w.dim(1) / kQK4_0;
  const int64_t panels = (rows + kPanelRows - 1) / kPanelRows;
  const size_t block_bytes = panel_block_bytes(w.dtype());
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t p = 0; p < panels; ++p) {
    for (int64_t b = 0; b < blocks; ++b) {
      pack_block<Block>(w.materialize(), w.row_bytes(), p * kPanelRows, rows, b,
                        out + static_cast<size_t>(p * blocks + b) * block_bytes);
    }
  }
}

}  // namespace

struct PanelWeights::Impl {
  mutable std::mutex mutex;
  std::unordered_map<const std::byte*, Panels> panels;
  size_t bytes = 0;

  void forget_expired() {
    std::erase_if(panels, [&](const auto& entry) {
      if (!entry.second.source.expired()) return false;
      bytes -= entry.second.bytes;
      return true;
    });
  }
};

PanelWeights::PanelWeights() : impl_(std::make_unique<Impl>()) {}
PanelWeights::~PanelWeights() = default;

const std::byte* PanelWeights::find_or_add(const Tensor& w, int threads) {
  const DType dtype = w.dtype();
  if (w.rank() != 2 || (dtype != DType::kQ4_0 && dtype != DType::kQ8_0) || !w.buffer()->is_host() ||
      w.numel() == 0 || w.dim(1) % kQK4_0 != 0) {
    return nullptr;
  }
  const std::lock_guard lock(impl_->mutex);
  if (const auto it = impl_->panels.find(w.materialize()); it != impl_->panels.end()) {
    const Panels& p = it->second;
    if (!p.source.expired() && p.dtype == dtype && p.shape == w.shape()) return p.data.get();
  }
  impl_->forget_expired();
  const int64_t panel_count = (w.dim(0) + kPanelRows - 1) / kPanelRows;
  const size_t bytes =
      static_cast<size_t>(panel_count * (w.dim(1) / kQK4_0)) * panel_block_bytes(dtype);
  Panels entry{w.buffer(),
               dtype,
               w.shape(),
               {static_cast<std::byte*>(std::aligned_alloc(kAlignment, bytes)), FreeDeleter{}},
               bytes};
  if (!entry.data) {
    throw Error(ErrorCategory::kOutOfMemory, "cannot allocate " + std::to_string(bytes) +
                                                 " bytes to repack a " +
                                                 std::string(to_string(dtype)) + " weight");
  }
  // Packing writes every byte but a partial last panel's rows past the weight's end.
  if (w.dim(0) % kPanelRows != 0) {
    const size_t panel_bytes = bytes / static_cast<size_t>(panel_count);
    std::memset(entry.data.get() + bytes - panel_bytes, 0, panel_bytes);
  }
  if (dtype == DType::kQ4_0) {
    pack<BlockQ4_0>(w, entry.data.get(), threads);
  } else {
    pack<BlockQ8_0>(w, entry.data.get(), threads);
  }
  w.buffer()->release_pages(static_cast<size_t>(w.materialize() - w.buffer()->data()), w.nbytes());
  impl_->bytes += bytes;
  return impl_->panels.insert_or_assign(w.materialize(), std::move(entry)).first->second.data.get();
}

size_t PanelWeights::bytes() const {
  const std::lock_guard lock(impl_->mutex);
  return impl_->bytes;
}

}  // namespace baton::cpu
