#pragma once

// The values of LLMOptions' enum options (baton/llm_options.h) as text, for a command line, a
// configuration file or a binding to another language. Errors name the option and the values
// it accepts.

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>

#include "baton/error.h"
#include "baton/llm_options.h"

namespace baton {

template <typename Enum>
const char* option_value_name(Enum value) {
  for (const auto& entry : OptionEnum<Enum>::names) {
    if (entry.value == value) return entry.name;
  }
  throw Error(ErrorCategory::kInternal, "an option value with no name");
}

// "fcfs, priority or sjf": the values' own names, aliases left out.
template <typename Enum>
std::string option_value_names() {
  std::string names;
  Enum seen[std::size(OptionEnum<Enum>::names)];
  size_t count = 0;
  for (const auto& entry : OptionEnum<Enum>::names) {
    if (std::find(seen, seen + count, entry.value) == seen + count) seen[count++] = entry.value;
  }
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) names += i + 1 == count ? " or " : ", ";
    names += option_value_name(seen[i]);
  }
  return names;
}

template <typename Enum, typename = void>
struct OptionHasMistakes : std::false_type {};
template <typename Enum>
struct OptionHasMistakes<Enum, std::void_t<decltype(OptionEnum<Enum>::mistakes)>> : std::true_type {
};

// The value `text` names; Error(kInvalidArgument) naming `option` otherwise.
template <typename Enum>
Enum parse_option_value(std::string_view option, std::string_view text) {
  for (const auto& entry : OptionEnum<Enum>::names) {
    if (text == entry.name) return entry.value;
  }
  if constexpr (OptionHasMistakes<Enum>::value) {
    for (const OptionMistake& mistake : OptionEnum<Enum>::mistakes) {
      if (text == mistake.name) {
        throw Error(ErrorCategory::kInvalidArgument, std::string(option) + ": " + mistake.hint);
      }
    }
  }
  throw Error(ErrorCategory::kInvalidArgument, "unknown " + std::string(option) + " '" +
                                                   std::string(text) + "' (use " +
                                                   option_value_names<Enum>() + ")");
}

}  // namespace baton
