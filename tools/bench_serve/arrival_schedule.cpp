#include "tools/bench_serve/arrival_schedule.h"

#include <cassert>
#include <cmath>
#include <random>

namespace baton::bench_serve {

std::vector<double> arrival_offsets(int64_t count, double rate, uint64_t seed) {
  assert(rate > 0);
  std::vector<double> offsets(static_cast<size_t>(count), 0.0);
  if (std::isinf(rate)) return offsets;
  // mt19937_64's output is fixed by the standard; the distributions are not, so the uniform
  // draw and the inverse-CDF transform are done here to keep schedules identical everywhere.
  std::mt19937_64 rng(seed);
  double t = 0;
  for (size_t i = 1; i < offsets.size(); ++i) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    t += -std::log1p(-u) / rate;
    offsets[i] = t;
  }
  return offsets;
}

}  // namespace baton::bench_serve
