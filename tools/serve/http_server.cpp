#include "tools/serve/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <thread>

#include "baton/error.h"
#include "tools/serve/api_error.h"
#include "tools/serve/api_key.h"
#include "tools/serve/connection_pool.h"
#include "tools/serve/openai_format.h"
#include "tools/serve/playground.h"
#include "tools/serve/routes.h"

namespace baton::serve {
namespace {

using RouteFn = void (*)(const RouteContext&, const httplib::Request&, httplib::Response&);

// Connections beyond the queue limit by default: they answer the requests refused with 429 and
// the routes that do not generate (health, metrics, models).
constexpr int32_t kSpareConnections = 16;
constexpr int32_t kMaxConnections = 65536;
// The most alternatives per token the engine reports.
constexpr int32_t kEngineMaxLogprobs = 20;
// After the abort at the end of a drain, how long aborted requests get to send their last bytes.
constexpr std::chrono::seconds kAbortGrace{5};

void write_error(httplib::Response& response, const ApiError& error) {
  response.status = error.status();
  if (error.status() == 429 || error.status() == 503) response.set_header("Retry-After", "1");
  response.set_content(json_text(openai_error_body(error)), "application/json");
}

bool needs_key(const std::string& path) {
  return path.starts_with("/v1/") || path.starts_with("/generate");
}

std::string default_model_name(const std::string& path) {
  std::filesystem::path p(path);
  return p.extension() == ".gguf" ? p.stem().string() : p.filename().string();
}

// Checked before the model loads, so a bad flag fails at once.
ServeOptions validated(ServeOptions options) {
  if (options.max_queue < 1) {
    throw Error(ErrorCategory::kInvalidArgument, "--max-queue must be at least 1");
  }
  // Each connection served is a thread started with the server.
  if (options.max_connections < 0 || options.max_connections > kMaxConnections) {
    throw Error(
        ErrorCategory::kInvalidArgument,
        "--max-connections must be between 0 (the default) and " + std::to_string(kMaxConnections));
  }
  if (options.max_connections == 0) {
    options.max_connections = static_cast<int32_t>(
        std::min<int64_t>(int64_t{options.max_queue} + kSpareConnections, kMaxConnections));
  }
  const cli::RequestLimits& limits = options.limits;
  if (limits.max_completions < 1 || limits.max_stop_strings < 0 || limits.max_prompt_tokens < 0 ||
      limits.max_output_tokens < 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "--max-best-of must be at least 1, and --max-stop-sequences, "
                "--max-prompt-tokens and --max-output-tokens not negative");
  }
  if (limits.max_logprobs < 0 || limits.max_logprobs > kEngineMaxLogprobs) {
    throw Error(ErrorCategory::kInvalidArgument,
                "--max-logprobs must be between 0 and " + std::to_string(kEngineMaxLogprobs));
  }
  if (!(options.shutdown_timeout_seconds >= 0)) {
    throw Error(ErrorCategory::kInvalidArgument, "--shutdown-timeout must not be negative");
  }
  if (options.allow_runtime_lora && options.model.max_loras == 0) {
    options.model.max_loras = static_cast<int32_t>(options.model.lora.size()) + 1;
  }
  return options;
}

}  // namespace

Server::Server(const ServeOptions& options)
    : options_(validated(options)),
      length_log_(options.length_log.empty() ? nullptr
                                             : std::make_unique<LengthLog>(options.length_log)),
      llm_(std::make_unique<AsyncLLM>(options_.model)),
      engine_(
          std::make_unique<EngineClient>(*llm_, options.max_queue, metrics_, length_log_.get())) {
  const ModelSummary summary = llm_->summary();
  const std::string model_name = options.served_model_name.empty()
                                     ? default_model_name(options.model.model)
                                     : options.served_model_name;
  for (const LoraOptions& lora : options.model.lora) {
    if (lora.name == model_name) {
      throw Error(ErrorCategory::kInvalidArgument, "the LoRA adapter '" + lora.name +
                                                       "' has the served model's name; name it "
                                                       "with --lora NAME=PATH");
    }
    adapters_.add(lora.name, lora.path);
  }
  context_ = std::make_unique<RouteContext>(RouteContext{
      .llm = *llm_,
      .engine = *engine_,
      .metrics = metrics_,
      .model_name = model_name,
      .adapters = adapters_,
      .context_size = summary.context_size,
      .vocab_size = summary.n_vocab,
      .limits = options_.limits,
      .priority_scheduling = options_.model.scheduling_policy == SchedulingPolicy::kPriority});
  // Every HTTP call holds its connection's thread for its whole generation; httplib takes
  // ownership of the pool it is handed.
  const auto connections = static_cast<size_t>(options_.max_connections);
  http_.new_task_queue = [connections] { return new ConnectionPool(connections); };
  http_.set_payload_max_length(options.max_body_bytes);
  // Streamed tokens are small writes; Nagle's algorithm would hold each for the client's ACK.
  http_.set_tcp_nodelay(true);
  add_routes();
  // httplib's default options (address reuse), plus a note of the listening socket for below.
  http_.set_socket_options([this](int socket) {
    const int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_socket_ = socket;
  });
  port_ = options.port == 0 ? http_.bind_to_any_port(options.host)
                            : (http_.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port_ <= 0) {
    throw Error(ErrorCategory::kIo, "cannot listen on " + options.host + ":" +
                                        std::to_string(options.port) +
                                        " (address in use or not available)");
  }
  // httplib listens with a backlog of 5, so a burst of clients connecting at once overflows the
  // accept queue and some of them fail; listen() again on the bound socket raises the backlog.
  ::listen(listen_socket_, SOMAXCONN);
}

Server::~Server() {
  shutdown();
  // The engine's last callbacks reach engine_ and metrics_, so it goes first.
  llm_.reset();
}

bool Server::run() {
  running_ = true;
  const bool served = draining_ || http_.listen_after_bind();
  running_ = false;
  return served;
}

void Server::abort_in_flight() {
  engine_->abort_all();
}

void Server::shutdown() {
  std::call_once(shutdown_once_, [this] {
    draining_ = true;
    engine_->stop_accepting();
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(options_.shutdown_timeout_seconds));
    if (!engine_->wait_until_idle(deadline)) {
      std::cerr << "baton serve: aborting " << engine_->in_flight()
                << " requests still in flight after the shutdown timeout\n";
      const auto grace_end = std::chrono::steady_clock::now() + kAbortGrace;
      do {
        engine_->abort_all();
      } while (!engine_->wait_until_idle(std::min(
                   grace_end, std::chrono::steady_clock::now() + std::chrono::milliseconds(100))) &&
               std::chrono::steady_clock::now() < grace_end);
    }
    // httplib's stop() does nothing until listening has begun, so it is repeated until run()
    // has returned; run() itself returns at once when it starts after the drain.
    http_.stop();
    while (running_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      http_.stop();
    }
  });
}

bool Server::authorized(const httplib::Request& request) const {
  if (options_.api_key.empty() || !needs_key(request.path)) return true;
  return bearer_token_matches(request.get_header_value("Authorization"), options_.api_key);
}

void Server::add_routes() {
  const auto route = [this](RouteFn fn) {
    return [this, fn](const httplib::Request& request, httplib::Response& response) {
      try {
        fn(*context_, request, response);
      } catch (const ApiError& e) {
        write_error(response, e);
      } catch (const Error& e) {
        const bool caller_fault = e.category() == ErrorCategory::kInvalidArgument;
        write_error(response, ApiError(caller_fault ? 400 : 500, e.what(), "",
                                       caller_fault ? "invalid_request_error" : "server_error"));
      } catch (const std::exception& e) {
        write_error(response, ApiError(500, e.what(), "", "server_error"));
      }
    };
  };
  http_.set_pre_routing_handler(
      [this](const httplib::Request& request, httplib::Response& response) {
        // httplib keeps the connection open after this answer (its keep-alive is server-wide),
        // so a refused client that reuses it is refused again.
        if (ConnectionPool::refusing_connection()) {
          write_error(response, ApiError(503,
                                         "too many connections: this server serves " +
                                             std::to_string(options_.max_connections) +
                                             " at once (--max-connections)",
                                         "", "server_error"));
          return httplib::Server::HandlerResponse::Handled;
        }
        if (!authorized(request)) {
          write_error(response, ApiError(401, "a valid API key is required (Authorization: Bearer)",
                                         "", "authentication_error"));
          return httplib::Server::HandlerResponse::Handled;
        }
        if (draining_ && needs_key(request.path)) {
          write_error(response, ApiError(503, "the server is shutting down", "", "server_error"));
          return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
      });
  // httplib's own errors (no such route, body too large) get an OpenAI-style body too.
  http_.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& request, httplib::Response& response) {
        if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        const std::string message = response.status == 404 ? "no route for " + request.path
                                    : response.status == 413
                                        ? "the request body is too large"
                                        : "HTTP error " + std::to_string(response.status);
        write_error(response, ApiError(response.status, message));
        return httplib::Server::HandlerResponse::Handled;
      }));
  http_.set_logger([this](const httplib::Request&, const httplib::Response& response) {
    metrics_.count_response(response.status);
  });

  http_.Post("/v1/completions", route(handle_completions));
  http_.Post("/v1/chat/completions", route(handle_chat_completions));
  http_.Post("/generate", route(handle_generate));
  http_.Post("/generate_stream", route(handle_generate_stream));
  if (options_.allow_runtime_lora) {
    http_.Post("/v1/load_lora_adapter", route(handle_load_lora_adapter));
    http_.Post("/v1/unload_lora_adapter", route(handle_unload_lora_adapter));
  }
  http_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& response) {
    const auto entry = [this](const std::string& id, const std::string& root,
                              const nlohmann::json& parent) {
      return nlohmann::json{{"id", id},
                            {"object", "model"},
                            {"created", unix_seconds()},
                            {"owned_by", "baton"},
                            {"root", root},
                            {"parent", parent},
                            {"max_model_len", context_->context_size}};
    };
    // Each LoRA adapter is a model of its own whose parent is the base, as vLLM lists them.
    // json::array, not braces: `json x = {one_json}` copies one_json under clang but makes a
    // one-element array under gcc.
    nlohmann::json data =
        nlohmann::json::array({entry(context_->model_name, context_->model_name, nullptr)});
    for (const auto& [name, path] : context_->adapters.list()) {
      data.push_back(entry(name, path, context_->model_name));
    }
    response.set_content(json_text({{"object", "list"}, {"data", data}}), "application/json");
  });
  http_.Get("/health", [this](const httplib::Request&, httplib::Response& response) {
    response.status = draining_ ? 503 : 200;
    response.set_content(draining_ ? "{\"status\":\"shutting down\"}" : "{\"status\":\"ok\"}",
                         "application/json");
  });
  http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(
        metrics_.render(llm_->stats(), llm_->replica_stats(), engine_->in_flight()),
        "text/plain; version=0.0.4");
  });
  add_playground_routes(http_);
}

}  // namespace baton::serve
