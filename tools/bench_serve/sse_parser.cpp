#include "tools/bench_serve/sse_parser.h"

namespace baton::bench_serve {

std::vector<std::string> SseParser::feed(std::string_view bytes) {
  std::vector<std::string> events;
  for (const char c : bytes) {
    // "\r\n" is one line end, and its two bytes may arrive in different reads.
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      end_line(events);
    } else {
      line_ += c;
    }
  }
  return events;
}

std::vector<std::string> SseParser::finish() {
  std::vector<std::string> events;
  if (!line_.empty()) end_line(events);
  if (has_data_) end_line(events);
  return events;
}

void SseParser::end_line(std::vector<std::string>& events) {
  if (line_.empty()) {
    if (has_data_) events.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  const std::string_view line = line_;
  const size_t colon = line.find(':');
  if (colon != 0 && line.substr(0, colon) == "data") {
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (has_data_) data_ += '\n';
    data_ += value;
    has_data_ = true;
  }
  line_.clear();
}

}  // namespace baton::bench_serve
