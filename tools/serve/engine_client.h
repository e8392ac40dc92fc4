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

class EngineClient;
class LengthLog;

// One event of one of a group's requests; `request` is its position in the group.
struct GroupEvent {
  size_t request = 0;
  StreamEvent event;
};

// The engine requests one HTTP call made (a completion call may carry several prompts). The
// HTTP thread waits on it while AsyncLLM's text thread feeds it. It lives as long as the HTTP
// response that uses it, which is what the shutdown drain waits for.
class RequestGroup {
 public:
  struct State;
  RequestGroup(std::shared_ptr<State> state, EngineClient& client);
  ~RequestGroup();
  RequestGroup(const RequestGroup&) = delete;
  RequestGroup& operator=(const RequestGroup&) = delete;

  // The events that arrived since the last call, waiting up to `timeout` for one.
  std::vector<GroupEvent> next(std::chrono::milliseconds timeout);
  // Every request's final event has been returned by next().
  bool done() const;
  // Waits for every request; their outputs in order. A request the engine rejected (a prompt
  // larger than the KV pool) is ApiError 400 with the engine's message; one aborted before its
  // first token (the server is shutting down) is ApiError 503.
  std::vector<GenerationOutput> wait_outputs();
  // Ends every unfinished request; their final (aborted) events still arrive through next().
  void abort();

 private:
  std::shared_ptr<State> state_;
  EngineClient& client_;
};

// The server's door to the engine: admission against --max-queue, the drain on shutdown, and
// the metrics of every finished request.
class EngineClient {
 public:
  // `length_log` may be null.
  EngineClient(AsyncLLM& llm, int32_t max_queue, ServerMetrics& metrics, LengthLog* length_log);

  // Queues all of `requests` or none: throws ApiError 429 when they would take more than
  // --max-queue requests in flight, 503 once the server is shutting down.
  std::shared_ptr<RequestGroup> submit(std::vector<Request> requests);
  int32_t in_flight() const;

  // From now on submit() refuses with 503.
  void stop_accepting();
  // Waits until no request is in flight and every response using one has been sent; false
  // when `deadline` came first.
  bool wait_until_idle(std::chrono::steady_clock::time_point deadline);
  // Aborts every request in flight.
  void abort_all();

 private:
  friend class RequestGroup;
  // `adapter`: the request's LoRA adapter, empty for the base model.
  void request_finished(const StreamEvent& event, const std::string& adapter);
  void group_closed();

  AsyncLLM& llm_;
  const int32_t max_queue_;
  ServerMetrics& metrics_;
  LengthLog* const length_log_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  int32_t in_flight_ = 0;
  int32_t open_groups_ = 0;
  bool accepting_ = true;
  std::vector<std::weak_ptr<RequestGroup>> groups_;
};

}  // namespace baton::serve
