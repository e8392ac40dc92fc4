#pragma once

// Baton's C++ library API. Errors are thrown as baton::Error (see baton/error.h) with a category
// and a message naming the bad value.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "baton/chat_template_limits.h"
#include "baton/export.h"
#include "baton/generation.h"
#include "baton/lora_options.h"

namespace baton {

// Distributed inference (docs/distributed.md): the process is one of data_parallel ×
// pipeline_parallel × tensor_parallel ranks that mpirun or srun started. Every layer is split
// over tensor_parallel ranks; pipeline_parallel stages run contiguous layer ranges, pp_layers
// long each (empty: as even as possible). data_parallel whole replicas of that share the
// requests: the first rank routes each to one of them (AsyncLLM only; LLM runs one replica).
// A collective that makes no progress for dist_timeout_seconds ends the run with an error naming
// the silent rank.
struct ParallelOptions {
  int32_t data_parallel = 1;
  int32_t tensor_parallel = 1;
  int32_t pipeline_parallel = 1;
  std::vector<int32_t> pp_layers;
  // Micro-batches in flight through the pipeline stages at once: 0 means one per stage, so
  // every stage has work; 1 runs one step at a time.
  int32_t pp_micro_batches = 0;
  double dist_timeout_seconds = 120;
};

struct LLMOptions {
  std::string model;         // path to a GGUF file
  std::string backend;       // "" = $BATON_BACKEND or "cpu"
  int32_t threads = 0;       // CPU threads; 0 = all cores
  int32_t context_size = 0;  // tokens per sequence; 0 = the model's trained context, capped at 4096
  int32_t kv_block_size = 16;       // tokens per KV-cache block
  double kv_cache_mib = 0;          // KV pool size; 0 = room for 4 full contexts
  int32_t max_batch_tokens = 2048;  // tokens computed per engine step (prefill chunks + decodes)
  int32_t max_seqs = 64;            // sequences per engine step
  // The order waiting requests start in: "fcfs" (arrival), "priority" (Request::priority, then
  // arrival; other policies refuse a priority) or "sjf" (shortest predicted output first, with
  // aging so that none waits past sjf_max_wait_s). docs/scheduling.md.
  std::string scheduling_policy = "fcfs";
  // sjf: tokens of credit per token a running sequence generates while a request waits.
  double sjf_aging = 1.0;
  // sjf: a waiting request whose predicted work is at most 1/sjf_overtake of a running one's
  // takes its slot, the running one waiting with its KV kept; 0 turns this off. On by default:
  // it lowered sjf's mean latency at the same p99 in simulation (`baton bench schedule`) and in
  // most served runs (docs/scheduling.md).
  double sjf_overtake = 4.0;
  double sjf_max_wait_s = 60.0;
  // KV memory set aside at admission beyond the prompt: "none", "predicted" (the predicted
  // output plus a quarter) or "max" (all of max_tokens).
  std::string kv_reservation = "none";
  // A file `baton length-head -o` wrote for this model: once a request's prefill is done, its
  // predicted length is made again from the model's state after the prompt. docs/scheduling.md.
  std::string length_head;
  bool prefix_caching = true;  // reuse KV blocks of identical prompt prefixes
  // KV cache element type: f32, f16, bf16, q8_0 (int8 with a scale per 32 values), int8_scaled
  // (a scale per head row, any head size) or fp8_e4m3 (vLLM's fp8). "int8" and "fp8" are weight
  // types here and are refused.
  std::string kv_cache_dtype = "f32";
  // CPU: repack weights for faster kernels (BackendOptions::prepack_weights); false uses every
  // weight in place from the file, which holds F16/BF16 weights once at the cost of prefill speed.
  bool repack_weights = true;
  // When grammar masks (structured outputs) are computed: "beside" the model's step, on a
  // thread of their own, or "after" it, as the logits are sampled. "auto" is beside where the
  // backend's step leaves a host core free (a GPU's, or a CPU backend on fewer threads than
  // cores) and after where the mask's thread would take a core from the step.
  std::string grammar_masks = "auto";
  ParallelOptions parallel;       // the run this process is a rank of, if any
  std::vector<LoraOptions> lora;  // adapters requests may name
  // LoRA adapters in one batch at once, each in a slot of backend memory reserved at load; 0
  // means as many as `lora` lists. max_lora_rank bounds the rank of any adapter served.
  int32_t max_loras = 0;
  int32_t max_lora_rank = 16;
  // The element type adapters are kept in on the backend, "f16" or "f32" (vLLM's --lora-dtype):
  // f16 halves the bytes a step reads for them.
  std::string lora_dtype = "f16";
  // Adapters whose weights stay in host memory, the least recently used beyond that being read
  // again from their files when next asked for; 0 keeps every one. At least max_loras.
  int32_t max_cpu_loras = 0;
  ChatTemplateLimits chat_template_limits;
};

// One prompt with its own parameters, for batches whose requests differ.
struct Request {
  std::string prompt;
  GenerationParams params;
  // When not empty, the prompt as token ids (used as given: no BOS is added), instead of `prompt`.
  std::vector<int32_t> prompt_tokens;
  int32_t priority = 0;  // higher is scheduled first when the engine is busy
};

// One of a request's n completions.
struct Completion {
  std::string text;             // the generated continuation (the prompt is not repeated)
  std::vector<int32_t> tokens;  // generated token ids
  FinishReason finish_reason = FinishReason::kLength;
  double cumulative_logprob = 0;        // sum of the tokens' log-probabilities
  std::vector<TokenLogprobs> logprobs;  // one per token when GenerationParams::logprobs > 0
};

// Timings count from the request's submission; every field is in seconds unless named tokens.
struct RequestMetrics {
  double queue_seconds = 0;  // until the engine first scheduled the request
  double ttft_seconds = 0;   // until the first generated token
  double tpot_seconds = 0;   // mean time per output token after the first (longest completion)
  double e2e_seconds = 0;    // until the last token
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;         // generated by all of the request's samples or beams
  int32_t cached_prompt_tokens = 0;  // prompt tokens served by the prefix cache
};

struct GenerationOutput {
  // The first (best, for best_of and beam search) completion, repeated here for the common n=1
  // case.
  std::string text;
  std::vector<int32_t> tokens;
  FinishReason finish_reason = FinishReason::kLength;
  std::vector<Completion> completions;  // all n, in order (by score for best_of and beams)
  std::vector<int32_t> prompt_tokens;   // the prompt as tokenized, BOS included
  double prompt_seconds = 0;            // from submission to the first token (queueing and prefill)
  double generation_seconds = 0;        // from the first token to the last
  RequestMetrics metrics;
};

struct ModelSummary {
  std::string architecture;
  std::string backend;
  int32_t n_vocab, n_ctx_train, context_size, n_embd, n_layer, n_head, n_head_kv, n_ff;
  std::string kv_cache_dtype;  // "f32", "f16", "bf16", "q8_0", "int8_scaled" or "fp8_e4m3"
  int64_t kv_bytes_per_token;  // K and V of one token over all layers
  int64_t kv_cache_tokens;     // tokens the whole pool holds
  int32_t lora_slots;          // LoRA adapters a batch can mix (0: none)
  int64_t lora_slot_bytes;     // backend memory reserved for them
  int32_t lora_host_adapters;  // adapters kept in host memory (0: every one)
};

// One turn of a conversation, as the OpenAI chat API sends it.
struct ChatMessage {
  std::string role;  // "system", "user", "assistant", "tool", ...
  std::string content;
  // An assistant turn's tool calls, as OpenAI's "tool_calls" array in JSON text; empty: none.
  std::string tool_calls;
  // A tool turn's answer: the id of the call it answers.
  std::string tool_call_id;
};

// A conversation rendered into the model's prompt format by its chat template (GGUF metadata
// tokenizer.chat_template), or by Baton's ChatML default when the model has none.
struct ChatPrompt {
  std::string text;
  std::vector<int32_t> tokens;  // special-token text parsed; BOS added unless the text has it
};

// Receives each piece of generated text as soon as it is complete UTF-8; return false to stop.
using TextCallback = std::function<bool(std::string_view text)>;
// Called in generate's thread after each engine step with the batch indices of the requests
// that step finished, often none: for progress bars, and for callers that must notice an
// interrupt between steps. An exception it throws aborts the batch and reaches the caller.
using StepCallback = std::function<void(const std::vector<size_t>& finished)>;

// Perplexity as llama.cpp's perplexity tool measures it (and `baton perplexity`): the text is cut
// into non-overlapping chunks of `context` tokens, and the second half of each is scored.
struct PerplexityParams {
  int32_t context = 256;       // tokens per chunk, at most the model's trained context
  int32_t batch_tokens = 512;  // tokens per model step within a chunk
  std::string lora;            // the adapter to apply, by name; empty: the base model
};

struct PerplexityReport {
  int32_t context = 0;
  int64_t tokens = 0;  // of the whole text, BOS included
  int32_t chunks = 0;
  int64_t scored = 0;  // predictions whose log-likelihood was counted
  double perplexity = 0;
  double standard_error = 0;
};

// A loaded model on one backend, ready to generate. generate() runs every prompt it is given
// through one continuous-batching engine. Not thread-safe: one generate call at a time. A
// streaming callback receives the first completion's text; it cannot be combined with best_of > n
// or beam search, whose first completion is only known at the end.
class BATON_API LLM {
 public:
  explicit LLM(const LLMOptions& options);
  ~LLM();
  LLM(LLM&&) noexcept;
  LLM& operator=(LLM&&) noexcept;

  std::vector<GenerationOutput> generate(const std::vector<std::string>& prompts,
                                         const GenerationParams& params);
  std::vector<GenerationOutput> generate(const std::vector<Request>& requests,
                                         const StepCallback& on_step = {});
  GenerationOutput generate(std::string_view prompt, const GenerationParams& params,
                            const TextCallback& on_text = {});

  std::vector<int32_t> tokenize(std::string_view text, bool add_special, bool parse_special) const;
  std::string detokenize(const std::vector<int32_t>& tokens) const;
  // A token as text for display (logprobs): control tokens spelled out, bytes as they are.
  std::string token_text(int32_t token) const;
  // Throws Error(kInvalidArgument) when the template rejects the conversation (for instance
  // roles that do not alternate).
  // `tools` is OpenAI's "tools" array in JSON text (empty: none), given to templates that render
  // tools (chat_template_renders_tools).
  ChatPrompt chat_prompt(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                         const std::string& tools = "") const;
  // Whether the model's chat template refers to `tools`, so that it describes them itself.
  bool chat_template_renders_tools() const;
  ModelSummary summary() const;
  EngineStats stats() const;
  // Throws Error(kInvalidArgument) when the text does not fill one chunk, the context is out of
  // range, or the adapter is not loaded.
  PerplexityReport perplexity(std::string_view text, const PerplexityParams& params = {});
  // As AsyncLLM's: serves an adapter from the next generate call on, or stops serving it.
  void load_lora_adapter(const LoraOptions& adapter);
  void unload_lora_adapter(const std::string& name);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton
