#include "core/runtime/option_ranges.h"

#include <sstream>
#include <string>
#include <type_traits>

#include "baton/error.h"

namespace baton {
namespace {

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

void check_range(const OptionField& field, double value) {
  const OptionRange& r = field.range;
  if (r.min_exclusive ? value > r.min : value >= r.min) return;  // false for NaN
  throw Error(ErrorCategory::kInvalidArgument,
              std::string(field.name) + " must be " + (r.min_exclusive ? "above " : "at least ") +
                  number_text(r.min) + ", got " + number_text(value));
}

}  // namespace

void check_option_ranges(const LLMOptions& options) {
  for_each_engine_option([&](const OptionField& field, auto member) {
    using Value = std::remove_cvref_t<decltype(options.*member)>;
    if constexpr (std::is_arithmetic_v<Value> && !std::is_same_v<Value, bool>) {
      check_range(field, static_cast<double>(options.*member));
    }
  });
}

}  // namespace baton
