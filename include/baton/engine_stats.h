#pragma once

// The engine's activity since the model was loaded and gauges of its state now, with one table
// of its fields (for_each_stat_field) from which summing over data-parallel replicas, the wire
// format between ranks, the server's /metrics and the Python binding all come, so that a new
// figure is one field plus one row. Plain types only, so that every layer can include it.

#include <cstdint>

namespace baton {

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

// How a field combines over data-parallel replicas.
enum class StatMerge {
  kSum,
  // Each replica learns from its own requests: averaged, weighted by the replica's
  // length_predictions (or length_head_predictions).
  kMeanOverPredictions,
  kMeanOverHeadPredictions,
  kAll,            // true only while every replica's is
  kPrefixHitRate,  // recomputed from the summed prefix tokens
};

enum class MetricType { kNone, kCounter, kGauge };

// One row of the table: the field's name (in C++, Python and the wire format), how replicas
// combine it, and how /metrics shows it: a Prometheus name and help, an optional label (fields
// that share a name are one labelled family), and whether it is also shown per replica.
struct StatField {
  const char* name;
  StatMerge merge;
  MetricType metric_type = MetricType::kNone;
  const char* metric = "";
  const char* help = "";
  const char* label = "";
  bool per_replica = false;
};

// Calls visit(StatField, member pointer) for every field of EngineStats, in declaration order.
// The wire format between ranks follows this order: a new field changes kStatsWireVersion.
template <typename Visit>
constexpr void for_each_stat_field(Visit&& visit) {
  // Short names for the rows; not `using enum`, which embedders on C++17 could not compile.
  using S = EngineStats;
  constexpr StatMerge kSum = StatMerge::kSum, kAll = StatMerge::kAll;
  constexpr StatMerge kMeanOverPredictions = StatMerge::kMeanOverPredictions;
  constexpr StatMerge kMeanOverHeadPredictions = StatMerge::kMeanOverHeadPredictions;
  constexpr StatMerge kPrefixHitRate = StatMerge::kPrefixHitRate;
  constexpr MetricType kCounter = MetricType::kCounter, kGauge = MetricType::kGauge;
  visit(StatField{"steps", kSum, kCounter, "baton_engine_steps_total", "Engine steps."}, &S::steps);
  visit(StatField{"computed_tokens", kSum, kCounter, "baton_computed_tokens_total",
                  "Tokens run through the model."},
        &S::computed_tokens);
  visit(StatField{"prompt_tokens", kSum, kCounter, "baton_prompt_tokens_total",
                  "Prompt tokens of accepted requests.", "", true},
        &S::prompt_tokens);
  visit(StatField{"generated_tokens", kSum, kCounter, "baton_generation_tokens_total",
                  "Tokens generated.", "", true},
        &S::generated_tokens);
  visit(StatField{"preemptions", kSum, kCounter, "baton_preemptions_total",
                  "Sequences preempted for lack of KV blocks.", "", true},
        &S::preemptions);
  visit(StatField{"recomputed_tokens", kSum, kCounter, "baton_recomputed_tokens_total",
                  "Tokens whose KV a preemption dropped and that were computed again."},
        &S::recomputed_tokens);
  visit(StatField{"suspensions", kSum, kCounter, "baton_suspensions_total",
                  "Running sequences sent back to wait, their KV kept, for a shorter request.", "",
                  true},
        &S::suspensions);
  visit(StatField{"length_predictions", kSum, kCounter, "baton_length_predictions_total",
                  "Finished completions whose length was predicted."},
        &S::length_predictions);
  visit(StatField{"length_prediction_error", kMeanOverPredictions, kGauge,
                  "baton_length_prediction_error_tokens",
                  "Mean absolute error of the predicted output lengths, last 512 completions."},
        &S::length_prediction_error);
  visit(StatField{"length_prediction_tau", kMeanOverPredictions, kGauge,
                  "baton_length_prediction_kendall_tau",
                  "Rank agreement of predicted and actual output lengths (Kendall's tau-b), last "
                  "512."},
        &S::length_prediction_tau);
  visit(StatField{"length_predictions_trusted", kAll, kGauge, "baton_length_predictions_trusted",
                  "1 while sjf orders by the predictions, 0 while it falls back to fcfs."},
        &S::length_predictions_trusted);
  visit(StatField{"length_head_predictions", kSum, kCounter, "baton_length_head_predictions_total",
                  "Finished completions predicted again by --length-head once their prompt was "
                  "computed."},
        &S::length_head_predictions);
  visit(StatField{"length_head_error", kMeanOverHeadPredictions, kGauge,
                  "baton_length_head_error_tokens",
                  "Mean absolute error of the length head's predictions, last 512 completions."},
        &S::length_head_error);
  visit(StatField{"length_head_tau", kMeanOverHeadPredictions, kGauge,
                  "baton_length_head_kendall_tau",
                  "Rank agreement of the length head's predictions with actual lengths, last 512."},
        &S::length_head_tau);
  visit(StatField{"prefix_query_tokens", kSum}, &S::prefix_query_tokens);
  visit(StatField{"prefix_hit_tokens", kSum, kCounter, "baton_prefix_cache_hit_tokens_total",
                  "Prompt tokens served by the prefix cache.", "", true},
        &S::prefix_hit_tokens);
  visit(StatField{"prefix_cache_hit_rate", kPrefixHitRate, kGauge, "baton_prefix_cache_hit_rate",
                  "Prompt tokens served by the prefix cache / looked up."},
        &S::prefix_cache_hit_rate);
  visit(StatField{"grammar_seconds", kSum}, &S::grammar_seconds);
  visit(StatField{"grammar_engine_seconds", kSum}, &S::grammar_engine_seconds);
  visit(StatField{"kv_blocks_total", kSum, kGauge, "baton_kv_cache_blocks_total",
                  "KV-cache blocks in the pool."},
        &S::kv_blocks_total);
  visit(StatField{"kv_blocks_free", kSum}, &S::kv_blocks_free);
  visit(StatField{"kv_blocks_used", kSum}, &S::kv_blocks_used);
  visit(StatField{"running", kSum, kGauge, "baton_num_requests_running",
                  "Sequences being computed by the engine.", "", true},
        &S::running);
  visit(StatField{"waiting", kSum, kGauge, "baton_num_requests_waiting",
                  "Sequences waiting for admission or recompute.", "", true},
        &S::waiting);
  visit(StatField{"finished_stop", kSum, kCounter, "baton_request_success_total",
                  "Finished requests by finish reason.", "finished_reason=\"stop\""},
        &S::finished_stop);
  visit(StatField{"finished_length", kSum, kCounter, "baton_request_success_total",
                  "Finished requests by finish reason.", "finished_reason=\"length\""},
        &S::finished_length);
  visit(StatField{"finished_aborted", kSum, kCounter, "baton_request_success_total",
                  "Finished requests by finish reason.", "finished_reason=\"abort\""},
        &S::finished_aborted);
  visit(StatField{"failed", kSum, kCounter, "baton_request_failure_total",
                  "Requests the engine rejected."},
        &S::failed);
}

// The version of the replica wire format's stats record: it changes whenever a field of
// EngineStats is added, removed, reordered or retyped.
inline constexpr uint32_t kStatsWireVersion = 1;

}  // namespace baton
