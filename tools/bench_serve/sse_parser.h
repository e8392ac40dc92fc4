#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace baton::bench_serve {

// Splits a text/event-stream body into the data of its events, whatever the read boundaries.
// Follows the SSE rules that matter for OpenAI-style streams: `data:` lines of one event are
// joined by '\n', a blank line ends the event, lines starting with ':' (keep-alives) and other
// fields are ignored, and lines may end in "\n", "\r\n" or "\r".
class SseParser {
 public:
  // Consumes the next bytes of the body; returns the data of each event they complete, in order.
  std::vector<std::string> feed(std::string_view bytes);

  // The data of an event the body ended without a blank line after, if any. Some servers close
  // the stream straight after their last `data:` line.
  std::vector<std::string> finish();

 private:
  void end_line(std::vector<std::string>& events);

  std::string line_;
  std::string data_;
  bool has_data_ = false;
  bool after_cr_ = false;
};

}  // namespace baton::bench_serve
