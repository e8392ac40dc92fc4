#pragma once

// Which GGUF tensor each Hugging Face Llama (Mistral, Qwen2, Phi-3, Gemma 2) tensor becomes, and
// the row order GGUF wants.

#include <cstdint>
#include <string>
#include <vector>

#include "core/formats/hf_import/checkpoint_weights.h"
#include "core/formats/hf_import/llama_config.h"
#include "core/formats/hf_import/rotary_rows.h"
#include "core/runtime/tensor.h"

namespace baton::hf {

struct TensorMapping {
  std::string source;  // the checkpoint's name: model.layers.0.self_attn.q_proj.weight
  std::string name;    // the GGUF name: blk.0.attn_q.weight
  Shape shape;         // the same in both, outermost first
  // q_proj and k_proj, whose rows go from rotate_half to interleaved order per head (see
  // rotate_half_source_row).
  bool interleave_rotary = false;
  // Gemma's RMSNorm scales by 1 + weight; GGUF holds the sum, as llama.cpp's converter writes it.
  bool add_one = false;
};

// The GGUF tensors of `config`'s model, from token_embd through the layers to output_norm and
// output. output.weight is left out when the embeddings are tied or the checkpoint has no
// lm_head (Baton and llama.cpp then project through token_embd); rotary_emb.inv_freq buffers
// are ignored. Throws Error(kInvalidModel) naming a tensor that is not part of such a model, a
// missing one, or one whose shape is not what config.json implies.
std::vector<TensorMapping> map_llama_tensors(const LlamaConfig& config,
                                             const CheckpointWeights& weights);

}  // namespace baton::hf
