#include "tools/bench_serve/latency_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace baton::bench_serve {

double percentile(const std::vector<double>& sorted, double p) {
  assert(!sorted.empty());
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double weight = rank - static_cast<double>(below);
  return sorted[below] + weight * (sorted[above] - sorted[below]);
}

LatencySummary summarize(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  return {.count = samples.size(),
          .mean = std::accumulate(samples.begin(), samples.end(), 0.0) /
                  static_cast<double>(samples.size()),
          .p50 = percentile(samples, 50),
          .p90 = percentile(samples, 90),
          .p99 = percentile(samples, 99)};
}

}  // namespace baton::bench_serve
