#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tools/bench_serve/openai_protocol.h"
#include "tools/bench_serve/prompt_dataset.h"

namespace baton::bench_serve {

struct LoadOptions {
  std::string url;
  std::string endpoint = "/v1/completions";
  std::string api_key;
  GenerationSettings generation;
  int32_t concurrency = 1;                                        // requests in flight at most
  double request_rate = std::numeric_limits<double>::infinity();  // requests per second
  uint64_t seed = 0;                                              // of the arrival schedule
  double timeout_s = 600;  // longest silence from the server before a request fails
};

// What one request measured. Times are seconds from the moment it was sent.
struct RequestResult {
  bool ok = false;
  std::string error;           // why it failed
  double ttft_s = 0;           // to the first chunk with generated text (streams only)
  double e2e_s = 0;            // to the end of the response
  std::vector<double> itl_s;   // gaps between successive text chunks (streams only)
  int64_t prompt_tokens = -1;  // from the server's usage; -1 when it gave none
  int64_t output_tokens = 0;   // from usage, else (streams) the number of text chunks
};

struct LoadResult {
  std::vector<RequestResult> requests;  // in the order of the prompts
  double duration_s = 0;                // from the first send to the last response
};

// The first model GET /v1/models lists, or nullopt when the server answers without one (or
// does not implement the route). Throws baton::Error naming the URL when the server cannot be
// reached, so a run against a server that is down stops before it starts.
std::optional<std::string> probe_server(const LoadOptions& options);

// Sends one request per prompt, at most `concurrency` at a time, each no earlier than its
// arrival time, and waits for all of them. A failed request is recorded, never thrown.
LoadResult run_load(const LoadOptions& options, const std::vector<Prompt>& prompts);

}  // namespace baton::bench_serve
