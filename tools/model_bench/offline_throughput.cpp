#include "tools/model_bench/offline_throughput.h"

#include <chrono>
#include <random>

#include "baton/error.h"
#include "baton/llm.h"

namespace baton {
namespace {

// `count` prompts of exactly prompt_tokens random ids drawn with `seed`, skipping the first ids
// (control and byte tokens in SentencePiece vocabularies).
std::vector<Request> random_requests(int32_t n_vocab, int32_t count, int32_t prompt_tokens,
                                     uint64_t seed, const GenerationParams& params) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick(std::min(300, n_vocab - 1), n_vocab - 1);
  std::vector<Request> requests;
  for (int32_t r = 0; r < count; ++r) {
    Request request{.params = params};
    for (int32_t i = 0; i < prompt_tokens; ++i) request.prompt_tokens.push_back(pick(rng));
    requests.push_back(std::move(request));
  }
  return requests;
}

}  // namespace

std::vector<OfflineThroughputResult> run_offline_throughput(const OfflineThroughputOptions& o) {
  if (o.requests <= 0 || o.prompt_tokens <= 0 || o.output_tokens <= 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "requests, prompt tokens and output tokens must be positive");
  }
  GenerationParams params;
  params.sampling.temperature = 0;
  params.max_tokens = o.output_tokens;
  params.ignore_eos = true;
  params.grammar = o.grammar;
  std::vector<OfflineThroughputResult> results;
  for (int32_t concurrency : o.concurrency) {
    if (concurrency <= 0) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "concurrency must be positive, got " + std::to_string(concurrency));
    }
    LLM llm(LLMOptions{.model = o.model,
                       .backend = o.backend,
                       .threads = o.threads,
                       .max_seqs = concurrency,
                       .kv_cache_dtype = o.kv_cache_dtype,
                       .repack_weights = o.repack_weights,
                       .grammar_masks = o.grammar_masks});
    const int32_t n_vocab = llm.summary().n_vocab;
    const std::vector<Request> requests =
        random_requests(n_vocab, o.requests, o.prompt_tokens, o.seed, params);
    // Untimed warm-up with steps of the timed run's shape: the first step of each size takes
    // fresh memory for its activations (page faults cost seconds on some hosts), later ones
    // reuse it. Other prompts, so that the timed run finds nothing in the prefix cache.
    llm.generate(random_requests(n_vocab, std::min(concurrency, o.requests), o.prompt_tokens,
                                 o.seed + 1, params));
    const EngineStats before = llm.stats();
    const auto start = std::chrono::steady_clock::now();
    const std::vector<GenerationOutput> outputs = llm.generate(requests);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const EngineStats after = llm.stats();
    OfflineThroughputResult r{
        .concurrency = concurrency,
        .seconds = seconds,
        .grammar_share = (after.grammar_seconds - before.grammar_seconds) / seconds,
        .grammar_engine_share =
            (after.grammar_engine_seconds - before.grammar_engine_seconds) / seconds};
    int64_t tokens = 0;
    for (const GenerationOutput& out : outputs) {
      tokens += static_cast<int64_t>(out.tokens.size());
      r.mean_ttft_s += out.prompt_seconds / outputs.size();
      r.mean_e2e_s += (out.prompt_seconds + out.generation_seconds) / outputs.size();
    }
    r.output_tokens_per_s = tokens / seconds;
    r.requests_per_s = outputs.size() / seconds;
    results.push_back(r);
  }
  return results;
}

}  // namespace baton
