#pragma once

// Random LoRA adapters written as llama.cpp's GGUF adapters, for benchmarks (`baton lora synth`)
// and tests, as `baton synth` writes random models.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "models/model.h"

namespace baton {

// One adapted weight: its base tensor's GGUF name and a [rank, in], b [out, rank].
struct LoraPair {
  std::string weight;  // "blk.0.attn_q.weight"
  std::vector<float> a, b;
  int64_t rank, in, out;
};

// Every linear weight of every layer of a model of `config` in the Llama layout (separate q, k,
// v, gate and up), with a and b uniform in ±range_a and ±range_b.
std::vector<LoraPair> random_lora(const ModelConfig& config, int64_t rank, uint32_t seed,
                                  float range_a = 0.2f, float range_b = 0.2f);

// Writes `pairs` as a GGUF LoRA adapter for `architecture` with adapter.lora.alpha = `alpha`.
void write_gguf_lora(const std::filesystem::path& path, const std::string& architecture,
                     const std::vector<LoraPair>& pairs, float alpha);

}  // namespace baton
