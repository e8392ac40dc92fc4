#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tools/bench_serve/load_generator.h"

namespace baton::bench_serve {

// Counters a Baton server keeps in /metrics that a run's client cannot see for itself.
struct ServerCounters {
  int64_t preemptions = 0;
  int64_t recomputed_tokens = 0;
  std::optional<int64_t> suspensions;  // none from a server older than sjf's overtaking
};

// The counters in a Prometheus text page; none when the page lacks them (not a Baton server).
std::optional<ServerCounters> parse_server_counters(const std::string& metrics_page);

// GET /metrics; none when the server has no such page or it lacks the counters.
std::optional<ServerCounters> scrape_server_counters(const LoadOptions& options);

}  // namespace baton::bench_serve
