#include "core/api/remote_replica.h"

#include <exception>
#include <utility>

namespace baton {

using Clock = std::chrono::steady_clock;

RemoteReplica::RemoteReplica(Communicator& leaders, int32_t replica, double timeout_seconds,
                             UpdateSink sink, FailureSink on_failure)
    : leaders_(leaders),
      replica_(replica),
      heartbeat_(replica_heartbeat(timeout_seconds)),
      sink_(std::move(sink)),
      on_failure_(std::move(on_failure)),
      receiver_([this] { receive_updates(); }),
      sender_([this](std::stop_token stop) { send_commands(stop); }) {}

RemoteReplica::~RemoteReplica() {
  sender_.request_stop();
  sender_.join();
  receiver_.join();
}

void RemoteReplica::add(uint64_t id, std::vector<int32_t> prompt, const GenerationParams& params,
                        int32_t priority) {
  push({.kind = ReplicaCommand::Kind::kAdd,
        .id = id,
        .prompt = std::move(prompt),
        .params = params,
        .priority = priority});
}

void RemoteReplica::abort(uint64_t id) {
  push({.kind = ReplicaCommand::Kind::kAbort, .id = id});
}

void RemoteReplica::abort_sample(uint64_t id, int32_t sample) {
  push({.kind = ReplicaCommand::Kind::kAbortSample, .id = id, .sample = sample});
}

EngineStats RemoteReplica::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void RemoteReplica::push(ReplicaCommand command) {
  {
    std::lock_guard lock(mutex_);
    commands_.push_back(std::move(command));
  }
  wake_.notify_one();
}

void RemoteReplica::send_commands(std::stop_token stop) {
  try {
    while (true) {
      RouterFrame out;
      {
        std::unique_lock lock(mutex_);
        wake_.wait_for(lock, stop, heartbeat_, [&] { return !commands_.empty() || failed_; });
        if (failed_) return;
        out.commands.swap(commands_);
      }
      out.shutdown = stop.stop_requested();
      send_frame(leaders_, encode(out), replica_);
      if (out.shutdown) return;
    }
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void RemoteReplica::receive_updates() {
  try {
    while (true) {
      ReplicaFrame in = decode_replica_frame(recv_frame(leaders_, replica_), Clock::now());
      if (failed_) return;
      {
        std::lock_guard lock(mutex_);
        stats_ = in.stats;
      }
      if (!in.updates.empty()) sink_(std::move(in.updates));
      if (in.closing) return;
    }
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void RemoteReplica::fail(const std::string& error) {
  std::call_once(failure_reported_, [&] {
    {
      std::lock_guard lock(mutex_);
      failed_ = true;
    }
    wake_.notify_all();
    on_failure_(error);
  });
}

}  // namespace baton
