#include "backends/cpu/stealing_split.h"

#include <limits>
#include <stdexcept>

namespace baton::cpu {
namespace {

constexpr uint64_t pack(uint32_t front, uint32_t back) {
  return uint64_t{front} | uint64_t{back} << 32;
}
constexpr uint32_t front_of(uint64_t v) {
  return static_cast<uint32_t>(v);
}
constexpr uint32_t back_of(uint64_t v) {
  return static_cast<uint32_t>(v >> 32);
}

}  // namespace

// Relaxed order throughout: a unit's index is all a CAS hands over. The outputs the threads write
// are published by the parallel region's closing barrier.
StealingSplit::StealingSplit(int64_t units, int threads)
    : threads_(threads < 1 ? 1 : threads), runs_(new Run[threads_]) {
  if (units < 0 || units > std::numeric_limits<uint32_t>::max()) {
    throw std::invalid_argument("StealingSplit: unit count out of range");
  }
  for (int t = 0; t < threads_; ++t) {
    const auto first = static_cast<uint32_t>(units * t / threads_);
    const auto last = static_cast<uint32_t>(units * (t + 1) / threads_);
    runs_[t].front_back.store(pack(first, last), std::memory_order_relaxed);
  }
}

int64_t StealingSplit::take_front(Run& run) {
  uint64_t v = run.front_back.load(std::memory_order_relaxed);
  while (front_of(v) < back_of(v)) {
    if (run.front_back.compare_exchange_weak(v, pack(front_of(v) + 1, back_of(v)),
                                             std::memory_order_relaxed)) {
      return front_of(v);
    }
  }
  return -1;
}

int64_t StealingSplit::take_back(Run& run) {
  uint64_t v = run.front_back.load(std::memory_order_relaxed);
  while (front_of(v) < back_of(v)) {
    if (run.front_back.compare_exchange_weak(v, pack(front_of(v), back_of(v) - 1),
                                             std::memory_order_relaxed)) {
      return back_of(v) - 1;
    }
  }
  return -1;
}

int64_t StealingSplit::next(int thread) {
  if (thread >= 0 && thread < threads_) {
    if (const int64_t unit = take_front(runs_[thread]); unit >= 0) return unit;
  }
  // Steal from the next thread's run first, so that thieves spread over the runs left.
  for (int i = 1; i <= threads_; ++i) {
    const int victim = ((thread < 0 ? 0 : thread) + i) % threads_;
    if (const int64_t unit = take_back(runs_[victim]); unit >= 0) return unit;
  }
  return -1;
}

}  // namespace baton::cpu
