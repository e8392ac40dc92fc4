#pragma once

// One finished request as `baton serve --length-log FILE` writes it, a JSON object per line:
// what was known of the request when it arrived and how many tokens it generated. `baton
// length-head` learns a length predictor from such files.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace baton {

struct LengthRecord {
  std::vector<int32_t> prompt_tokens;  // as the engine took them, BOS included
  int32_t max_tokens = 0;
  bool has_stop = false;        // stop strings or stop token ids besides end-of-sequence
  int32_t expected_tokens = 0;  // the client's hint; 0: none
  int32_t generated = 0;        // by the first completion
};

std::string to_json_line(const LengthRecord& record);

// Every record of a log, in the order written. Throws Error(kInvalidArgument) naming the file
// and line of a malformed record, Error(kIo) when the file cannot be read.
std::vector<LengthRecord> read_length_log(const std::filesystem::path& path);

}  // namespace baton
