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
  kHead,  // head_dim (a norm over each head)
};

struct FamilySizes {
  int64_t embd, ff, q, kv, head;
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
  // The input of the layer's graph it is (models/decoder_model.cpp knows each): "attn_norm",
  // "q", "q_bias", "attn_output", "attn_post_norm", "ffn_norm", "ffn_gate", ...; empty for a
  // fused weight, whose parts name theirs.
  std::string_view node;
  TensorRole role;
  FamilyDim rows;  // ignored for a fused weight: its parts add up to its rows
  FamilyDim cols = FamilyDim::kEmbd;
  std::span<const FusedPart> fused = {};
  // q and k, whose rows transformers orders as two halves per head and GGUF llama interleaves.
  bool rotary = false;
  // Loaded where a GGUF file holds it, as the q/k/v biases some Llama files carry; checkpoint
  // import does not take it (a checkpoint that holds it is refused) and `baton synth` leaves it
  // out.
  bool optional = false;

  int64_t row_count(const FamilySizes& sizes) const;
};

// A boolean config.json key the family cannot honour when true, and what it can do instead.
struct HfRefusedFlag {
  std::string_view key;
  std::string_view supported;  // "Qwen2 with full attention"
};

// A Hugging Face model class the family converts from.
struct HfModelClass {
  std::string_view name;  // config.json "architectures"
  // The model attends only to the last config.json "sliding_window" tokens (Mistral, Phi-3).
  // Baton attends to the whole context, the same computation while the context is no longer
  // than the window, so conversion bounds the context by it.
  bool window_bounds_context = false;
  // The text model of an image-text checkpoint (Gemma3ForConditionalGeneration): config.json's
  // text_config, its tensors under language_model; the vision tower's are left out, as
  // llama.cpp's converter leaves them to a projector file of their own.
  bool multimodal = false;
};

// A config.json value transformers' config class gives the family where the file leaves it out
// (a multimodal checkpoint's text_config lists little more than what differs from them).
struct HfDefault {
  std::string_view key;
  double value;
};

// The gate's activation in the feed-forward: SiLU (SwiGLU) or GELU in its tanh form (GeGLU).
enum class FamilyActivation : uint8_t { kSilu, kGelu };

// The sizes a family's default attention scale may depend on.
struct FamilyHyper {
  int32_t n_embd, n_layer, n_head, head_dim;
};

// A shape `baton synth` knows by name.
struct FamilyShape {
  std::string_view name;
  int32_t n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_ctx;
  float rope_freq_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_embeddings = false;
  int32_t sliding_window = 0;  // the window of a family whose files carry theirs (Gemma 3)
  int32_t n_rot = 0;           // rotated dimensions of each head; 0: all (Phi-4-mini rotates 3/4)
};

// A family's graph is the decoder of models/decoder_model.cpp: token embeddings, then layers of
// pre-norm self-attention and a pre-norm gated feed-forward, each added back, then the final norm
// and the vocabulary projection. The layer's tensors (`layer`) and the fields below say how a
// family departs from Llama's: a layer that lists post-norms applies them to the attention's and
// the feed-forward's output before the residual add (Gemma's sandwich), biases are added to
// their projections.
struct ModelFamily {
  std::string_view gguf_arch;  // general.architecture, and its metadata keys' prefix
  std::string_view summary;    // what sets it apart, for help texts
  std::span<const HfModelClass> hf_classes;
  std::span<const LayerTensor> layer;  // in file order
  // GGUF keeps the rotary pairs interleaved (llama) where transformers keeps two halves per head:
  // the rotary tensors' rows (and a PEFT adapter's B rows for them) are reordered on import, and
  // the graph rotates adjacent pairs (RopeMode::kNormal) rather than halves (kNeox).
  bool interleave_rotary = false;
  bool norm_plus_one = false;  // transformers stores w, GGUF 1 + w (Gemma's RMSNorm)
  FamilyActivation activation = FamilyActivation::kSilu;
  bool scale_embeddings = false;  // token embeddings × sqrt(n_embd) (Gemma)
  bool long_rope = false;         // LongRoPE factors (Phi-3's 128k models)
  // Soft caps of the attention scores and the logits ("<arch>.attn_logit_softcapping",
  // "final_logit_softcapping"): the family's values where its files leave the keys out; 0 for
  // none.
  float attn_softcap = 0, final_softcap = 0;
  // Sliding-window attention ("<arch>.attention.sliding_window"): the family's window where its
  // files leave the key out (0: a file without it has no window), and the period of
  // "attention.sliding_window_pattern" where they leave that out (the last layer of each period
  // attends globally); both 0 for a family without windows.
  int32_t sliding_window = 0, sliding_window_period = 0;
  // Windowed layers rotate without the global layers' scaling, with "<arch>.rope.freq_base_swa"
  // as their base, else swa_rope_base, else the global base (Gemma 3's local layers, OLMo 3's).
  bool swa_rope_unscaled = false;
  float swa_rope_base = 0;
  // The last layer of every no_rope_period takes no rotary embedding (SmolLM3's 4, which its
  // files do not carry: llama.cpp fixes it too); 0 for none.
  int32_t no_rope_period = 0;
  // config.json's query_pre_attn_scalar (default head_dim) scales the scores by its inverse
  // square root; conversion writes that as "<arch>.attention.scale", which loading reads.
  bool query_pre_attn_scalar = false;
  // The scale where such a file has no attention.scale; null: 1/sqrt(head_dim).
  double (*default_attention_scale)(const FamilyHyper&) = nullptr;
  // rope_freqs.weight, Llama 3's per-pair frequency divisors, where the file holds it.
  bool rope_freqs = false;
  bool explicit_head_dim = false;  // attention.key_length/value_length written (head_dim free)
  // Boolean config.json keys the family cannot honour when true, refused on conversion (Qwen2's
  // use_sliding_window, which GGUF has no key for).
  std::span<const HfRefusedFlag> hf_refused_flags = {};
  bool hf_tied_by_default = false;  // transformers' config ties embeddings unless it says not
  std::span<const HfDefault> hf_defaults = {};
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
const HfModelClass* find_hf_model_class(std::string_view name);
// "LlamaForCausalLM, MistralForCausalLM, ...", for errors.
std::string hf_model_class_names();

}  // namespace baton
