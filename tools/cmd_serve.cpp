#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "core/formats/hf_import/convert_checkpoint.h"
#include "tools/commands.h"
#include "tools/model_flags.h"
#include "tools/serve/http_server.h"

namespace baton::cli {
namespace {

// SIGINT and SIGTERM are taken by one thread with sigwait, so the drain runs as ordinary code
// rather than inside a signal handler; every other thread has them blocked.
sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

Action add_serve_command(CLI::App& app) {
  auto options = std::make_shared<serve::ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "serve a model over an OpenAI-compatible HTTP API");
  add_model_flags(*cmd, options->model);
  add_data_parallel_flag(*cmd, options->model.parallel);
  cmd->add_option("--host", options->host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", options->port, "TCP port; 0 picks a free one")->capture_default_str();
  cmd->add_option("--api-key", options->api_key,
                  "require \"Authorization: Bearer KEY\" on /v1 and /generate routes");
  cmd->add_option("--served-model-name", options->served_model_name,
                  "model id clients use (default: the file or directory name without .gguf)");
  cmd->add_option("--max-queue", options->max_queue, "requests in flight before new ones get 429")
      ->capture_default_str();
  cmd->add_option("--shutdown-timeout", options->shutdown_timeout_seconds,
                  "seconds SIGTERM/SIGINT waits for requests in flight before aborting them")
      ->capture_default_str();
  cmd->add_option("--max-connections", options->max_connections,
                  "open connections served at once; more get 503 (default: --max-queue + 16)");
  cmd->add_option("--max-body-bytes", options->max_body_bytes, "largest request body accepted")
      ->capture_default_str();
  cli::RequestLimits& limits = options->limits;
  cmd->add_option("--max-prompt-tokens", limits.max_prompt_tokens,
                  "longest prompt accepted, in tokens (default: the context size)");
  cmd->add_option("--max-output-tokens", limits.max_output_tokens,
                  "largest max_tokens accepted (default: what the context has room for)");
  cmd->add_option("--max-best-of", limits.max_completions,
                  "largest n, best_of and beam width a request may ask for")
      ->capture_default_str();
  cmd->add_option("--max-stop-sequences", limits.max_stop_strings,
                  "stop strings a request may give")
      ->capture_default_str();
  cmd->add_option("--max-logprobs", limits.max_logprobs,
                  "alternatives per token a request may ask for (logprobs, top_logprobs)")
      ->capture_default_str();
  cmd->add_flag("--allow-runtime-lora", options->allow_runtime_lora,
                "serve POST /v1/load_lora_adapter and /v1/unload_lora_adapter (vLLM's routes)");
  cmd->add_option("--length-log", options->length_log,
                  "append each finished request's prompt tokens, settings and output length to "
                  "FILE, one JSON object per line, for `baton length-head`");
  return [options] {
    // A checkpoint directory is served under its own name, not its cached conversion's.
    if (options->served_model_name.empty() && std::filesystem::is_directory(options->model.model)) {
      options->served_model_name = hf::directory_name(options->model.model);
    }
    resolve_model(options->model);
    if (follow_if_follower(options->model)) return 0;
    const sigset_t signals = shutdown_signals();
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    serve::Server server(*options);
    std::cerr << "baton serve: model '" << server.model_name() << "' on http://" << options->host
              << ":" << server.port() << " (playground at /; Ctrl-C or SIGTERM to stop)"
              << std::endl;
    print_memory(server.model_summary());
    std::atomic<bool> stopped{false};
    std::jthread signal_waiter([&server, &stopped, signals] {
      std::optional<std::jthread> drain;
      for (int signal = 0; sigwait(&signals, &signal) == 0 && !stopped;) {
        if (!drain) {
          std::cerr << "baton serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
                    << ", finishing requests in flight (again to abort them)" << std::endl;
          drain.emplace([&server] { server.shutdown(); });
        } else {
          std::cerr << "baton serve: aborting requests in flight" << std::endl;
          server.abort_in_flight();
        }
      }
    });
    const bool served = server.run();
    stopped = true;
    pthread_kill(signal_waiter.native_handle(), SIGTERM);  // ends its sigwait
    if (!served) {
      std::cerr << "error: listening on " << options->host << ":" << server.port() << " failed"
                << std::endl;
      return 1;
    }
    std::cerr << "baton serve: stopped" << std::endl;
    return 0;
  };
}

}  // namespace baton::cli
