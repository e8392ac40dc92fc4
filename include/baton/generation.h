#pragma once

// What a generation asks for and what it reports, shared by the engine, the sampler and the
// library facade (baton/llm.h). Plain types only, so that every layer can include it.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/sampling_params.h"

namespace baton {

// A new field must also travel to data-parallel replicas: core/llm/replica_wire.cpp.
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
  // The LoRA adapter to generate with, by the name it was loaded under; empty: the base model.
  std::string lora;
  // The client's estimate of the tokens this request will generate (0: none), taken in place of
  // the engine's own prediction by length-aware scheduling (docs/scheduling.md).
  int32_t expected_tokens = 0;
  // A grammar in llama.cpp's GBNF that the output must follow (core/sampling/grammar.h); empty:
  // none. Sampling only, not beam search.
  std::string grammar;
};

enum class FinishReason {
  kStop,     // the model produced an end-of-generation token
  kLength,   // max_tokens or the context size was reached
  kAborted,  // the streaming callback asked to stop
};

BATON_API const char* to_string(FinishReason reason);

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;  // natural log of the probability, <= 0
};

// One generated token's log-probability and the most likely alternatives at its position.
struct TokenLogprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;  // GenerationParams::logprobs entries, most likely first
};

// Engine activity since the model was loaded, and gauges of its state now.
struct EngineStats {
  int64_t steps = 0;
  int64_t computed_tokens = 0;  // tokens run through the model (prefill and decode)
  int64_t prompt_tokens = 0;    // of every request the engine accepted
  int64_t generated_tokens = 0;
  int64_t preemptions = 0;        // sequences evicted from the KV pool and recomputed later
  int64_t recomputed_tokens = 0;  // tokens those preemptions dropped and computed again
  int64_t suspensions = 0;        // running sequences that waited again, KV kept, for shorter ones
  // Length-aware scheduling (docs/scheduling.md): finished completions whose output length was
  // predicted, and over the last 512 of them the mean absolute error in tokens and the rank
  // agreement with the actual lengths (Kendall's tau-b); whether sjf trusts the predictions.
  int64_t length_predictions = 0;
  double length_prediction_error = 0;
  double length_prediction_tau = 0;
  bool length_predictions_trusted = true;
  // The same for the length head's predictions once prompts are computed (LLMOptions::
  // length_head); those above are made at arrival, and they alone decide the trust.
  int64_t length_head_predictions = 0;
  double length_head_error = 0;
  double length_head_tau = 0;
  int64_t prefix_query_tokens = 0;   // prompt tokens looked up in the prefix cache
  int64_t prefix_hit_tokens = 0;     // of which served from cached blocks
  double prefix_cache_hit_rate = 0;  // prefix_hit_tokens / prefix_query_tokens
  // Time spent on grammars (structured outputs): token masks and matcher moves, wherever they
  // ran. Masks are computed on a thread of their own beside the model's step; what the engine's
  // thread paid is its own grammar work plus its waits for those masks.
  double grammar_seconds = 0;
  double grammar_engine_seconds = 0;
  int32_t kv_blocks_total = 0;
  int32_t kv_blocks_free = 0;  // free or holding only cached prefixes
  int32_t kv_blocks_used = 0;  // held by live sequences
  int32_t running = 0;         // sequences being computed (a request's samples count apiece)
  int32_t waiting = 0;         // sequences queued for admission or recompute
  // Finished requests by their (first completion's) finish reason, and rejected ones.
  int64_t finished_stop = 0;
  int64_t finished_length = 0;
  int64_t finished_aborted = 0;
  int64_t failed = 0;
};

}  // namespace baton
