// Writing the quantized file: one tensor at a time, straight into the writer's buffer, so a
// model larger than memory is quantized holding one tensor's output.

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>

#include "baton/error.h"
#include "core/formats/gguf/gguf_writer.h"
#include "core/runtime/quantize/quantize.h"
#include "ops/reference.h"
#include "tools/model_tools/quantize_model.h"

namespace baton {
namespace {

constexpr std::string_view kFileTypeKey = "general.file_type";
constexpr std::string_view kQuantVersionKey = "general.quantization_version";
constexpr uint32_t kQuantizationVersion = 2;  // ggml's GGML_QNT_VERSION

// Fails before hours of quantizing rather than at the final write.
void check_writable(const std::filesystem::path& output) {
  if (std::filesystem::is_directory(output)) {
    throw Error(ErrorCategory::kIo, "cannot write " + output.string() + ": it is a directory");
  }
  const std::filesystem::path dir = output.has_parent_path() ? output.parent_path() : ".";
  if (::access(dir.c_str(), W_OK) != 0) {
    throw Error(ErrorCategory::kIo,
                "cannot write " + output.string() + ": " + std::strerror(errno));
  }
}

gguf::Value uint32_value(uint32_t v) {
  return {.type = gguf::ValueType::kUint32, .data = uint64_t{v}};
}

// The input's metadata in its order, with the two quantization keys replaced or appended.
void copy_metadata(const gguf::GgufFile& file, uint32_t file_type, bool any_block_quantized,
                   gguf::GgufWriter& writer) {
  for (const auto& [key, value] : file.metadata()) {
    if (key == kFileTypeKey) {
      writer.add(key, uint32_value(file_type));
    } else if (key != kQuantVersionKey) {
      writer.add(key, value);
    }
  }
  if (!file.contains(kFileTypeKey)) writer.add(std::string(kFileTypeKey), uint32_value(file_type));
  if (any_block_quantized) {
    writer.add(std::string(kQuantVersionKey), uint32_value(kQuantizationVersion));
  }
}

// Decodes each row of `source` to f32 and encodes it as `to` into `out`. An exception may not
// leave an OpenMP region, so the first one is kept, the remaining rows are skipped, and it is
// rethrown after the region.
void quantize_rows(const Tensor& source, const std::string& name, DType to, int32_t threads,
                   std::span<std::byte> out) {
  const int64_t rows = source.rows();
  const int64_t n = source.row_length();
  const size_t row_bytes = baton::row_bytes(to, n);
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads())
  {
    std::vector<float> row(static_cast<size_t>(n));
#pragma omp for schedule(dynamic, 16)
    for (int64_t r = 0; r < rows; ++r) {
      if (failed) continue;
      try {
        reference::dequantize_row(source, r, row.data());
        if (!std::all_of(row.begin(), row.end(), [](float v) { return std::isfinite(v); })) {
          throw Error(ErrorCategory::kInvalidModel, "tensor " + name + " row " + std::to_string(r) +
                                                        " holds a value that is not finite");
        }
        quantize_row(to, row.data(), out.data() + row_bytes * static_cast<size_t>(r), n);
      } catch (...) {
#pragma omp critical(baton_quantize_failure)
        if (!failure) failure = std::current_exception();
        failed = true;
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

std::vector<TensorQuantization> quantize_model(const std::filesystem::path& input,
                                               const std::filesystem::path& output,
                                               const QuantizePreset& preset,
                                               const QuantizeOptions& options) {
  const gguf::GgufFile file = gguf::GgufFile::open(input);
  check_writable(output);
  std::vector<TensorQuantization> plan = plan_quantization(file, preset, options.pure);

  gguf::GgufWriter writer;
  bool any_block_quantized = false;
  for (const TensorQuantization& t : plan) any_block_quantized |= is_quantized(t.to);
  copy_metadata(file, preset.llama_ftype, any_block_quantized, writer);

  for (size_t i = 0; i < plan.size(); ++i) {
    const TensorQuantization& t = plan[i];
    // The view holds the mapping, so the input stays readable until the writer is done.
    const Tensor source = file.tensor(t.name);
    writer.add_tensor(t.name, t.shape, t.to,
                      [&t, &options, &plan, source, i](std::span<std::byte> bytes) {
                        if (t.quantized) {
                          quantize_rows(source, t.name, t.to, options.threads, bytes);
                        } else {
                          std::memcpy(bytes.data(), source.materialize(), bytes.size());
                        }
                        if (options.on_tensor) options.on_tensor(t, i, plan.size());
                      });
  }
  writer.write(output);
  return plan;
}

}  // namespace baton
