#include "tools/model_tools/synthetic_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numbers>

#include "baton/error.h"
#include "core/formats/family/model_family.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/formats/gguf/gguf_writer.h"
#include "core/runtime/quantize/quantize.h"
#include "tools/model_tools/quantize_model.h"

namespace baton {
namespace {

SyntheticShape shape_of(const ModelFamily& family, const FamilyShape& f) {
  return {.architecture = std::string(family.gguf_arch),
          .n_embd = f.n_embd,
          .n_layer = f.n_layer,
          .n_head = f.n_head,
          .n_head_kv = f.n_head_kv,
          .head_dim = f.head_dim,
          .n_ff = f.n_ff,
          .n_vocab = f.n_vocab,
          .n_ctx = f.n_ctx,
          .rope_freq_base = f.rope_freq_base,
          .rms_eps = f.rms_eps,
          .tied_embeddings = f.tied_embeddings,
          .sliding_window = f.sliding_window,
          .n_rot = f.n_rot};
}

[[noreturn]] void invalid(const std::string& message) {
  throw Error(ErrorCategory::kInvalidArgument, message);
}

// llama.cpp's llama_ftype for a file whose matrices are of one type: the quantize presets'
// codes, plus ALL_F32, which no preset produces.
uint32_t llama_file_type(DType type) {
  if (type == DType::kF32) return 0;
  for (const QuantizePreset& preset : quantize_presets()) {
    if (!preset.mixed && preset.type == type) return preset.llama_ftype;
  }
  invalid("weight type " + std::string(to_string(type)) +
          " cannot be synthesized (use f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_K, "
          "q3_K, q4_K, q5_K, q6_K, int8, int4_g32, int4_g128 or fp8)");
}

// Every matrix row is n_embd or n_ff long, so both must be whole blocks of `type`.
void check_block_size(const SyntheticShape& s, DType type) {
  const int64_t block = traits(type).block_size;
  for (const auto& [name, value] : {std::pair{"n_embd", s.n_embd}, std::pair{"n_ff", s.n_ff}}) {
    if (value % block != 0) {
      invalid(std::string(name) + " = " + std::to_string(value) + " is not a multiple of the " +
              std::string(to_string(type)) + " block size " + std::to_string(block));
    }
  }
}

void check_shape(const SyntheticShape& s) {
  const std::pair<const char*, int32_t> dims[] = {{"n_embd", s.n_embd}, {"n_layer", s.n_layer},
                                                  {"n_head", s.n_head}, {"n_head_kv", s.n_head_kv},
                                                  {"n_ff", s.n_ff},     {"n_vocab", s.n_vocab},
                                                  {"ctx", s.n_ctx}};
  for (const auto& [name, value] : dims) {
    if (value <= 0)
      invalid(std::string(name) + " = " + std::to_string(value) + " must be positive");
  }
  const ModelFamily* family = find_model_family(s.architecture);
  if (!family) {
    invalid("architecture '" + s.architecture + "' cannot be synthesized (use " +
            model_family_names() + ")");
  }
  if (s.head_dim == 0 && (s.n_embd % s.n_head != 0 || (s.n_embd / s.n_head) % 2 != 0)) {
    invalid("n_embd " + std::to_string(s.n_embd) + " is not an even head size times n_head " +
            std::to_string(s.n_head));
  }
  if (s.long_rope_original_context < 0) {
    invalid("the LongRoPE original context " + std::to_string(s.long_rope_original_context) +
            " must be positive");
  }
  if (s.yarn_factor != 0.0f && !(s.yarn_factor > 1.0f && s.n_ctx / s.yarn_factor >= 1.0f)) {
    invalid("the YaRN factor must be above 1 and at most the context");
  }
  if (s.long_rope_original_context > 0 && !family->long_rope) {
    invalid("LongRoPE factors are for families that have them; " + s.architecture + " has none");
  }
  if (s.sliding_window < 0) {
    invalid("sliding_window = " + std::to_string(s.sliding_window) + " must not be negative");
  }
  if (s.sliding_window > 0 && family->sliding_window == 0 && family->sliding_window_period == 0) {
    invalid("a sliding window is for families that have one; " + s.architecture + " has none");
  }
  if (s.head_dim < 0 || s.head_dim % 2 != 0) {
    invalid("head_dim " + std::to_string(s.head_dim) + " must be even");
  }
  const int32_t head_dim = s.head_dim > 0 ? s.head_dim : s.n_embd / s.n_head;
  if (s.n_rot < 0 || s.n_rot % 2 != 0 || s.n_rot > head_dim) {
    invalid("n_rot " + std::to_string(s.n_rot) + " must be even and at most the head size " +
            std::to_string(head_dim));
  }
  if (s.n_head % s.n_head_kv != 0) {
    invalid("n_head " + std::to_string(s.n_head) + " is not a multiple of n_head_kv " +
            std::to_string(s.n_head_kv));
  }
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Box-Muller over splitmix64: fast enough that making 1.1B weights is bound by the disk, and
// seeded per row so the result does not depend on how rows are split between threads.
void fill_normal(float* out, int64_t n, float std, uint64_t seed) {
  uint64_t state = seed;
  for (int64_t i = 0; i < n; i += 2) {
    const double u1 = (static_cast<double>(splitmix64(state) >> 11) + 1.0) * 0x1p-53;
    const double u2 = static_cast<double>(splitmix64(state) >> 11) * 0x1p-53;
    const double r = std::sqrt(-2.0 * std::log(u1)) * std;
    out[i] = static_cast<float>(r * std::cos(2 * std::numbers::pi * u2));
    if (i + 1 < n) out[i + 1] = static_cast<float>(r * std::sin(2 * std::numbers::pi * u2));
  }
}

// Random rows of `type`, quantized in parallel straight into the writer's buffer.
gguf::GgufWriter::TensorFiller random_matrix(int64_t rows, int64_t cols, DType type, float std,
                                             uint64_t seed) {
  return [=](std::span<std::byte> bytes) {
    const size_t row_bytes = baton::row_bytes(type, cols);
#pragma omp parallel
    {
      std::vector<float> row(static_cast<size_t>(cols));
#pragma omp for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        uint64_t row_seed = seed ^ (static_cast<uint64_t>(r) * 0xd1b54a32d192ed03ull);
        fill_normal(row.data(), cols, std, splitmix64(row_seed));
        quantize_row(type, row.data(), bytes.data() + row_bytes * r, cols);
      }
    }
  };
}

uint64_t name_seed(uint64_t seed, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;  // FNV-1a over the name, keyed by the seed
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h;
}

class TensorList {
 public:
  TensorList(gguf::GgufWriter& writer, const SynthOptions& options)
      : writer_(writer), options_(options) {}

  void matrix(const std::string& name, int64_t rows, int64_t cols) {
    add(name, {rows, cols}, options_.weight_type, options_.weight_std);
  }
  void output_matrix(const std::string& name, int64_t rows, int64_t cols) {
    add(name, {rows, cols}, options_.output_type.value_or(options_.weight_type),
        options_.weight_std);
  }
  void bias(const std::string& name, int64_t n) {
    add(name, {n}, DType::kF32, options_.weight_std);
  }
  void norm(const std::string& name, int64_t n) {
    if (layout_only(name, {n}, DType::kF32)) return;
    writer_.add_tensor(name, {n}, DType::kF32, [](std::span<std::byte> bytes) {
      const float one = 1.0f;
      for (size_t i = 0; i < bytes.size(); i += sizeof(float)) {
        std::memcpy(bytes.data() + i, &one, sizeof(float));
      }
    });
    count(n, bytes_for(DType::kF32, n));
  }
  // Factors 1 + |normal| * spread: dividing an angle by less than 1 is not what they are for.
  void rope_factors(const std::string& name, int64_t n, float spread) {
    if (layout_only(name, {n}, DType::kF32)) return;
    writer_.add_tensor(name, {n}, DType::kF32, [=, this](std::span<std::byte> bytes) {
      std::vector<float> values(static_cast<size_t>(n));
      fill_normal(values.data(), n, spread, name_seed(options_.seed, name));
      for (float& v : values) v = 1.0f + std::abs(v);
      std::memcpy(bytes.data(), values.data(), bytes.size());
    });
    count(n, bytes_for(DType::kF32, n));
  }
  SynthSummary summary;

 private:
  // Adds the tensor as a hole, counted, when options ask for the layout only.
  bool layout_only(const std::string& name, const Shape& shape, DType type) {
    if (!options_.layout_only) return false;
    const int64_t rows = shape.size() == 2 ? shape[0] : 1;
    writer_.add_zero_tensor(name, shape, type);
    count(rows * shape.back(), rows * row_bytes(type, shape.back()));
    return true;
  }
  void add(const std::string& name, Shape shape, DType type, float std) {
    if (layout_only(name, shape, type)) return;
    const int64_t rows = shape.size() == 2 ? shape[0] : 1;
    writer_.add_tensor(
        name, shape, type,
        random_matrix(rows, shape.back(), type, std, name_seed(options_.seed, name)));
    count(rows * shape.back(), rows * row_bytes(type, shape.back()));
  }
  void count(int64_t n, uint64_t bytes) {
    summary.n_params += n;
    summary.weight_bytes += bytes;
  }

  gguf::GgufWriter& writer_;
  const SynthOptions& options_;
};

// SentencePiece metadata llama.cpp accepts: control, byte and filler normal tokens.
void add_generated_vocabulary(gguf::GgufWriter& writer, int32_t n_vocab) {
  constexpr int32_t kFixed = 3 + 256;
  if (n_vocab < kFixed + 1) {
    invalid("n_vocab " + std::to_string(n_vocab) + " is too small for a generated vocabulary " +
            "(at least " + std::to_string(kFixed + 1) + "); use --vocab-from");
  }
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};  // llama_token_type: unknown, control
  std::vector<float> scores(3, 0.0f);
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    std::snprintf(piece, sizeof piece, "<0x%02X>", b);
    tokens.push_back(piece);
    types.push_back(6);  // byte
    scores.push_back(0.0f);
  }
  for (int32_t i = 0; static_cast<int32_t>(tokens.size()) < n_vocab; ++i) {
    tokens.push_back("\xe2\x96\x81t" + std::to_string(i));  // "▁t<i>"
    types.push_back(1);                                     // normal
    scores.push_back(-static_cast<float>(i));
  }
  writer.add_string("tokenizer.ggml.model", "llama");
  writer.add_string_array("tokenizer.ggml.tokens", tokens);
  writer.add_float32_array("tokenizer.ggml.scores", scores);
  writer.add_int32_array("tokenizer.ggml.token_type", types);
  writer.add_uint32("tokenizer.ggml.unknown_token_id", 0);
  writer.add_uint32("tokenizer.ggml.bos_token_id", 1);
  writer.add_uint32("tokenizer.ggml.eos_token_id", 2);
}

// Copies every tokenizer.* key and returns the vocabulary size.
int32_t copy_vocabulary(gguf::GgufWriter& writer, const std::filesystem::path& from) {
  const gguf::GgufFile source = gguf::GgufFile::open(from);
  const size_t n_vocab = source.get_string_array("tokenizer.ggml.tokens").size();
  for (const auto& [key, value] : source.metadata()) {
    if (key.starts_with("tokenizer.")) writer.add(key, value);
  }
  return static_cast<int32_t>(n_vocab);
}

}  // namespace

std::string synthetic_shape_names() {
  std::vector<std::string_view> sorted;
  for (const ModelFamily* family : model_families()) {
    for (const FamilyShape& shape : family->shapes) sorted.push_back(shape.name);
  }
  std::ranges::sort(sorted);
  std::string names;
  for (std::string_view name : sorted) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

SyntheticShape synthetic_shape(std::string_view name) {
  for (const ModelFamily* family : model_families()) {
    for (const FamilyShape& shape : family->shapes) {
      if (shape.name == name) return shape_of(*family, shape);
    }
  }
  throw Error(
      ErrorCategory::kInvalidArgument,
      "unknown shape '" + std::string(name) + "' (known shapes: " + synthetic_shape_names() + ")");
}

SynthSummary write_synthetic_model(const SynthOptions& options, const std::filesystem::path& path) {
  SyntheticShape s = options.shape;
  gguf::GgufWriter writer;
  const std::string& a = s.architecture;
  writer.add_string("general.architecture", a);
  writer.add_string("general.name", options.name.empty() ? "synthetic" : options.name);
  writer.add_uint32("general.file_type", llama_file_type(options.weight_type));
  if (is_quantized(options.weight_type)) writer.add_uint32("general.quantization_version", 2);
  if (!options.vocab_from.empty()) s.n_vocab = copy_vocabulary(writer, options.vocab_from);
  check_shape(s);
  check_block_size(s, options.weight_type);
  if (options.output_type) {
    llama_file_type(*options.output_type);  // rejects a type that cannot be synthesized
    check_block_size(s, *options.output_type);
  }
  if (options.vocab_from.empty()) add_generated_vocabulary(writer, s.n_vocab);
  const int32_t head_dim = s.head_dim > 0 ? s.head_dim : s.n_embd / s.n_head;
  writer.add_uint32(a + ".vocab_size", s.n_vocab);
  writer.add_uint32(a + ".context_length", s.n_ctx);
  writer.add_uint32(a + ".embedding_length", s.n_embd);
  writer.add_uint32(a + ".block_count", s.n_layer);
  writer.add_uint32(a + ".feed_forward_length", s.n_ff);
  writer.add_uint32(a + ".rope.dimension_count", s.n_rot > 0 ? s.n_rot : head_dim);
  writer.add_uint32(a + ".attention.head_count", s.n_head);
  writer.add_uint32(a + ".attention.head_count_kv", s.n_head_kv);
  writer.add_float32(a + ".attention.layer_norm_rms_epsilon", s.rms_eps);
  writer.add_float32(a + ".rope.freq_base", s.rope_freq_base);
  const ModelFamily& family = *find_model_family(a);
  if (family.explicit_head_dim) {
    writer.add_uint32(a + ".attention.key_length", head_dim);
    writer.add_uint32(a + ".attention.value_length", head_dim);
  }
  if (family.attn_softcap > 0) {
    writer.add_float32(a + ".attn_logit_softcapping", family.attn_softcap);
  }
  if (family.final_softcap > 0) {
    writer.add_float32(a + ".final_logit_softcapping", family.final_softcap);
  }
  if (family.sliding_window > 0 || (family.sliding_window_period > 0 && s.sliding_window > 0)) {
    writer.add_uint32(a + ".attention.sliding_window",
                      s.sliding_window > 0 ? s.sliding_window : family.sliding_window);
    if (family.swa_rope_base > 0)
      writer.add_float32(a + ".rope.freq_base_swa", family.swa_rope_base);
  }

  TensorList t(writer, options);
  const FamilySizes sizes{.embd = s.n_embd,
                          .ff = s.n_ff,
                          .q = int64_t{s.n_head} * head_dim,
                          .kv = int64_t{s.n_head_kv} * head_dim,
                          .head = head_dim};
  if (s.tied_embeddings) {
    t.output_matrix("token_embd.weight", s.n_vocab, s.n_embd);
  } else {
    t.matrix("token_embd.weight", s.n_vocab, s.n_embd);
  }
  for (int32_t i = 0; i < s.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    for (const LayerTensor& tensor : family.layer) {
      if (tensor.optional) continue;
      const std::string name = p + std::string(tensor.gguf);
      switch (tensor.role) {
        case TensorRole::kNorm:
          t.norm(name, tensor.row_count(sizes));
          break;
        case TensorRole::kBias:
          t.bias(name, tensor.row_count(sizes));
          break;
        case TensorRole::kMatrix:
          t.matrix(name, tensor.row_count(sizes), sizes.of(tensor.cols));
          break;
      }
    }
  }
  if (s.yarn_factor > 0) {
    writer.add_string(a + ".rope.scaling.type", "yarn");
    writer.add_float32(a + ".rope.scaling.factor", s.yarn_factor);
    writer.add_uint32(a + ".rope.scaling.original_context_length",
                      static_cast<uint32_t>(s.n_ctx / s.yarn_factor));
  }
  if (s.long_rope_original_context > 0) {
    writer.add_uint32(a + ".rope.scaling.original_context_length", s.long_rope_original_context);
    // Phi-3's magnitude scaling for its context extension, as llama.cpp's converter writes it.
    const double scale = static_cast<double>(s.n_ctx) / s.long_rope_original_context;
    writer.add_float32(
        a + ".rope.scaling.attn_factor",
        scale > 1.0 ? static_cast<float>(
                          std::sqrt(1.0 + std::log(scale) / std::log(s.long_rope_original_context)))
                    : 1.0f);
    const int32_t pairs = (s.n_rot > 0 ? s.n_rot : head_dim) / 2;
    t.rope_factors("rope_factors_short.weight", pairs, 0.5f);
    t.rope_factors("rope_factors_long.weight", pairs, 20.0f);
  }
  t.norm("output_norm.weight", s.n_embd);
  if (!s.tied_embeddings) t.output_matrix("output.weight", s.n_vocab, s.n_embd);
  writer.write(path);
  t.summary.n_vocab = s.n_vocab;
  return t.summary;
}

}  // namespace baton
