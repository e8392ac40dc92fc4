#include "core/api/loaded_model.h"

#include <algorithm>
#include <thread>

#include "baton/error.h"
#include "core/api/handshake.h"
#include "core/runtime/backend_registry.h"
#include "core/serving/kv_cache/paged_kv_cache.h"
#include "models/lora/lora_slots.h"

namespace baton {
namespace {

constexpr int32_t kMaxDefaultContext = 4096;
constexpr int32_t kDefaultContextsInPool = 4;

// Of this rank's part: its layers and KV heads.
size_t bytes_per_token(const Model& model, DType kv_dtype) {
  const ModelConfig& c = model.config();
  return kv_bytes_per_token({.n_layers = model.shard().layer_count(c.n_layer),
                             .n_kv_heads = c.n_head_kv,
                             .head_dim = c.head_dim,
                             .dtype = kv_dtype});
}

bool grammar_masks_beside_step(const std::string& mode, const Backend& backend) {
  if (mode == "beside") return true;
  if (mode == "after") return false;
  if (mode == "auto") {
    return backend.host_threads() < static_cast<int32_t>(std::thread::hardware_concurrency());
  }
  throw Error(ErrorCategory::kInvalidArgument,
              "unknown grammar mask mode '" + mode + "' (use auto, beside or after)");
}

}  // namespace

LoadedModel::LoadedModel(const LLMOptions& options)
    : backend(BackendRegistry::global().create(
          options.backend.empty() ? default_backend_name() : options.backend,
          BackendOptions{.threads = options.threads, .prepack_weights = options.repack_weights})),
      file(gguf::GgufFile::open(options.model)),
      placement(place_process(options, file)),
      model(load_model(file, *backend, placement.shard)),
      tokenizer(Tokenizer::create(vocabulary_from_gguf(file))),
      chat(file, *tokenizer, options.chat_template_limits) {
  const ModelConfig& c = model->config();
  if (tokenizer->vocab_size() > c.n_vocab) {
    throw Error(ErrorCategory::kInvalidModel,
                options.model + ": the tokenizer has " + std::to_string(tokenizer->vocab_size()) +
                    " tokens but token_embd.weight only " + std::to_string(c.n_vocab) + " rows");
  }
  if (options.context_size < 0 || options.kv_block_size <= 0 || !(options.kv_cache_mib >= 0)) {
    throw Error(ErrorCategory::kInvalidArgument,
                "context size, KV block size and KV cache size must not be negative");
  }
  context_size =
      options.context_size > 0 ? options.context_size : std::min(c.n_ctx_train, kMaxDefaultContext);
  EngineConfig& config = engine_config;
  config.block_size = options.kv_block_size;
  config.prefix_caching = options.prefix_caching;
  config.grammar_masks_beside_step = grammar_masks_beside_step(options.grammar_masks, *backend);
  config.kv_dtype = parse_kv_cache_dtype(options.kv_cache_dtype);
  check_kv_cache_dtype(config.kv_dtype, c.head_dim);
  config.scheduler = {.max_batch_tokens = options.max_batch_tokens,
                      .max_seqs = options.max_seqs,
                      .policy = parse_scheduling_policy(options.scheduling_policy),
                      .aging = options.sjf_aging,
                      .max_wait_s = options.sjf_max_wait_s,
                      .overtake_ratio = options.sjf_overtake,
                      .reservation = parse_kv_reservation(options.kv_reservation)};
  if (!options.length_head.empty()) {
    if (c.final_softcap > 0) {
      throw Error(ErrorCategory::kUnsupported,
                  "--length-head: this model soft-caps its logits, so they are not the linear "
                  "image of its hidden state that a length head reads");
    }
    config.length_head = std::make_shared<const LengthHead>(
        LengthHead::read(options.length_head, c.n_vocab, model_hash(file)));
  }
  if (options.parallel.pp_micro_batches < 0) {
    throw Error(ErrorCategory::kInvalidArgument, "--pp-micro-batches must not be negative");
  }
  config.micro_batches = options.parallel.pp_micro_batches;
  const double bytes_per_block =
      static_cast<double>(bytes_per_token(*model, config.kv_dtype)) * options.kv_block_size;
  config.n_blocks = options.kv_cache_mib > 0
                        ? static_cast<int32_t>(options.kv_cache_mib * 1048576.0 / bytes_per_block)
                        : kDefaultContextsInPool *
                              ((context_size + options.kv_block_size - 1) / options.kv_block_size);
  if (const auto& replica = placement.replica) {
    // One block manager schedules for every rank: the pool is the smallest rank's.
    const std::vector<int32_t> blocks = all_gather_value(*replica->replica, config.n_blocks);
    config.n_blocks = *std::min_element(blocks.begin(), blocks.end());
    config.replica = replica;
  }
  if (config.n_blocks < 1) {
    throw Error(ErrorCategory::kInvalidArgument,
                "a KV cache of " + std::to_string(options.kv_cache_mib) +
                    " MiB holds no block of " + std::to_string(options.kv_block_size) + " tokens");
  }
  // A sequence can never hold more tokens than the whole pool.
  context_size = std::min(context_size, config.n_blocks * options.kv_block_size);
  config.context_size = context_size;
  if (options.max_loras < 0 || options.max_lora_rank < 1 || options.max_cpu_loras < 0) {
    throw Error(ErrorCategory::kInvalidArgument,
                "--max-loras and --max-cpu-loras must not be negative and --max-lora-rank must be "
                "at least 1");
  }
  config.max_loras =
      options.max_loras > 0 ? options.max_loras : static_cast<int32_t>(options.lora.size());
  config.max_lora_rank = options.max_lora_rank;
  config.lora_dtype = parse_lora_dtype(options.lora_dtype);
  if (options.max_cpu_loras > 0 && options.max_cpu_loras < config.max_loras) {
    throw Error(ErrorCategory::kInvalidArgument,
                "--max-cpu-loras " + std::to_string(options.max_cpu_loras) +
                    " is below --max-loras " + std::to_string(config.max_loras) +
                    ": host memory must hold at least the adapters one batch mixes");
  }
  config.max_cpu_loras = options.max_cpu_loras;
  config.lora_adapters = options.lora;
}

std::vector<int32_t> LoadedModel::tokenize_prompt(const Request& request) const {
  std::vector<int32_t> tokens = request.prompt_tokens.empty()
                                    ? tokenizer->encode(request.prompt, request.params.add_special,
                                                        request.params.parse_special)
                                    : request.prompt_tokens;
  if (tokens.size() >= static_cast<size_t>(context_size)) {
    throw Error(ErrorCategory::kInvalidArgument, "the prompt has " + std::to_string(tokens.size()) +
                                                     " tokens; the context holds " +
                                                     std::to_string(context_size));
  }
  return tokens;
}

ModelSummary LoadedModel::summary() const {
  const ModelConfig& c = model->config();
  return ModelSummary{
      .architecture = c.architecture,
      .backend = std::string(backend->name()),
      .n_vocab = c.n_vocab,
      .n_ctx_train = c.n_ctx_train,
      .context_size = context_size,
      .n_embd = c.n_embd,
      .n_layer = c.n_layer,
      .n_head = c.n_head,
      .n_head_kv = c.n_head_kv,
      .n_ff = c.n_ff,
      .kv_cache_dtype = std::string(to_string(engine_config.kv_dtype)),
      .kv_bytes_per_token = static_cast<int64_t>(bytes_per_token(*model, engine_config.kv_dtype)),
      .kv_cache_tokens = static_cast<int64_t>(engine_config.n_blocks) * engine_config.block_size,
      .lora_slots = engine_config.max_loras,
      .lora_slot_bytes = static_cast<int64_t>(lora_slot_bytes(
          c, engine_config.max_loras, engine_config.max_lora_rank, engine_config.lora_dtype)),
      .lora_host_adapters = engine_config.max_cpu_loras};
}

void FinishCounts::count(const GenerationOutput& output) {
  switch (output.finish_reason) {
    case FinishReason::kStop:
      ++stop;
      return;
    case FinishReason::kLength:
      ++length;
      return;
    case FinishReason::kAborted:
      ++aborted;
      return;
  }
}

EngineStats engine_stats(const Engine& engine, const FinishCounts& finished) {
  EngineStats stats = engine.stats();
  stats.finished_stop = finished.stop;
  stats.finished_length = finished.length;
  stats.finished_aborted = finished.aborted;
  stats.failed = finished.failed;
  return stats;
}

}  // namespace baton
