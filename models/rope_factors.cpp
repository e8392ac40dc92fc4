#include "models/rope_factors.h"

#include "baton/error.h"

namespace baton {
namespace {

std::optional<ModelConfig::LongRope> read_long_rope(const WeightLoader& load,
                                                    const ModelConfig& c) {
  const gguf::GgufFile& file = load.file();
  const std::string name = file.path().filename().string();
  auto long_factors = load.find_host_f32("rope_factors_long.weight", c.rope.n_rot / 2);
  auto short_factors = load.find_host_f32("rope_factors_short.weight", c.rope.n_rot / 2);
  if (!long_factors && !short_factors) return std::nullopt;
  if (!long_factors || !short_factors) {
    throw Error(ErrorCategory::kInvalidModel,
                name + ": LongRoPE needs both rope_factors_long and rope_factors_short");
  }
  const std::string a = c.architecture;
  ModelConfig::LongRope r{
      .short_factors = std::move(*short_factors),
      .long_factors = std::move(*long_factors),
      .original_context = static_cast<int32_t>(
          file.find_int(a + ".rope.scaling.original_context_length").value_or(c.n_ctx_train))};
  if (r.original_context <= 0) {
    throw Error(ErrorCategory::kInvalidModel,
                name + ": rope.scaling.original_context_length must be positive");
  }
  return r;
}

}  // namespace

void read_rope_factors(const WeightLoader& load, const ModelFamily& family, ModelConfig& config) {
  if (family.rope_freqs) {
    if (auto factors = load.find_host_f32("rope_freqs.weight", config.rope.n_rot / 2)) {
      config.rope.freq_factors = std::move(*factors);
    }
  }
  if (family.long_rope) config.long_rope = read_long_rope(load, config);
}

}  // namespace baton
