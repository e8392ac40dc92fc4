#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tools/bench_serve/latency_stats.h"
#include "tools/bench_serve/load_generator.h"

namespace baton::bench_serve {

// What was run, echoed in the report so that saved results say what they measured.
struct RunDescription {
  std::string url;
  std::string endpoint;
  std::string model;
  bool stream = false;
  int32_t concurrency = 1;
  double request_rate = 0;  // infinite: all requests at once
};

// The figures of a run, with the meanings of vLLM's benchmark_serving: rates are over the
// run's wall time, TPOT is per request (e2e - TTFT) / (output tokens - 1), ITL pools every
// gap between text chunks of every request. Latencies are of completed requests only.
struct BenchReport {
  RunDescription run;
  int64_t completed = 0;
  int64_t failed = 0;
  std::string first_error;  // of the first failed request, in prompt order
  double duration_s = 0;
  double requests_per_s = 0;
  double output_tokens_per_s = 0;
  double total_tokens_per_s = 0;  // prompt + output, prompt as the server counted it
  int64_t total_prompt_tokens = 0;
  int64_t total_output_tokens = 0;
  std::optional<double> mean_prompt_tokens;  // none when the server reported no usage
  double mean_output_tokens = 0;
  LatencySummary ttft_ms;  // TTFT, TPOT and ITL are measured only when streaming
  LatencySummary tpot_ms;
  LatencySummary itl_ms;
  LatencySummary e2e_ms;
  // What the server's /metrics counted during the run (a Baton server only).
  std::optional<int64_t> preemptions;
  std::optional<int64_t> recomputed_tokens;
  std::optional<int64_t> suspensions;
};

BenchReport make_report(const RunDescription& run, const LoadResult& load);

// A header line and two Markdown tables: throughput, then latency percentiles.
std::string format_table(const BenchReport& report);

nlohmann::json report_json(const BenchReport& report);

}  // namespace baton::bench_serve
