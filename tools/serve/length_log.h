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
  // What a request's record needs of its parameters, kept while it runs.
  struct Settings {
    int32_t max_tokens = 0;
    bool has_stop = false;
    int32_t expected_tokens = 0;
    // Left out: beam search (the engine's own predictor leaves it out too), several completions
    // (the output's first is the best scored, biased short), and adapters (the head reads the
    // base model's state).
    bool logged = false;
  };
  static Settings settings_of(const GenerationParams& params);

  // Throws Error(kIo) when the file cannot be opened for appending.
  explicit LengthLog(const std::filesystem::path& path);

  // Aborted requests (a client gone, a shutdown) are left out: their length is not an answer's.
  void write(const Settings& settings, const GenerationOutput& output);

 private:
  std::mutex mutex_;
  std::ofstream out_;
  bool warned_ = false;
};

}  // namespace baton::serve
