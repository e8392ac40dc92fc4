#include "tools/plan/model_footprint.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "baton/error.h"
#include "core/serving/kv_cache/paged_kv_cache.h"
#include "tools/model_bench/benchmark.h"
#include "tools/model_tools/quantize_model.h"
#include "tools/model_tools/synthetic_model.h"

namespace baton {
namespace {

// A directory of its own in the temporary directory (mkdtemp: no other user can have put a
// link there first), removed with what it holds.
class PrivateTempDir {
 public:
  PrivateTempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "baton-plan-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw Error(ErrorCategory::kIo,
                  "cannot create a directory like " + pattern + ": " + std::strerror(errno));
    }
    path_ = pattern;
  }
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  ~PrivateTempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace

ModelFootprint model_footprint(const gguf::GgufFile& file) {
  // The file as it is: what `baton bench` counts for its roofline.
  const ModelCost cost = model_cost(file);
  ModelFootprint f{.name = cost.name,
                   .config = read_model_config(file),
                   .n_params = cost.n_params,
                   .prefill_params = cost.prefill_params};
  f.weights.push_back({.name = "as stored",
                       .type = cost.weight_type,
                       .bytes = cost.size_bytes,
                       .decode_bytes = cost.decode_bytes});
  // Each preset as `baton quantize` would write it, counted with the same rule.
  const bool tied = file.find_tensor("output.weight") == nullptr;
  for (const QuantizePreset& preset : quantize_presets()) {
    WeightChoice choice{.name = std::string(preset.name), .type = preset.type};
    try {
      for (const TensorQuantization& t : plan_quantization(file, preset)) {
        choice.bytes += t.bytes_after;
        if (read_whole_per_decode_step(t.name, tied)) choice.decode_bytes += t.bytes_after;
      }
    } catch (const Error&) {
      continue;  // a tensor of a type this preset cannot take: not a choice for this model
    }
    f.weights.push_back(choice);
  }
  for (const DType dtype : kKvCacheDtypes) {
    try {
      check_kv_cache_dtype(dtype, f.config.head_dim);
    } catch (const Error&) {
      continue;
    }
    f.kv.push_back({dtype, kv_bytes_per_token({.n_layers = f.config.n_layer,
                                               .n_kv_heads = f.config.n_head_kv,
                                               .head_dim = f.config.head_dim,
                                               .dtype = dtype})});
  }
  return f;
}

ModelFootprint shape_footprint(const std::string& shape_name) {
  const SyntheticShape shape = synthetic_shape(shape_name);
  const PrivateTempDir dir;
  const std::filesystem::path layout = dir.path() / (shape_name + ".gguf");
  write_synthetic_model(
      {.shape = shape, .name = shape_name, .weight_type = DType::kF16, .layout_only = true},
      layout);
  return model_footprint(gguf::GgufFile::open(layout));
}

}  // namespace baton
