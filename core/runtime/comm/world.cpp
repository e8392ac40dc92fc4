#include "core/runtime/comm/world.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "baton/error.h"
#include "core/runtime/backend_plugin.h"
#include "core/runtime/comm/comm_plugin_abi.h"

namespace baton {
namespace {

constexpr const char* kPluginFile = "libbaton-comm-mpi.so";

int32_t env_int(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::atoi(value) : 0;
}

std::shared_ptr<Communicator>& the_world() {
  static std::shared_ptr<Communicator> world;
  return world;
}

}  // namespace

int32_t launched_world_size() {
  // OpenMPI's mpirun, MPICH's Hydra, and Slurm's srun (set for the tasks of a step, unlike
  // SLURM_NTASKS, which a batch script sees too).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    if (const int32_t size = env_int(name); size > 0) return size;
  }
  return 1;
}

int32_t launched_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const int32_t rank = env_int(name); rank > 0) return rank;
  }
  return 0;
}

void abort_open_world() {
  if (the_world()) the_world()->abort();
}

std::shared_ptr<Communicator> open_world(double timeout_seconds) {
  std::shared_ptr<Communicator>& world = the_world();
  if (world) return world;
  std::string tried;
  for (const std::filesystem::path& dir : backend_plugin_directories()) {
    const std::filesystem::path path = dir / kPluginFile;
    if (!std::filesystem::exists(path)) continue;
    // The library stays loaded: the world communicator lives in it until the process ends.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      throw Error(ErrorCategory::kBackend,
                  path.string() + " cannot be loaded: " + (why ? why : "unknown dlopen error"));
    }
    using Entry = Communicator* (*)(int, double, char*, size_t);
    const auto entry = reinterpret_cast<Entry>(dlsym(handle, "baton_comm_mpi_world"));
    if (entry == nullptr) {
      throw Error(ErrorCategory::kBackend, path.string() + " has no baton_comm_mpi_world");
    }
    char error[512] = {};
    Communicator* comm = entry(kCommPluginAbiVersion, timeout_seconds, error, sizeof error);
    if (comm == nullptr) throw Error(ErrorCategory::kBackend, path.string() + ": " + error);
    // Not owned: MPI finalises at exit, after every user of the communicator is gone.
    world = std::shared_ptr<Communicator>(comm, [](Communicator*) {});
    return world;
  }
  throw Error(ErrorCategory::kUnsupported,
              std::string("distributed inference needs ") + kPluginFile +
                  ", which this build lacks: install libopenmpi-dev and rebuild "
                  "(scripts/setup.sh does)");
}

}  // namespace baton
