#include <cstdio>
#include <iostream>
#include <memory>
#include <random>

#include "baton/llm.h"
#include "tools/commands.h"
#include "tools/model_flags.h"

namespace baton::cli {
namespace {

struct RunFlags {
  LLMOptions model;
  GenerationParams generation;
  std::string prompt;
  int64_t seed = -1;
  bool no_add_special = false;
  bool quiet = false;
};

}  // namespace

Action add_run_command(CLI::App& app) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand("run", "generate a continuation of a prompt");
  add_model_flags(*cmd, flags->model);
  add_generation_flags(*cmd, flags->generation);
  cmd->add_option("-p,--prompt", flags->prompt, "prompt text (default: empty, start from BOS)");
  cmd->add_option("-s,--seed", flags->seed, "random seed (default: random)");
  cmd->add_flag("--no-add-special", flags->no_add_special, "do not add BOS/EOS to the prompt");
  cmd->add_flag("-q,--quiet", flags->quiet, "print no timings");

  return [flags] {
    resolve_model(flags->model);
    if (follow_if_follower(flags->model)) return 0;
    flags->generation.lora = single_lora(flags->model);
    flags->generation.add_special = !flags->no_add_special;
    flags->generation.sampling.seed =
        flags->seed >= 0 ? static_cast<uint64_t>(flags->seed) : std::random_device{}();
    LLM llm(flags->model);
    std::cout << flags->prompt << std::flush;
    const GenerationOutput out =
        llm.generate(flags->prompt, flags->generation, [](std::string_view piece) {
          std::cout << piece << std::flush;
          return true;
        });
    std::cout << "\n" << std::flush;
    if (!flags->quiet) {
      const double prompt_tps = out.prompt_tokens.size() / std::max(out.prompt_seconds, 1e-9);
      const double decode_tokens = out.tokens.empty() ? 0 : out.tokens.size() - 1.0;
      std::fprintf(stderr,
                   "prompt: %zu tokens in %.1f ms (%.1f tok/s); generated: %zu tokens, "
                   "%.1f tok/s; finish: %s\n",
                   out.prompt_tokens.size(), out.prompt_seconds * 1e3, prompt_tps,
                   out.tokens.size(), decode_tokens / std::max(out.generation_seconds, 1e-9),
                   to_string(out.finish_reason));
      print_memory(llm.summary());
    }
    return 0;
  };
}

}  // namespace baton::cli
