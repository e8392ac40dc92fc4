#pragma once

// Baton's asynchronous serving API: requests are submitted from any thread and their output
// streams back token by token while the engine batches them with every other request.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/llm.h"

namespace baton {

// One piece of a request's output. Events of one request arrive in order; its last has
// `finished` set and is the only one with `output` or `error`.
struct StreamEvent {
  uint64_t request_id = 0;
  // The completion this text and these tokens belong to: the sample index (0 .. best_of-1), or
  // the rank for beam search, whose beams arrive whole at the end.
  int32_t index = 0;
  std::string text;  // new text: complete UTF-8, withholding what may start a stop string
  std::vector<int32_t> tokens;          // new token ids
  std::vector<TokenLogprobs> logprobs;  // one per new token when the request asked for them
  bool finished = false;
  FinishReason finish_reason = FinishReason::kLength;  // of the first completion, when finished
  std::optional<GenerationOutput> output;              // when finished without error
  std::string error;  // when finished because the request was rejected (e.g. an oversized prompt)
  // With `error`: the engine failed it (a failed step, a lost rank of a distributed run) rather
  // than refused it, so a server answers 503, not 400.
  bool unavailable = false;
};

// Runs on AsyncLLM's text thread: keep it short (it delays every request's text), and do not
// destroy the AsyncLLM from inside it. It may call add_request and abort. An exception thrown
// from it aborts that request.
using EventCallback = std::function<void(const StreamEvent& event)>;

// A loaded model serving requests concurrently. Thread-safe. Two threads run behind it: the
// engine thread builds the engine, then runs only model steps and engine commands (add, abort);
// the text thread tokenizes prompts, turns engine output into text (stop strings, UTF-8) and
// calls the callbacks. Errors in a request end that request with an error event; the others go
// on.
class BATON_API AsyncLLM {
 public:
  explicit AsyncLLM(const LLMOptions& options);
  // Aborts every request still in flight (each gets a final kAborted event) and joins the
  // threads.
  ~AsyncLLM();
  AsyncLLM(const AsyncLLM&) = delete;
  AsyncLLM& operator=(const AsyncLLM&) = delete;

  // Queues the request and returns its id at once; `on_event` receives its output.
  uint64_t add_request(Request request, EventCallback on_event);
  // Ends the request with a final kAborted event; an unknown or finished id is ignored.
  void abort(uint64_t id);
  EngineStats stats() const;
  // Each engine replica's counters and gauges (finish counts left zero), in replica order: one
  // entry unless ParallelOptions::data_parallel routes requests over several.
  std::vector<EngineStats> replica_stats() const;
  ModelSummary summary() const;

  // Safe from any thread: the tokenizer is immutable once loaded.
  std::vector<int32_t> tokenize(std::string_view text, bool add_special, bool parse_special) const;
  // The text of `tokens` as generation gives it: control tokens leave no text.
  std::string detokenize(const std::vector<int32_t>& tokens) const;
  // A token as text for display (logprobs): control tokens spelled out, bytes as they are.
  std::string token_text(int32_t token) const;
  // Serves a LoRA adapter under `adapter.name` from the next request on (docs/lora.md). Throws
  // baton::Error when it cannot be read or does not fit the model, its name is taken, its rank is
  // above LLMOptions::max_lora_rank, or there are no LoRA slots (LLMOptions::max_loras).
  void load_lora_adapter(const LoraOptions& adapter);
  // Stops serving an adapter to new requests; those already using it finish with it. Throws
  // baton::Error for a name not loaded.
  void unload_lora_adapter(const std::string& name);
  // The conversation rendered by the model's chat template, and tokenized; as LLM's.
  ChatPrompt chat_prompt(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                         const std::string& tools = "") const;
  bool chat_template_renders_tools() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton
