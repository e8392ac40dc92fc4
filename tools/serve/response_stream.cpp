#include "tools/serve/response_stream.h"

#include "tools/serve/api_error.h"
#include "tools/serve/openai_format.h"

namespace baton::serve {
namespace {

// How long a stream waits for events before it looks again; only bounds how late a finished
// group is noticed, since events wake it at once.
constexpr std::chrono::milliseconds kPollInterval{200};
// A quiet stream (its request queued, or in a long prefill) writes its keep-alive this often: a
// failed write is how a client that went away is noticed before its first token.
constexpr std::chrono::seconds kKeepAliveInterval{1};

}  // namespace

void stream_events(httplib::Response& response, const char* content_type, std::string keepalive,
                   std::shared_ptr<RequestGroup> group, EventsFn on_events, EndFn on_end) {
  response.set_header("Cache-Control", "no-cache");
  response.set_chunked_content_provider(
      content_type,
      [group, keepalive = std::move(keepalive), on_events = std::move(on_events),
       on_end = std::move(on_end)](size_t, httplib::DataSink& sink) {
        const WriteFn write = [&sink](std::string_view bytes) {
          return sink.write(bytes.data(), bytes.size());
        };
        // httplib runs providers outside its handlers' exception guard: nothing may escape.
        try {
          auto last_write = std::chrono::steady_clock::now();
          while (!group->done()) {
            const std::vector<GroupEvent> events = group->next(kPollInterval);
            const auto now = std::chrono::steady_clock::now();
            bool written = true;
            if (!events.empty()) {
              written = on_events(events, write);
              last_write = now;
            } else if (!keepalive.empty() && now - last_write >= kKeepAliveInterval) {
              written = write(keepalive);
              last_write = now;
            }
            if (!written) {
              group->abort();
              return false;
            }
          }
          if (!on_end(write)) return false;
          sink.done();
          return true;
        } catch (...) {
          group->abort();
          return false;
        }
      },
      [group](bool success) {
        if (!success) group->abort();
      });
}

std::string sse_event(const nlohmann::json& json) {
  return "data: " + json_text(json) + "\n\n";
}

std::string openai_stream_end(nlohmann::json envelope, const Usage& usage, bool include_usage) {
  std::string out;
  if (include_usage) {
    envelope["choices"] = nlohmann::json::array();
    envelope["usage"] = usage.to_json();
    out += sse_event(envelope);
  }
  return out + "data: [DONE]\n\n";
}

}  // namespace baton::serve
