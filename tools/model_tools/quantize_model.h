#pragma once

// Post-training quantization of a GGUF model (`baton quantize`): every weight matrix is decoded
// to f32 and re-encoded with core/runtime/quantize/quantize.h; norms, biases, other 1-D tensors,
// metadata and the tokenizer are copied unchanged.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats/gguf/gguf_file.h"
#include "core/runtime/dtype.h"

namespace baton {

// A --type: one type for every matrix, or one of llama.cpp's K-quant mixes.
struct QuantizePreset {
  std::string_view name;  // as the CLI spells it: "q4_k_m"
  DType type;             // the type of most matrices
  uint32_t llama_ftype;   // llama.cpp's llama_ftype code, written as general.file_type
  // The "_M" mixes (llama.cpp's llama_tensor_get_type for Q4_K_M and Q5_K_M): output.weight (or
  // token_embd.weight when the output projection is tied to it) in Q6_K, and attn_v.weight and
  // ffn_down.weight in Q6_K in the first and last eighth of the layers and every third layer in
  // between (mixed_layer_gets_more_bits). Without it, every matrix gets `type`, except that
  // output.weight (or token_embd.weight when tied) gets Q6_K for the types under 8 bits, as
  // llama-quantize does by default (output_gets_q6_k). A `pure` plan gives every matrix `type`,
  // mixes included, as llama-quantize --pure does.
  bool mixed = false;
};

// Every preset, in the order the CLI lists them.
std::span<const QuantizePreset> quantize_presets();
// Case-insensitive ("Q4_K_M" or "q4_k_m"); nullptr for an unknown name.
const QuantizePreset* find_quantize_preset(std::string_view name);
// "q8_0, q4_0, ..., q5_k_m", for error messages and help.
std::string quantize_preset_names();

// Layer i of n of a mix's attn_v / ffn_down gets Q6_K: the first and last eighth, and every third
// layer in between (llama.cpp's use_more_bits).
bool mixed_layer_gets_more_bits(int layer, int n_layers);

// The type that can hold rows of `row_length` elements in place of `wanted` (whose blocks do not
// divide them), following llama-quantize: Q2_K, Q3_K -> Q4_0; Q4_K -> Q5_0; Q5_K -> Q5_1;
// Q6_K -> Q8_0; and F16 when even 32 does not divide the row. Returns `wanted` when it fits.
DType fallback_type(DType wanted, int64_t row_length);

// What happens to one tensor of the input.
struct TensorQuantization {
  std::string name;
  Shape shape;
  uint32_t from_ggml_type = 0;  // the input's type code
  DType to = DType::kF32;       // the output's type (the input's when copied)
  bool quantized = false;       // a weight matrix re-encoded; otherwise copied byte for byte
  std::optional<DType> fell_back_from;  // the wanted type, when the row length ruled it out
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
};

// Whether a plan for `preset` gives the output projection Q6_K (before fallbacks): every preset
// whose matrices get fewer than 8 bits, unless the plan is pure (llama-quantize --pure).
bool output_gets_q6_k(const QuantizePreset& preset, bool pure);

// The per-tensor types for `file` under `preset`, in file order. Weight matrices (tensors of two
// or more dimensions whose names end in ".weight") are quantized; a matrix already in its
// target type is copied as it is. Throws Error(kUnsupported) naming the tensor when one is in a
// type Baton cannot read (or, for a matrix, cannot decode to f32, such as i32).
std::vector<TensorQuantization> plan_quantization(const gguf::GgufFile& file,
                                                  const QuantizePreset& preset, bool pure = false);

struct QuantizeOptions {
  int32_t threads = 0;  // OpenMP threads encoding rows; 0: OpenMP's default
  bool pure = false;    // every matrix in the preset's type, even for the _M mixes
  // Called after each tensor is written, with its index in the plan; on the calling thread.
  std::function<void(const TensorQuantization& tensor, size_t index, size_t count)> on_tensor;
};

// Writes `input` quantized by `preset` to `output` (through a temporary file renamed into
// place, so a failure leaves no partial output) and returns the plan it followed. Metadata is
// copied except general.file_type (set to preset.llama_ftype) and general.quantization_version
// (2, ggml's current one, when any tensor is block-quantized). Throws Error(kIo) when the input
// cannot be read or the output's folder is not writable, checked before any work; the errors
// of GgufFile::open for a malformed input; and those of plan_quantization.
std::vector<TensorQuantization> quantize_model(const std::filesystem::path& input,
                                               const std::filesystem::path& output,
                                               const QuantizePreset& preset,
                                               const QuantizeOptions& options = {});

}  // namespace baton
