#include "core/api/replica_server.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "core/api/engine_loop.h"
#include "core/api/replica_wire.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int32_t kRouter = 0;

// The replica's updates on their way to the router: the engine thread puts them here, a sender
// thread sends them as they come (with the stats), or a heartbeat when none came for a while.
class Outbox {
 public:
  void put(std::vector<SequenceUpdate> updates) {
    {
      std::lock_guard lock(mutex_);
      updates_.insert(updates_.end(), std::make_move_iterator(updates.begin()),
                      std::make_move_iterator(updates.end()));
    }
    wake_.notify_one();
  }
  void close() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    wake_.notify_one();
  }
  // Sends until close(), ending with the closing frame, or until `stop` (the router is lost).
  void send(Communicator& leaders, const ReplicaEngine& engine, Clock::duration heartbeat,
            std::stop_token stop) {
    while (true) {
      ReplicaFrame out;
      {
        std::unique_lock lock(mutex_);
        wake_.wait_for(lock, stop, heartbeat, [&] { return !updates_.empty() || closing_; });
        if (stop.stop_requested()) return;
        out.updates.swap(updates_);
        out.closing = closing_;
      }
      out.stats = engine.stats();
      send_frame(leaders, encode(out, Clock::now()), kRouter);
      if (out.closing) return;
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::vector<SequenceUpdate> updates_;
  bool closing_ = false;
};

}  // namespace

void serve_router_requests(const LoadedModel& loaded, Communicator& leaders) {
  Outbox outbox;
  EngineLoop engine(
      loaded, [&outbox](std::vector<SequenceUpdate> updates) { outbox.put(std::move(updates)); });
  std::exception_ptr send_error;
  std::atomic<bool> send_failed{false};
  std::jthread sender([&](std::stop_token stop) {
    try {
      outbox.send(leaders, engine, replica_heartbeat(loaded.placement.timeout_seconds), stop);
    } catch (...) {
      send_error = std::current_exception();
      send_failed = true;
    }
  });
  while (true) {
    // On an error the sender is stopped and joined (jthread) before the engine goes.
    RouterFrame in = decode_router_frame(recv_frame(leaders, kRouter));
    // Requests whose updates cannot leave must not be taken.
    if (send_failed) std::rethrow_exception(send_error);
    for (ReplicaCommand& c : in.commands) {
      switch (c.kind) {
        case ReplicaCommand::Kind::kAdd:
          engine.add(c.id, std::move(c.prompt), c.params, c.priority);
          break;
        case ReplicaCommand::Kind::kAbort:
          engine.abort(c.id);
          break;
        case ReplicaCommand::Kind::kAbortSample:
          engine.abort_sample(c.id, c.sample);
          break;
      }
    }
    if (in.shutdown) break;
  }
  outbox.close();
  sender.join();
  if (send_error) std::rethrow_exception(send_error);
}

}  // namespace baton
