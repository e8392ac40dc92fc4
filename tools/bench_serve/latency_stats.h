#pragma once

#include <cstddef>
#include <vector>

namespace baton::bench_serve {

// Mean and percentiles of one latency figure, in the unit of the samples.
struct LatencySummary {
  size_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
};

// The p-th percentile (0..100) of ascending `sorted`, interpolating linearly between the two
// nearest ranks (numpy's default, which vLLM's benchmark uses). `sorted` must not be empty.
double percentile(const std::vector<double>& sorted, double p);

// All zero when `samples` is empty.
LatencySummary summarize(std::vector<double> samples);

}  // namespace baton::bench_serve
