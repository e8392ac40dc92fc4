#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "baton/llm.h"

namespace baton::cli {

// --chat-template-max-steps, --chat-template-max-bytes, --chat-template-max-depth (in
// add_model_flags).
void add_chat_template_limit_flags(CLI::App& cmd, ChatTemplateLimits& limits);
// Flags that load a model and size its engine, shared by run, batch, chat and the server: -m,
// every engine option's (add_engine_option_flags), the parallel, LoRA adapter and chat template
// limit flags. -m is optional: the command then calls resolve_model.
void add_model_flags(CLI::App& cmd, LLMOptions& options);
// A Hugging Face checkpoint directory becomes its cached GGUF conversion; any other path is
// returned as it is (the loader reports a missing or bad file).
std::string resolve_model_path(const std::string& model);
// resolve_model_path, and an unset `options.model` becomes the bundled demo model, said in one
// line on stderr.
void resolve_model(LLMOptions& options);
// "KV cache: q8_0, 8.5 KiB per token, 4096 tokens in 34.0 MiB" on stderr, and a line on the
// LoRA slots when there are any.
void print_memory(const ModelSummary& summary);
// --tensor-parallel, --pipeline-parallel, --pp-layers, --pp-micro-batches, --dist-timeout (in
// add_model_flags).
void add_parallel_flags(CLI::App& cmd, ParallelOptions& options);
// --data-parallel, for the server: the other commands run one engine replica.
void add_data_parallel_flag(CLI::App& cmd, ParallelOptions& options);
// On a rank of a distributed run other than the first: loads this rank's part of the model,
// runs the leader's steps (or serves its replica's share of the requests) until the first rank
// is done, and returns true (the command then exits 0). False in a single process and on the
// first rank, which goes on with the command.
bool follow_if_follower(const LLMOptions& options);
// --lora [NAME=]PATH and --lora-scaled [NAME=]PATH SCALE, repeatable. An adapter without a NAME
// is named after its file or directory.
void add_lora_adapter_flags(CLI::App& cmd, std::vector<LoraOptions>& adapters);
// The adapter a command that generates one stream at a time (run, chat) applies to every
// request: the only one given, or none. Throws Error(kInvalidArgument) for more than one.
std::string single_lora(const LLMOptions& options);
// Sampling and stopping flags shared by the commands that generate.
void add_generation_flags(CLI::App& cmd, GenerationParams& params);
// --grammar, --grammar-file, --json-schema and --regex (one of them), compiled into `grammar`
// as GBNF (docs/structured-outputs.md).
void add_output_constraint_flags(CLI::App& cmd, std::string& grammar);

}  // namespace baton::cli
