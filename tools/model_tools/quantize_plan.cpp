// Which type each tensor gets: the presets, llama.cpp's K-quant mixes and its fallbacks for rows
// that are not whole blocks.

#include <algorithm>
#include <cctype>

#include "baton/error.h"
#include "core/formats/gguf/file_type.h"
#include "tools/model_tools/quantize_model.h"

namespace baton {
namespace {

using gguf::llama_file_type;

constexpr QuantizePreset kPresets[] = {
    {"q8_0", DType::kQ8_0, llama_file_type(DType::kQ8_0)},
    {"q4_0", DType::kQ4_0, llama_file_type(DType::kQ4_0)},
    {"q4_1", DType::kQ4_1, llama_file_type(DType::kQ4_1)},
    {"q5_0", DType::kQ5_0, llama_file_type(DType::kQ5_0)},
    {"q5_1", DType::kQ5_1, llama_file_type(DType::kQ5_1)},
    {"q2_k", DType::kQ2_K, llama_file_type(DType::kQ2_K)},
    {"q3_k", DType::kQ3_K, llama_file_type(DType::kQ3_K)},
    {"q4_k", DType::kQ4_K, llama_file_type(DType::kQ4_K)},
    {"q5_k", DType::kQ5_K, llama_file_type(DType::kQ5_K)},
    {"q6_k", DType::kQ6_K, llama_file_type(DType::kQ6_K)},
    {"q4_k_m", DType::kQ4_K, gguf::kLlamaFileTypeQ4_K_M, true},
    {"q5_k_m", DType::kQ5_K, gguf::kLlamaFileTypeQ5_K_M, true},
    {"f32", DType::kF32, llama_file_type(DType::kF32)},
    {"f16", DType::kF16, llama_file_type(DType::kF16)},
    {"bf16", DType::kBF16, llama_file_type(DType::kBF16)},
    {"int8", DType::kI8Row, llama_file_type(DType::kI8Row)},
    {"int4_g32", DType::kI4G32, llama_file_type(DType::kI4G32)},
    {"int4_g128", DType::kI4G128, llama_file_type(DType::kI4G128)},
    {"fp8", DType::kF8Row, llama_file_type(DType::kF8Row)},
};

// Preset names match in any case and with '-' for '_' (int4-g32 is int4_g32).
bool same_preset_name(std::string_view a, std::string_view b) {
  const auto fold = [](char c) {
    return c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  return std::ranges::equal(a, b, [&](char x, char y) { return fold(x) == fold(y); });
}

// Matrices, as llama-quantize picks them: two or more dimensions and a ".weight" name. Norms
// and biases are 1-D.
bool is_weight_matrix(const gguf::TensorInfo& info) {
  return info.shape.size() >= 2 && info.name.ends_with(".weight");
}

// The mix's choice for one matrix, before any fallback. `layer` counts the attn_v (or ffn_down)
// matrices seen so far, as llama.cpp does, so the rule does not depend on parsing names.
class MixedTypes {
 public:
  MixedTypes(const gguf::GgufFile& file, const QuantizePreset& preset, bool pure)
      : preset_(preset), pure_(pure), output_q6_k_(output_gets_q6_k(preset, pure)) {
    for (const gguf::TensorInfo& info : file.tensors()) {
      n_attn_v_ += info.name.ends_with(".attn_v.weight");
      n_ffn_down_ += info.name.ends_with(".ffn_down.weight");
    }
    // Without output.weight the model projects through token_embd, so that one gets the output
    // projection's bits.
    output_name_ = file.find_tensor("output.weight") ? "output.weight" : "token_embd.weight";
  }

  DType type_for(const std::string& name) {
    if (pure_) return preset_.type;
    if (name == output_name_ && output_q6_k_) return DType::kQ6_K;
    if (!preset_.mixed) return preset_.type;
    if (name.ends_with(".attn_v.weight")) return more_bits(i_attn_v_++, n_attn_v_);
    if (name.ends_with(".ffn_down.weight")) return more_bits(i_ffn_down_++, n_ffn_down_);
    return preset_.type;
  }

 private:
  DType more_bits(int layer, int n_layers) const {
    return mixed_layer_gets_more_bits(layer, n_layers) ? DType::kQ6_K : preset_.type;
  }

  const QuantizePreset& preset_;
  bool pure_, output_q6_k_;
  std::string output_name_;
  int n_attn_v_ = 0, n_ffn_down_ = 0;
  int i_attn_v_ = 0, i_ffn_down_ = 0;
};

[[noreturn]] void unsupported_input(const gguf::TensorInfo& info, const std::string& why) {
  throw Error(ErrorCategory::kUnsupported, "tensor " + info.name + " is " +
                                               std::string(ggml_type_name(info.ggml_type)) +
                                               ", which " + why);
}

}  // namespace

std::span<const QuantizePreset> quantize_presets() {
  return kPresets;
}

const QuantizePreset* find_quantize_preset(std::string_view name) {
  for (const QuantizePreset& p : kPresets) {
    if (same_preset_name(p.name, name)) return &p;
  }
  return nullptr;
}

std::string quantize_preset_names() {
  std::string names;
  for (const QuantizePreset& p : kPresets)
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

bool mixed_layer_gets_more_bits(int layer, int n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

DType fallback_type(DType wanted, int64_t row_length) {
  const auto fits = [row_length](DType t) { return row_length % traits(t).block_size == 0; };
  if (fits(wanted)) return wanted;
  DType next = DType::kF16;
  switch (wanted) {
    case DType::kQ2_K:
    case DType::kQ3_K:
      next = DType::kQ4_0;
      break;
    case DType::kQ4_K:
      next = DType::kQ5_0;
      break;
    case DType::kQ5_K:
      next = DType::kQ5_1;
      break;
    case DType::kQ6_K:
      next = DType::kQ8_0;
      break;
    case DType::kI4G128:
      next = DType::kI4G32;
      break;
    default:  // the 32- and 64-element types: nothing between them and f16 has smaller blocks
      break;
  }
  return fits(next) ? next : DType::kF16;
}

bool output_gets_q6_k(const QuantizePreset& preset, bool pure) {
  if (pure) return false;
  if (preset.mixed) return true;
  if (!is_quantized(preset.type)) return false;
  switch (preset.type) {
    case DType::kQ8_0:
    case DType::kI8Row:
    case DType::kF8Row:
      return false;
    default:
      return true;
  }
}

std::vector<TensorQuantization> plan_quantization(const gguf::GgufFile& file,
                                                  const QuantizePreset& preset, bool pure) {
  MixedTypes mix(file, preset, pure);
  std::vector<TensorQuantization> plan;
  for (const gguf::TensorInfo& info : file.tensors()) {
    const std::optional<DType> from = dtype_from_ggml_type(info.ggml_type);
    if (!from) unsupported_input(info, "Baton cannot read");
    TensorQuantization t{.name = info.name,
                         .shape = info.shape,
                         .from_ggml_type = info.ggml_type,
                         .to = *from,
                         .bytes_before = info.nbytes,
                         .bytes_after = info.nbytes};
    if (is_weight_matrix(info)) {
      if (*from == DType::kI8 || *from == DType::kI32) {
        unsupported_input(info, "holds integers, not weights to re-quantize");
      }
      const DType wanted = mix.type_for(info.name);
      t.to = fallback_type(wanted, info.shape.back());
      if (t.to != wanted) t.fell_back_from = wanted;
      t.quantized = t.to != *from;
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < info.shape.size(); ++d) rows *= info.shape[d];
      t.bytes_after = static_cast<uint64_t>(rows) * row_bytes(t.to, info.shape.back());
    }
    plan.push_back(std::move(t));
  }
  return plan;
}

}  // namespace baton
