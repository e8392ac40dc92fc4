#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "backends/cpu/isa/cpu_isa.h"
#include "backends/cpu/matmul/matmul.h"
#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"
#include "models/model_config.h"
#include "tools/commands.h"
#include "tools/model_flags.h"

namespace baton::cli {
namespace {

constexpr size_t kArrayPreview = 8;

std::string render(const gguf::Value& value) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return v.size() > 120 ? "\"" + v.substr(0, 117) + "...\"" : "\"" + v + "\"";
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, gguf::Array>) {
          std::string out = "[" + std::string(gguf::to_string(v.element_type)) + " x " +
                            std::to_string(v.items.size()) + "]";
          for (size_t i = 0; i < std::min(v.items.size(), kArrayPreview); ++i) {
            out += (i ? ", " : " ") + render(v.items[i]);
          }
          return out + (v.items.size() > kArrayPreview ? ", ..." : "");
        } else {
          return std::to_string(v);
        }
      },
      value.data);
}

void print_model_config(const gguf::GgufFile& file) {
  try {
    const ModelConfig c = read_model_config(file);
    std::printf(
        "model: %s, %d layers, n_embd %d, %d heads (%d kv heads, head_dim %d), n_ff %d, "
        "context %d, rope %d dims base %g scale %g\n",
        c.architecture.c_str(), c.n_layer, c.n_embd, c.n_head, c.n_head_kv, c.head_dim, c.n_ff,
        c.n_ctx_train, c.rope.n_rot, c.rope.freq_base, c.rope.freq_scale);
  } catch (const Error& e) {
    std::printf("model: not loadable as a model (%s)\n", e.what());
  }
}

}  // namespace

Action add_info_command(CLI::App& app) {
  auto model = std::make_shared<std::string>();
  CLI::App* cmd =
      app.add_subcommand("info", "show a model's architecture, shapes, dtypes and metadata");
  cmd->add_option("-m,--model", *model, "GGUF file or Hugging Face checkpoint directory")
      ->required();
  return [model] {
    *model = resolve_model_path(*model);
    const auto file = gguf::GgufFile::open(*model);
    std::printf("file: %s (GGUF v%u, %llu bytes, %zu tensors, %zu metadata keys)\n", model->c_str(),
                file.version(), static_cast<unsigned long long>(file.file_size()),
                file.tensors().size(), file.metadata().size());
    print_model_config(file);

    std::map<std::string, int> dtype_counts;
    uint64_t weight_bytes = 0;
    for (const gguf::TensorInfo& t : file.tensors()) {
      ++dtype_counts[std::string(ggml_type_name(t.ggml_type))];
      weight_bytes += t.nbytes;
    }
    std::printf("weights: %.2f MiB;", weight_bytes / 1048576.0);
    for (const auto& [name, count] : dtype_counts) std::printf(" %s x%d", name.c_str(), count);
    std::printf("\n\ncpu backend matmul kernels (%s):\n%s",
                std::string(cpu::to_string(cpu::active_isa())).c_str(),
                cpu::describe_matmul_paths(true).c_str());
    std::printf("\nmetadata:\n");
    for (const auto& [key, value] : file.metadata()) {
      std::printf("  %-44s %s\n", key.c_str(), render(value).c_str());
    }
    std::printf("\ntensors:\n");
    for (const gguf::TensorInfo& t : file.tensors()) {
      std::printf("  %-36s %-6s %s\n", t.name.c_str(),
                  std::string(ggml_type_name(t.ggml_type)).c_str(), to_string(t.shape).c_str());
    }
    return 0;
  };
}

}  // namespace baton::cli
