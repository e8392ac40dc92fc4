#include "tools/serve/engine_client.h"

#include <algorithm>
#include <deque>
#include <optional>

#include "tools/serve/api_error.h"
#include "tools/serve/length_log.h"

namespace baton::serve {

struct RequestGroup::State {
  State(AsyncLLM& llm, size_t size) : llm(llm), ids(size, 0), finished(size, false) {}

  void push(size_t request, const StreamEvent& event) {
    {
      std::lock_guard lock(mutex);
      events.push_back({request, event});
    }
    arrived.notify_all();
  }

  AsyncLLM& llm;
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<GroupEvent> events;
  // Ids are known only once add_request returns, which may be after the request's first events.
  std::vector<uint64_t> ids;
  std::vector<bool> finished;  // as returned by next()
};

RequestGroup::RequestGroup(std::shared_ptr<State> state, EngineClient& client)
    : state_(std::move(state)), client_(client) {}

RequestGroup::~RequestGroup() {
  client_.group_closed();
}

std::vector<GroupEvent> RequestGroup::next(std::chrono::milliseconds timeout) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  s.arrived.wait_for(lock, timeout, [&] { return !s.events.empty(); });
  std::vector<GroupEvent> taken(std::make_move_iterator(s.events.begin()),
                                std::make_move_iterator(s.events.end()));
  s.events.clear();
  for (const GroupEvent& e : taken) {
    if (e.event.finished) s.finished[e.request] = true;
  }
  return taken;
}

bool RequestGroup::done() const {
  std::lock_guard lock(state_->mutex);
  return std::all_of(state_->finished.begin(), state_->finished.end(), [](bool f) { return f; });
}

std::vector<GenerationOutput> RequestGroup::wait_outputs() {
  std::vector<GenerationOutput> outputs(state_->ids.size());
  std::optional<ApiError> error;
  while (!done()) {
    for (GroupEvent& e : next(std::chrono::seconds(1))) {
      if (!e.event.finished) continue;
      if (!e.event.error.empty() && !error) error = event_error(e.event.error, e.event.unavailable);
      if (e.event.output) outputs[e.request] = std::move(*e.event.output);
    }
  }
  if (error) throw *error;
  for (const GenerationOutput& output : outputs) {
    if (output.completions.empty()) {
      throw ApiError(503, "the request was aborted before its first token (shutting down)", "",
                     "server_error");
    }
  }
  return outputs;
}

void RequestGroup::abort() {
  std::vector<uint64_t> ids;
  {
    std::lock_guard lock(state_->mutex);
    ids = state_->ids;
  }
  for (uint64_t id : ids) {
    if (id != 0) state_->llm.abort(id);
  }
}

EngineClient::EngineClient(AsyncLLM& llm, int32_t max_queue, ServerMetrics& metrics,
                           LengthLog* length_log)
    : llm_(llm), max_queue_(max_queue), metrics_(metrics), length_log_(length_log) {}

std::shared_ptr<RequestGroup> EngineClient::submit(std::vector<Request> requests) {
  const auto count = static_cast<int32_t>(requests.size());
  auto state = std::make_shared<RequestGroup::State>(llm_, requests.size());
  metrics_.count_received(count);
  {
    std::lock_guard lock(mutex_);
    if (!accepting_) {
      metrics_.count_rejected(count);
      throw ApiError(503, "the server is shutting down", "", "server_error");
    }
    if (in_flight_ + count > max_queue_) {
      metrics_.count_rejected(count);
      throw ApiError(429,
                     "the server is at its limit of " + std::to_string(max_queue_) +
                         " requests in flight (--max-queue); retry later",
                     "", "rate_limit_error");
    }
    in_flight_ += count;
    ++open_groups_;
  }
  auto group = std::make_shared<RequestGroup>(state, *this);
  size_t added = 0;
  try {
    for (; added < requests.size(); ++added) {
      const size_t i = added;
      const std::string adapter = requests[i].params.lora;
      const LengthLog::Settings logged = LengthLog::settings_of(requests[i].params);
      const uint64_t id = llm_.add_request(
          std::move(requests[i]), [this, state, i, adapter, logged](const StreamEvent& event) {
            // Counted out before the client can see its last event, so a client that sends its
            // next request at once finds the room it left.
            if (event.finished) request_finished(event, adapter);
            if (event.finished && event.output && length_log_) {
              length_log_->write(logged, *event.output);
            }
            state->push(i, event);
          });
      std::lock_guard lock(state->mutex);
      state->ids[i] = id;
    }
  } catch (...) {
    metrics_.count_rejected(count - static_cast<int32_t>(added));
    group->abort();
    {
      std::lock_guard lock(mutex_);
      in_flight_ -= count - static_cast<int32_t>(added);
    }
    idle_.notify_all();
    throw;
  }
  std::lock_guard lock(mutex_);
  std::erase_if(groups_, [](const auto& g) { return g.expired(); });
  groups_.push_back(group);
  return group;
}

void EngineClient::request_finished(const StreamEvent& event, const std::string& adapter) {
  {
    std::lock_guard lock(mutex_);
    --in_flight_;
  }
  idle_.notify_all();
  metrics_.observe(event, adapter);
}

void EngineClient::group_closed() {
  {
    std::lock_guard lock(mutex_);
    --open_groups_;
  }
  idle_.notify_all();
}

int32_t EngineClient::in_flight() const {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

void EngineClient::stop_accepting() {
  std::lock_guard lock(mutex_);
  accepting_ = false;
}

bool EngineClient::wait_until_idle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return idle_.wait_until(lock, deadline, [&] { return in_flight_ == 0 && open_groups_ == 0; });
}

void EngineClient::abort_all() {
  std::vector<std::shared_ptr<RequestGroup>> live;
  {
    std::lock_guard lock(mutex_);
    for (const auto& weak : groups_) {
      if (auto group = weak.lock()) live.push_back(std::move(group));
    }
  }
  for (const auto& group : live) group->abort();
}

}  // namespace baton::serve
