#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/api/loaded_model.h"
#include "core/api/perplexity.h"
#include "tools/commands.h"
#include "tools/model_flags.h"
#include "tools/option_flags.h"

namespace baton::cli {
namespace {

struct PerplexityFlags {
  LLMOptions options;
  std::string text_file;
  PerplexityOptions perplexity;
  bool json = false;
};

}  // namespace

Action add_perplexity_command(CLI::App& app) {
  auto f = std::make_shared<PerplexityFlags>();
  CLI::App* cmd = app.add_subcommand(
      "perplexity", "perplexity of a model over a text file, computed as llama.cpp's tool does");
  cmd->add_option("-m,--model", f->options.model, "GGUF file or Hugging Face checkpoint directory")
      ->required();
  cmd->add_option("-f,--file", f->text_file, "text file to score")->required();
  cmd->add_option("--ctx", f->perplexity.n_ctx,
                  "tokens per chunk; the second half of each is scored")
      ->capture_default_str();
  cmd->add_option("-b,--batch-size", f->perplexity.step_tokens,
                  "tokens per model step within a chunk")
      ->capture_default_str();
  add_option_flag(*cmd, "threads", f->options.threads);
  add_option_flag(*cmd, "backend", f->options.backend);
  add_option_flag(*cmd, "kv_cache_dtype", f->options.kv_cache_dtype);
  add_lora_adapter_flags(*cmd, f->options.lora);
  cmd->add_flag("--json", f->json, "print the result as one JSON object on stdout");
  return [f] {
    f->options.model = resolve_model_path(f->options.model);
    const LoadedModel loaded(f->options);
    // Progress in llama.cpp's form goes to stderr, so stdout holds only the result.
    const PerplexityResult r =
        perplexity_of_file(loaded, f->text_file, f->perplexity, [](int32_t chunk, double ppl) {
          std::fprintf(stderr, "[%d]%.4f,", chunk + 1, ppl);
          std::fflush(stderr);
        });
    std::fprintf(stderr, "\n");
    if (f->json) {
      const nlohmann::json j = {{"ppl", r.ppl},           {"ppl_error", r.ppl_error},
                                {"mean_nll", r.mean_nll}, {"n_ctx", r.n_ctx},
                                {"n_chunks", r.n_chunks}, {"n_tokens", r.n_tokens},
                                {"n_scored", r.n_scored}, {"running_ppl", r.running_ppl}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("Final estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_error);
    }
    return 0;
  };
}

}  // namespace baton::cli
