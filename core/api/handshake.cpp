#include "core/api/handshake.h"

#include <bit>
#include <fstream>
#include <string_view>
#include <type_traits>

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

// The bits of the value: exact, and defined for every value (an option is range-checked later).
template <typename Value>
uint64_t option_bits(const Value& value) {
  if constexpr (std::is_same_v<Value, std::string>) {
    return hash_text(value);
  } else if constexpr (std::is_floating_point_v<Value>) {
    return std::bit_cast<uint64_t>(static_cast<double>(value));
  } else {
    return static_cast<uint64_t>(value);
  }
}

std::vector<Agreed> start_up_fingerprint(const LLMOptions& o, const gguf::GgufFile& file) {
  const ModelConfig c = read_model_config(file);
  const std::string shapes = c.architecture + " " + std::to_string(c.n_embd) + " " +
                             std::to_string(c.n_layer) + " " + std::to_string(c.n_head) + " " +
                             std::to_string(c.n_head_kv) + " " + std::to_string(c.n_ff);
  const ParallelOptions& p = o.parallel;
  std::vector<Agreed> agreed = {
      {"model file", model_hash(file)},
      {"model shapes", hash_text(shapes)},
      {"data_parallel", option_bits(p.data_parallel)},
      {"tensor_parallel", option_bits(p.tensor_parallel)},
      {"pipeline_parallel", option_bits(p.pipeline_parallel)},
      {"pp_layers", hash_layers(p.pp_layers)},
      {"dist_timeout_seconds", option_bits(p.dist_timeout_seconds)},
  };
  for_each_engine_option([&](const OptionField& field, auto member) {
    if (field.scope == OptionScope::kAllRanks)
      agreed.push_back({field.name, option_bits(o.*member)});
  });
  return agreed;
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
                        "the same options");
      }
    }
  }
}

}  // namespace baton
