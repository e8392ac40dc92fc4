#include "core/runtime/option_ranges.h"

#include <cmath>
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
  const bool below = r.min_exclusive ? !(value > r.min) : !(value >= r.min);
  if (!below && value <= r.max) return;
  std::string bound;
  if (std::isinf(r.max)) {
    bound = (r.min_exclusive ? "above " : "at least ") + number_text(r.min);
  } else {
    bound = "between " + number_text(r.min) + " and " + number_text(r.max);
  }
  throw Error(ErrorCategory::kInvalidArgument,
              std::string(field.name) + " must be " + bound + ", got " + number_text(value));
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
