#include "baton/llm.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "baton/error.h"
#include "core/api/loaded_model.h"
#include "core/api/perplexity.h"
#include "core/api/request_output.h"
#include "core/serving/engine/engine.h"
#include "models/lora/lora_adapter.h"

namespace baton {
namespace {

using Clock = RequestOutput::Clock;

// LLM drives one engine in the caller's thread; routing requests over replicas needs AsyncLLM.
const LLMOptions& one_replica(const LLMOptions& options) {
  if (options.parallel.data_parallel != 1) {
    throw Error(ErrorCategory::kInvalidArgument,
                "LLM runs one engine replica: data parallelism (--data-parallel) serves through "
                "AsyncLLM, as baton serve does");
  }
  return options;
}

}  // namespace

struct LLM::Impl {
  LoadedModel loaded;
  Engine engine;
  FinishCounts finished;
  std::map<std::string, LoraOptions> adapters;  // by name: what perplexity reads again

  explicit Impl(const LLMOptions& options)
      : loaded(one_replica(options)),
        engine(*loaded.model, *loaded.backend, *loaded.tokenizer, loaded.engine_config) {
    for (const LoraOptions& adapter : options.lora) adapters[adapter.name] = adapter;
  }

  // Runs every request through the engine together; `on_text` streams the first one's text.
  std::vector<GenerationOutput> run(const std::vector<Request>& requests,
                                    const TextCallback& on_text, const StepCallback& on_step = {}) {
    if (on_text && !requests.empty()) {
      const GenerationParams& p = requests.front().params;
      if (p.use_beam_search || reported_completions(p) > p.n) {
        throw Error(ErrorCategory::kInvalidArgument,
                    "streaming needs the first completion as it is made; best_of > n and "
                    "use_beam_search only know it at the end");
      }
    }
    std::vector<std::vector<int32_t>> tokenized;
    for (const Request& r : requests) {
      tokenized.push_back(loaded.tokenize_prompt(r));
    }
    std::vector<RequestOutput> outputs;
    outputs.reserve(requests.size());
    std::map<uint64_t, size_t> index_of;
    std::vector<bool> reported(requests.size());
    const Clock::time_point start = Clock::now();
    const RequestOutput::AbortFn abort = [this](uint64_t id, int32_t sample) {
      if (sample == RequestOutput::kAllSamples) {
        engine.abort(id);
      } else {
        engine.abort_sample(id, sample);
      }
    };
    try {
      for (size_t i = 0; i < requests.size(); ++i) {
        outputs.emplace_back(*loaded.tokenizer, tokenized[i], requests[i].params);
        index_of[engine.add(std::move(tokenized[i]), requests[i].params, requests[i].priority)] = i;
      }
      while (engine.has_work()) {
        std::vector<size_t> finished_now;
        for (const SequenceUpdate& update : engine.step()) {
          if (!update.error.empty()) throw Error(ErrorCategory::kInvalidArgument, update.error);
          const size_t index = index_of.at(update.id);
          const bool streamed = index == 0 && update.sample == 0 && on_text;
          outputs[index].apply(update, abort, streamed ? on_text : TextCallback());
          if (!reported[index] && outputs[index].done()) {
            reported[index] = true;
            finished_now.push_back(index);
          }
        }
        if (on_step) on_step(finished_now);
      }
    } catch (...) {
      for (const auto& [id, index] : index_of) engine.abort(id);
      throw;
    }
    std::vector<GenerationOutput> results;
    for (RequestOutput& o : outputs) {
      results.push_back(o.output(start));
      finished.count(results.back());
    }
    return results;
  }
};

LLM::LLM(const LLMOptions& options) : impl_(std::make_unique<Impl>(options)) {}
LLM::~LLM() = default;
LLM::LLM(LLM&&) noexcept = default;
LLM& LLM::operator=(LLM&&) noexcept = default;

std::vector<GenerationOutput> LLM::generate(const std::vector<std::string>& prompts,
                                            const GenerationParams& params) {
  std::vector<Request> requests;
  for (const std::string& prompt : prompts) requests.push_back({prompt, params});
  return impl_->run(requests, {});
}

std::vector<GenerationOutput> LLM::generate(const std::vector<Request>& requests,
                                            const StepCallback& on_step) {
  return impl_->run(requests, {}, on_step);
}

GenerationOutput LLM::generate(std::string_view prompt, const GenerationParams& params,
                               const TextCallback& on_text) {
  return std::move(impl_->run({Request{std::string(prompt), params}}, on_text).front());
}

std::vector<int32_t> LLM::tokenize(std::string_view text, bool add_special,
                                   bool parse_special) const {
  return impl_->loaded.tokenizer->encode(text, add_special, parse_special);
}

std::string LLM::detokenize(const std::vector<int32_t>& tokens) const {
  return impl_->loaded.tokenizer->decode(tokens);
}

std::string LLM::token_text(int32_t token) const {
  return impl_->loaded.tokenizer->token_to_piece(token, /*render_special=*/true);
}

EngineStats LLM::stats() const {
  return engine_stats(impl_->engine, impl_->finished);
}

ChatPrompt LLM::chat_prompt(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                            const std::string& tools) const {
  return impl_->loaded.chat.format(messages, add_generation_prompt, tools);
}

bool LLM::chat_template_renders_tools() const {
  return impl_->loaded.chat.renders_tools();
}

ModelSummary LLM::summary() const {
  return impl_->loaded.summary();
}

PerplexityReport LLM::perplexity(std::string_view text, const PerplexityParams& params) {
  PerplexityOptions options{.n_ctx = params.context, .step_tokens = params.batch_tokens};
  if (!params.lora.empty()) {
    const auto adapter = impl_->adapters.find(params.lora);
    if (adapter == impl_->adapters.end()) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "perplexity: no LoRA adapter named '" + params.lora + "' is loaded");
    }
    options.lora = read_lora_adapter(adapter->second, impl_->loaded.model->config());
  }
  const PerplexityResult r = perplexity_of_text(impl_->loaded, text, options);
  return {.context = r.n_ctx,
          .tokens = r.n_tokens,
          .chunks = r.n_chunks,
          .scored = r.n_scored,
          .perplexity = r.ppl,
          .standard_error = r.ppl_error};
}

void LLM::load_lora_adapter(const LoraOptions& adapter) {
  impl_->engine.add_lora(read_lora_adapter(adapter, impl_->loaded.model->config()));
  impl_->adapters[adapter.name] = adapter;
}

void LLM::unload_lora_adapter(const std::string& name) {
  impl_->engine.remove_lora(name);
  impl_->adapters.erase(name);
}

}  // namespace baton
