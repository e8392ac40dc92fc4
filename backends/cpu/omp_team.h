#pragma once

#include <omp.h>

#include <algorithm>
#include <exception>
#include <thread>

namespace baton::cpu {

// The threads a parallel region that asks for `requested` gets here. oneDNN's OpenMP build plans
// a primitive's work for omp_get_max_threads(), which ignores OMP_THREAD_LIMIT, and under the
// limit its packed GEMM left part of the output unwritten. Inside another parallel region a
// nested one may get a single thread; one is asked for there too, as a precaution (no wrong
// output was seen there).
inline int omp_team_threads(int requested) {
  if (omp_in_parallel()) return 1;
  return std::clamp(requested, 1, omp_get_thread_limit());
}

// Runs `work` on a thread of its own and waits for it, rethrowing what it threw. libgomp keeps
// a thread's OpenMP team until the thread ends. A second team alive beside the one model steps
// use makes it count more threads than CPUs (at the default thread count), and then, with
// OMP_WAIT_POLICY unset, a waiting thread spins 100 times instead of 300,000 before it sleeps
// (GOMP_SPINCOUNT in libgomp's manual). One-off parallel work on a thread that lives on
// (packing weights on the loading thread) runs here, so that its team ends with it.
template <typename Work>
void run_on_passing_thread(Work&& work) {
  std::exception_ptr failure;
  std::thread([&] {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
  }).join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace baton::cpu
