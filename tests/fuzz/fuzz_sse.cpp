// Any bytes as a server-sent event stream read by `baton bench serve`, fed in the pieces the
// first byte chooses (reads end anywhere): the events must not depend on where the reads end.

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_input.h"
#include "tools/bench_serve/sse_parser.h"

namespace {

std::vector<std::string> events_of(std::string_view body, size_t piece) {
  baton::bench_serve::SseParser parser;
  std::vector<std::string> events;
  for (size_t at = 0; at < body.size(); at += piece) {
    for (std::string& e : parser.feed(body.substr(at, piece))) events.push_back(std::move(e));
  }
  for (std::string& e : parser.finish()) events.push_back(std::move(e));
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 7;
  const std::string_view body = baton::fuzz::as_text(data + 1, size - 1);
  if (events_of(body, piece) != events_of(body, body.size() + 1)) std::abort();
  return 0;
}
