#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "models/model.h"

namespace baton {

// What a replica's leader broadcasts before each step, flattened to int32s: the block copies
// and the step's token ids, positions, block tables and logit rows. A stop message ends the
// followers' loop.
struct StepMessage {
  bool stop = false;
  std::vector<std::pair<int32_t, int32_t>> copies;
  StepInput input;
};

std::vector<int32_t> encode_step(const StepMessage& message);
// Error(kInternal) when `words` is not an encoded message.
StepMessage decode_step(std::span<const int32_t> words);

}  // namespace baton
