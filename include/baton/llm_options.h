#pragma once

// The options a model is loaded with (LLMOptions), declared by one table, BATON_ENGINE_OPTIONS,
// from which the struct's fields, the CLI flags, the Python binding and its stub, the ranks'
// start-up agreement, the range checks and docs/engine-options.md all come: a new engine option
// is one row plus the code that uses it. Plain types only, so that every layer can include it.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "baton/chat_template_limits.h"
#include "baton/lora_options.h"

namespace baton {

// The order waiting requests start in: arrival (fcfs), Request::priority then arrival (other
// policies refuse a priority), or shortest predicted output first with aging (sjf).
enum class SchedulingPolicy { kFcfs, kPriority, kSjf };
// What admission sets aside for a request beyond its prompt: nothing (blocks are taken as tokens
// come, and preemption makes room), its predicted output plus a quarter, or all of max_tokens.
enum class KvReservation { kNone, kPredicted, kMax };
// When grammar masks (structured outputs) are computed: beside the model's step on a thread of
// their own, or after it as the logits are sampled. Auto is beside where the backend's step
// leaves a host core free (a GPU's, or a CPU backend on fewer threads than cores).
enum class GrammarMasks { kAuto, kBeside, kAfter };
// The KV cache's element type: floats, q8_0 (int8 with a scale per 32 values), int8_scaled (a
// scale per head row, any head size) or fp8_e4m3 (vLLM's fp8, no scale).
enum class KvCacheType { kF32, kF16, kBF16, kQ8_0, kInt8Scaled, kFp8E4M3 };
// The element type LoRA adapters are kept in on the backend: f16 halves what a step reads.
// vLLM's spellings (float16, float32, and auto for f16) are taken too.
enum class LoraType { kF16, kF32 };

// An enum option's spellings: the first name of each value is its own, later ones are accepted
// aliases. An enum may also list mistakes: names that mean something else elsewhere, refused
// with a hint at what was meant.
template <typename Enum>
struct OptionName {
  Enum value;
  const char* name;
};
struct OptionMistake {
  const char* name;
  const char* hint;
};
template <typename Enum>
struct OptionEnum;

template <>
struct OptionEnum<SchedulingPolicy> {
  static constexpr OptionName<SchedulingPolicy> names[] = {
      {SchedulingPolicy::kFcfs, "fcfs"},
      {SchedulingPolicy::kPriority, "priority"},
      {SchedulingPolicy::kSjf, "sjf"}};
};
template <>
struct OptionEnum<KvReservation> {
  static constexpr OptionName<KvReservation> names[] = {{KvReservation::kNone, "none"},
                                                        {KvReservation::kPredicted, "predicted"},
                                                        {KvReservation::kMax, "max"}};
};
template <>
struct OptionEnum<GrammarMasks> {
  static constexpr OptionName<GrammarMasks> names[] = {{GrammarMasks::kAuto, "auto"},
                                                       {GrammarMasks::kBeside, "beside"},
                                                       {GrammarMasks::kAfter, "after"}};
};
template <>
struct OptionEnum<KvCacheType> {
  static constexpr OptionName<KvCacheType> names[] = {{KvCacheType::kF32, "f32"},
                                                      {KvCacheType::kF16, "f16"},
                                                      {KvCacheType::kBF16, "bf16"},
                                                      {KvCacheType::kQ8_0, "q8_0"},
                                                      {KvCacheType::kInt8Scaled, "int8_scaled"},
                                                      {KvCacheType::kFp8E4M3, "fp8_e4m3"}};
  // The weight types of these names are other formats.
  static constexpr OptionMistake mistakes[] = {
      {"int8",
       "'int8' is a weight type (a scale per weight row); the KV cache's int8 is int8_scaled (a "
       "scale per head row)"},
      {"fp8",
       "'fp8' is a weight type (e4m3 with a scale per weight row); the KV cache's fp8 is "
       "fp8_e4m3 (no scale, as vLLM's --kv-cache-dtype fp8)"}};
};
template <>
struct OptionEnum<LoraType> {
  static constexpr OptionName<LoraType> names[] = {{LoraType::kF16, "f16"},
                                                   {LoraType::kF32, "f32"},
                                                   {LoraType::kF16, "float16"},
                                                   {LoraType::kF32, "float32"},
                                                   {LoraType::kF16, "auto"}};
};

// The values a numeric option accepts (NaN never): at least min, or above it when min_exclusive.
struct OptionRange {
  double min = -std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
};
constexpr OptionRange kAnyValue{};
constexpr OptionRange at_least(double min) {
  return {min};
}
constexpr OptionRange above(double min) {
  return {min, true};
}

// Which processes of a distributed run must agree on the option: every rank (checked at
// start-up, naming the option that differs), or each rank may set its own.
enum class OptionScope { kAllRanks, kPerRank };

// The table. Each row: type, name (C++ and Python), default, accepted range, scope, CLI flag
// (a bool's flag names the value it sets, as CLI11 writes it: "--no-x{false}") and help, which
// is the option's documentation everywhere it is shown.
#define BATON_ENGINE_OPTIONS(X)                                                                    \
  X(std::string, backend, "", kAnyValue, kAllRanks, "--backend",                                   \
    "cpu, cuda, rocm, npu or gpusim; empty: $BATON_BACKEND, else cpu")                             \
  X(int32_t, threads, 0, at_least(0), kPerRank, "-t,--threads", "CPU threads; 0: all cores")       \
  X(int32_t, context_size, 0, at_least(0), kAllRanks, "-c,--ctx-size",                             \
    "tokens per sequence; 0: the model's trained context, at most 4096")                           \
  X(int32_t, kv_block_size, 16, at_least(1), kAllRanks, "--kv-block-size",                         \
    "tokens per KV-cache block")                                                                   \
  X(double, kv_cache_mib, 0, at_least(0), kAllRanks, "--kv-cache-size",                            \
    "KV cache pool in MiB, fractions allowed; 0: room for 4 full contexts")                        \
  X(int32_t, max_batch_tokens, 2048, at_least(1), kAllRanks, "--max-batch-tokens",                 \
    "tokens computed per engine step, prefill chunks and decodes")                                 \
  X(int32_t, max_seqs, 64, at_least(1), kAllRanks, "--max-seqs", "sequences per engine step")      \
  X(int32_t, long_prefill_token_threshold, 0, at_least(0), kAllRanks,                              \
    "--long-prefill-token-threshold",                                                              \
    "prompt tokens one request computes per step at most, so that a long prompt leaves room for "  \
    "others' prompts and decodes (vLLM's); 0: up to max_batch_tokens")                             \
  X(SchedulingPolicy, scheduling_policy, SchedulingPolicy::kFcfs, kAnyValue, kAllRanks,            \
    "--scheduling-policy",                                                                         \
    "order waiting requests start in: fcfs (arrival), priority (the request's, then arrival) "     \
    "or sjf (shortest predicted output first, with aging; docs/scheduling.md)")                    \
  X(double, sjf_aging, 1.0, at_least(0), kAllRanks, "--sjf-aging",                                 \
    "sjf: a waiting request counts as this many tokens shorter for every token a running "         \
    "request generates while it waits")                                                            \
  X(double, sjf_overtake, 4.0, at_least(0), kAllRanks, "--sjf-overtake",                           \
    "sjf: a waiting request with at most 1/this of a running one's predicted work left takes "     \
    "its slot, the running one waiting with its KV kept; 0: off, else above 1")                    \
  X(double, sjf_max_wait_s, 60.0, above(0), kAllRanks, "--sjf-max-wait",                           \
    "sjf: seconds after which a waiting request goes ahead of shorter ones")                       \
  X(KvReservation, kv_reservation, KvReservation::kNone, kAnyValue, kAllRanks, "--kv-reservation", \
    "KV memory set aside at admission beyond the prompt: none, predicted (the predicted output "   \
    "plus a quarter) or max (all of max_tokens)")                                                  \
  X(std::string, length_head, "", kAnyValue, kPerRank, "--length-head",                            \
    "a file `baton length-head -o` wrote for this model: predict each request's length again "     \
    "from the model's state after its prompt")                                                     \
  X(bool, prefix_caching, true, kAnyValue, kAllRanks, "--no-prefix-cache{false}",                  \
    "reuse the KV blocks of identical prompt prefixes")                                            \
  X(KvCacheType, kv_cache_dtype, KvCacheType::kF32, kAnyValue, kAllRanks, "--kv-cache-dtype",      \
    "KV cache element type: f32, f16, bf16, q8_0 (int8 with a scale per 32 values), "              \
    "int8_scaled (a scale per head row) or fp8_e4m3 (vLLM's fp8)")                                 \
  X(bool, repack_weights, true, kAnyValue, kAllRanks, "--no-repack{false}",                        \
    "CPU: repack weights for faster kernels; off uses weights in place as loaded, holding "        \
    "F16/BF16 weights once at the cost of prefill speed")                                          \
  X(GrammarMasks, grammar_masks, GrammarMasks::kAuto, kAnyValue, kPerRank, "--grammar-masks",      \
    "structured outputs' token masks computed beside the model's step, after it, or auto "         \
    "(beside where the step leaves a host core free)")                                             \
  X(int32_t, max_loras, 0, at_least(0), kPerRank, "--max-loras",                                   \
    "LoRA adapters one batch can mix, each in backend memory reserved at load; 0: as many as "     \
    "given")                                                                                       \
  X(int32_t, max_lora_rank, 16, at_least(1), kPerRank, "--max-lora-rank",                          \
    "highest LoRA rank served")                                                                    \
  X(LoraType, lora_dtype, LoraType::kF16, kAnyValue, kAllRanks, "--lora-dtype",                    \
    "element type LoRA adapters are kept in on the backend: f16 or f32")                           \
  X(int32_t, max_cpu_loras, 0, at_least(0), kPerRank, "--max-cpu-loras",                           \
    "LoRA adapters kept in host memory, the least recently used beyond that read again from "      \
    "their files when asked for; 0: all, else at least max_loras")

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
  std::string model;  // path to a GGUF file
#define BATON_OPTION_MEMBER(type, name, default_value, range, scope, flag, help) \
  type name = default_value;
  BATON_ENGINE_OPTIONS(BATON_OPTION_MEMBER)
#undef BATON_OPTION_MEMBER
  ParallelOptions parallel;       // the run this process is a rank of, if any
  std::vector<LoraOptions> lora;  // adapters requests may name
  ChatTemplateLimits chat_template_limits;
};

// One row of the table, less its type and default, which the member pointer visited beside it
// carries.
struct OptionField {
  const char* name;
  OptionRange range;
  OptionScope scope;
  const char* flag;
  const char* help;
};

// Calls visit(OptionField, member pointer) for every row of BATON_ENGINE_OPTIONS, in order.
template <typename Visit>
void for_each_engine_option(Visit&& visit) {
#define BATON_VISIT_OPTION(type, name, default_value, range, scope, flag, help) \
  visit(OptionField{#name, range, OptionScope::scope, flag, help}, &LLMOptions::name);
  BATON_ENGINE_OPTIONS(BATON_VISIT_OPTION)
#undef BATON_VISIT_OPTION
}

}  // namespace baton
