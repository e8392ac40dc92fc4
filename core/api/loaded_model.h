#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/llm.h"
#include "core/api/chat_formatter.h"
#include "core/api/placement.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/runtime/backend.h"
#include "core/serving/engine/engine.h"
#include "models/model.h"

namespace baton {

// Everything LLM and AsyncLLM load from LLMOptions before serving: the mapped file, the backend,
// the model, its tokenizer and the engine's configuration (context and KV pool sizes).
struct LoadedModel {
  explicit LoadedModel(const LLMOptions& options);

  // The request's prompt tokens: its token ids as given, else its text tokenized. Throws
  // baton::Error when they leave no room in the context.
  std::vector<int32_t> tokenize_prompt(const Request& request) const;
  ModelSummary summary() const;

  // The backend comes first: a wrong --backend is reported before any file is read.
  std::unique_ptr<Backend> backend;
  gguf::GgufFile file;
  // Before the model, which loads only this rank's part, and outlives it: the model's shard
  // points at its tensor-parallel group.
  Placement placement;
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  ChatFormatter chat;
  int32_t context_size = 0;
  // With the adapters of LLMOptions::lora, which the engine reads and checks against the model.
  EngineConfig engine_config;
};

// Finished requests by reason, counted where completions are assembled (stop strings end
// requests outside the engine).
struct FinishCounts {
  void count(const GenerationOutput& output);

  int64_t stop = 0, length = 0, aborted = 0, failed = 0;
};

// The engine's counters and gauges with `finished` merged in.
EngineStats engine_stats(const Engine& engine, const FinishCounts& finished);

}  // namespace baton
