#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "baton/async_llm.h"
#include "tools/serve/server_metrics.h"

namespace baton::serve {

// One event of one of a group's requests; `request` is its position in the group.
struct GroupEvent {
  size_t request = 0;
  StreamEvent event;
};

// The engine requests one HTTP call made (a completion call may carry several prompts). The
// HTTP thread waits on it while AsyncLLM's text thread feeds it.
class RequestGroup {
 public:
  struct State;
  explicit RequestGroup(std::shared_ptr<State> state) : state_(std::move(state)) {}

  // The events that arrived since the last call, waiting up to `timeout` for one.
  std::vector<GroupEvent> next(std::chrono::milliseconds timeout);
  // Every request's final event has been returned by next().
  bool done() const;
  // Ends every unfinished request; their final (aborted) events still arrive through next().
  void abort();

 private:
  std::shared_ptr<State> state_;
};

// The server's door to the engine: admission against --max-queue, the drain on shutdown, and
// the metrics of every finished request.
class EngineClient {
 public:
  EngineClient(AsyncLLM& llm, int32_t max_queue, ServerMetrics& metrics);

  // Queues all of `requests` or none: throws ApiError 429 when they would take more than
  // --max-queue requests in flight, 503 once the server is shutting down.
  std::shared_ptr<RequestGroup> submit(std::vector<Request> requests);
  int32_t in_flight() const;

  // From now on submit() refuses with 503.
  void stop_accepting();
  // Waits until no request is in flight; false when `deadline` came first.
  bool wait_until_idle(std::chrono::steady_clock::time_point deadline);
  // Aborts every request in flight.
  void abort_all();

 private:
  void request_finished(const StreamEvent& event);

  AsyncLLM& llm_;
  const int32_t max_queue_;
  ServerMetrics& metrics_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  int32_t in_flight_ = 0;
  bool accepting_ = true;
  std::vector<std::weak_ptr<RequestGroup>> groups_;
};

}  // namespace baton::serve
