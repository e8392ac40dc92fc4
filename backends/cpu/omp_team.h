#pragma once

#include <omp.h>

#include <algorithm>

namespace baton::cpu {

// The threads a parallel region that asks for `requested` gets here: OMP_THREAD_LIMIT caps the
// team, and inside another parallel region oneDNN runs its regions on one thread (whatever the
// nesting setting). oneDNN's OpenMP build plans a primitive's work for omp_get_max_threads(),
// which counts neither, and a team smaller than the plan leaves part of the output unwritten.
inline int omp_team_threads(int requested) {
  if (omp_in_parallel()) return 1;
  return std::clamp(requested, 1, omp_get_thread_limit());
}

}  // namespace baton::cpu
