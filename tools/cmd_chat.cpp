// `baton chat`: an interactive conversation in the terminal. Each answer is generated from the
// whole conversation rendered by the model's chat template, streamed as it is made, and
// followed by its speed. Lines starting with / are commands. Reads stdin line by line, so a
// script can pipe a conversation in.

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include "baton/async_llm.h"
#include "baton/error.h"
#include "tools/commands.h"
#include "tools/model_flags.h"

namespace baton::cli {
namespace {

struct ChatFlags {
  LLMOptions model;
  GenerationParams generation;
  std::string system;
  int64_t seed = -1;
};

// One answer streamed to stdout; returns it, with its output for the timings.
GenerationOutput answer(AsyncLLM& llm, Request request) {
  std::mutex mutex;
  std::condition_variable finished;
  std::optional<GenerationOutput> output;
  std::string error;
  bool done = false;
  llm.add_request(std::move(request), [&](const StreamEvent& event) {
    std::cout << event.text << std::flush;
    if (!event.finished) return;
    std::lock_guard lock(mutex);
    output = event.output;
    error = event.error;
    done = true;
    finished.notify_one();
  });
  std::unique_lock lock(mutex);
  finished.wait(lock, [&] { return done; });
  if (!error.empty()) throw Error(ErrorCategory::kInvalidArgument, error);
  return output.value_or(GenerationOutput{});
}

void print_help() {
  std::cerr << "commands: /reset (forget the conversation), /exit (or end of input)\n";
}

}  // namespace

Action add_chat_command(CLI::App& app) {
  auto flags = std::make_shared<ChatFlags>();
  CLI::App* cmd = app.add_subcommand("chat", "talk with a model in the terminal");
  add_model_flags(*cmd, flags->model);
  add_generation_flags(*cmd, flags->generation);
  cmd->add_option("--system", flags->system, "system message that opens the conversation");
  cmd->add_option("-s,--seed", flags->seed, "random seed (default: random)");
  return [flags] {
    resolve_model(flags->model);
    if (follow_if_follower(flags->model)) return 0;
    flags->generation.lora = single_lora(flags->model);
    flags->generation.sampling.seed =
        flags->seed >= 0 ? static_cast<uint64_t>(flags->seed) : std::random_device{}();
    AsyncLLM llm(flags->model);
    std::vector<ChatMessage> conversation;
    const auto reset = [&] {
      conversation.clear();
      if (!flags->system.empty()) conversation.push_back({"system", flags->system});
    };
    reset();
    std::cerr << "baton chat: " << llm.summary().architecture << " model; ";
    print_help();
    print_memory(llm.summary());
    for (std::string line; std::cout << "> " << std::flush, std::getline(std::cin, line);) {
      if (line == "/exit" || line == "/quit") break;
      if (line == "/reset") {
        reset();
        std::cout << "(conversation reset)\n";
        continue;
      }
      if (line.starts_with("/")) {
        print_help();
        continue;
      }
      if (line.empty()) continue;
      conversation.push_back({"user", line});
      const ChatPrompt prompt = llm.chat_prompt(conversation, /*add_generation_prompt=*/true);
      const GenerationOutput out =
          answer(llm, Request{.params = flags->generation, .prompt_tokens = prompt.tokens});
      conversation.push_back({"assistant", out.text});
      const double decode_tokens = out.tokens.empty() ? 0 : out.tokens.size() - 1.0;
      std::cout << "\n" << std::flush;  // before the stats on stderr, when both are one pipe
      std::fprintf(stderr, "[%zu tokens, %.1f tok/s, first token after %.0f ms]\n",
                   out.tokens.size(), decode_tokens / std::max(out.generation_seconds, 1e-9),
                   out.prompt_seconds * 1e3);
    }
    std::cout << "\n";
    return 0;
  };
}

}  // namespace baton::cli
