#include "tools/serve/length_log.h"

#include <cerrno>
#include <cstring>

#include "baton/error.h"
#include "tools/length_head/length_record.h"

namespace baton::serve {

LengthLog::LengthLog(const std::filesystem::path& path) : out_(path, std::ios::app) {
  if (!out_) {
    throw Error(ErrorCategory::kIo,
                "--length-log: cannot open " + path.string() + ": " + std::strerror(errno));
  }
}

void LengthLog::write(const GenerationParams& params, const GenerationOutput& output) {
  if (params.use_beam_search) return;
  const std::string line =
      to_json_line({.prompt_tokens = output.prompt_tokens,
                    .max_tokens = params.max_tokens,
                    .has_stop = !params.stop.empty() || !params.stop_token_ids.empty(),
                    .expected_tokens = params.expected_tokens,
                    .generated = static_cast<int32_t>(output.tokens.size())});
  std::lock_guard lock(mutex_);
  out_ << line << std::flush;
}

}  // namespace baton::serve
