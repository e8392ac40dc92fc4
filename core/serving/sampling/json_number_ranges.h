#pragma once

// Integer ranges written as GBNF, digit by digit, for JSON Schema's bounds on numbers
// (json_schema_compiler.h).

#include <cstdint>
#include <string>

namespace baton::detail {

// The decimal forms, without leading zeros, of the integers in [low, top].
std::string non_negative_range(int64_t low, int64_t top);

}  // namespace baton::detail
