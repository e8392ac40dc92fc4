#pragma once

// The CLI flags of LLMOptions' table (baton/llm_options.h): each row's flag, help and default,
// an enum's value parsed as the library parses it, so that its error names the accepted values.

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "baton/llm_options.h"
#include "baton/option_values.h"

namespace baton::cli {

template <typename Value>
void add_row_flag(CLI::App& cmd, const OptionField& field, Value& value) {
  if constexpr (std::is_same_v<Value, bool>) {
    // A flag that sets false ("--no-x{false}") turns the option off: its help says so.
    const bool turns_off = std::string_view(field.flag).ends_with("{false}");
    cmd.add_flag(field.flag, value,
                 turns_off ? "turns off: " + std::string(field.help) : std::string(field.help));
  } else if constexpr (std::is_enum_v<Value>) {
    const std::string flag = field.flag, name = field.name;
    cmd.add_option_function<std::string>(
           flag,
           [&value, flag, name](const std::string& text) {
             try {
               value = parse_option_value<Value>(name, text);
             } catch (const Error& e) {
               throw CLI::ValidationError(flag, e.what());
             }
           },
           field.help)
        ->default_str(option_value_name(value));
  } else {
    cmd.add_option(field.flag, value, field.help)->capture_default_str();
  }
}

// Every row's flag, bound to its field of `options`.
void add_engine_option_flags(CLI::App& cmd, LLMOptions& options);

// The flag of the row `name`, bound to `value`: a field of LLMOptions, or a tool's own setting
// of the same type and meaning, which keeps its own default.
template <typename Value>
void add_option_flag(CLI::App& cmd, std::string_view name, Value& value) {
  bool added = false;
  for_each_engine_option([&](const OptionField& field, auto member) {
    using Row = std::remove_cvref_t<decltype(std::declval<LLMOptions&>().*member)>;
    if constexpr (std::is_same_v<Row, Value>) {
      if (field.name == name) {
        add_row_flag(cmd, field, value);
        added = true;
      }
    }
  });
  if (!added) throw std::logic_error("no engine option " + std::string(name) + " of this type");
}

}  // namespace baton::cli
