#include "models/weight_loader.h"

#include <cstring>

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

// Columns of every row copied into a host tensor: each row's header (a per-row scale, which
// applies to any part of the row) and the blocks in range.
Tensor slice_columns(const Tensor& full, const std::string& name, int64_t first, int64_t count) {
  const DTypeTraits& t = traits(full.dtype());
  const int64_t columns = full.dim(1);
  if (first % t.block_size != 0 || count % t.block_size != 0 || first + count > columns) {
    throw Error(ErrorCategory::kUnsupported,
                "tensor '" + name + "' (" + std::string(to_string(full.dtype())) + ", blocks of " +
                    std::to_string(t.block_size) + ") cannot be split at columns " +
                    std::to_string(first) + ".." + std::to_string(first + count) +
                    ": the cut would split a quantization block; choose another "
                    "--tensor-parallel");
  }
  Tensor out = Tensor::host(full.dtype(), {full.dim(0), count});
  const size_t in_row = row_bytes(full.dtype(), columns);
  const size_t out_row = row_bytes(full.dtype(), count);
  const size_t skip = static_cast<size_t>(first / t.block_size) * t.block_bytes;
  const auto* src = full.data<std::byte>();
  auto* dst = out.data<std::byte>();
  for (int64_t r = 0; r < full.dim(0); ++r) {
    const std::byte* row = src + static_cast<size_t>(r) * in_row;
    std::byte* to = dst + static_cast<size_t>(r) * out_row;
    std::memcpy(to, row, t.row_header_bytes);
    std::memcpy(to + t.row_header_bytes, row + t.row_header_bytes + skip,
                out_row - t.row_header_bytes);
  }
  return out;
}

}  // namespace

Tensor WeightLoader::get(const std::string& name, const Shape& expected,
                         const std::optional<WeightSlice>& slice) const {
  const Tensor full = checked(file_, name, expected);
  if (!slice) return backend_.import_tensor(full);
  if (slice->axis == WeightSlice::Axis::kRows) {
    return backend_.import_tensor(full.slice_rows(slice->first, slice->count));
  }
  return backend_.import_tensor(slice_columns(full, name, slice->first, slice->count));
}

Tensor WeightLoader::get_rows(const std::string& name, const Shape& expected, int64_t first,
                              int64_t count, const std::optional<WeightSlice>& rows) const {
  if (rows) {
    first += rows->first;
    count = rows->count;
  }
  return backend_.import_tensor(checked(file_, name, expected).slice_rows(first, count));
}

Tensor WeightLoader::get_f32(const std::string& name, const Shape& expected,
                             const std::optional<WeightSlice>& slice) const {
  const Tensor t = checked(file_, name, expected);
  if (t.dtype() != DType::kF32) {
    throw Error(ErrorCategory::kUnsupported,
                file_.path().filename().string() + ": tensor '" + name + "' is " +
                    std::string(to_string(t.dtype())) + "; norms and biases must be f32");
  }
  return get(name, expected, slice);
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

EmbeddingWeights WeightLoader::embeddings(int64_t n_vocab, int64_t n_embd,
                                          const std::optional<WeightSlice>& output_rows) const {
  EmbeddingWeights e;
  e.token_embd = get("token_embd.weight", {n_vocab, n_embd});
  e.output_norm = get_f32("output_norm.weight", {n_embd});
  if (file_.find_tensor("output.weight")) {
    e.output = get("output.weight", {n_vocab, n_embd}, output_rows);
  } else {
    // Tied: the embedding table again, or the rank's vocabulary rows of it.
    e.output =
        output_rows ? get("token_embd.weight", {n_vocab, n_embd}, output_rows) : e.token_embd;
  }
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
