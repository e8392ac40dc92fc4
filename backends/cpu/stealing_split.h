#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace baton::cpu {

// Hands out units of work 0 .. units - 1 to the threads of one parallel region. Each thread owns
// one contiguous run, as a static split gives, and takes its units from the front in order, so
// it streams its weight rows as the hardware prefetchers like. A thread whose run is empty takes
// units one at a time from the back of another thread's run.
//
// Why not schedule(static): on a shared or virtual host the threads do not run at one speed, and
// in a server they share the cores with HTTP and tokenizer threads; with a static split, 17% of
// a profile of 4-token steps was threads waiting at barriers (docs/performance.md). Why not
// schedule(dynamic): handing out every unit from one counter broke the threads' streams and
// measured about half the tokens/s.
class StealingSplit {
 public:
  StealingSplit(int64_t units, int threads);

  // The next unit for thread `thread` (omp_get_thread_num()), or -1 when every unit is taken. A
  // team smaller than `threads` is fine: the runs nobody owns are taken by stealing.
  int64_t next(int thread);

 private:
  // front (low 32 bits) and back (high 32 bits) of one thread's remaining run, on a cache line of
  // its own so that owners do not contend.
  struct alignas(64) Run {
    std::atomic<uint64_t> front_back;
  };

  int64_t take_front(Run& run);
  int64_t take_back(Run& run);

  int threads_;
  std::unique_ptr<Run[]> runs_;
};

}  // namespace baton::cpu
