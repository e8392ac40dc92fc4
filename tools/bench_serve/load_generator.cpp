#include "tools/bench_serve/load_generator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <thread>

#include "baton/error.h"
#include "tools/bench_serve/arrival_schedule.h"
#include "tools/bench_serve/http_client.h"
#include "tools/bench_serve/sse_parser.h"

namespace baton::bench_serve {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string http_error(const HttpResponse& response) {
  constexpr size_t kMaxBody = 200;
  std::string body = response.body.substr(0, kMaxBody);
  std::replace(body.begin(), body.end(), '\n', ' ');
  return "HTTP " + std::to_string(response.status) + (body.empty() ? "" : ": " + body);
}

// Times a streamed response chunk by chunk as its events arrive.
class StreamTimer {
 public:
  StreamTimer(Api api, Clock::time_point sent) : api_(api), sent_(sent), last_text_(sent) {}

  // False once the stream has reported an error or sent something that is not a chunk.
  bool consume(std::string_view bytes) {
    for (const std::string& data : parser_.feed(bytes)) on_event(data);
    return error_.empty();
  }

  void finish(RequestResult& r) {
    for (const std::string& data : parser_.finish()) on_event(data);
    r.e2e_s = seconds_between(sent_, Clock::now());
    if (!error_.empty()) {
      r.error = error_;
      return;
    }
    if (text_chunks_ == 0) {
      r.error = "the stream carried no generated text";
      return;
    }
    r.ok = true;
    r.ttft_s = ttft_s_;
    r.itl_s = std::move(itl_s_);
    r.prompt_tokens = usage_.prompt_tokens;
    r.output_tokens = usage_.completion_tokens >= 0 ? usage_.completion_tokens : text_chunks_;
  }

  const std::string& error() const { return error_; }

 private:
  void on_event(const std::string& data) {
    if (!error_.empty() || data == "[DONE]") return;
    StreamChunk chunk;
    try {
      chunk = parse_stream_chunk(api_, data);
    } catch (const std::exception& e) {
      error_ = std::string("malformed stream chunk: ") + e.what();
      return;
    }
    if (!chunk.error.empty()) {
      error_ = "server error in stream: " + chunk.error;
      return;
    }
    if (chunk.usage) usage_ = *chunk.usage;
    if (!chunk.has_text) return;
    const Clock::time_point now = Clock::now();
    if (text_chunks_ == 0) {
      ttft_s_ = seconds_between(sent_, now);
    } else {
      itl_s_.push_back(seconds_between(last_text_, now));
    }
    last_text_ = now;
    ++text_chunks_;
  }

  Api api_;
  Clock::time_point sent_;
  Clock::time_point last_text_;
  SseParser parser_;
  std::string error_;
  double ttft_s_ = 0;
  std::vector<double> itl_s_;
  int64_t text_chunks_ = 0;
  Usage usage_;
};

RequestResult send_streaming(HttpClient& client, const LoadOptions& o, Api api,
                             const std::string& body) {
  RequestResult r;
  StreamTimer timer(api, Clock::now());
  const HttpResponse response = client.post(
      o.endpoint, body, [&timer](std::string_view bytes) { return timer.consume(bytes); });
  if (!timer.error().empty() || (response.transport_error.empty() && response.status == 200)) {
    timer.finish(r);
  } else {
    r.error = response.transport_error.empty() ? http_error(response)
                                               : "request failed: " + response.transport_error;
  }
  return r;
}

RequestResult send_whole(HttpClient& client, const LoadOptions& o, const std::string& body) {
  RequestResult r;
  const Clock::time_point sent = Clock::now();
  std::string received;
  HttpResponse response = client.post(o.endpoint, body, [&](std::string_view bytes) {
    received += bytes;
    return true;
  });
  r.e2e_s = seconds_between(sent, Clock::now());
  if (!response.transport_error.empty()) {
    r.error = "request failed: " + response.transport_error;
    return r;
  }
  if (response.status != 200) {
    r.error = http_error(response);
    return r;
  }
  Usage usage;
  try {
    usage = parse_response_usage(received);
  } catch (const std::exception& e) {
    r.error = std::string("malformed response: ") + e.what();
    return r;
  }
  if (usage.completion_tokens < 0) {
    r.error = "response has no usage.completion_tokens";
    return r;
  }
  r.ok = true;
  r.prompt_tokens = usage.prompt_tokens;
  r.output_tokens = usage.completion_tokens;
  return r;
}

}  // namespace

std::optional<std::string> probe_server(const LoadOptions& options) {
  HttpClient client(parse_server_url(options.url), options.api_key, options.timeout_s);
  const HttpResponse response = client.get("/v1/models");
  if (!response.transport_error.empty()) {
    throw Error(ErrorCategory::kIo,
                "cannot reach the server at " + options.url + ": " + response.transport_error);
  }
  if (response.status != 200) return std::nullopt;
  return first_model_id(response.body);
}

LoadResult run_load(const LoadOptions& options, const std::vector<Prompt>& prompts) {
  const Api api = api_for_endpoint(options.endpoint);
  const std::vector<double> arrivals =
      arrival_offsets(static_cast<int64_t>(prompts.size()), options.request_rate, options.seed);
  const ServerAddress address = parse_server_url(options.url);
  const size_t workers = std::min(prompts.size(), static_cast<size_t>(options.concurrency));
  std::vector<std::unique_ptr<HttpClient>> clients;
  for (size_t w = 0; w < workers; ++w) {
    clients.push_back(std::make_unique<HttpClient>(address, options.api_key, options.timeout_s));
  }

  LoadResult result;
  result.requests.resize(prompts.size());
  // Arrival times only grow, so a worker that takes the next index as soon as it is free sends
  // each request at its arrival time or, when all workers are busy, as soon as one frees up.
  std::atomic<size_t> next{0};
  const Clock::time_point start = Clock::now();
  auto work = [&](HttpClient& client) {
    for (size_t i = next++; i < prompts.size(); i = next++) {
      std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(arrivals[i])));
      const std::string body = request_body(api, options.generation, prompts[i]);
      result.requests[i] = options.generation.stream ? send_streaming(client, options, api, body)
                                                     : send_whole(client, options, body);
    }
  };
  std::vector<std::thread> threads;
  for (const std::unique_ptr<HttpClient>& client : clients) {
    threads.emplace_back(work, std::ref(*client));
  }
  for (std::thread& t : threads) t.join();
  result.duration_s = seconds_between(start, Clock::now());
  return result;
}

}  // namespace baton::bench_serve
