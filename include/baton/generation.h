#pragma once

// What a generation asks for and what it reports, shared by the engine, the sampler and the
// library facade (baton/llm.h). Plain types only, so that every layer can include it.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/engine_stats.h"
#include "baton/export.h"
#include "baton/sampling_params.h"

namespace baton {

// A new field must also travel to data-parallel replicas: core/api/replica_wire.cpp.
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
  // A grammar in llama.cpp's GBNF that the output must follow (core/serving/sampling/grammar.h);
  // empty: none. Sampling only, not beam search.
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

}  // namespace baton
