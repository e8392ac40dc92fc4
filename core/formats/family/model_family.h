#pragma once

// What Baton knows of a decoder family, as data, in one place: its GGUF name, the Hugging Face
// classes that convert to it, each layer's tensors under both names (with fused weights split
// into the graph nodes they feed), the conversions between the two layouts, the metadata and
// named shapes of `baton synth`. The formats layer holds it because checkpoint import reads it;
// the layers above (models, LoRA, the tools) look families up here. A family is one header of
// this folder plus its line in families.cpp. Tokenizer quirks are not here: they are keyed by
// the tokenizer's own metadata (tokenizer.ggml.pre, token text), as llama.cpp keys them.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace baton {

// A tensor dimension, in the sizes of the model it belongs to.
enum class FamilyDim : uint8_t {
  kEmbd,  // hidden size
  kFf,    // feed-forward size
  kQ,     // n_head × head_dim
  kKv,    // n_head_kv × head_dim
};

struct FamilySizes {
  int64_t embd, ff, q, kv;
  int64_t of(FamilyDim dim) const;
};

enum class TensorRole : uint8_t { kMatrix, kNorm, kBias };

// One row range of a fused weight, in file order: the graph node it feeds and its rows.
struct FusedPart {
  std::string_view node;  // "q", "ffn_gate", ...
  FamilyDim rows;
};

// One tensor of every layer: a matrix is [rows, cols] as GGUF lists it, a norm or bias [rows].
struct LayerTensor {
  std::string_view gguf;  // after "blk.<i>.": "attn_q.weight"
  std::string_view hf;    // after "model.layers.<i>.": "self_attn.q_proj.weight"
  TensorRole role;
  FamilyDim rows;  // ignored for a fused weight: its parts add up to its rows
  FamilyDim cols = FamilyDim::kEmbd;
  std::span<const FusedPart> fused = {};
  // q and k, whose rows transformers orders as two halves per head and GGUF llama interleaves.
  bool rotary = false;

  int64_t row_count(const FamilySizes& sizes) const;
};

// A float metadata key `baton synth` writes as "<arch>.<suffix>", at the family's own value.
struct FamilyFloatKey {
  std::string_view suffix;
  float value;
};

// A shape `baton synth` knows by name.
struct FamilyShape {
  std::string_view name;
  int32_t n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_ctx;
  float rope_freq_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_embeddings = false;
};

struct ModelFamily {
  std::string_view gguf_arch;  // general.architecture, and its metadata keys' prefix
  std::string_view summary;    // what sets it apart, for help texts
  std::span<const std::string_view> hf_classes;  // config.json "architectures" it converts from
  std::span<const LayerTensor> layer;            // in file order
  // GGUF keeps the rotary pairs interleaved (llama) where transformers keeps two halves per head:
  // the rotary tensors' rows (and a PEFT adapter's B rows for them) are reordered on import.
  bool interleave_rotary = false;
  bool norm_plus_one = false;      // transformers stores w, GGUF 1 + w (Gemma's RMSNorm)
  bool long_rope = false;          // LongRoPE factors (Phi-3's 128k models)
  bool sliding_window = false;     // attention.sliding_window on alternate layers (Gemma 2)
  bool explicit_head_dim = false;  // attention.key_length/value_length written (head_dim free)
  std::span<const FamilyFloatKey> synth_keys = {};
  bool tied_by_default = false;  // `baton synth --arch` ties the output to the embeddings
  std::span<const FamilyShape> shapes = {};
};

// Every family, in the order help texts list them.
std::span<const ModelFamily* const> model_families();
// Null for an unknown name.
const ModelFamily* find_model_family(std::string_view gguf_arch);
const ModelFamily* find_hf_model_family(std::string_view hf_class);
// "llama, qwen2, phi3 or gemma2", for errors.
std::string model_family_names();
// "LlamaForCausalLM, MistralForCausalLM, ...", for errors.
std::string hf_model_class_names();

}  // namespace baton
