#include "core/formats/hf_import/convert_checkpoint.h"

#include <vector>

#include "baton/error.h"
#include "core/formats/gguf/file_type.h"
#include "core/formats/gguf/gguf_writer.h"
#include "core/formats/hf_import/checkpoint_weights.h"
#include "core/formats/hf_import/hf_vocab.h"
#include "core/formats/hf_import/llama_config.h"
#include "core/formats/hf_import/llama_tensors.h"
#include "core/runtime/quantize/quantize.h"
#include "ops/reference.h"

namespace baton::hf {
namespace {

// llama.cpp's general.file_type: the f32, f16 and bf16 presets' codes.
uint32_t llama_file_type(DType out_type) {
  if (out_type == DType::kF32 || out_type == DType::kF16 || out_type == DType::kBF16) {
    return gguf::llama_file_type(out_type);
  }
  throw Error(ErrorCategory::kInvalidArgument,
              "cannot convert to " + std::string(to_string(out_type)) + " (use f32, f16 or bf16)");
}

template <typename Key>
void add_rope_scaling(const HfRopeScaling& scaling, const Key& key, gguf::GgufWriter& w) {
  if (scaling.linear_factor) {
    w.add_string(key("rope.scaling.type"), "linear");
    w.add_float32(key("rope.scaling.factor"), static_cast<float>(*scaling.linear_factor));
  }
  if (const std::optional<YarnParams>& yarn = scaling.yarn) {
    w.add_string(key("rope.scaling.type"), "yarn");
    w.add_float32(key("rope.scaling.factor"), static_cast<float>(yarn->factor));
    w.add_uint32(key("rope.scaling.original_context_length"), yarn->original_context);
    for (const auto& [suffix, value] :
         {std::pair{"rope.scaling.yarn_ext_factor", yarn->ext_factor},
          std::pair{"rope.scaling.yarn_attn_factor", yarn->attn_factor},
          std::pair{"rope.scaling.yarn_beta_fast", yarn->beta_fast},
          std::pair{"rope.scaling.yarn_beta_slow", yarn->beta_slow}}) {
      if (value) w.add_float32(key(suffix), static_cast<float>(*value));
    }
  }
  if (const std::optional<LongRopeParams>& long_rope = scaling.long_rope) {
    w.add_uint32(key("rope.scaling.original_context_length"), long_rope->original_context);
    w.add_float32(key("rope.scaling.attn_factor"), static_cast<float>(long_rope->attn_factor));
  }
}

void add_model_metadata(const LlamaConfig& c, const std::string& name, uint32_t file_type,
                        gguf::GgufWriter& w) {
  const std::string arch(c.family->gguf_arch);
  const auto key = [&arch](const char* suffix) { return arch + "." + suffix; };
  w.add_string("general.architecture", arch);
  w.add_string("general.name", name);
  w.add_uint32(key("context_length"), c.context_length);
  w.add_uint32(key("embedding_length"), c.hidden_size);
  w.add_uint32(key("block_count"), c.n_layer);
  w.add_uint32(key("feed_forward_length"), c.intermediate_size);
  w.add_uint32(key("attention.head_count"), c.n_head);
  w.add_uint32(key("attention.head_count_kv"), c.n_head_kv);
  w.add_float32(key("attention.layer_norm_rms_epsilon"), static_cast<float>(c.rms_norm_eps));
  if (c.explicit_head_dim) {
    w.add_uint32(key("attention.key_length"), c.head_dim);
    w.add_uint32(key("attention.value_length"), c.head_dim);
  }
  w.add_float32(key("rope.freq_base"), static_cast<float>(c.rope_theta));
  w.add_uint32(key("rope.dimension_count"), c.n_rot);
  if (c.swa_rope_theta)
    w.add_float32(key("rope.freq_base_swa"), static_cast<float>(*c.swa_rope_theta));
  add_rope_scaling(c.rope_scaling, key, w);
  if (c.attn_softcap)
    w.add_float32(key("attn_logit_softcapping"), static_cast<float>(*c.attn_softcap));
  if (c.final_softcap) {
    w.add_float32(key("final_logit_softcapping"), static_cast<float>(*c.final_softcap));
  }
  if (c.sliding_window) w.add_uint32(key("attention.sliding_window"), *c.sliding_window);
  if (c.attention_scale)
    w.add_float32(key("attention.scale"), static_cast<float>(*c.attention_scale));
  w.add_uint32(key("vocab_size"), c.vocab_size);
  w.add_uint32("general.file_type", file_type);
}

// Decodes each row to f32 (taking q/k rows in GGUF order) and encodes it as `type`.
void fill_tensor(const CheckpointWeights& weights, const TensorMapping& m, DType type,
                 int64_t head_dim, std::span<std::byte> out) {
  const Tensor source = weights.tensor(m.source);
  const int64_t n = source.row_length();
  const size_t row_bytes = baton::row_bytes(type, n);
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < source.rows(); ++r) {
    const int64_t within = m.interleave_rotary ? rotate_half_source_row(r, head_dim) : r;
    reference::dequantize_row(source, within, row.data());
    if (m.add_one) {
      for (float& v : row) v += 1.0f;
    }
    quantize_row(type, row.data(), out.data() + row_bytes * static_cast<size_t>(r), n);
  }
}

}  // namespace

std::string directory_name(const std::filesystem::path& dir) {
  std::filesystem::path p = std::filesystem::absolute(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "model/" names "model"
  return p.filename().string();
}

ConvertSummary convert_checkpoint(const std::filesystem::path& dir,
                                  const std::filesystem::path& output,
                                  const ConvertOptions& options) {
  if (!std::filesystem::exists(dir)) {
    throw Error(ErrorCategory::kIo, dir.string() + " does not exist");
  }
  if (!std::filesystem::is_directory(dir)) {
    throw Error(ErrorCategory::kInvalidArgument,
                dir.string() +
                    " is not a directory (convert reads a Hugging Face checkpoint "
                    "directory)");
  }
  if (!std::filesystem::exists(dir / "config.json")) {
    throw Error(ErrorCategory::kInvalidModel,
                dir.string() + " has no config.json (not a Hugging Face checkpoint directory?)");
  }
  const LlamaConfig config = read_llama_config(dir / "config.json");
  const DType out_type = options.out_type.value_or(config.saved_dtype);
  const uint32_t file_type = llama_file_type(out_type);
  const HfVocab vocab = read_vocab(dir, config);
  const CheckpointWeights weights = CheckpointWeights::open(dir);
  const std::vector<TensorMapping> tensors = map_llama_tensors(config, weights);

  gguf::GgufWriter writer;
  add_model_metadata(config, options.name.empty() ? directory_name(dir) : options.name, file_type,
                     writer);
  add_vocab_metadata(vocab, writer);
  ConvertSummary summary{.n_tensors = static_cast<int32_t>(tensors.size()),
                         .n_vocab = config.vocab_size,
                         .tied_embeddings = tensors.back().name != "output.weight"};
  for (const TensorMapping& m : tensors) {
    const DType type = m.shape.size() == 1 ? DType::kF32 : out_type;
    writer.add_tensor(m.name, m.shape, type,
                      [&weights, &m, type, &config](std::span<std::byte> out) {
                        fill_tensor(weights, m, type, config.head_dim, out);
                      });
    summary.n_params += Tensor(type, m.shape, nullptr).numel();
  }
  std::vector<std::pair<const char*, const std::vector<float>*>> factor_tensors;
  if (const auto& long_rope = config.rope_scaling.long_rope) {
    factor_tensors = {{"rope_factors_short.weight", &long_rope->short_factors},
                      {"rope_factors_long.weight", &long_rope->long_factors}};
  }
  if (!config.rope_scaling.llama3_factors.empty()) {
    factor_tensors = {{"rope_freqs.weight", &config.rope_scaling.llama3_factors}};
  }
  for (const auto& [name, factors] : factor_tensors) {
    writer.add_tensor(name, {static_cast<int64_t>(factors->size())}, DType::kF32,
                      std::as_bytes(std::span<const float>(*factors)));
  }
  writer.write(output);
  summary.file_bytes = std::filesystem::file_size(output);
  return summary;
}

}  // namespace baton::hf
