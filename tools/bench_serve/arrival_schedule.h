#pragma once

#include <cstdint>
#include <vector>

namespace baton::bench_serve {

// When each of `count` requests is sent, in seconds after the first. With a finite `rate`
// (requests per second) the gaps are exponentially distributed, i.e. arrivals form a Poisson
// process, and the same `seed` gives the same schedule on every platform. An infinite rate
// sends everything at once (all offsets 0). `rate` must be positive.
std::vector<double> arrival_offsets(int64_t count, double rate, uint64_t seed);

}  // namespace baton::bench_serve
