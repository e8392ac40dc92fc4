#pragma once

#include <filesystem>
#include <fstream>
#include <mutex>

#include "baton/llm.h"

namespace baton::serve {

// `--length-log FILE`: appends a LengthRecord line (tools/length_head/length_record.h) for every
// request that finishes with output, so that `baton length-head` can learn from the server's
// own traffic. Called from AsyncLLM's text thread; each line is flushed whole.
class LengthLog {
 public:
  // Throws Error(kIo) when the file cannot be opened for appending.
  explicit LengthLog(const std::filesystem::path& path);

  // Beam search is left out, as the engine's own predictor leaves it out.
  void write(const GenerationParams& params, const GenerationOutput& output);

 private:
  std::mutex mutex_;
  std::ofstream out_;
};

}  // namespace baton::serve
