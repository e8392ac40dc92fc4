#include "baton/llm.h"

#include <algorithm>
#include <chrono>

#include "baton/error.h"
#include "core/backend_registry.h"
#include "core/gguf/gguf_file.h"
#include "core/llm/step_runner.h"
#include "core/sampling/sampler.h"
#include "core/tokenizer/tokenizer.h"
#include "models/model.h"

namespace baton {
namespace {

constexpr int32_t kMaxDefaultContext = 4096;
// Long prompts are prefilled in chunks so activation memory stays bounded.
constexpr int32_t kPrefillChunk = 512;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Returns a sequence's blocks to the pool however generation ends.
class SequenceGuard {
 public:
  explicit SequenceGuard(PagedKvCache& cache) : cache_(cache) {}
  ~SequenceGuard() { cache_.release(blocks); }
  SequenceBlocks blocks;

 private:
  PagedKvCache& cache_;
};

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
  std::unique_ptr<PagedKvCache> cache;
  int32_t context_size = 0;

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
    if (options.context_size < 0 || options.kv_block_size <= 0) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "context size and KV block size must be positive");
    }
    context_size = options.context_size > 0 ? options.context_size
                                            : std::min(c.n_ctx_train, kMaxDefaultContext);
    KvCacheShape shape{.n_layers = c.n_layer,
                       .n_kv_heads = c.n_head_kv,
                       .head_dim = c.head_dim,
                       .block_size = options.kv_block_size,
                       .n_blocks = 0};
    shape.n_blocks = (context_size + shape.block_size - 1) / shape.block_size;
    cache = std::make_unique<PagedKvCache>(shape, *backend);
  }

  // Runs the tokens [first, first + count) of `tokens` for one sequence and returns the logits
  // of the last of them.
  std::vector<float> step(SequenceBlocks& sequence, const std::vector<int32_t>& tokens,
                          size_t first, size_t count) {
    const int32_t end = static_cast<int32_t>(first + count);
    if (!cache->reserve(sequence, end)) {
      throw Error(ErrorCategory::kOutOfMemory,
                  "the KV cache has no room for " + std::to_string(end) + " tokens");
    }
    auto layout = std::make_shared<PagedBatch>();
    layout->block_size = cache->shape().block_size;
    layout->block_tables = {sequence.block_table};
    StepInput input;
    for (size_t i = first; i < first + count; ++i) {
      input.tokens.push_back(tokens[i]);
      layout->token_seq.push_back(0);
      layout->token_pos.push_back(static_cast<int32_t>(i));
    }
    input.layout = std::move(layout);
    input.logit_rows = {static_cast<int32_t>(count) - 1};
    std::vector<float> logits = run_step(*model, *backend, *cache, input);
    sequence.length = end;
    return logits;
  }

  GenerationOutput generate(std::string_view prompt, const GenerationParams& params,
                            const TextCallback& on_text) {
    if (params.max_tokens < 0) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "max_tokens must not be negative, got " + std::to_string(params.max_tokens));
    }
    GenerationOutput out;
    out.prompt_tokens = tokenizer->encode(prompt, params.add_special, params.parse_special);
    if (out.prompt_tokens.empty()) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "the prompt is empty and the model adds no BOS token to start from");
    }
    if (out.prompt_tokens.size() >= static_cast<size_t>(context_size)) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "the prompt has " + std::to_string(out.prompt_tokens.size()) +
                      " tokens; the context holds " + std::to_string(context_size));
    }
    Sampler sampler(params.sampling);
    IncrementalDetokenizer detokenizer(*tokenizer);
    for (int32_t id : out.prompt_tokens) detokenizer.push(id);  // spacing continues the prompt

    const Clock::time_point start = Clock::now();
    SequenceGuard sequence(*cache);
    std::vector<int32_t> history = out.prompt_tokens;
    std::vector<float> logits;
    for (size_t first = 0; first < history.size(); first += kPrefillChunk) {
      logits = step(sequence.blocks, history, first,
                    std::min<size_t>(kPrefillChunk, history.size() - first));
    }
    out.prompt_seconds = seconds_since(start);
    const Clock::time_point decode_start = Clock::now();

    out.finish_reason = FinishReason::kLength;
    while (static_cast<int32_t>(out.tokens.size()) < params.max_tokens) {
      const int32_t token = sampler.sample(logits, history);
      out.tokens.push_back(token);
      history.push_back(token);
      if (!params.ignore_eos && tokenizer->is_end_of_generation(token)) {
        out.finish_reason = FinishReason::kStop;
        break;
      }
      const std::string piece = detokenizer.push(token);
      out.text += piece;
      if (on_text && !piece.empty() && !on_text(piece)) {
        out.finish_reason = FinishReason::kAborted;
        break;
      }
      if (static_cast<int32_t>(out.tokens.size()) == params.max_tokens ||
          history.size() >= static_cast<size_t>(context_size)) {
        break;
      }
      logits = step(sequence.blocks, history, history.size() - 1, 1);
    }
    const std::string rest = detokenizer.flush();
    out.text += rest;
    if (on_text && !rest.empty()) on_text(rest);
    out.generation_seconds = seconds_since(decode_start);
    return out;
  }
};

LLM::LLM(const LLMOptions& options) : impl_(std::make_unique<Impl>(options)) {}
LLM::~LLM() = default;
LLM::LLM(LLM&&) noexcept = default;
LLM& LLM::operator=(LLM&&) noexcept = default;

std::vector<GenerationOutput> LLM::generate(const std::vector<std::string>& prompts,
                                            const GenerationParams& params) {
  std::vector<GenerationOutput> outputs;
  outputs.reserve(prompts.size());
  for (const std::string& prompt : prompts) outputs.push_back(impl_->generate(prompt, params, {}));
  return outputs;
}

GenerationOutput LLM::generate(std::string_view prompt, const GenerationParams& params,
                               const TextCallback& on_text) {
  return impl_->generate(prompt, params, on_text);
}

std::vector<int32_t> LLM::tokenize(std::string_view text, bool add_special,
                                   bool parse_special) const {
  return impl_->tokenizer->encode(text, add_special, parse_special);
}

std::string LLM::detokenize(const std::vector<int32_t>& tokens) const {
  return impl_->tokenizer->decode(tokens);
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
