#include "core/api/engine_loop.h"

#include <exception>
#include <memory>
#include <utility>

namespace baton {

EngineLoop::EngineLoop(const LoadedModel& loaded, UpdateSink sink) : sink_(std::move(sink)) {
  // Shared with the thread, which may still be inside set_value or set_exception when the
  // constructor returns or unwinds.
  auto built = std::make_shared<std::promise<void>>();
  std::future<void> ready = built->get_future();
  thread_ = std::jthread([this, &loaded, built](std::stop_token stop) {
    try {
      engine_.emplace(*loaded.model, *loaded.backend, *loaded.tokenizer, loaded.engine_config);
      stats_ = engine_stats(*engine_, {});
    } catch (...) {
      engine_.reset();
      built->set_exception(std::current_exception());
      return;
    }
    built->set_value();
    run(stop);
    // Torn down here too, so that the Engine and what it owns (a step runner's transfer
    // threads, device buffers) begin and end on one thread.
    engine_.reset();
  });
  ready.get();
}

EngineLoop::~EngineLoop() {
  thread_.request_stop();
  thread_.join();
}

void EngineLoop::add(uint64_t id, std::vector<int32_t> prompt, const GenerationParams& params,
                     int32_t priority) {
  push({.kind = Command::Kind::kAdd,
        .id = id,
        .prompt = std::move(prompt),
        .params = params,
        .priority = priority});
}

void EngineLoop::abort(uint64_t id) {
  push({.kind = Command::Kind::kAbort, .id = id});
}

void EngineLoop::abort_sample(uint64_t id, int32_t sample) {
  push({.kind = Command::Kind::kAbortSample, .id = id, .sample = sample});
}

void EngineLoop::add_lora(std::shared_ptr<const LoraAdapter> adapter) {
  run_on_engine([adapter](Engine& engine) { engine.add_lora(adapter); });
}

void EngineLoop::remove_lora(const std::string& name) {
  run_on_engine([name](Engine& engine) { engine.remove_lora(name); });
}

void EngineLoop::run_on_engine(std::function<void(Engine&)> task) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> result = done->get_future();
  push({.kind = Command::Kind::kTask, .task = std::move(task), .done = done});
  result.get();
}

EngineStats EngineLoop::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

void EngineLoop::push(Command command) {
  {
    std::lock_guard lock(mutex_);
    commands_.push_back(std::move(command));
  }
  wake_.notify_one();
}

void EngineLoop::run(std::stop_token stop) {
  while (true) {
    std::deque<Command> commands;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, stop, [&] { return !commands_.empty() || engine_->has_work(); });
      if (stop.stop_requested()) return;
      commands.swap(commands_);
    }
    std::vector<SequenceUpdate> updates;
    for (Command& command : commands) execute(command, updates);
    if (engine_->has_work()) step(updates);
    {
      std::lock_guard lock(stats_mutex_);
      stats_ = engine_stats(*engine_, {});
    }
    if (!updates.empty()) sink_(std::move(updates));
  }
}

void EngineLoop::execute(Command& command, std::vector<SequenceUpdate>& updates) {
  const auto it = to_engine_.find(command.id);
  switch (command.kind) {
    case Command::Kind::kAdd:
      try {
        const uint64_t engine_id =
            engine_->add(std::move(command.prompt), command.params, command.priority);
        to_engine_[command.id] = engine_id;
        to_caller_[engine_id] = command.id;
      } catch (const std::exception& e) {
        updates.push_back({.id = command.id, .finished = true, .error = e.what()});
      }
      return;
    case Command::Kind::kAbort:
      if (it == to_engine_.end()) return;
      engine_->abort(it->second);
      forget_if_gone(it->second);
      return;
    case Command::Kind::kAbortSample:
      if (it == to_engine_.end()) return;
      engine_->abort_sample(it->second, command.sample);
      // Under pipeline micro-batching the abort waits for its step, and may then end the
      // request without an update: checked again after each step.
      sample_aborted_.insert(it->second);
      forget_if_gone(it->second);
      return;
    case Command::Kind::kTask:
      try {
        command.task(*engine_);
        command.done->set_value();
      } catch (...) {
        command.done->set_exception(std::current_exception());
      }
      return;
  }
}

void EngineLoop::step(std::vector<SequenceUpdate>& updates) {
  std::vector<SequenceUpdate> stepped;
  try {
    stepped = engine_->step();
  } catch (const std::exception& e) {
    // The engine's state after a failed step is unknown: end everything it holds, keep serving.
    for (const auto& [caller_id, engine_id] : to_engine_) {
      engine_->abort(engine_id);
      updates.push_back(
          {.id = caller_id, .finished = true, .error = e.what(), .engine_failed = true});
    }
    to_engine_.clear();
    to_caller_.clear();
    sample_aborted_.clear();
    return;
  }
  std::vector<uint64_t> finished;
  for (SequenceUpdate& update : stepped) {
    if (update.finished) finished.push_back(update.id);
    update.id = to_caller_.at(update.id);
    updates.push_back(std::move(update));
  }
  for (uint64_t engine_id : finished) forget_if_gone(engine_id);
  std::erase_if(sample_aborted_, [&](uint64_t engine_id) {
    forget_if_gone(engine_id);
    return !engine_->has_request(engine_id);
  });
}

void EngineLoop::forget_if_gone(uint64_t engine_id) {
  if (engine_->has_request(engine_id)) return;
  const auto it = to_caller_.find(engine_id);
  if (it == to_caller_.end()) return;
  to_engine_.erase(it->second);
  to_caller_.erase(it);
}

}  // namespace baton
