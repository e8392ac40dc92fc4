#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace baton::cli {

// Each subcommand registers its flags on the app and returns the action to run when chosen.
using Action = std::function<int()>;

Action add_run_command(CLI::App& app);
Action add_tokenize_command(CLI::App& app);
Action add_info_command(CLI::App& app);
Action add_backends_command(CLI::App& app);
Action add_synth_command(CLI::App& app);
Action add_quantize_command(CLI::App& app);
Action add_convert_command(CLI::App& app);
Action add_bench_command(CLI::App& app);
// `bench serve`, a subcommand of `bench`.
Action add_bench_serve_command(CLI::App& bench);
// `bench grammar`, likewise.
Action add_bench_grammar_command(CLI::App& bench);
// `bench schedule`, likewise.
Action add_bench_schedule_command(CLI::App& bench);
Action add_batch_command(CLI::App& app);
Action add_serve_command(CLI::App& app);
Action add_chat_command(CLI::App& app);
Action add_perplexity_command(CLI::App& app);
// `lora merge`.
Action add_lora_command(CLI::App& app);
Action add_plan_command(CLI::App& app);
Action add_length_head_command(CLI::App& app);

}  // namespace baton::cli
