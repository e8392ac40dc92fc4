#pragma once

// OpenAI's tools on the chat route, in the generic format llama.cpp uses for models without a
// tool-call format of their own: the model writes one JSON object,
//   {"tool_calls": [{"name": "...", "arguments": {...}}, ...]}  or  {"response": "..."},
// held to it by a grammar built from the tools' parameter schemas, so that every call names a
// tool offered and its arguments validate; the server turns it into message.tool_calls or
// message.content.

#include <nlohmann/json.hpp>
#include <string>

#include "baton/generation.h"

namespace baton::serve {

struct ToolUse {
  enum class Choice {
    kNone,      // tools not used: no tools given, or tool_choice "none"
    kAuto,      // a call or a plain answer, as the model decides
    kRequired,  // at least one call (tool_choice "required", or one named function)
  };
  Choice choice = Choice::kNone;
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();  // those the model may call
  nlohmann::ordered_json offered;  // the request's tools as sent, for the chat template
  bool named = false;              // tool_choice named the one function to call
  bool parallel = true;            // more than one call in a turn (parallel_tool_calls)

  bool active() const { return choice != Choice::kNone; }
};

// tools, tool_choice and parallel_tool_calls, from `body_text` again so that the parameter
// schemas keep their properties' order. ApiError 400 names a malformed field, a tool_choice
// naming no tool offered, and a parameter schema the grammar cannot enforce.
ToolUse read_tool_use(const nlohmann::json& body, const std::string& body_text);

// The grammar of the generic format for `use` (active); ApiError 400 on "tools" where the tools
// together pass a bound on schemas.
std::string tool_call_grammar(const ToolUse& use);

// The system message that asks for the generic format, describing the tools too unless the chat
// template renders them itself.
std::string tool_instructions(const ToolUse& use, bool template_renders_tools);

// A completion in the generic format as OpenAI's assistant message and finish reason:
// tool_calls (each with a new id, arguments as JSON text) and "tool_calls" ("stop" when
// tool_choice `named` the function, as OpenAI answers), or the response as content. A text cut
// by max_tokens, or not in the format, stays content as written.
struct ToolReply {
  nlohmann::json message;
  std::string finish_reason;
};
ToolReply tool_reply(const std::string& text, FinishReason reason, bool named);

// An assistant message's tool_calls from a request (checked: each with function.name and
// function.arguments strings), in the generic format the model was shown: its content for
// templates that do not render tool calls.
std::string generic_tool_calls_text(const nlohmann::json& tool_calls);
// The same for templates that do: OpenAI's tool_calls with each call's arguments as a JSON
// object where they parse (transformers' templates write them with tojson).
std::string template_tool_calls(const nlohmann::json& tool_calls);

}  // namespace baton::serve
