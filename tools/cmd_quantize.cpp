#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "baton/error.h"
#include "tools/commands.h"
#include "tools/model_tools/quantize_model.h"

namespace baton::cli {
namespace {

struct QuantizeFlags {
  std::string input;
  std::string output;
  std::string type;
  int32_t threads = 0;
  bool pure = false;
};

constexpr int kBarWidth = 30;

std::string describe(const TensorQuantization& t) {
  const std::string from(ggml_type_name(t.from_ggml_type));
  return t.quantized ? from + " -> " + std::string(to_string(t.to)) : from + " (copied)";
}

// A terminal gets one bar redrawn in place; a log gets one line per tensor.
class Progress {
 public:
  Progress() : terminal_(::isatty(STDERR_FILENO) == 1) {}

  void update(const TensorQuantization& t, size_t index, size_t count) {
    const std::string what = t.name + " " + describe(t);
    if (!terminal_) {
      std::fprintf(stderr, "[%zu/%zu] %s\n", index + 1, count, what.c_str());
      return;
    }
    const int filled = static_cast<int>((index + 1) * kBarWidth / count);
    std::fprintf(stderr, "\r\033[K[%s%s] %zu/%zu %s", std::string(filled, '#').c_str(),
                 std::string(kBarWidth - filled, '.').c_str(), index + 1, count, what.c_str());
    if (index + 1 == count) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  bool terminal_;
};

double mib(uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

void print_summary(const std::vector<TensorQuantization>& plan, const QuantizeFlags& f,
                   double seconds) {
  std::map<std::string, int> per_type;
  uint64_t before = 0, after = 0;
  double elements = 0;
  int requantized = 0;
  for (const TensorQuantization& t : plan) {
    ++per_type[std::string(to_string(t.to))];
    before += t.bytes_before;
    after += t.bytes_after;
    double n = 1;
    for (int64_t d : t.shape) n *= static_cast<double>(d);
    elements += n;
    requantized += t.quantized && is_quantized(*dtype_from_ggml_type(t.from_ggml_type));
  }
  std::printf("wrote %s (%s) in %.1f s\n", f.output.c_str(), f.type.c_str(), seconds);
  std::string types;
  for (const auto& [name, n] : per_type) {
    types += (types.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  }
  std::printf("tensors: %zu (%s)\n", plan.size(), types.c_str());
  for (const TensorQuantization& t : plan) {
    if (!t.fell_back_from) continue;
    std::printf("fallback: %s has rows of %lld, not whole %s blocks: %s\n", t.name.c_str(),
                static_cast<long long>(t.shape.back()),
                std::string(to_string(*t.fell_back_from)).c_str(),
                std::string(to_string(t.to)).c_str());
  }
  std::printf("size: %.2f MiB -> %.2f MiB, %.2f -> %.2f bits per weight\n", mib(before), mib(after),
              elements > 0 ? before * 8 / elements : 0.0,
              elements > 0 ? after * 8 / elements : 0.0);
  if (requantized > 0) {
    std::fprintf(stderr,
                 "note: %d matrices were already quantized; re-quantizing them loses more than "
                 "quantizing the original weights\n",
                 requantized);
  }
}

}  // namespace

Action add_quantize_command(CLI::App& app) {
  auto f = std::make_shared<QuantizeFlags>();
  CLI::App* cmd =
      app.add_subcommand("quantize", "write a copy of a GGUF model with quantized weight matrices");
  cmd->add_option("input", f->input, "GGUF file to read (f32, f16, bf16 or quantized)")->required();
  cmd->add_option("output", f->output, "GGUF file to write")->required();
  cmd->add_option("--type", f->type, "target type: " + quantize_preset_names())->required();
  cmd->add_option("--threads", f->threads, "threads encoding rows (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--pure", f->pure,
                "every matrix in --type's base type, the output projection included and the _m "
                "mixes' q6_k layers too (llama-quantize --pure)");

  return [f] {
    const QuantizePreset* preset = find_quantize_preset(f->type);
    if (!preset) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "--type '" + f->type + "' is not one of " + quantize_preset_names());
    }
    Progress progress;
    const auto start = std::chrono::steady_clock::now();
    const std::vector<TensorQuantization> plan = quantize_model(
        f->input, f->output, *preset,
        {.threads = f->threads,
         .pure = f->pure,
         .on_tensor = [&progress](const TensorQuantization& t, size_t index, size_t count) {
           progress.update(t, index, count);
         }});
    print_summary(plan, *f,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return 0;
  };
}

}  // namespace baton::cli
