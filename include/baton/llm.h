#pragma once

// Baton's C++ library API. Errors are thrown as baton::Error (see baton/error.h) with a category
// and a message naming the bad value.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "baton/sampling_params.h"

namespace baton {

struct LLMOptions {
  std::string model;         // path to a GGUF file
  std::string backend;       // "" = $BATON_BACKEND or "cpu"
  int32_t threads = 0;       // CPU threads; 0 = all cores
  int32_t context_size = 0;  // tokens per sequence; 0 = the model's trained context, capped at 4096
  int32_t kv_block_size = 16;       // tokens per KV-cache block
  double kv_cache_mib = 0;          // KV pool size; 0 = room for 4 full contexts
  int32_t max_batch_tokens = 2048;  // tokens computed per engine step (prefill chunks + decodes)
  int32_t max_seqs = 64;            // sequences per engine step
  bool prefix_caching = true;       // reuse KV blocks of identical prompt prefixes
};

struct GenerationParams {
  SamplingParams sampling;
  int32_t max_tokens = 128;       // new tokens at most; generation also stops at the context end
  bool add_special = true;        // BOS/EOS as the model's tokenizer metadata says
  bool parse_special = false;     // "<s>" in the prompt becomes the control token, not text
  bool ignore_eos = false;        // keep generating past end-of-generation tokens
  std::vector<std::string> stop;  // text ends before the first of these; it is not returned
  std::vector<int32_t> stop_token_ids;  // more tokens that end generation, as EOS does
  int32_t n = 1;                        // completions returned per prompt
  // Samples generated per prompt, of which the n with the highest cumulative logprob are
  // returned; 0 means n. Sampling only: beam search keeps beam_width beams instead.
  int32_t best_of = 0;
  // Top tokens reported per generated token (0: none, at most 20), from the model's own
  // distribution: the log-softmax of the raw logits, before penalties, temperature and cut-offs.
  int32_t logprobs = 0;
  // Deterministic beam search instead of sampling: returns the n best of beam_width beams,
  // ranked by cumulative_logprob / generated_tokens^length_penalty.
  bool use_beam_search = false;
  int32_t beam_width = 4;
  float length_penalty = 1.0f;
};

// One prompt with its own parameters, for batches whose requests differ.
struct Request {
  std::string prompt;
  GenerationParams params;
  int32_t priority = 0;  // higher is scheduled first when the engine is busy
};

enum class FinishReason {
  kStop,     // the model produced an end-of-generation token
  kLength,   // max_tokens or the context size was reached
  kAborted,  // the streaming callback asked to stop
};

const char* to_string(FinishReason reason);

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;  // natural log of the probability, <= 0
};

// One generated token's log-probability and the most likely alternatives at its position.
struct TokenLogprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;  // GenerationParams::logprobs entries, most likely first
};

// One of a request's n completions.
struct Completion {
  std::string text;             // the generated continuation (the prompt is not repeated)
  std::vector<int32_t> tokens;  // generated token ids
  FinishReason finish_reason = FinishReason::kLength;
  double cumulative_logprob = 0;        // sum of the tokens' log-probabilities
  std::vector<TokenLogprobs> logprobs;  // one per token when GenerationParams::logprobs > 0
};

struct GenerationOutput {
  // The first (best, for best_of and beam search) completion, repeated here for the common n=1
  // case.
  std::string text;
  std::vector<int32_t> tokens;
  FinishReason finish_reason = FinishReason::kLength;
  std::vector<Completion> completions;  // all n, in order (by score for best_of and beams)
  std::vector<int32_t> prompt_tokens;   // the prompt as tokenized, BOS included
  double prompt_seconds = 0;            // from submission to the first token (queueing and prefill)
  double generation_seconds = 0;        // from the first token to the last
};

// Engine activity since the model was loaded.
struct EngineStats {
  int64_t steps = 0;
  int64_t computed_tokens = 0;  // tokens run through the model (prefill and decode)
  int64_t generated_tokens = 0;
  int64_t preemptions = 0;          // sequences evicted from the KV pool and recomputed later
  int64_t prefix_query_tokens = 0;  // prompt tokens looked up in the prefix cache
  int64_t prefix_hit_tokens = 0;    // of which served from cached blocks
  int32_t kv_blocks_total = 0;
  int32_t kv_blocks_free = 0;  // free or holding only cached prefixes
};

struct ModelSummary {
  std::string architecture;
  std::string backend;
  int32_t n_vocab, n_ctx_train, context_size, n_embd, n_layer, n_head, n_head_kv, n_ff;
};

// Receives each piece of generated text as soon as it is complete UTF-8; return false to stop.
using TextCallback = std::function<bool(std::string_view text)>;

// A loaded model on one backend, ready to generate. generate() runs every prompt it is given
// through one continuous-batching engine. Not thread-safe: one generate call at a time. A
// streaming callback receives the first completion's text; it cannot be combined with best_of > n
// or beam search, whose first completion is only known at the end.
class LLM {
 public:
  explicit LLM(const LLMOptions& options);
  ~LLM();
  LLM(LLM&&) noexcept;
  LLM& operator=(LLM&&) noexcept;

  std::vector<GenerationOutput> generate(const std::vector<std::string>& prompts,
                                         const GenerationParams& params);
  std::vector<GenerationOutput> generate(const std::vector<Request>& requests);
  GenerationOutput generate(std::string_view prompt, const GenerationParams& params,
                            const TextCallback& on_text = {});

  std::vector<int32_t> tokenize(std::string_view text, bool add_special, bool parse_special) const;
  std::string detokenize(const std::vector<int32_t>& tokens) const;
  ModelSummary summary() const;
  EngineStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton
