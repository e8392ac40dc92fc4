#pragma once

#include <omp.h>

#include <algorithm>

namespace baton::cpu {

// The threads a parallel region that asks for `requested` gets here: OMP_THREAD_LIMIT caps the
// team, and a region inside an active one (nesting off) runs alone. oneDNN's OpenMP build plans
// a primitive's work for omp_get_max_threads(), which counts neither, and a team smaller than
// the plan leaves part of the output unwritten.
inline int omp_team_threads(int requested) {
  if (omp_get_active_level() >= omp_get_max_active_levels()) return 1;
  return std::clamp(requested, 1, omp_get_thread_limit());
}

}  // namespace baton::cpu
