#pragma once

// Offline serving throughput: a fixed set of requests through the continuous-batching engine at
// several concurrency caps, compared with running them one at a time.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/llm_options.h"

namespace baton {

struct OfflineThroughputOptions {
  std::string model;
  std::string backend;
  int32_t threads = 0;
  int32_t requests = 16;
  int32_t prompt_tokens = 100;  // random token ids
  int32_t output_tokens = 64;   // exactly this many (end-of-text is ignored)
  std::vector<int32_t> concurrency = {1, 4, 16};
  uint64_t seed = 0;
  KvCacheType kv_cache_dtype = KvCacheType::kF32;
  bool repack_weights = true;  // BackendOptions::prepack_weights
  // A GBNF grammar every request's output must follow (structured outputs); empty: none. With
  // one, a request also ends where the grammar allows nothing more.
  std::string grammar;
  GrammarMasks grammar_masks = GrammarMasks::kAuto;  // LLMOptions::grammar_masks
};

struct OfflineThroughputResult {
  int32_t concurrency = 1;
  double seconds = 0;
  double output_tokens_per_s = 0;
  double requests_per_s = 0;
  double mean_ttft_s = 0;    // submission to first token
  double mean_e2e_s = 0;     // submission to last token
  double grammar_share = 0;  // of the run's time, spent on grammar masks and moves
  // Of the run's time, what the engine's thread spent on grammars or waited for their masks.
  double grammar_engine_share = 0;
};

// One result per concurrency cap, in the order given.
std::vector<OfflineThroughputResult> run_offline_throughput(const OfflineThroughputOptions& o);

}  // namespace baton
