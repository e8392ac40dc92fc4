#include "baton/llm.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "baton/error.h"
#include "core/backend_registry.h"
#include "core/engine/engine.h"
#include "core/gguf/gguf_file.h"
#include "core/llm/request_output.h"
#include "core/tokenizer/tokenizer.h"
#include "models/model.h"

namespace baton {
namespace {

constexpr int32_t kMaxDefaultContext = 4096;
constexpr int32_t kDefaultContextsInPool = 4;

using Clock = RequestOutput::Clock;

}  // namespace

const char* to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kAborted:
      return "abort";
  }
  return "unknown";
}

struct LLM::Impl {
  gguf::GgufFile file;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  int32_t context_size = 0;
  std::unique_ptr<Engine> engine;

  explicit Impl(const LLMOptions& options)
      : file(gguf::GgufFile::open(options.model)),
        backend(BackendRegistry::global().create(
            options.backend.empty() ? default_backend_name() : options.backend,
            BackendOptions{.threads = options.threads})),
        model(load_model(file, *backend)),
        tokenizer(Tokenizer::create(vocabulary_from_gguf(file))) {
    const ModelConfig& c = model->config();
    if (tokenizer->vocab_size() > c.n_vocab) {
      throw Error(ErrorCategory::kInvalidModel,
                  options.model + ": the tokenizer has " + std::to_string(tokenizer->vocab_size()) +
                      " tokens but token_embd.weight only " + std::to_string(c.n_vocab) + " rows");
    }
    if (options.context_size < 0 || options.kv_block_size <= 0 || !(options.kv_cache_mib >= 0)) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "context size, KV block size and KV cache size must not be negative");
    }
    context_size = options.context_size > 0 ? options.context_size
                                            : std::min(c.n_ctx_train, kMaxDefaultContext);
    EngineConfig config;
    config.block_size = options.kv_block_size;
    config.prefix_caching = options.prefix_caching;
    config.scheduler = {.max_batch_tokens = options.max_batch_tokens, .max_seqs = options.max_seqs};
    const double bytes_per_block =
        2.0 * sizeof(float) * c.n_layer * c.n_head_kv * c.head_dim * options.kv_block_size;
    config.n_blocks = options.kv_cache_mib > 0
                          ? static_cast<int32_t>(options.kv_cache_mib * 1048576.0 / bytes_per_block)
                          : kDefaultContextsInPool * ((context_size + options.kv_block_size - 1) /
                                                      options.kv_block_size);
    if (config.n_blocks < 1) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "a KV cache of " + std::to_string(options.kv_cache_mib) +
                      " MiB holds no block of " + std::to_string(options.kv_block_size) +
                      " tokens");
    }
    // A sequence can never hold more tokens than the whole pool.
    context_size = std::min(context_size, config.n_blocks * options.kv_block_size);
    config.context_size = context_size;
    engine = std::make_unique<Engine>(*model, *backend, *tokenizer, config);
  }

  std::vector<int32_t> tokenize_prompt(const std::string& prompt, const GenerationParams& params) {
    std::vector<int32_t> tokens =
        tokenizer->encode(prompt, params.add_special, params.parse_special);
    if (tokens.size() >= static_cast<size_t>(context_size)) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "the prompt has " + std::to_string(tokens.size()) +
                      " tokens; the context holds " + std::to_string(context_size));
    }
    return tokens;
  }

  // Runs every request through the engine together; `on_text` streams the first one's text.
  std::vector<GenerationOutput> run(const std::vector<Request>& requests,
                                    const TextCallback& on_text) {
    if (on_text && !requests.empty()) {
      const GenerationParams& p = requests.front().params;
      if (p.use_beam_search || reported_completions(p) > p.n) {
        throw Error(ErrorCategory::kInvalidArgument,
                    "streaming needs the first completion as it is made; best_of > n and "
                    "use_beam_search only know it at the end");
      }
    }
    std::vector<std::vector<int32_t>> tokenized;
    for (const Request& r : requests) tokenized.push_back(tokenize_prompt(r.prompt, r.params));
    std::vector<RequestOutput> outputs;
    outputs.reserve(requests.size());
    std::map<uint64_t, size_t> index_of;
    const Clock::time_point start = Clock::now();
    try {
      for (size_t i = 0; i < requests.size(); ++i) {
        outputs.emplace_back(*tokenizer, tokenized[i], requests[i].params);
        index_of[engine->add(std::move(tokenized[i]), requests[i].params, requests[i].priority)] =
            i;
      }
      while (engine->has_work()) {
        for (const SequenceUpdate& update : engine->step()) {
          if (!update.error.empty()) throw Error(ErrorCategory::kInvalidArgument, update.error);
          const size_t index = index_of.at(update.id);
          const bool streamed = index == 0 && update.sample == 0 && on_text;
          outputs[index].apply(update, *engine, streamed ? on_text : TextCallback());
        }
      }
    } catch (...) {
      for (const auto& [id, index] : index_of) engine->abort(id);
      throw;
    }
    std::vector<GenerationOutput> results;
    for (RequestOutput& o : outputs) results.push_back(o.output(start));
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

std::vector<GenerationOutput> LLM::generate(const std::vector<Request>& requests) {
  return impl_->run(requests, {});
}

GenerationOutput LLM::generate(std::string_view prompt, const GenerationParams& params,
                               const TextCallback& on_text) {
  return std::move(impl_->run({Request{std::string(prompt), params}}, on_text).front());
}

std::vector<int32_t> LLM::tokenize(std::string_view text, bool add_special,
                                   bool parse_special) const {
  return impl_->tokenizer->encode(text, add_special, parse_special);
}

std::string LLM::detokenize(const std::vector<int32_t>& tokens) const {
  return impl_->tokenizer->decode(tokens);
}

EngineStats LLM::stats() const {
  const EngineCounters c = impl_->engine->counters();
  return EngineStats{.steps = c.steps,
                     .computed_tokens = c.computed_tokens,
                     .generated_tokens = c.generated_tokens,
                     .preemptions = c.preemptions,
                     .prefix_query_tokens = c.prefix_query_tokens,
                     .prefix_hit_tokens = c.prefix_hit_tokens,
                     .kv_blocks_total = impl_->engine->blocks().total_blocks(),
                     .kv_blocks_free = impl_->engine->blocks().available_blocks()};
}

ModelSummary LLM::summary() const {
  const ModelConfig& c = impl_->model->config();
  return ModelSummary{.architecture = c.architecture,
                      .backend = std::string(impl_->backend->name()),
                      .n_vocab = c.n_vocab,
                      .n_ctx_train = c.n_ctx_train,
                      .context_size = impl_->context_size,
                      .n_embd = c.n_embd,
                      .n_layer = c.n_layer,
                      .n_head = c.n_head,
                      .n_head_kv = c.n_head_kv,
                      .n_ff = c.n_ff};
}

}  // namespace baton
