#pragma once

#include <httplib.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tools/serve/engine_client.h"
#include "tools/serve/openai_format.h"

namespace baton::serve {

// Sends bytes to the client; false once the client has gone away.
using WriteFn = std::function<bool(std::string_view bytes)>;
// Turns events into bytes for the client; returns false when a write failed.
using EventsFn = std::function<bool(const std::vector<GroupEvent>& events, const WriteFn& write)>;
// Writes what follows the last event (a usage chunk, "[DONE]").
using EndFn = std::function<bool(const WriteFn& write)>;

// Answers with a chunked body that carries the group's events as they arrive, each batch
// flushed at once, and `keepalive` (when not empty) after a second without events. A client that
// goes away has every request of the group aborted at the next write, which frees their KV
// blocks.
void stream_events(httplib::Response& response, const char* content_type, std::string keepalive,
                   std::shared_ptr<RequestGroup> group, EventsFn on_events, EndFn on_end);

// An SSE comment: clients skip it; writing it tells whether the client is still there.
inline constexpr const char* kSseKeepAlive = ": keep-alive\n\n";

// One Server-Sent Event carrying `json`.
std::string sse_event(const nlohmann::json& json);

// The end of an OpenAI stream: when `include_usage`, a chunk of `envelope` (id, object, created,
// model) with no choices and the usage; then "data: [DONE]".
std::string openai_stream_end(nlohmann::json envelope, const Usage& usage, bool include_usage);

}  // namespace baton::serve
