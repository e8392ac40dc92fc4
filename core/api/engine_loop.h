#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "baton/llm.h"
#include "core/api/loaded_model.h"
#include "core/api/replica_engine.h"
#include "core/serving/engine/engine.h"

namespace baton {

// AsyncLLM's engine thread: it owns an Engine and runs only its commands and model steps, so no
// text work ever delays a step. Commands come from any thread through a queue; the thread sleeps
// on a condition variable while there is neither a command nor a scheduled sequence.
// Requests are named by the caller's ids, which the loop maps to the engine's.
//
// The Engine is built, warmed up and torn down on the engine thread too, so that the process
// keeps one OpenMP team: libgomp keeps a thread's team until the thread ends, and with a second,
// idle team beside the engine thread's it counts more threads than CPUs (at the default thread
// count), so a waiting thread spins 100 times instead of 300,000 before it sleeps on a futex
// (GOMP_SPINCOUNT in libgomp's manual, OMP_WAIT_POLICY unset): threads waiting at a step's
// barriers sleep and wake instead of spinning (docs/results/2026-12-06-one-openmp-team.md). The
// CPU backend's other load-time parallel work runs on passing threads for the same reason
// (backends/cpu/omp_team.h).
class EngineLoop final : public ReplicaEngine {
 public:
  // `sink` is called on the engine thread. Returns once the Engine is built (and warmed up) there;
  // rethrows what building it threw.
  EngineLoop(const LoadedModel& loaded, UpdateSink sink);
  // Stops after the step in progress; requests still in the engine are dropped.
  ~EngineLoop() override;

  void add(uint64_t id, std::vector<int32_t> prompt, const GenerationParams& params,
           int32_t priority) override;
  void abort(uint64_t id) override;
  void abort_sample(uint64_t id, int32_t sample) override;
  EngineStats stats() const override;
  void add_lora(std::shared_ptr<const LoraAdapter> adapter) override;
  void remove_lora(const std::string& name) override;

 private:
  struct Command {
    enum class Kind { kAdd, kAbort, kAbortSample, kTask } kind;
    uint64_t id = 0;
    int32_t sample = 0;
    std::vector<int32_t> prompt;
    GenerationParams params;
    int32_t priority = 0;
    // kTask: runs on the engine thread; the caller waits on `done` for it or its exception.
    std::function<void(Engine&)> task;
    std::shared_ptr<std::promise<void>> done;
  };
  // Runs `task` on the engine thread between steps and returns when it has run.
  void run_on_engine(std::function<void(Engine&)> task);
  void push(Command command);
  void run(std::stop_token stop);
  void execute(Command& command, std::vector<SequenceUpdate>& updates);
  void step(std::vector<SequenceUpdate>& updates);
  void forget_if_gone(uint64_t engine_id);

  std::optional<Engine> engine_;  // built and used on the engine thread only
  UpdateSink sink_;
  std::map<uint64_t, uint64_t> to_caller_, to_engine_;  // engine thread only
  std::set<uint64_t> sample_aborted_;  // engine ids with a sample aborted; engine thread only
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::deque<Command> commands_;
  mutable std::mutex stats_mutex_;
  EngineStats stats_;
  std::jthread thread_;  // last: destroyed, so joined, before any member its thread uses
};

}  // namespace baton
