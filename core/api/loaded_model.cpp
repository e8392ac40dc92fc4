#include "core/api/loaded_model.h"

#include <algorithm>
#include <thread>

#include "baton/error.h"
#include "baton/option_values.h"
#include "core/api/handshake.h"
#include "core/runtime/backend_registry.h"
#include "core/runtime/option_ranges.h"
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

// The options, once every number is within its range: checked before anything uses them.
const LLMOptions& checked(const LLMOptions& options) {
  check_option_ranges(options);
  return options;
}

bool grammar_masks_beside_step(GrammarMasks mode, const Backend& backend) {
  if (mode == GrammarMasks::kAuto) {
    return backend.host_threads() < static_cast<int32_t>(std::thread::hardware_concurrency());
  }
  return mode == GrammarMasks::kBeside;
}

}  // namespace

LoadedModel::LoadedModel(const LLMOptions& options)
    : backend(BackendRegistry::global().create(
          checked(options).backend.empty() ? default_backend_name() : options.backend,
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
  EngineConfig& config = engine_config;
  config.options = options;
  context_size =
      options.context_size > 0 ? options.context_size : std::min(c.n_ctx_train, kMaxDefaultContext);
  config.grammar_masks_beside_step = grammar_masks_beside_step(options.grammar_masks, *backend);
  const DType kv_dtype = kv_cache_dtype(options.kv_cache_dtype);
  check_kv_cache_dtype(kv_dtype, c.head_dim);
  if (!options.length_head.empty()) {
    if (c.final_softcap > 0) {
      throw Error(ErrorCategory::kUnsupported,
                  "length_head: this model soft-caps its logits, so they are not the linear image "
                  "of its hidden state that a length head reads");
    }
    config.length_head = std::make_shared<const LengthHead>(
        LengthHead::read(options.length_head, c.n_vocab, model_hash(file)));
  }
  if (options.parallel.pp_micro_batches < 0) {
    throw Error(ErrorCategory::kInvalidArgument, "pp_micro_batches must not be negative");
  }
  const double bytes_per_block =
      static_cast<double>(bytes_per_token(*model, kv_dtype)) * options.kv_block_size;
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
  config.lora_slots =
      options.max_loras > 0 ? options.max_loras : static_cast<int32_t>(options.lora.size());
  if (options.max_cpu_loras > 0 && options.max_cpu_loras < config.lora_slots) {
    throw Error(ErrorCategory::kInvalidArgument,
                "max_cpu_loras " + std::to_string(options.max_cpu_loras) + " is below max_loras " +
                    std::to_string(config.lora_slots) +
                    ": host memory must hold at least the adapters one batch mixes");
  }
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
  const LLMOptions& options = engine_config.options;
  const DType kv_dtype = kv_cache_dtype(options.kv_cache_dtype);
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
      .kv_cache_dtype = option_value_name(options.kv_cache_dtype),
      .kv_bytes_per_token = static_cast<int64_t>(bytes_per_token(*model, kv_dtype)),
      .kv_cache_tokens = static_cast<int64_t>(engine_config.n_blocks) * options.kv_block_size,
      .lora_slots = engine_config.lora_slots,
      .lora_slot_bytes = static_cast<int64_t>(lora_slot_bytes(
          c, engine_config.lora_slots, options.max_lora_rank, lora_dtype(options.lora_dtype))),
      .lora_host_adapters = options.max_cpu_loras};
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
