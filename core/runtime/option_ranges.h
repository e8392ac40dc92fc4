#pragma once

#include "baton/llm_options.h"

namespace baton {

// Throws Error(kInvalidArgument) naming the first numeric option of LLMOptions' table outside
// its range, or NaN.
void check_option_ranges(const LLMOptions& options);

}  // namespace baton
