#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "baton/async_llm.h"

namespace baton::serve {

// A Prometheus histogram: cumulative counts of observations at or under each bucket bound.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // The _bucket, _sum and _count lines of `name`.
  void render(std::string& out, const std::string& name) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; the last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// What /metrics reports: latency histograms of finished requests, HTTP answers by status, and
// the engine's counters and gauges at the time of the scrape. Thread-safe.
class ServerMetrics {
 public:
  ServerMetrics();

  // Takes a request's final event: its timings when it finished with an output, and its
  // requests and generated tokens under its LoRA adapter (empty: the base model).
  void observe(const StreamEvent& final_event, const std::string& adapter = "");
  void count_response(int status);
  // Requests handed to the engine client, and those of them it refused (queue full, shutting
  // down, or refused by the engine when added). Every received request is, in the end, counted
  // once more: rejected here, or finished, aborted or failed in the engine's counters.
  void count_received(int64_t requests);
  void count_rejected(int64_t requests);
  // The Prometheus text exposition (format 0.0.4). `stats` sums over the engine replicas;
  // with several, each one's figures follow, labelled by replica.
  std::string render(const EngineStats& stats, const std::vector<EngineStats>& replicas,
                     int32_t in_flight) const;

 private:
  mutable std::mutex mutex_;
  Histogram ttft_, tpot_, e2e_, queue_;
  Histogram prompt_tokens_, output_tokens_;
  std::map<int, uint64_t> responses_by_status_;
  uint64_t received_ = 0, rejected_ = 0;
  struct AdapterCounts {
    uint64_t requests = 0, generated_tokens = 0;
  };
  std::map<std::string, AdapterCounts> by_adapter_;  // LoRA adapters that served a request
};

}  // namespace baton::serve
