#include "tools/option_flags.h"

namespace baton::cli {

void add_engine_option_flags(CLI::App& cmd, LLMOptions& options) {
  for_each_engine_option(
      [&](const OptionField& field, auto member) { add_row_flag(cmd, field, options.*member); });
}

}  // namespace baton::cli
