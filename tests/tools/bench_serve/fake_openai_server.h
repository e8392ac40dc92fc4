#pragma once

// An in-process OpenAI-compatible server with known timings, for testing the load client.

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace baton::testing {

struct FakeServerOptions {
  // Each request "generates" max_tokens tokens: the first after first_token_delay, then one
  // every token_interval.
  std::chrono::milliseconds first_token_delay{30};
  std::chrono::milliseconds token_interval{5};
  int fail_every = 0;      // every n-th request answers HTTP 500 (0: none)
  bool send_usage = true;  // report usage (in the last chunk when streaming)
};

// Serves GET /v1/models (one model, "fake-model"), POST /v1/completions and
// /v1/chat/completions, streamed or not. Prompt tokens are counted as whitespace-separated
// words. Streams start with a keep-alive comment, split every event across two writes, and in
// chat send the role in a chunk of its own before any content.
class FakeOpenAiServer {
 public:
  explicit FakeOpenAiServer(FakeServerOptions options = {});
  ~FakeOpenAiServer();

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }
  int max_in_flight() const { return max_in_flight_; }

 private:
  void generate(const httplib::Request& req, httplib::Response& res, bool chat);
  void enter();
  void leave() { --in_flight_; }

  FakeServerOptions options_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
};

// A local port that nothing listens on, so connecting to it is refused.
int closed_port();

}  // namespace baton::testing
