#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <functional>

namespace baton::serve {

// httplib's task queue (one task per accepted connection) with a bound on open connections:
// the first `max_connections` are served, each by its own thread, as long as they stay open;
// one past that goes to a small pool of refusal threads, on which every request is answered 503
// (the server's pre-routing handler asks refusing_connection()). A flood of connections, or idle
// keep-alive clients, thus gets a clear error instead of queueing without bound behind the
// served ones.
class ConnectionPool : public httplib::TaskQueue {
 public:
  explicit ConnectionPool(size_t max_connections);

  void enqueue(std::function<void()> serve_connection) override;
  void shutdown() override;

  // True on a refusal thread while it serves a connection beyond the limit.
  static bool refusing_connection();

 private:
  const size_t max_connections_;
  std::atomic<size_t> open_{0};
  httplib::ThreadPool served_;
  httplib::ThreadPool refusals_;
};

}  // namespace baton::serve
