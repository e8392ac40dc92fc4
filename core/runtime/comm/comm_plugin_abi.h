#pragma once

// The entry point of libbaton-comm-mpi.so. The plugin is built only where MPI is installed and
// opened only when a launcher (mpirun, srun) started the process, so a single process never
// needs MPI's libraries. It links its own copy of the runtime layer, as backend plugins do.

#include <cstddef>

#include "core/runtime/comm/communicator.h"

namespace baton {

// Raised when the plugin and the loader disagree on the Communicator interface.
inline constexpr int kCommPluginAbiVersion = 1;

}  // namespace baton

// Initialises MPI (once) and returns the world communicator, which lives until the process
// exits; every operation on it and on its splits fails after `timeout_seconds` without progress,
// naming the ranks that did not respond. On failure returns null with the reason in `error`.
extern "C" __attribute__((visibility("default"))) baton::Communicator* baton_comm_mpi_world(
    int abi_version, double timeout_seconds, char* error, size_t error_size);
