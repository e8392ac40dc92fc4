#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "baton/error.h"
#include "core/formats/family/model_family.h"
#include "tools/commands.h"
#include "tools/model_tools/synthetic_model.h"

namespace baton::cli {
namespace {

struct SynthFlags {
  std::string shape_name;
  std::string output;
  std::string type = "f16";
  std::string output_type;
  std::string arch;
  std::optional<int32_t> n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_ctx,
      sliding_window, long_rope_original_context, n_rot;
  std::optional<float> yarn_factor;
  std::string vocab_from;
  std::string name;
  uint64_t seed = 0;
  float std = 0.02f;
};

constexpr DType kSynthTypes[] = {
    DType::kF32,  DType::kF16,   DType::kBF16,  DType::kQ8_0,   DType::kQ4_0, DType::kQ4_1,
    DType::kQ5_0, DType::kQ5_1,  DType::kQ2_K,  DType::kQ3_K,   DType::kQ4_K, DType::kQ5_K,
    DType::kQ6_K, DType::kI8Row, DType::kI4G32, DType::kI4G128, DType::kF8Row};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "llama (the base the others vary), qwen2 (q/k/v biases), ...": the families and what sets
// each apart.
std::string architecture_help() {
  std::string help;
  for (const ModelFamily* family : model_families()) {
    help += (help.empty() ? "" : ", ") + std::string(family->gguf_arch) + " (" +
            std::string(family->summary) + (family->tied_by_default ? ", tied embeddings" : "") +
            ")";
  }
  return "architecture: " + help;
}

std::string synth_type_names() {
  std::string names;
  for (DType t : kSynthTypes) names += (names.empty() ? "" : ", ") + lower(to_string(t));
  return names;
}

// Type names as ggml spells them (q4_K) or in lower case (q4_k).
DType parse_type(const std::string& flag, const std::string& name) {
  for (DType t : kSynthTypes) {
    if (lower(to_string(t)) == lower(name)) return t;
  }
  throw Error(ErrorCategory::kInvalidArgument,
              flag + " '" + name + "' is not one of " + synth_type_names());
}

SyntheticShape resolve_shape(const SynthFlags& f) {
  SyntheticShape s;
  if (!f.shape_name.empty()) {
    s = synthetic_shape(f.shape_name);
  } else if (!f.n_embd || !f.n_layer || !f.n_head || !f.n_ff) {
    throw Error(ErrorCategory::kInvalidArgument,
                "name a shape or give --n-embd, --n-layer, --n-head and --n-ff");
  } else {
    s.n_vocab = 32000;
  }
  if (!f.arch.empty()) {
    s.architecture = f.arch;
    const ModelFamily* family = find_model_family(f.arch);
    s.tied_embeddings = family && family->tied_by_default;
  }
  s.n_embd = f.n_embd.value_or(s.n_embd);
  s.n_layer = f.n_layer.value_or(s.n_layer);
  s.n_head = f.n_head.value_or(s.n_head);
  s.n_head_kv = f.n_head_kv.value_or(s.n_head_kv > 0 ? s.n_head_kv : s.n_head);
  s.head_dim = f.head_dim.value_or(f.n_embd || f.n_head ? 0 : s.head_dim);
  s.n_ff = f.n_ff.value_or(s.n_ff);
  s.n_vocab = f.n_vocab.value_or(s.n_vocab);
  s.n_ctx = f.n_ctx.value_or(s.n_ctx);
  s.sliding_window = f.sliding_window.value_or(s.sliding_window);
  s.yarn_factor = f.yarn_factor.value_or(0.0f);
  s.n_rot = f.n_rot.value_or(f.n_embd || f.n_head || f.head_dim ? 0 : s.n_rot);
  s.long_rope_original_context =
      f.long_rope_original_context.value_or(s.long_rope_original_context);
  return s;
}

}  // namespace

Action add_synth_command(CLI::App& app) {
  auto f = std::make_shared<SynthFlags>();
  CLI::App* cmd = app.add_subcommand(
      "synth", "write a random-weight GGUF model of a given shape, for benchmarking");
  cmd->add_option("shape", f->shape_name, "named shape: " + synthetic_shape_names());
  cmd->add_option("-o,--output", f->output, "GGUF file to write")->required();
  cmd->add_option("--type", f->type, "matrix type: " + synth_type_names())->capture_default_str();
  cmd->add_option("--output-type", f->output_type,
                  "type of output.weight (token_embd.weight when tied), as llama-quantize's "
                  "--output-tensor-type; default: --type");
  cmd->add_option("--arch", f->arch, architecture_help());
  cmd->add_option("--n-embd", f->n_embd, "embedding size");
  cmd->add_option("--n-layer", f->n_layer, "layers");
  cmd->add_option("--n-head", f->n_head, "attention heads");
  cmd->add_option("--n-head-kv", f->n_head_kv, "KV heads (default: n-head)");
  cmd->add_option("--head-dim", f->head_dim, "size of one head (default: n-embd / n-head)");
  cmd->add_option("--n-ff", f->n_ff, "feed-forward size");
  auto* vocab = cmd->add_option("--n-vocab", f->n_vocab, "vocabulary size (default 32000)");
  cmd->add_option("--ctx", f->n_ctx, "trained context length");
  cmd->add_option("--sliding-window", f->sliding_window,
                  "families with a sliding window (gemma2, gemma3, olmo2): positions its "
                  "windowed layers see (default: the family's; none for gemma3 and olmo2)");
  cmd->add_option("--n-rot", f->n_rot, "rotated dimensions of each head (default: all)");
  cmd->add_option("--yarn", f->yarn_factor,
                  "YaRN rope scaling by this factor, trained at --ctx divided by it");
  cmd->add_option("--long-rope", f->long_rope_original_context,
                  "phi3: write LongRoPE factors that switch from short to long past this context");
  cmd->add_option("--vocab-from", f->vocab_from,
                  "GGUF whose tokenizer metadata and vocabulary size to use")
      ->excludes(vocab);
  cmd->add_option("--name", f->name, "general.name (default: the shape's name)");
  cmd->add_option("--seed", f->seed, "random seed")->capture_default_str();
  cmd->add_option("--std", f->std, "standard deviation of the weights")->capture_default_str();

  return [f] {
    SynthOptions options;
    options.shape = resolve_shape(*f);
    options.weight_type = parse_type("--type", f->type);
    if (!f->output_type.empty()) options.output_type = parse_type("--output-type", f->output_type);
    options.vocab_from = f->vocab_from;
    options.seed = f->seed;
    options.weight_std = f->std;
    options.name =
        !f->name.empty() ? f->name : (f->shape_name.empty() ? "synthetic" : f->shape_name);
    const auto start = std::chrono::steady_clock::now();
    const SynthSummary s = write_synthetic_model(options, f->output);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("wrote %s: %s %s, %.1f M params, %.3f GiB of weights, vocabulary %d, in %.1f s\n",
                f->output.c_str(), options.name.c_str(), f->type.c_str(), s.n_params / 1e6,
                s.weight_bytes / 1073741824.0, s.n_vocab, seconds);
    return 0;
  };
}

}  // namespace baton::cli
