#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "baton/async_llm.h"
#include "tools/serve/engine_client.h"
#include "tools/serve/length_log.h"
#include "tools/serve/route_context.h"
#include "tools/serve/server_metrics.h"

namespace baton::serve {

struct ServeOptions {
  LLMOptions model;
  std::string host = "127.0.0.1";
  int port = 8000;                // 0: any free port (see Server::port)
  std::string api_key;            // when set, /v1 and /generate* need "Authorization: Bearer KEY"
  std::string served_model_name;  // default: the model file's name without .gguf
  int32_t max_queue = 256;        // requests in flight (running or waiting) before 429
  // Open connections served at once, each on its own thread; more get 503. 0: max_queue + 16,
  // since every request in flight holds a connection.
  int32_t max_connections = 0;
  cli::RequestLimits limits;
  double shutdown_timeout_seconds = 30;
  size_t max_body_bytes = 16u << 20;
  // vLLM's POST /v1/load_lora_adapter and /v1/unload_lora_adapter; with no --max-loras, one
  // LoRA slot more than the adapters given at start-up is reserved for them.
  bool allow_runtime_lora = false;
  // When set, every finished request is logged there for `baton length-head` (LengthLog).
  std::string length_log;
};

// Baton's HTTP front end: OpenAI-compatible completions and chat, vLLM and TGI generate, models,
// health, Prometheus metrics and a browser playground at /, over one AsyncLLM. It binds in the
// constructor, so a port in use fails early with a clear error.
class Server {
 public:
  explicit Server(const ServeOptions& options);
  ~Server();

  int port() const { return port_; }
  const std::string& model_name() const { return context_->model_name; }
  ModelSummary model_summary() const { return llm_->summary(); }
  // Serves until shutdown() has run; returns once every connection is closed, false when
  // listening failed.
  bool run();
  // Refuses new requests (503), lets those in flight finish for up to the shutdown timeout,
  // aborts the rest, then stops listening. Thread-safe; later calls do nothing.
  void shutdown();
  // Aborts every request in flight now (a second Ctrl-C during the drain).
  void abort_in_flight();

 private:
  void add_routes();
  bool authorized(const httplib::Request& request) const;

  ServeOptions options_;
  ServerMetrics metrics_;
  ServedAdapters adapters_;
  // Before the model, so that a log that cannot be opened fails before the model loads.
  std::unique_ptr<LengthLog> length_log_;  // null without --length-log
  std::unique_ptr<AsyncLLM> llm_;
  std::unique_ptr<EngineClient> engine_;
  std::unique_ptr<RouteContext> context_;
  httplib::Server http_;
  int port_ = 0;
  int listen_socket_ = -1;
  std::atomic<bool> draining_{false};
  std::atomic<bool> running_{false};
  std::once_flag shutdown_once_;
};

}  // namespace baton::serve
