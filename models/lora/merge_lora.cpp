#include "models/lora/merge_lora.h"

#include <algorithm>
#include <cstring>

#include "core/formats/gguf/gguf_writer.h"
#include "core/runtime/half.h"
#include "models/lora/lora_readers.h"
#include "models/model_config.h"
#include "ops/reference.h"

namespace baton {
namespace {

constexpr std::string_view kWeightSuffix = ".weight";

// Adds b·a of `target` to rows [first, first + b rows) of `w` ([out, in] f32).
void add_update(const LoraTarget& target, int64_t first, std::vector<float>& w, int64_t in) {
  const int64_t rank = target.a.dim(0), rows = target.b.dim(0);
  const float* a = target.a.data<float>();
  const float* b = target.b.data<float>();
  for (int64_t o = 0; o < rows; ++o) {
    float* row = w.data() + (first + o) * in;
    for (int64_t j = 0; j < rank; ++j) {
      const float scale = b[o * rank + j];
      for (int64_t c = 0; c < in; ++c) row[c] += scale * a[j * in + c];
    }
  }
}

}  // namespace

void merge_lora(const std::filesystem::path& base, const std::vector<LoraAdapter>& adapters,
                const std::filesystem::path& output) {
  const gguf::GgufFile file = gguf::GgufFile::open(base);
  const ModelConfig config = read_model_config(file);
  gguf::GgufWriter writer;
  for (const auto& [key, value] : file.metadata()) writer.add(key, value);
  for (const gguf::TensorInfo& info : file.tensors()) {
    const Tensor source = file.tensor(info.name);
    std::vector<lora::NodeRows> nodes;
    if (info.name.ends_with(kWeightSuffix)) {
      nodes = lora::linear_nodes_of(info.name.substr(0, info.name.size() - kWeightSuffix.size()),
                                    config);
    }
    std::erase_if(nodes, [&](const lora::NodeRows& n) {
      return std::none_of(adapters.begin(), adapters.end(),
                          [&](const LoraAdapter& a) { return a.targets.contains(n.node); });
    });
    if (nodes.empty()) {
      writer.add_tensor(info.name, source);
      continue;
    }
    const DType dtype = source.dtype() == DType::kF32 ? DType::kF32 : DType::kF16;
    writer.add_tensor(info.name, info.shape, dtype,
                      [source, nodes, dtype, &adapters](std::span<std::byte> bytes) {
                        const int64_t rows = source.dim(0), in = source.dim(1);
                        std::vector<float> w(static_cast<size_t>(rows * in));
                        for (int64_t r = 0; r < rows; ++r) {
                          reference::dequantize_row(source, r, w.data() + r * in);
                        }
                        for (const LoraAdapter& adapter : adapters) {
                          for (const lora::NodeRows& n : nodes) {
                            const auto target = adapter.targets.find(n.node);
                            if (target != adapter.targets.end()) {
                              add_update(target->second, n.first, w, in);
                            }
                          }
                        }
                        if (dtype == DType::kF32) {
                          std::memcpy(bytes.data(), w.data(), bytes.size());
                          return;
                        }
                        auto* out = reinterpret_cast<uint16_t*>(bytes.data());
                        for (size_t i = 0; i < w.size(); ++i) out[i] = fp32_to_fp16(w[i]);
                      });
  }
  writer.write(output);
}

}  // namespace baton
