#include "models/model_config.h"

#include <string>

#include "baton/error.h"

namespace baton {
namespace {

int32_t positive_int(const gguf::GgufFile& file, const std::string& key) {
  const int64_t value = file.get_int(key);
  if (value <= 0 || value > (int64_t{1} << 30)) {
    throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() + ": " + key + " = " +
                                                  std::to_string(value) + " is out of range");
  }
  return static_cast<int32_t>(value);
}

void read_rope_scaling(const gguf::GgufFile& file, const std::string& arch, RopeParams& rope) {
  const std::string type = file.find_string(arch + ".rope.scaling.type").value_or("none");
  const double factor = file.find_float(arch + ".rope.scaling.factor")
                            .value_or(file.find_float(arch + ".rope.scale_linear").value_or(1.0));
  if (type == "none" || factor == 1.0) return;
  if (type != "linear") {
    throw Error(ErrorCategory::kUnsupported,
                file.path().filename().string() + ": rope scaling type '" + type +
                    "' is not supported (supported: none, linear, and llama3 rope_freqs)");
  }
  if (!(factor > 0)) {
    throw Error(ErrorCategory::kInvalidModel, arch + ".rope.scaling.factor must be positive");
  }
  rope.freq_scale = static_cast<float>(1.0 / factor);
}

}  // namespace

ModelConfig read_model_config(const gguf::GgufFile& file) {
  ModelConfig c;
  c.architecture = file.get_string("general.architecture");
  const std::string& a = c.architecture;
  c.n_embd = positive_int(file, a + ".embedding_length");
  c.n_layer = positive_int(file, a + ".block_count");
  c.n_head = positive_int(file, a + ".attention.head_count");
  c.n_head_kv = file.contains(a + ".attention.head_count_kv")
                    ? positive_int(file, a + ".attention.head_count_kv")
                    : c.n_head;
  c.n_ff = positive_int(file, a + ".feed_forward_length");
  c.n_ctx_train = positive_int(file, a + ".context_length");
  c.head_dim = file.contains(a + ".attention.key_length")
                   ? positive_int(file, a + ".attention.key_length")
                   : c.n_embd / c.n_head;
  c.rms_eps =
      static_cast<float>(file.find_float(a + ".attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (c.n_head % c.n_head_kv != 0) {
    throw Error(ErrorCategory::kInvalidModel,
                a + ".attention.head_count " + std::to_string(c.n_head) +
                    " is not a multiple of head_count_kv " + std::to_string(c.n_head_kv));
  }
  c.rope.n_rot = file.contains(a + ".rope.dimension_count")
                     ? positive_int(file, a + ".rope.dimension_count")
                     : c.head_dim;
  if (c.rope.n_rot > c.head_dim || c.rope.n_rot % 2 != 0) {
    throw Error(ErrorCategory::kInvalidModel,
                a + ".rope.dimension_count " + std::to_string(c.rope.n_rot) +
                    " must be even and at most the head size " + std::to_string(c.head_dim));
  }
  c.rope.freq_base = static_cast<float>(file.find_float(a + ".rope.freq_base").value_or(10000.0));
  read_rope_scaling(file, a, c.rope);
  return c;
}

}  // namespace baton
