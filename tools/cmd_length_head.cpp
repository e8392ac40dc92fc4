#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>

#include "baton/error.h"
#include "core/api/handshake.h"
#include "core/api/loaded_model.h"
#include "tools/commands.h"
#include "tools/length_head/length_head_eval.h"
#include "tools/model_flags.h"
#include "tools/option_flags.h"

namespace baton::cli {
namespace {

struct LengthHeadFlags {
  LLMOptions options;
  std::string log;
  std::string output;
  LengthHeadOptions head;
  bool json = false;
};

nlohmann::json score_json(const PredictorScore& s) {
  return {{"mean_absolute_error", s.mean_absolute_error}, {"kendall_tau", s.kendall_tau}};
}

}  // namespace

Action add_length_head_command(CLI::App& app) {
  auto f = std::make_shared<LengthHeadFlags>();
  CLI::App* cmd = app.add_subcommand(
      "length-head",
      "fit a length predictor on the model's hidden state after prefill from a `serve "
      "--length-log` file, and score it against the online predictor on held-out requests");
  cmd->add_option("-m,--model", f->options.model, "the GGUF file or checkpoint that served the log")
      ->required();
  cmd->add_option("--log", f->log, "a file `baton serve --length-log` wrote")->required();
  cmd->add_option("-o,--output", f->output,
                  "write the head, rewritten over the logits, for `serve --length-head`");
  cmd->add_option("--holdout", f->head.holdout,
                  "the last fraction of the log, held out to score both predictors")
      ->check(CLI::Range(0.05, 0.5))
      ->capture_default_str();
  cmd->add_option("--kv-block-size", f->head.block_size,
                  "the server's --kv-block-size, which the online predictor's prefix keys use")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("-c,--ctx-size", f->options.context_size,
                  "the server's context size: the longest prompt the log may hold");
  add_option_flag(*cmd, "threads", f->options.threads);
  add_option_flag(*cmd, "backend", f->options.backend);
  cmd->add_flag("--json", f->json, "print the result as one JSON object on stdout");
  return [f] {
    f->options.model = resolve_model_path(f->options.model);
    const std::vector<LengthRecord> log = read_length_log(f->log);
    const LoadedModel loaded(f->options);
    if (loaded.model->config().final_softcap > 0) {
      throw Error(ErrorCategory::kUnsupported,
                  "this model soft-caps its logits, so a head over them cannot stand for one over "
                  "its hidden state");
    }
    const HiddenState hidden =
        prompt_hidden_state(*loaded.model, *loaded.backend, loaded.context_size);
    const LengthHeadReport r = evaluate_length_head(log, hidden, f->head);
    std::optional<double> gap;
    if (!f->output.empty()) {
      LengthHead head = head_over_logits(r.fitted, output_projection(loaded.file));
      head.model = model_hash(loaded.file);
      // Checked on real logits before it is written: what the server will compute.
      constexpr size_t kChecked = 16;
      gap = logit_form_gap(
          head, r.fitted, std::span<const LengthRecord>(log).first(std::min(kChecked, log.size())),
          hidden, prompt_logits(*loaded.model, *loaded.backend, loaded.context_size));
      constexpr double kMostGap = 0.01;
      if (*gap > kMostGap) {
        throw Error(ErrorCategory::kUnsupported,
                    "the head over this model's logits strays " + std::to_string(*gap) +
                        " in log1p(tokens) from the fitted head (at most " +
                        std::to_string(kMostGap) + "): not written");
      }
      head.write(f->output);
    }
    if (f->json) {
      nlohmann::json j = {{"trained", r.trained},           {"held_out", r.held_out},
                          {"hidden_size", r.hidden_size},   {"penalty", r.penalty},
                          {"online", score_json(r.online)}, {"head", score_json(r.head)},
                          {"head_wins", r.head_wins()}};
      if (gap) j["logit_form_gap"] = *gap;
      std::printf("%s\n", j.dump().c_str());
      return 0;
    }
    std::printf(
        "%zu requests learned from, %zu held out; head on a hidden state of %lld, ridge "
        "penalty %g\n\n",
        r.trained, r.held_out, static_cast<long long>(r.hidden_size), r.penalty);
    std::printf(
        "| predictor | mean absolute error (tokens) | Kendall's tau |\n| --- | ---: | ---: |\n");
    std::printf("| online (prefix and shape) | %.1f | %.3f |\n", r.online.mean_absolute_error,
                r.online.kendall_tau);
    std::printf("| hidden-state head | %.1f | %.3f |\n\n", r.head.mean_absolute_error,
                r.head.kendall_tau);
    std::printf("%s\n", r.head_wins() ? "the head beats the online predictor on both"
                                      : "the head does not beat the online predictor on both");
    if (gap) {
      std::printf(
          "wrote %s: over the logits it strays at most %.2g in log1p(tokens) from the "
          "fitted head on %s\n",
          f->output.c_str(), *gap, "the log's first requests");
    }
    return 0;
  };
}

}  // namespace baton::cli
