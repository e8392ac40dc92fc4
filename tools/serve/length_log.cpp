#include "tools/serve/length_log.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "baton/error.h"
#include "tools/length_head/length_record.h"

namespace baton::serve {

LengthLog::Settings LengthLog::settings_of(const GenerationParams& params) {
  return {.max_tokens = params.max_tokens,
          .has_stop = !params.stop.empty() || !params.stop_token_ids.empty(),
          .expected_tokens = params.expected_tokens,
          .logged = !params.use_beam_search && params.n == 1 && params.best_of <= 1 &&
                    params.lora.empty()};
}

LengthLog::LengthLog(const std::filesystem::path& path) : out_(path, std::ios::app) {
  if (!out_) {
    throw Error(ErrorCategory::kIo,
                "--length-log: cannot open " + path.string() + ": " + std::strerror(errno));
  }
}

void LengthLog::write(const Settings& settings, const GenerationOutput& output) {
  if (!settings.logged || output.prompt_tokens.empty() ||
      output.finish_reason == FinishReason::kAborted) {
    return;
  }
  const std::string line = to_json_line({.prompt_tokens = output.prompt_tokens,
                                         .max_tokens = settings.max_tokens,
                                         .has_stop = settings.has_stop,
                                         .expected_tokens = settings.expected_tokens,
                                         .generated = static_cast<int32_t>(output.tokens.size())});
  std::lock_guard lock(mutex_);
  out_ << line << std::flush;
  if (!out_ && !warned_) {
    // Serving goes on; the log is an aid, and a full disk should not fail requests.
    std::fprintf(stderr,
                 "baton serve: --length-log: a write failed (%s); later records may be lost\n",
                 std::strerror(errno));
    warned_ = true;
  }
}

}  // namespace baton::serve
