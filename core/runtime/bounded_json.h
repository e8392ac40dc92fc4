#pragma once

// JSON from untrusted text (request bodies, schemas, tool arguments) parsed with a bound on
// nesting: nlohmann's parser does not recurse, but copying, comparing and writing a value out
// do, so a deeply nested one would overflow the stack later.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "baton/error.h"

namespace baton {

// Deeper than any real request or schema; shallow enough for every recursion over the value.
inline constexpr int kMaxJsonDepth = 256;

// `text` parsed as JsonType (nlohmann::json or ordered_json). Throws Error(kInvalidArgument)
// naming `what` when it is not JSON or nests deeper than kMaxJsonDepth.
template <typename JsonType>
JsonType parse_bounded_json(std::string_view text, const std::string& what) {
  bool too_deep = false;
  const auto bound = [&too_deep](int depth, typename JsonType::parse_event_t, JsonType&) {
    if (depth > kMaxJsonDepth) too_deep = true;
    return !too_deep;  // stop keeping values once past the bound
  };
  JsonType value;
  try {
    value = JsonType::parse(text, bound);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCategory::kInvalidArgument, what + " is not valid JSON: " + e.what());
  }
  if (too_deep) {
    throw Error(ErrorCategory::kInvalidArgument,
                what + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  return value;
}

}  // namespace baton
