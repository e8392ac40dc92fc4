#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/llm.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/runtime/comm/communicator.h"

namespace baton {

// One thing every rank of a distributed run must agree on, as a number (a hash for text).
struct Agreed {
  std::string what;  // for the error: "model file", "--tensor-parallel", ...
  uint64_t value;
};

// A hash of a model file: its header (metadata and tensor table) and the first and last bytes
// of every tensor. Files of the same shapes with other weights differ there, and it reads no
// more than that.
uint64_t model_hash(const gguf::GgufFile& file);

// What this rank will run: a hash of the model file (its metadata, tensor table and a sample
// of every tensor's bytes), the model's shapes, and every option that shapes a step.
std::vector<Agreed> start_up_fingerprint(const LLMOptions& options, const gguf::GgufFile& file);

// Compares every rank's fingerprint with rank 0's; on a difference every rank throws the same
// Error(kInvalidArgument) naming the first rank and item that differ.
void handshake(Communicator& world, const std::vector<Agreed>& mine);

}  // namespace baton
