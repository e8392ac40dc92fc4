#include "core/api/perplexity.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "baton/error.h"
#include "core/serving/engine/step_runner.h"
#include "core/serving/kv_cache/paged_kv_cache.h"
#include "models/lora/lora_slots.h"

namespace baton {
namespace {

constexpr int32_t kKvBlockSize = 16;

// -log softmax(logits)[target], accumulated in double.
double negative_log_likelihood(std::span<const float> logits, int32_t target) {
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (float l : logits) total += std::exp(static_cast<double>(l) - max_logit);
  return std::log(total) - (static_cast<double>(logits[target]) - max_logit);
}

void check_options(const ModelConfig& config, const PerplexityOptions& options, size_t n_tokens) {
  const int32_t n_ctx = options.n_ctx;
  if (n_ctx < kMinPerplexityContext) {
    throw Error(ErrorCategory::kInvalidArgument,
                "a perplexity context of " + std::to_string(n_ctx) +
                    " tokens is below the minimum of " + std::to_string(kMinPerplexityContext));
  }
  if (config.n_ctx_train > 0 && n_ctx > config.n_ctx_train) {
    throw Error(ErrorCategory::kInvalidArgument,
                "a perplexity context of " + std::to_string(n_ctx) +
                    " tokens exceeds the model's trained context of " +
                    std::to_string(config.n_ctx_train));
  }
  if (options.step_tokens < 1) {
    throw Error(
        ErrorCategory::kInvalidArgument,
        "perplexity steps of " + std::to_string(options.step_tokens) + " tokens: need at least 1");
  }
  if (n_tokens < static_cast<size_t>(n_ctx)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "the text has " + std::to_string(n_tokens) + " tokens; one chunk of context " +
                    std::to_string(n_ctx) + " needs at least " + std::to_string(n_ctx));
  }
}

}  // namespace

PerplexityResult perplexity(const Model& model, Backend& backend, std::span<const int32_t> tokens,
                            const PerplexityOptions& options, std::optional<int32_t> bos,
                            const PerplexityProgress& progress) {
  const ModelConfig& c = model.config();
  check_options(c, options, tokens.size());
  // Scored targets are read as logit indices before the model sees them as inputs.
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.n_vocab) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "token " + std::to_string(tokens[i]) + " at index " + std::to_string(i) +
                      " is outside the model's vocabulary of " + std::to_string(c.n_vocab));
    }
  }
  const int32_t n_ctx = options.n_ctx;
  const PagedKvCache cache({.n_layers = c.n_layer,
                            .n_kv_heads = c.n_head_kv,
                            .head_dim = c.head_dim,
                            .block_size = kKvBlockSize,
                            .n_blocks = (n_ctx + kKvBlockSize - 1) / kKvBlockSize,
                            .dtype = options.kv_dtype},
                           backend);
  PerplexityResult result{.n_ctx = n_ctx,
                          .n_tokens = static_cast<int64_t>(tokens.size()),
                          .n_chunks = static_cast<int32_t>(tokens.size() / n_ctx)};
  std::unique_ptr<LoraSlots> lora;
  if (options.lora) {
    lora = std::make_unique<LoraSlots>(backend, c, 1, options.lora->rank(), options.lora_dtype);
    lora->load(0, *options.lora);
  }
  const int32_t first = n_ctx / 2;  // the first half is context only
  double nll = 0, nll2 = 0;
  for (int32_t chunk = 0; chunk < result.n_chunks; ++chunk) {
    std::vector<int32_t> ids(tokens.begin() + int64_t{chunk} * n_ctx,
                             tokens.begin() + int64_t{chunk + 1} * n_ctx);
    const std::vector<int32_t> targets(ids.begin() + 1, ids.end());  // before BOS replaces ids[0]
    if (bos) ids[0] = *bos;
    // Told the context is n_ctx, as llama-perplexity's model is, whatever the cache rounds up to.
    SoloSequence sequence(model, backend, cache, n_ctx);
    if (lora) sequence.use_lora(*lora, 0);
    for (int32_t start = 0; start < n_ctx; start += options.step_tokens) {
      const int32_t count = std::min(options.step_tokens, n_ctx - start);
      // Scored positions in this step: first .. n_ctx-2, relative to `start`.
      std::vector<int32_t> rows;
      for (int32_t pos = std::max(start, first); pos < std::min(start + count, n_ctx - 1); ++pos) {
        rows.push_back(pos - start);
      }
      const std::vector<float> logits =
          sequence.step(std::span<const int32_t>(ids).subspan(start, count), rows);
      for (size_t r = 0; r < rows.size(); ++r) {
        const double v = negative_log_likelihood(
            std::span<const float>(logits).subspan(r * c.n_vocab, c.n_vocab),
            targets[start + rows[r]]);
        nll += v;
        nll2 += v * v;
      }
      result.n_scored += static_cast<int64_t>(rows.size());
    }
    result.running_ppl.push_back(std::exp(nll / static_cast<double>(result.n_scored)));
    if (progress) progress(chunk, result.running_ppl.back());
  }
  const auto n = static_cast<double>(result.n_scored);
  result.mean_nll = nll / n;
  result.ppl = std::exp(result.mean_nll);
  // The NLL's variance, then the standard error of its mean; d exp(x) = exp(x) dx.
  const double variance = nll2 / n - result.mean_nll * result.mean_nll;
  result.ppl_error = variance > 0 && n > 1 ? std::sqrt(variance / (n - 1)) * result.ppl : 0.0;
  return result;
}

PerplexityResult perplexity_of_text(const LoadedModel& loaded, std::string_view text,
                                    const PerplexityOptions& options,
                                    const PerplexityProgress& progress) {
  const Tokenizer& tokenizer = *loaded.tokenizer;
  const std::vector<int32_t> tokens = tokenizer.encode(text, true, false);
  const bool adds_bos = tokenizer.vocabulary().add_bos && tokenizer.bos() >= 0;
  PerplexityOptions with_cache = options;
  with_cache.kv_dtype = kv_cache_dtype(loaded.engine_config.options.kv_cache_dtype);
  with_cache.lora_dtype = lora_dtype(loaded.engine_config.options.lora_dtype);
  return perplexity(*loaded.model, *loaded.backend, tokens, with_cache,
                    adds_bos ? std::optional(tokenizer.bos()) : std::nullopt, progress);
}

PerplexityResult perplexity_of_file(const LoadedModel& loaded,
                                    const std::filesystem::path& text_file,
                                    const PerplexityOptions& options,
                                    const PerplexityProgress& progress) {
  std::ifstream in(text_file, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) {
    throw Error(ErrorCategory::kInvalidArgument,
                "cannot read the text file '" + text_file.string() + "'");
  }
  const std::vector<LoraOptions>& adapters = loaded.engine_config.options.lora;
  if (adapters.size() > 1) {
    throw Error(
        ErrorCategory::kInvalidArgument,
        "perplexity applies one LoRA adapter at most, got " + std::to_string(adapters.size()));
  }
  PerplexityOptions with_adapter = options;
  if (!adapters.empty()) {
    with_adapter.lora = read_lora_adapter(adapters[0], loaded.model->config());
  }
  return perplexity_of_text(loaded, text.str(), with_adapter, progress);
}

}  // namespace baton
