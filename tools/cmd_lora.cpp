// `baton lora merge` bakes LoRA adapters into a copy of their base model (llama.cpp's
// export-lora); `baton lora synth` writes a random adapter for a model, to benchmark with.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"
#include "models/lora/merge_lora.h"
#include "models/model_config.h"
#include "tools/commands.h"
#include "tools/model_flags.h"
#include "tools/model_tools/synthetic_lora.h"

namespace baton::cli {
namespace {

struct MergeFlags {
  std::string model;
  std::vector<LoraOptions> adapters;
  std::string output;
};

struct SynthFlags {
  std::string model;
  int32_t rank = 16;
  float alpha = 32;
  uint32_t seed = 1;
  std::string output;
};

Action merge_action(const std::shared_ptr<MergeFlags>& flags) {
  return [flags] {
    if (flags->adapters.empty()) {
      throw Error(ErrorCategory::kInvalidArgument, "give at least one adapter with --lora");
    }
    const ModelConfig config = read_model_config(gguf::GgufFile::open(flags->model));
    std::vector<LoraAdapter> adapters;
    for (const LoraOptions& o : flags->adapters) {
      adapters.push_back(read_lora_adapter(o.path, config, o.scale));
      adapters.back().name = o.name;
    }
    merge_lora(flags->model, adapters, flags->output);
    std::fprintf(stderr, "merged %zu LoRA adapter(s) into %s\n", adapters.size(),
                 flags->output.c_str());
    return 0;
  };
}

Action synth_action(const std::shared_ptr<SynthFlags>& flags) {
  return [flags] {
    if (flags->rank < 1) throw Error(ErrorCategory::kInvalidArgument, "--rank must be at least 1");
    const ModelConfig config = read_model_config(gguf::GgufFile::open(flags->model));
    write_gguf_lora(flags->output, config.architecture,
                    random_lora(config, flags->rank, flags->seed), flags->alpha);
    std::fprintf(stderr, "wrote a random rank-%d LoRA adapter of every linear layer to %s\n",
                 flags->rank, flags->output.c_str());
    return 0;
  };
}

}  // namespace

Action add_lora_command(CLI::App& app) {
  CLI::App* lora = app.add_subcommand("lora", "work with LoRA adapters");
  lora->require_subcommand(1);

  auto merge_flags = std::make_shared<MergeFlags>();
  CLI::App* merge =
      lora->add_subcommand("merge", "write a model with LoRA adapters added to its weights");
  merge->add_option("-m,--model", merge_flags->model, "base GGUF model")->required();
  add_lora_adapter_flags(*merge, merge_flags->adapters);
  merge->add_option("-o,--output", merge_flags->output, "merged GGUF model to write")->required();

  auto synth_flags = std::make_shared<SynthFlags>();
  CLI::App* synth = lora->add_subcommand(
      "synth", "write a random GGUF LoRA adapter of every linear layer of a model");
  synth->add_option("-m,--model", synth_flags->model, "base GGUF model")->required();
  synth->add_option("--rank", synth_flags->rank, "adapter rank")->capture_default_str();
  synth->add_option("--alpha", synth_flags->alpha, "adapter.lora.alpha")->capture_default_str();
  synth->add_option("--seed", synth_flags->seed, "random seed")->capture_default_str();
  synth->add_option("-o,--output", synth_flags->output, "adapter file to write")->required();

  const Action merge_run = merge_action(merge_flags), synth_run = synth_action(synth_flags);
  return [lora, merge, merge_run, synth_run] {
    return lora->got_subcommand(merge) ? merge_run() : synth_run();
  };
}

}  // namespace baton::cli
