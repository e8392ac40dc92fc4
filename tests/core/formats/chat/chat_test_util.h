#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "core/formats/chat/chat_template.h"

namespace baton::testing {

using Json = nlohmann::ordered_json;

// Parses and renders a template, with dicts in the order written.
inline std::string render(std::string_view source, const Json& context = Json::object()) {
  return ChatTemplate(source).render_ordered(context);
}

// The message of the Error that parsing or rendering throws, checking it is kInvalidArgument.
inline std::string render_error(std::string_view source, const Json& context = Json::object()) {
  try {
    render(source, context);
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected an error from: " << source;
  return "";
}

}  // namespace baton::testing
