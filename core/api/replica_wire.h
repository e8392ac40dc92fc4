#pragma once

// The messages between a data-parallel run's router (rank 0) and the first rank of each other
// replica: RouterFrames one way, ReplicaFrames the other, each sent as soon as there is
// something to say, and at least once a second as a heartbeat. Both processes run the same build
// (the start-up handshake checks it), so plain structs travel as their bytes.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "baton/generation.h"
#include "core/runtime/comm/communicator.h"
#include "core/serving/engine/engine.h"

namespace baton {

struct ReplicaCommand {
  enum class Kind : uint8_t { kAdd, kAbort, kAbortSample } kind = Kind::kAdd;
  uint64_t id = 0;
  int32_t sample = 0;  // kAbortSample
  // kAdd:
  std::vector<int32_t> prompt;
  GenerationParams params;
  int32_t priority = 0;
};

struct RouterFrame {
  std::vector<ReplicaCommand> commands;
  bool shutdown = false;  // the last: the replica stops, and says so with a closing frame
};

struct ReplicaFrame {
  EngineStats stats;
  std::vector<SequenceUpdate> updates;
  bool closing = false;  // the last, after the router's shutdown
};

std::vector<std::byte> encode(const RouterFrame& frame);
RouterFrame decode_router_frame(std::span<const std::byte> bytes);
// Each update's first_scheduled travels as its age at `now`, and comes back as the same age
// before `now` of the receiver: steady clocks of different hosts share no epoch.
std::vector<std::byte> encode(const ReplicaFrame& frame, std::chrono::steady_clock::time_point now);
ReplicaFrame decode_replica_frame(std::span<const std::byte> bytes,
                                  std::chrono::steady_clock::time_point now);

// The interval of a side's heartbeat frames: a second, or less under a short --dist-timeout.
std::chrono::steady_clock::duration replica_heartbeat(double timeout_seconds);

// A message of any length: its size, then its bytes.
void send_frame(Communicator& comm, std::span<const std::byte> bytes, int32_t to);
std::vector<std::byte> recv_frame(Communicator& comm, int32_t from);

}  // namespace baton
