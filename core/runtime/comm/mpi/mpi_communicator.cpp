#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "baton/error.h"
#include "core/runtime/comm/comm_plugin_abi.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

// Tag of the messages ranks exchange after a timeout to learn which of them still respond.
constexpr int kAliveTag = 7771;

// MPI is initialised for MPI_THREAD_SERIALIZED, and several threads may use it (a data-parallel
// router's exchanges beside its own replica's steps, a pipeline leader's transfers): every call
// takes this lock, so no two overlap. Operations are non-blocking and polled, so their waits
// never hold it; only a split (at start-up) and the finalize at exit block while holding it.
std::mutex g_mpi;

// Set once an operation timed out or failed: MPI's state is then unusable, so the process ends
// with MPI_Abort (which also ends ranks that hang) instead of a finalize that would wait for
// them.
std::atomic<bool> g_faulted{false};

void finalize_at_exit() {
  std::lock_guard lock(g_mpi);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (g_faulted) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
}

std::string mpi_error_string(int code) {
  std::lock_guard lock(g_mpi);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, double timeout_seconds)
      : comm_(comm), timeout_(std::chrono::duration<double>(timeout_seconds)) {
    std::lock_guard lock(g_mpi);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    // Errors come back as codes (turned into baton::Error) rather than aborting the job.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  ~MpiCommunicator() override {
    std::lock_guard lock(g_mpi);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && !g_faulted && comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
  }

  int32_t rank() const override { return rank_; }
  int32_t size() const override { return size_; }
  int32_t world_rank(int32_t rank) const override {
    std::lock_guard lock(g_mpi);
    MPI_Group group, world;
    MPI_Comm_group(comm_, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int result = MPI_UNDEFINED;
    MPI_Group_translate_ranks(group, 1, &rank, world, &result);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    return result;
  }

  void all_reduce_sum(std::span<float> data) override {
    MPI_Request request;
    finish(locked([&] {
             return MPI_Iallreduce(MPI_IN_PLACE, data.data(), count(data), MPI_FLOAT, MPI_SUM,
                                   comm_, &request);
           }),
           request, "all-reduce");
  }
  void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) override {
    MPI_Request request;
    finish(locked([&] {
             return MPI_Iallgather(mine.data(), count(mine), MPI_BYTE, all.data(), count(mine),
                                   MPI_BYTE, comm_, &request);
           }),
           request, "all-gather");
  }
  void gather(std::span<const std::byte> mine, std::span<std::byte> all, int32_t root) override {
    MPI_Request request;
    finish(locked([&] {
             return MPI_Igather(mine.data(), count(mine), MPI_BYTE,
                                rank_ == root ? all.data() : nullptr, count(mine), MPI_BYTE, root,
                                comm_, &request);
           }),
           request, "gather");
  }
  void broadcast(std::span<std::byte> data, int32_t root) override {
    MPI_Request request;
    finish(locked([&] {
             return MPI_Ibcast(data.data(), count(data), MPI_BYTE, root, comm_, &request);
           }),
           request, "broadcast");
  }
  void wait_broadcast(std::span<std::byte> data, int32_t root) override {
    MPI_Request request;
    finish(locked([&] {
             return MPI_Ibcast(data.data(), count(data), MPI_BYTE, root, comm_, &request);
           }),
           request, "broadcast", kNoPeer, /*bounded=*/false);
  }
  void send(std::span<const std::byte> data, int32_t to) override {
    MPI_Request request;
    finish(locked([&] {
             return MPI_Isend(data.data(), count(data), MPI_BYTE, to, 0, comm_, &request);
           }),
           request, "send to", to);
  }
  void recv(std::span<std::byte> data, int32_t from) override {
    MPI_Request request;
    finish(locked([&] {
             return MPI_Irecv(data.data(), count(data), MPI_BYTE, from, 0, comm_, &request);
           }),
           request, "receive from", from);
  }
  std::unique_ptr<Communicator> split(int32_t color, int32_t key) override {
    MPI_Comm part;
    // Blocking, and so holding the lock until every rank arrives: splits are made while a
    // process is placed, before any other thread uses MPI.
    check(locked([&] { return MPI_Comm_split(comm_, color, key, &part); }), "communicator split");
    return std::make_unique<MpiCommunicator>(part, timeout_.count());
  }
  double seconds_in_operations() const override { return seconds_in_operations_.load(); }
  [[noreturn]] void abort() override {
    g_faulted = true;
    // Not under the lock: another thread may be stuck in a call, and MPI_Abort ends it too.
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
  }

 private:
  static constexpr int32_t kNoPeer = -1;

  bool asked(int32_t peer, int32_t peer_of_operation) const {
    return peer != rank_ && (peer_of_operation == kNoPeer || peer == peer_of_operation);
  }

  template <typename Call>
  static int locked(const Call& call) {
    std::lock_guard lock(g_mpi);
    return call();
  }

  template <typename T>
  static int count(std::span<T> data) {
    return static_cast<int>(data.size());
  }

  // "send to rank 3": the operation and, for a point-to-point one, its peer's world rank. Built
  // only for an error message, so a step's operations allocate nothing.
  std::string describe(const char* what, int32_t peer) const {
    return peer == kNoPeer ? what : std::string(what) + " rank " + std::to_string(world_rank(peer));
  }

  void check(int code, const char* what, int32_t peer = kNoPeer) const {
    if (code == MPI_SUCCESS) return;
    g_faulted = true;
    throw Error(ErrorCategory::kBackend,
                "distributed " + describe(what, peer) + " failed on rank " +
                    std::to_string(world_rank(rank_)) + ": " + mpi_error_string(code));
  }

  // Checks the code of the call that started `request`, then waits for it.
  void finish(int started, MPI_Request& request, const char* what, int32_t peer = kNoPeer,
              bool bounded = true) {
    const Clock::time_point start = Clock::now();
    check(started, what, peer);
    wait(request, what, peer, bounded);
    seconds_in_operations_.fetch_add(std::chrono::duration<double>(Clock::now() - start).count());
  }

  // Polls instead of blocking so that a rank that died or hangs is reported after the timeout
  // instead of holding every other rank forever. The first polls spin, since most collectives
  // of a step complete within microseconds; later ones sleep so that a waiting rank leaves its
  // core to the ranks still computing, for a twentieth of the time waited so far (50 µs to
  // 1 ms): a long wait, such as an idle follower's, wakes rarely, and one of a millisecond or
  // more ends at most 5% late.
  void wait(MPI_Request& request, const char* what, int32_t peer, bool bounded) {
    const Clock::time_point start = Clock::now();
    const Clock::time_point deadline =
        start + std::chrono::duration_cast<Clock::duration>(timeout_);
    for (int polls = 0;; ++polls) {
      int done = 0;
      check(locked([&] { return MPI_Test(&request, &done, MPI_STATUS_IGNORE); }), what, peer);
      if (done) return;
      if (polls > 2000) {
        const Clock::time_point now = Clock::now();
        std::this_thread::sleep_for(std::clamp<Clock::duration>(
            (now - start) / 20, std::chrono::microseconds(50), std::chrono::milliseconds(1)));
        if (bounded && now > deadline) timed_out(describe(what, peer), peer);
      }
    }
  }

  // Every rank of the group that is still alive reaches here within about the same time (they
  // wait on the same missing rank), so each posts a message to every other and waits a short
  // grace period: the ranks it hears nothing from are the ones named. A point-to-point
  // operation asks only its peer: the group's other ranks may be busy with other work.
  [[noreturn]] void timed_out(const std::string& what, int32_t peer_of_operation) {
    g_faulted = true;
    const char alive = 1;
    std::vector<char> heard(static_cast<size_t>(size_), 0);
    std::vector<MPI_Request> requests;
    {
      std::lock_guard lock(g_mpi);
      for (int peer = 0; peer < size_; ++peer) {
        if (!asked(peer, peer_of_operation)) continue;
        MPI_Request r;
        MPI_Isend(&alive, 1, MPI_CHAR, peer, kAliveTag, comm_, &r);
        MPI_Request_free(&r);
        MPI_Irecv(&heard[static_cast<size_t>(peer)], 1, MPI_CHAR, peer, kAliveTag, comm_, &r);
        requests.push_back(r);
      }
    }
    const auto grace = std::min<Clock::duration>(
        std::chrono::duration_cast<Clock::duration>(timeout_), std::chrono::seconds(3));
    const Clock::time_point until = Clock::now() + grace;
    while (Clock::now() < until) {
      int all = 0;
      locked([&] {
        return MPI_Testall(static_cast<int>(requests.size()), requests.data(), &all,
                           MPI_STATUSES_IGNORE);
      });
      if (all) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::string silent;
    for (int peer = 0; peer < size_; ++peer) {
      if (!asked(peer, peer_of_operation) || heard[static_cast<size_t>(peer)]) continue;
      silent += (silent.empty() ? "" : ", ") + std::to_string(world_rank(peer));
    }
    const std::string seconds = std::to_string(static_cast<int>(timeout_.count()));
    const std::string message =
        "distributed " + what + " on rank " + std::to_string(world_rank(rank_)) +
        " timed out after " + seconds + " s (--dist-timeout): " +
        (silent.empty() ? std::string("every rank answered, so a rank is stuck in another "
                                      "operation")
                        : "rank " + silent + " did not respond");
    exit_soon(message);
    throw Error(ErrorCategory::kBackend, message);
  }

  // The run cannot go on, and a silent rank would keep mpirun waiting: this process exits in a
  // moment, which makes mpirun end every rank. The moment lets the caller report the error
  // first (a server answers the requests it could not finish).
  static void exit_soon(const std::string& message) {
    std::fprintf(stderr, "baton: %s; exiting\n", message.c_str());
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      std::_Exit(1);
    }).detach();
  }

  MPI_Comm comm_;
  std::chrono::duration<double> timeout_;
  int rank_ = 0, size_ = 1;
  // Operations of one communicator may run on several threads (a pipeline leader's transfers).
  std::atomic<double> seconds_in_operations_{0};
};

}  // namespace
}  // namespace baton

extern "C" __attribute__((visibility("default"))) baton::Communicator* baton_comm_mpi_world(
    int abi_version, double timeout_seconds, char* error, size_t error_size) {
  const auto fail = [&](const std::string& why) -> baton::Communicator* {
    std::snprintf(error, error_size, "%s", why.c_str());
    return nullptr;
  };
  if (abi_version != baton::kCommPluginAbiVersion) {
    return fail("built for communicator ABI " + std::to_string(baton::kCommPluginAbiVersion) +
                ", the program uses " + std::to_string(abi_version));
  }
  static baton::Communicator* world = nullptr;
  if (world) return world;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Calls come from more than one thread, one at a time (baton::g_mpi).
    int provided = 0;
    const int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (code != MPI_SUCCESS) return fail("MPI_Init_thread: " + baton::mpi_error_string(code));
    if (provided < MPI_THREAD_SERIALIZED) {
      return fail("this MPI library offers no MPI_THREAD_SERIALIZED support");
    }
    std::atexit(baton::finalize_at_exit);
  }
  world = new baton::MpiCommunicator(MPI_COMM_WORLD, timeout_seconds);
  return world;
}
