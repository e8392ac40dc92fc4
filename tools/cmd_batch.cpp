#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>

#include "baton/error.h"
#include "tools/commands.h"
#include "tools/model_flags.h"
#include "tools/request_json.h"

namespace baton::cli {
namespace {

struct BatchFlags {
  LLMOptions model;
  GenerationParams defaults;
  std::string input;
  std::string output;
};

std::vector<Request> read_requests(const std::string& path, const GenerationParams& defaults) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCategory::kIo, "cannot open " + path);
  std::vector<Request> requests;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      requests.push_back(request_from_json(nlohmann::json::parse(line), defaults));
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(ErrorCategory::kInvalidArgument,
                  path + " line " + std::to_string(number) + ": not JSON: " + e.what());
    } catch (const Error& e) {
      throw Error(e.category(), path + " line " + std::to_string(number) + ": " + e.what());
    }
  }
  return requests;
}

}  // namespace

Action add_batch_command(CLI::App& app) {
  auto flags = std::make_shared<BatchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "batch", "run a JSONL file of requests through the engine together, write JSONL results");
  add_model_flags(*cmd, flags->model);
  add_generation_flags(*cmd, flags->defaults);
  cmd->add_option("--input", flags->input, "JSONL: one {\"prompt\": ..., sampling fields} a line")
      ->required();
  cmd->add_option("--output", flags->output,
                  "JSONL results, one a line in input order (- = stdout)")
      ->default_val("-");
  return [flags] {
    resolve_model(flags->model);
    if (follow_if_follower(flags->model)) return 0;
    if (flags->model.lora.size() == 1) flags->defaults.lora = flags->model.lora.front().name;
    const std::vector<Request> requests = read_requests(flags->input, flags->defaults);
    LLM llm(flags->model);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<GenerationOutput> outputs = llm.generate(requests);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::ofstream file;
    if (flags->output != "-") {
      file.open(flags->output);
      if (!file) throw Error(ErrorCategory::kIo, "cannot write " + flags->output);
    }
    std::ostream& out = flags->output == "-" ? std::cout : file;
    for (size_t i = 0; i < outputs.size(); ++i) {
      nlohmann::json line = output_to_json(outputs[i]);
      line["index"] = i;
      line["prompt"] = requests[i].prompt;
      out << line.dump() << "\n";
    }
    const EngineStats stats = llm.stats();
    // Generation only, without loading: what tools/bench/compare_python.py sets LLM.generate
    // against.
    std::cerr << "batch: " << outputs.size() << " requests, " << stats.generated_tokens
              << " tokens generated in " << stats.steps << " engine steps, " << std::fixed
              << std::setprecision(3) << seconds << " s (" << std::setprecision(1)
              << static_cast<double>(stats.generated_tokens) / seconds << " tokens/s)\n";
    return 0;
  };
}

}  // namespace baton::cli
