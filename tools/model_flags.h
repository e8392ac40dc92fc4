#pragma once

#include <CLI/CLI.hpp>

#include "baton/llm.h"

namespace baton::cli {

// Flags that load a model and size its engine, shared by run, batch and the server.
void add_model_flags(CLI::App& cmd, LLMOptions& options);
// Sampling and stopping flags shared by the commands that generate.
void add_generation_flags(CLI::App& cmd, GenerationParams& params);

}  // namespace baton::cli
