#include "core/api/handshake.h"

#include <bit>
#include <fstream>
#include <string_view>

#include "baton/error.h"
#include "models/model_config.h"

namespace baton {
namespace {

// FNV-1a: enough to tell different files and flags apart; nothing here defends against an
// adversary, only against a launch mistake.
uint64_t fnv1a(std::span<const std::byte> bytes, uint64_t hash = 14695981039346656037ull) {
  for (std::byte b : bytes) hash = (hash ^ static_cast<uint8_t>(b)) * 1099511628211ull;
  return hash;
}

uint64_t hash_text(std::string_view text) {
  return fnv1a(std::as_bytes(std::span<const char>(text.data(), text.size())));
}

uint64_t hash_layers(const std::vector<int32_t>& layers) {
  std::string text;
  for (int32_t n : layers) text += std::to_string(n) + ",";
  return hash_text(text);
}

}  // namespace

uint64_t model_hash(const gguf::GgufFile& file) {
  std::ifstream in(file.path(), std::ios::binary);
  std::vector<char> header(file.data_offset());
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  uint64_t hash = fnv1a(std::as_bytes(std::span<const char>(header)));
  constexpr size_t kSample = 64;
  for (const gguf::TensorInfo& info : file.tensors()) {
    const Tensor t = file.tensor(info.name);
    const auto* data = t.data<std::byte>();
    const size_t n = t.nbytes(), take = std::min(n, kSample);
    hash = fnv1a({data, take}, hash);
    hash = fnv1a({data + n - take, take}, hash);
  }
  return hash;
}

std::vector<Agreed> start_up_fingerprint(const LLMOptions& o, const gguf::GgufFile& file) {
  const ModelConfig c = read_model_config(file);
  const std::string shapes = c.architecture + " " + std::to_string(c.n_embd) + " " +
                             std::to_string(c.n_layer) + " " + std::to_string(c.n_head) + " " +
                             std::to_string(c.n_head_kv) + " " + std::to_string(c.n_ff);
  // The bits themselves: exact, and defined for every value (a flag is checked only later).
  const auto number = [](double value) { return std::bit_cast<uint64_t>(value); };
  return {
      {"model file", model_hash(file)},
      {"model shapes", hash_text(shapes)},
      {"--data-parallel", static_cast<uint64_t>(o.parallel.data_parallel)},
      {"--tensor-parallel", static_cast<uint64_t>(o.parallel.tensor_parallel)},
      {"--pipeline-parallel", static_cast<uint64_t>(o.parallel.pipeline_parallel)},
      {"--pp-layers", hash_layers(o.parallel.pp_layers)},
      {"--backend", hash_text(o.backend)},
      {"--ctx-size", static_cast<uint64_t>(o.context_size)},
      {"--kv-block-size", static_cast<uint64_t>(o.kv_block_size)},
      {"--kv-cache-mib", number(o.kv_cache_mib)},
      {"--kv-cache-dtype", hash_text(o.kv_cache_dtype)},
      {"--max-batch-tokens", static_cast<uint64_t>(o.max_batch_tokens)},
      {"--max-seqs", static_cast<uint64_t>(o.max_seqs)},
      {"--scheduling-policy", hash_text(o.scheduling_policy)},
      {"--sjf-aging", number(o.sjf_aging)},
      {"--sjf-overtake", number(o.sjf_overtake)},
      {"--sjf-max-wait", number(o.sjf_max_wait_s)},
      {"--kv-reservation", hash_text(o.kv_reservation)},
      {"--lora-dtype", hash_text(o.lora_dtype)},
      {"prefix caching", o.prefix_caching ? 1u : 0u},
      {"weight repacking", o.repack_weights ? 1u : 0u},
      {"--dist-timeout", number(o.parallel.dist_timeout_seconds)},
  };
}

void handshake(Communicator& world, const std::vector<Agreed>& mine) {
  const std::vector<uint64_t> counts = all_gather_value(world, static_cast<uint64_t>(mine.size()));
  for (int32_t rank = 1; rank < world.size(); ++rank) {
    if (counts[static_cast<size_t>(rank)] != counts[0]) {
      throw Error(ErrorCategory::kInvalidArgument,
                  "distributed start-up: rank " + std::to_string(rank) +
                      " runs another version of Baton than rank 0");
    }
  }
  std::vector<uint64_t> values;
  for (const Agreed& a : mine) values.push_back(a.value);
  std::vector<uint64_t> all(values.size() * static_cast<size_t>(world.size()));
  world.all_gather(std::as_bytes(std::span<const uint64_t>(values)),
                   std::as_writable_bytes(std::span<uint64_t>(all)));
  for (int32_t rank = 1; rank < world.size(); ++rank) {
    for (size_t i = 0; i < mine.size(); ++i) {
      if (all[static_cast<size_t>(rank) * mine.size() + i] != all[i]) {
        throw Error(ErrorCategory::kInvalidArgument,
                    "distributed start-up: rank " + std::to_string(rank) + "'s " + mine[i].what +
                        " differs from rank 0's; every rank must load the same model file with "
                        "the same flags");
      }
    }
  }
}

}  // namespace baton
