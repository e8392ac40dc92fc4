#pragma once

#include <CLI/CLI.hpp>

#include "baton/llm.h"

namespace baton::cli {

// Flags that load a model and size its engine, shared by run, batch, chat and the server.
// -m is optional: the command then calls use_bundled_model_if_unset.
void add_model_flags(CLI::App& cmd, LLMOptions& options);
// Points an unset `options.model` at the bundled demo model and says so in one line on stderr.
void use_bundled_model_if_unset(LLMOptions& options);
// Sampling and stopping flags shared by the commands that generate.
void add_generation_flags(CLI::App& cmd, GenerationParams& params);

}  // namespace baton::cli
