#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "baton/llm.h"

namespace baton::cli {

// Flags that load a model and size its engine, shared by run, batch, chat and the server.
// -m is optional: the command then calls resolve_model.
void add_model_flags(CLI::App& cmd, LLMOptions& options);
// A Hugging Face checkpoint directory becomes its cached GGUF conversion; any other path is
// returned as it is (the loader reports a missing or bad file).
std::string resolve_model_path(const std::string& model);
// resolve_model_path, and an unset `options.model` becomes the bundled demo model, said in one
// line on stderr.
void resolve_model(LLMOptions& options);
// Sampling and stopping flags shared by the commands that generate.
void add_generation_flags(CLI::App& cmd, GenerationParams& params);

}  // namespace baton::cli
