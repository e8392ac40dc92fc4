#include "tools/serve/response_stream.h"

#include "tools/serve/api_error.h"
#include "tools/serve/openai_format.h"

namespace baton::serve {
namespace {

// How long a stream waits for events before it looks again; only bounds how late a finished
// group is noticed, since events wake it at once.
constexpr std::chrono::milliseconds kPollInterval{200};

}  // namespace

void stream_events(httplib::Response& response, const char* content_type,
                   std::shared_ptr<RequestGroup> group, EventsFn on_events, EndFn on_end) {
  response.set_header("Cache-Control", "no-cache");
  response.set_chunked_content_provider(
      content_type,
      [group, on_events = std::move(on_events), on_end = std::move(on_end)](
          size_t, httplib::DataSink& sink) {
        const WriteFn write = [&sink](std::string_view bytes) {
          return sink.write(bytes.data(), bytes.size());
        };
        while (!group->done()) {
          const std::vector<GroupEvent> events = group->next(kPollInterval);
          if (!events.empty() && !on_events(events, write)) {
            group->abort();
            return false;
          }
        }
        if (!on_end(write)) return false;
        sink.done();
        return true;
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

std::vector<GenerationOutput> collect_outputs(RequestGroup& group, size_t size) {
  std::vector<GenerationOutput> outputs(size);
  std::string error;
  while (!group.done()) {
    for (GroupEvent& e : group.next(std::chrono::seconds(1))) {
      if (!e.event.finished) continue;
      if (!e.event.error.empty() && error.empty()) error = e.event.error;
      if (e.event.output) outputs[e.request] = std::move(*e.event.output);
    }
  }
  if (!error.empty()) throw ApiError(400, error);
  return outputs;
}

}  // namespace baton::serve
