#pragma once

// llama-bench-style throughput measurement of one model on one backend.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "baton/llm.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/runtime/dtype.h"

namespace baton {

struct BenchOptions {
  std::string model;                               // GGUF path
  std::string backend;                             // "" = the default backend
  int32_t threads = 0;                             // 0 = all cores
  uint64_t seed = 0;                               // random token ids
  KvCacheType kv_cache_dtype = KvCacheType::kF32;  // as LLMOptions::kv_cache_dtype
  bool repack_weights = true;                      // BackendOptions::prepack_weights
  // The most tokens a test holds (a prompt, or generated tokens plus one): the one KV cache
  // every test reuses is sized for it.
  int32_t max_context = 512;
  ParallelOptions parallel;  // under mpirun: this rank's part of a split model
};

// What a model costs per token, from its tensor table.
struct ModelCost {
  std::string name;                 // general.name, else the file name
  DType weight_type = DType::kF32;  // the dtype holding most of the matrix bytes
  int64_t n_params = 0;             // every tensor
  uint64_t size_bytes = 0;          // every tensor
  // Bytes one decode step reads: every weight but token_embd, of which it reads one row, unless
  // token_embd doubles as the output projection. KV cache reads are left out.
  uint64_t decode_bytes = 0;
  // Multiply-adds of each prompt token through the layers' matrices; the output projection runs
  // on the last token only, attention is left out.
  int64_t prefill_params = 0;
};

enum class BenchKind { kPrompt, kGeneration };

struct BenchResult {
  BenchKind kind = BenchKind::kPrompt;
  int32_t n_tokens = 0;
  std::string test;                 // "pp512", "tg128"
  std::vector<double> samples_tps;  // tokens per second, one per repetition
  double mean_tps = 0, stddev_tps = 0, median_tps = 0;
  // Read bandwidth measured right before each repetition, where the caller measured it
  // (bench --roofline, tg tests): one per sample, in bytes/s.
  std::vector<double> read_bytes_per_second;
  // A distributed model: the leader's seconds in communication (the all-reduces, gathers,
  // transfers and the waits for other ranks) per model step, and their share of the timed
  // runs; 0 in a single process.
  double communication_seconds_per_step = 0;
  double communication_fraction = 0;
};

// A loaded model, ready to be timed step by step on the backend, without the engine's scheduler
// in the way. pp: prefill n_tokens random tokens into an empty sequence (in steps of at most 512,
// llama-bench's default micro-batch), timing the whole prefill. tg: from a 1-token context,
// n_tokens greedy decode steps of one token each, timing the steps only. Each test runs once
// untimed to warm up (a 1-step decode for tg, as llama-bench does), then `repetitions` times, each
// on a fresh sequence. `before_each` runs before each timed repetition, outside its timing.
class Benchmark {
 public:
  explicit Benchmark(const BenchOptions& options);
  ~Benchmark();

  const ModelCost& cost() const;
  std::string backend_name() const;
  // Whether this process is a rank of a distributed run other than its leader: it calls
  // follow() instead of run(), until the leader's Benchmark is destroyed.
  bool follower() const;
  void follow();
  BenchResult run(BenchKind kind, int32_t n_tokens, int32_t repetitions,
                  const std::function<void()>& before_each = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Throws Error(kInvalidModel) when the file has no matrices of a dtype Baton runs.
ModelCost model_cost(const gguf::GgufFile& file);
// Whether a decode step reads all of `tensor` (ModelCost::decode_bytes): every tensor but
// token_embd, of which it reads one row, unless token_embd is also the (tied) output projection.
bool read_whole_per_decode_step(std::string_view tensor, bool tied_output);

// The middle value of `values` (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

// This process's peak resident set size so far, in bytes.
uint64_t peak_rss_bytes();

}  // namespace baton
