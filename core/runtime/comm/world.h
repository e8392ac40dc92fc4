#pragma once

#include <cstdint>
#include <memory>

#include "core/runtime/comm/communicator.h"

namespace baton {

// How many processes the launcher started, from the variables mpirun (OpenMPI, MPICH) and srun
// set; 1 for a process started on its own.
int32_t launched_world_size();
// This process's index among the ranks the launcher started on this host; 0 without one.
int32_t launched_local_rank();

// Every process of the run, over MPI: opens libbaton-comm-mpi.so from the backend plugin
// directories and initialises MPI on the first call; later calls return the same communicator.
// Every operation fails with Error(kBackend) naming the silent ranks once `timeout_seconds`
// pass without progress. Error(kUnsupported) when this build has no MPI plugin.
std::shared_ptr<Communicator> open_world(double timeout_seconds);

// When a world is open, ends every process of the run (Communicator::abort); otherwise returns.
// For the error path of a distributed command, after its message is printed.
void abort_open_world();

}  // namespace baton
