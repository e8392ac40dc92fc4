#include <iostream>
#include <map>

#include "core/runtime/comm/world.h"
#include "tools/commands.h"
#include "tools/version/build_info.h"

int main(int argc, char** argv) {
  CLI::App app{"Baton: portable LLM inference"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return baton::cli::version_text(); });
  const std::map<std::string, baton::cli::Action> actions = {
      {"run", baton::cli::add_run_command(app)},
      {"tokenize", baton::cli::add_tokenize_command(app)},
      {"info", baton::cli::add_info_command(app)},
      {"backends", baton::cli::add_backends_command(app)},
      {"synth", baton::cli::add_synth_command(app)},
      {"quantize", baton::cli::add_quantize_command(app)},
      {"convert", baton::cli::add_convert_command(app)},
      {"bench", baton::cli::add_bench_command(app)},
      {"batch", baton::cli::add_batch_command(app)},
      {"serve", baton::cli::add_serve_command(app)},
      {"chat", baton::cli::add_chat_command(app)},
      {"perplexity", baton::cli::add_perplexity_command(app)},
      {"lora", baton::cli::add_lora_command(app)},
      {"plan", baton::cli::add_plan_command(app)},
      {"length-head", baton::cli::add_length_head_command(app)},
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (const auto& [name, action] : actions) {
      if (app.got_subcommand(name)) return action();
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << std::endl;
    // In a distributed run the other ranks may be waiting on this one.
    baton::abort_open_world();
    return 1;
  }
  return 1;
}
