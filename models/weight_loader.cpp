#include "models/weight_loader.h"

#include "baton/error.h"

namespace baton {

namespace {

Tensor checked(const gguf::GgufFile& file, const std::string& name, const Shape& expected) {
  const Tensor t = file.tensor(name);
  if (t.shape() != expected) {
    throw Error(ErrorCategory::kInvalidModel, file.path().filename().string() + ": tensor '" +
                                                  name + "' has shape " + to_string(t.shape()) +
                                                  ", expected " + to_string(expected));
  }
  return t;
}

}  // namespace

Tensor WeightLoader::get(const std::string& name, const Shape& expected) const {
  return backend_.import_tensor(checked(file_, name, expected));
}

Tensor WeightLoader::get_rows(const std::string& name, const Shape& expected, int64_t first,
                              int64_t count) const {
  return backend_.import_tensor(checked(file_, name, expected).slice_rows(first, count));
}

Tensor WeightLoader::get_f32(const std::string& name, const Shape& expected) const {
  const Tensor t = get(name, expected);
  if (t.dtype() != DType::kF32) {
    throw Error(ErrorCategory::kUnsupported,
                file_.path().filename().string() + ": tensor '" + name + "' is " +
                    std::string(to_string(t.dtype())) + "; norms and biases must be f32");
  }
  return t;
}

std::optional<std::vector<float>> WeightLoader::find_host_f32(const std::string& name,
                                                              int64_t n) const {
  if (!file_.find_tensor(name)) return std::nullopt;
  const Tensor t = file_.tensor(name);
  if (t.dtype() != DType::kF32 || t.shape() != Shape{n}) {
    throw Error(ErrorCategory::kInvalidModel, file_.path().filename().string() + ": " + name +
                                                  " must be f32 [" + std::to_string(n) + "]");
  }
  return std::vector<float>(t.data<float>(), t.data<float>() + n);
}

std::optional<Tensor> WeightLoader::find_f32(const std::string& name, const Shape& expected) const {
  if (!file_.find_tensor(name)) return std::nullopt;
  return get_f32(name, expected);
}

EmbeddingWeights WeightLoader::embeddings(int64_t n_vocab, int64_t n_embd) const {
  EmbeddingWeights e;
  e.token_embd = get("token_embd.weight", {n_vocab, n_embd});
  e.output_norm = get_f32("output_norm.weight", {n_embd});
  e.output =
      file_.find_tensor("output.weight") ? get("output.weight", {n_vocab, n_embd}) : e.token_embd;
  return e;
}

Shape WeightLoader::shape_2d(const std::string& name) const {
  const gguf::TensorInfo* info = file_.find_tensor(name);
  if (!info || info->shape.size() != 2) {
    throw Error(ErrorCategory::kInvalidModel,
                file_.path().filename().string() + ": missing 2-D tensor '" + name + "'");
  }
  return info->shape;
}

}  // namespace baton
