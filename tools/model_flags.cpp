#include "tools/model_flags.h"

#include <fstream>
#include <iterator>

#include <pthread.h>
#include <signal.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "baton/error.h"
#include "baton/structured_output.h"
#include "core/api/placement.h"

#include "tools/bundled_model.h"
#include "tools/converted_checkpoint.h"
#include "tools/option_flags.h"

namespace baton::cli {

void add_model_flags(CLI::App& cmd, LLMOptions& o) {
  cmd.add_option(
      "-m,--model", o.model,
      "GGUF file or Hugging Face checkpoint directory (default: the bundled demo model)");
  add_engine_option_flags(cmd, o);
  add_parallel_flags(cmd, o.parallel);
  add_lora_adapter_flags(cmd, o.lora);
  add_chat_template_limit_flags(cmd, o.chat_template_limits);
}

void add_chat_template_limit_flags(CLI::App& cmd, ChatTemplateLimits& limits) {
  cmd.add_option("--chat-template-max-steps", limits.max_steps,
                 "statements and expressions one chat template render may run")
      ->capture_default_str();
  cmd.add_option("--chat-template-max-bytes", limits.max_output_bytes,
                 "bytes a chat template render may write, and any one string it builds")
      ->capture_default_str();
  cmd.add_option("--chat-template-max-depth", limits.max_depth,
                 "nesting of a chat template's macro calls, blocks and expressions")
      ->capture_default_str();
}

namespace {

// "NAME=PATH", or a bare path named after its file (without the extension) or directory.
LoraOptions lora_option(const std::string& spec, float scale) {
  const size_t eq = spec.find('=');
  if (eq != std::string::npos && eq > 0) return {spec.substr(0, eq), spec.substr(eq + 1), scale};
  const std::filesystem::path path = std::filesystem::path(spec).lexically_normal();
  const std::string name =
      (path.has_filename() ? path : path.parent_path()).filename().replace_extension().string();
  return {name, spec, scale};
}

float parse_scale(const std::string& text) {
  try {
    size_t used = 0;
    const float scale = std::stof(text, &used);
    if (used == text.size() && std::isfinite(scale)) return scale;
  } catch (const std::exception&) {
  }
  // Thrown while CLI11 parses, which reports its own errors as usage errors.
  throw CLI::ValidationError("--lora-scaled",
                             "takes a path and a number, got scale '" + text + "'");
}

}  // namespace

void add_lora_adapter_flags(CLI::App& cmd, std::vector<LoraOptions>& adapters) {
  cmd.add_option_function<std::vector<std::string>>(
      "--lora",
      [&adapters](const std::vector<std::string>& specs) {
        for (const std::string& spec : specs) adapters.push_back(lora_option(spec, 1.0f));
      },
      "LoRA adapter, [NAME=]PATH: a GGUF adapter or a PEFT directory (repeatable; docs/lora.md)");
  cmd.add_option_function<std::vector<std::string>>(
         "--lora-scaled",
         [&adapters](const std::vector<std::string>& values) {
           for (size_t i = 0; i + 1 < values.size(); i += 2) {
             adapters.push_back(lora_option(values[i], parse_scale(values[i + 1])));
           }
         },
         "LoRA adapter with its update scaled: [NAME=]PATH SCALE (repeatable)")
      ->type_size(2);
}

std::string single_lora(const LLMOptions& options) {
  if (options.lora.size() > 1) {
    throw Error(ErrorCategory::kInvalidArgument,
                "this command applies one LoRA adapter to everything it generates, got " +
                    std::to_string(options.lora.size()) +
                    "; serve several by name with baton serve, or bake them into one model with "
                    "baton lora merge");
  }
  return options.lora.empty() ? "" : options.lora.front().name;
}

void add_parallel_flags(CLI::App& cmd, ParallelOptions& o) {
  cmd.add_option("--tensor-parallel", o.tensor_parallel,
                 "ranks that split every layer (under mpirun; docs/distributed.md)")
      ->capture_default_str();
  cmd.add_option("--pipeline-parallel", o.pipeline_parallel,
                 "pipeline stages of contiguous layers (under mpirun)")
      ->capture_default_str();
  cmd.add_option("--pp-layers", o.pp_layers, "layers per stage, e.g. 11,11 (default: even)")
      ->delimiter(',');
  cmd.add_option("--pp-micro-batches", o.pp_micro_batches,
                 "steps in flight through the pipeline stages (default 0: one per stage; 1: off)")
      ->capture_default_str();
  cmd.add_option("--dist-timeout", o.dist_timeout_seconds,
                 "seconds a distributed collective may wait for a silent rank")
      ->capture_default_str();
}

void add_data_parallel_flag(CLI::App& cmd, ParallelOptions& o) {
  cmd.add_option("--data-parallel", o.data_parallel,
                 "whole model replicas that share the requests (under mpirun)")
      ->capture_default_str();
}

bool follow_if_follower(const LLMOptions& options) {
  if (!is_follower_rank(options)) return false;
  // The leader decides when the run ends (mpirun forwards Ctrl-C to every rank).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  follow_leader(options);
  return true;
}

std::string resolve_model_path(const std::string& model) {
  if (!std::filesystem::is_directory(model)) return model;
  return converted_checkpoint(model).string();
}

void resolve_model(LLMOptions& options) {
  if (!options.model.empty()) {
    options.model = resolve_model_path(options.model);
    return;
  }
  options.model = bundled_model_path().string();
  std::cerr << "baton: no -m given; using the bundled demo model (a 7M-parameter Llama trained on "
               "the King James Bible): "
            << options.model << std::endl;
}

void print_memory(const ModelSummary& s) {
  std::fprintf(stderr, "KV cache: %s, %.1f KiB per token, %lld tokens in %.1f MiB\n",
               s.kv_cache_dtype.c_str(), static_cast<double>(s.kv_bytes_per_token) / 1024.0,
               static_cast<long long>(s.kv_cache_tokens),
               static_cast<double>(s.kv_bytes_per_token * s.kv_cache_tokens) / 1048576.0);
  if (s.lora_slots > 0) {
    std::fprintf(stderr, "LoRA slots: %d adapters at once, %.1f MiB", s.lora_slots,
                 static_cast<double>(s.lora_slot_bytes) / 1048576.0);
    if (s.lora_host_adapters > 0) {
      std::fprintf(stderr, "; host memory keeps %d adapters", s.lora_host_adapters);
    }
    std::fputc('\n', stderr);
  }
}

namespace {

std::string read_text_file(const char* flag, const std::string& path) {
  std::ifstream file(path);
  std::string text(std::istreambuf_iterator<char>(file), {});
  if (!file || text.empty())
    throw CLI::ValidationError(flag, path + " could not be read, or is empty");
  return text;
}

// The grammar `compile` makes, with its error as the flag's.
template <typename Compile>
std::string compiled(const char* flag, Compile&& compile) {
  try {
    return compile();
  } catch (const Error& e) {
    throw CLI::ValidationError(flag, e.what());
  }
}

}  // namespace

void add_generation_flags(CLI::App& cmd, GenerationParams& g) {
  SamplingParams& s = g.sampling;
  cmd.add_option("-n,--n-predict", g.max_tokens, "tokens to generate")->capture_default_str();
  cmd.add_option("--temp", s.temperature, "temperature; 0 = greedy")->capture_default_str();
  cmd.add_option("--top-k", s.top_k, "top-k; 0 = off")->capture_default_str();
  cmd.add_option("--top-p", s.top_p, "top-p; 1 = off")->capture_default_str();
  cmd.add_option("--min-p", s.min_p, "min-p; 0 = off")->capture_default_str();
  cmd.add_option("--repeat-penalty", s.repetition_penalty, "repetition penalty; 1 = off")
      ->capture_default_str();
  cmd.add_option("--repeat-last-n", s.repeat_last_n, "tokens the repetition penalty considers")
      ->capture_default_str();
  cmd.add_option("--presence-penalty", s.presence_penalty, "OpenAI presence penalty")
      ->capture_default_str();
  cmd.add_option("--frequency-penalty", s.frequency_penalty, "OpenAI frequency penalty")
      ->capture_default_str();
  cmd.add_option("--stop", g.stop, "stop string (repeatable); not included in the output");
  cmd.add_flag("--parse-special", g.parse_special,
               "treat special-token text such as <s> in the prompt as tokens");
  cmd.add_flag("--ignore-eos", g.ignore_eos, "generate past end-of-text tokens");
  add_output_constraint_flags(cmd, g.grammar);
}

void add_output_constraint_flags(CLI::App& cmd, std::string& grammar_text) {
  std::string* const g = &grammar_text;
  auto* grammar = cmd.add_option("--grammar", grammar_text,
                                 "GBNF grammar (llama.cpp's) the output must follow");
  auto* grammar_file =
      cmd.add_option_function<std::string>(
             "--grammar-file",
             [g](const std::string& path) { *g = read_text_file("--grammar-file", path); },
             "file of a GBNF grammar the output must follow")
          ->check(CLI::ExistingFile);
  auto* schema = cmd.add_option_function<std::string>(
      "--json-schema",
      [g](const std::string& value) {
        // llama.cpp takes the schema inline; a file is accepted too.
        const std::string text =
            value.starts_with('{') ? value : read_text_file("--json-schema", value);
        *g = compiled("--json-schema", [&] { return json_schema_grammar(text); });
      },
      "JSON Schema (inline, or a file) the output must validate against");
  auto* regex = cmd.add_option_function<std::string>(
      "--regex",
      [g](const std::string& pattern) {
        *g = compiled("--regex", [&] { return regex_grammar(pattern); });
      },
      "regular expression the whole output must match");
  grammar->excludes(grammar_file, schema, regex);
  grammar_file->excludes(schema, regex);
  schema->excludes(regex);
}

}  // namespace baton::cli
