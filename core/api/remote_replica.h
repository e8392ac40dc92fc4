#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/api/replica_engine.h"
#include "core/api/replica_wire.h"
#include "core/runtime/comm/communicator.h"

namespace baton {

// The router's side of a data-parallel replica in another process, whose first rank serves it
// (serve_router_requests). Two threads talk to that rank: one sends each command as it is
// queued, the other receives the replica's updates and stats as it sends them. Each side sends
// a frame at least once a second, so that neither --dist-timeout mistakes an idle server for a
// lost rank.
class RemoteReplica final : public ReplicaEngine {
 public:
  // Called once, on one of the two threads, when the replica cannot be reached (it died, hangs
  // or MPI failed); no update is delivered after it, and neither thread sends or waits for
  // more than the frame it may be in.
  using FailureSink = std::function<void(const std::string& error)>;

  // `replica` is the replica's rank in `leaders`, whose rank 0 is this process.
  RemoteReplica(Communicator& leaders, int32_t replica, double timeout_seconds, UpdateSink sink,
                FailureSink on_failure);
  // Tells the replica to stop (its requests are dropped), waits for its last frame and joins.
  ~RemoteReplica() override;

  void add(uint64_t id, std::vector<int32_t> prompt, const GenerationParams& params,
           int32_t priority) override;
  void abort(uint64_t id) override;
  void abort_sample(uint64_t id, int32_t sample) override;
  EngineStats stats() const override;

 private:
  void push(ReplicaCommand command);
  void send_commands(std::stop_token stop);
  void receive_updates();
  void fail(const std::string& error);

  Communicator& leaders_;
  const int32_t replica_;
  const std::chrono::steady_clock::duration heartbeat_;
  UpdateSink sink_;
  FailureSink on_failure_;
  std::once_flag failure_reported_;
  std::atomic<bool> failed_{false};
  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  std::vector<ReplicaCommand> commands_;
  EngineStats stats_;
  // Last: they start once every member they use exists.
  std::jthread receiver_;
  std::jthread sender_;
};

}  // namespace baton
