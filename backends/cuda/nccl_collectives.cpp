#include "backends/cuda/nccl_collectives.h"

#include <dlfcn.h>
#include <nccl.h>

#include <map>
#include <span>
#include <string>
#include <type_traits>

#include "baton/error.h"

namespace baton::cuda {
namespace {

// The NCCL entry points Baton calls, looked up in libnccl.so.2.
struct NcclLibrary {
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;

  // The library stays loaded: communicators made from it live until the backend goes.
  static const NcclLibrary& open() {
    static const NcclLibrary library = load();
    return library;
  }

 private:
  static NcclLibrary load() {
    void* handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      throw Error(ErrorCategory::kBackend,
                  std::string("tensor parallelism on CUDA needs NCCL: ") +
                      (why ? why : "libnccl.so.2 cannot be loaded") +
                      " (or set BATON_GPU_COLLECTIVES=host to stage all-reduces through the host)");
    }
    NcclLibrary l;
    const auto find = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
      if (function == nullptr) {
        throw Error(ErrorCategory::kBackend, std::string("libnccl.so.2 has no ") + name);
      }
    };
    find(l.get_unique_id, "ncclGetUniqueId");
    find(l.comm_init_rank, "ncclCommInitRank");
    find(l.all_reduce, "ncclAllReduce");
    find(l.comm_destroy, "ncclCommDestroy");
    find(l.error_string, "ncclGetErrorString");
    return l;
  }
};

class NcclCollectives final : public gpu::DeviceCollectives {
 public:
  ~NcclCollectives() override {
    for (const auto& [group, comm] : comms_) NcclLibrary::open().comm_destroy(comm);
  }

  void join(Communicator& group) override {
    if (comms_.contains(&group)) return;
    const NcclLibrary& nccl = NcclLibrary::open();
    ncclUniqueId id{};
    if (group.rank() == 0) check(nccl.get_unique_id(&id), "ncclGetUniqueId");
    group.broadcast(std::as_writable_bytes(std::span<ncclUniqueId>(&id, 1)), 0);
    ncclComm_t comm = nullptr;
    check(nccl.comm_init_rank(&comm, group.size(), id, group.rank()), "ncclCommInitRank");
    comms_.emplace(&group, comm);
  }

  bool all_reduce(const float* in, float* out, size_t count, const Communicator& group,
                  gpuStream_t stream) override {
    const auto it = comms_.find(&group);
    if (it == comms_.end()) return false;
    check(NcclLibrary::open().all_reduce(in, out, count, ncclFloat32, ncclSum, it->second, stream),
          "ncclAllReduce");
    return true;
  }

 private:
  static void check(ncclResult_t result, const char* call) {
    if (result == ncclSuccess) return;
    throw Error(ErrorCategory::kBackend,
                std::string(call) + ": " + NcclLibrary::open().error_string(result));
  }

  // By the group's address: a run's groups live as long as its placement, which outlives every
  // backend step (core/api/placement.h).
  std::map<const Communicator*, ncclComm_t> comms_;
};

}  // namespace

std::unique_ptr<gpu::DeviceCollectives> make_nccl_collectives() {
  return std::make_unique<NcclCollectives>();
}

}  // namespace baton::cuda
