#pragma once

#include <omp.h>

#include <algorithm>

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

}  // namespace baton::cpu
