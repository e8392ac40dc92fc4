#include "baton/error.h"
#include "tools/serve/accepted_fields.h"
#include "tools/serve/api_error.h"
#include "tools/serve/openai_format.h"
#include "tools/serve/output_constraint.h"
#include "tools/serve/request_fields.h"
#include "tools/serve/response_stream.h"
#include "tools/serve/routes.h"
#include "tools/serve/tool_calls.h"

namespace baton::serve {
namespace {

// Content is a string, or OpenAI's list of parts of which Baton takes the text ones.
std::string message_content(const nlohmann::json& content, size_t index) {
  const std::string field = "messages[" + std::to_string(index) + "].content";
  if (content.is_null()) return "";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw bad_field(field, "must be a string or an array of parts");
  std::string text;
  for (const auto& part : content) {
    const auto type = part.is_object() ? part.find("type") : part.end();
    const auto text_field = part.is_object() ? part.find("text") : part.end();
    if (!part.is_object() || type == part.end() || *type != "text" || text_field == part.end() ||
        !text_field->is_string()) {
      throw bad_field(field, "may only hold parts of type \"text\" with a string \"text\"");
    }
    text += text_field->get<std::string>();
  }
  return text;
}

// An assistant message's tool_calls: OpenAI's [{"id", "type": "function", "function": {"name",
// "arguments"}}], with arguments as JSON text.
void check_tool_calls(const nlohmann::json& calls, const std::string& field) {
  const char* const shape =
      "must be an array of {\"id\", \"type\": \"function\", \"function\": {\"name\", "
      "\"arguments\"}} with strings";
  if (!calls.is_array()) throw bad_field(field, shape);
  for (const nlohmann::json& call : calls) {
    const bool ok = call.is_object() && has_value(call, "type", "function") &&
                    call.contains("function") && call["function"].is_object() &&
                    call["function"].contains("name") && call["function"]["name"].is_string() &&
                    call["function"].contains("arguments") &&
                    call["function"]["arguments"].is_string();
    if (!ok) throw bad_field(field, shape);
  }
}

// The conversation; tool calls and answers go to templates that render tools as they are, and
// to others in the generic format the model is asked to write (tool_calls.h).
std::vector<ChatMessage> read_messages(const nlohmann::json& body, bool template_renders_tools) {
  const auto it = body.find("messages");
  if (it == body.end() || !it->is_array()) throw bad_field("messages", "must be an array");
  if (it->empty()) throw bad_field("messages", "must hold at least one message");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& m = (*it)[i];
    const std::string field = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw bad_field(field, "must be an object");
    refuse_unhonoured_fields(m, RequestObject::kChatMessage, field + ".");
    if (!m.contains("role") || !m["role"].is_string() || m["role"].get<std::string>().empty()) {
      throw bad_field(field + ".role", "must be a non-empty string");
    }
    ChatMessage message{
        .role = m["role"].get<std::string>(),
        .content = message_content(m.contains("content") ? m["content"] : nlohmann::json(), i)};
    if (const auto calls = m.find("tool_calls"); calls != m.end() && !calls->is_null()) {
      check_tool_calls(*calls, field + ".tool_calls");
      if (template_renders_tools) {
        message.tool_calls = template_tool_calls(*calls);
      } else {
        message.content = generic_tool_calls_text(*calls);
      }
    }
    if (const auto id = m.find("tool_call_id"); id != m.end() && !id->is_null()) {
      if (!id->is_string()) throw bad_field(field + ".tool_call_id", "must be a string");
      message.tool_call_id = id->get<std::string>();
    }
    messages.push_back(std::move(message));
  }
  return messages;
}

struct ChatCall {
  GenerationParams params;
  ToolUse tools;
  int32_t top_logprobs = 0;  // alternatives shown per token when logprobs are on
  bool stream = false;
  bool include_usage = false;
  int32_t priority = 0;
};

ChatCall read_call(nlohmann::json& body, const std::string& body_text,
                   const RouteContext& context) {
  const std::string lora = requested_lora(body, context);
  // Newer OpenAI clients send max_completion_tokens in place of max_tokens.
  if (field_given(body, "max_completion_tokens") && !field_given(body, "max_tokens")) {
    body["max_tokens"] = body["max_completion_tokens"];
  }
  ChatCall call;
  call.params = read_generation_params(body, context.context_size, context.limits);
  read_output_constraint(body, body_text, ConstraintApi::kOpenAi, "", call.params);
  call.tools = read_tool_use(body, body_text);
  if (call.tools.active()) {
    if (!call.params.grammar.empty()) {
      throw bad_field("tools",
                      "cannot be combined with another constraint on the output "
                      "(response_format, grammar, guided_*)");
    }
    call.params.grammar = tool_call_grammar(call.tools);
  }
  call.params.lora = lora;
  const int64_t top = read_int(body, "top_logprobs", 0);
  check_logprobs("top_logprobs", top, context.limits);
  if (read_bool(body, "logprobs", false)) {
    call.top_logprobs = static_cast<int32_t>(top);
    call.params.logprobs = std::max<int32_t>(call.top_logprobs, 1);
  } else if (top > 0) {
    throw bad_field("top_logprobs", "needs \"logprobs\": true");
  }
  const StreamChoice stream = read_stream_choice(body, call.params);
  if (stream.stream && call.tools.active() && call.params.logprobs > 0) {
    throw bad_field("logprobs", "cannot be streamed with tools: the reply is parsed whole");
  }
  call.stream = stream.stream;
  call.include_usage = stream.include_usage;
  call.priority = read_priority(body, context);
  return call;
}

// `model`: the name the request asked for (served_model).
nlohmann::json envelope(const std::string& id, const char* object, const std::string& model) {
  return {{"id", id}, {"object", object}, {"created", unix_seconds()}, {"model", model}};
}

nlohmann::json logprobs_or_null(const ChatCall& call, const std::vector<TokenLogprobs>& tokens,
                                const RouteContext& context) {
  return call.params.logprobs > 0 ? chat_logprobs(tokens, context.llm, call.top_logprobs)
                                  : nlohmann::json();
}

void answer_whole(const RouteContext& context, const ChatCall& call, RequestGroup& group,
                  const std::string& id, httplib::Response& response) {
  const GenerationOutput output = group.wait_outputs().front();
  nlohmann::json choices = nlohmann::json::array();
  for (size_t j = 0; j < output.completions.size(); ++j) {
    const Completion& c = output.completions[j];
    ToolReply reply{.message = {{"role", "assistant"}, {"content", c.text}},
                    .finish_reason = to_string(c.finish_reason)};
    if (call.tools.active()) reply = tool_reply(c.text, c.finish_reason, call.tools.named);
    choices.push_back({{"index", j},
                       {"message", std::move(reply.message)},
                       {"logprobs", logprobs_or_null(call, c.logprobs, context)},
                       {"finish_reason", std::move(reply.finish_reason)}});
  }
  Usage usage;
  usage.add(output);
  nlohmann::json body = envelope(id, "chat.completion", served_model(call.params, context));
  body["choices"] = std::move(choices);
  body["usage"] = usage.to_json();
  response.set_content(json_text(body), "application/json");
}

// A tool reply streamed as OpenAI streams one: each call whole in one delta (its index, id, name
// and all its arguments), or the content, then the finish reason.
template <typename Chunk>
std::string tool_reply_chunks(const ToolReply& reply, size_t index, const Chunk& chunk) {
  std::string out;
  if (reply.message.contains("tool_calls")) {
    nlohmann::json calls = reply.message["tool_calls"];
    for (size_t k = 0; k < calls.size(); ++k) calls[k]["index"] = k;
    out += chunk(index, {{"tool_calls", std::move(calls)}}, nullptr, nullptr);
  } else {
    out += chunk(index, {{"content", reply.message["content"]}}, nullptr, nullptr);
  }
  return out + chunk(index, nlohmann::json::object(), nullptr, reply.finish_reason.c_str());
}

void answer_stream(const RouteContext& context, const ChatCall& call,
                   std::shared_ptr<RequestGroup> group, const std::string& id,
                   httplib::Response& response) {
  auto usage = std::make_shared<Usage>();
  const std::string model = served_model(call.params, context);
  const auto chunk = [id, model](size_t index, nlohmann::json delta, nlohmann::json logprobs,
                                 const char* finish_reason) {
    nlohmann::json c = envelope(id, "chat.completion.chunk", model);
    c["choices"] = {
        {{"index", index},
         {"delta", std::move(delta)},
         {"logprobs", std::move(logprobs)},
         {"finish_reason", finish_reason ? nlohmann::json(finish_reason) : nlohmann::json()}}};
    return sse_event(c);
  };
  // Every choice opens with the assistant role, as OpenAI's stream does.
  std::string opening;
  for (int32_t j = 0; j < call.params.n; ++j) {
    opening += chunk(j, {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr);
  }
  auto pending_opening = std::make_shared<std::string>(std::move(opening));
  // With tools the reply is parsed whole: text is held back until its completion ends.
  auto held = std::make_shared<std::vector<std::string>>(call.params.n);
  const auto on_events = [&context, call, usage, chunk, pending_opening, held](
                             const std::vector<GroupEvent>& events, const WriteFn& write) {
    std::string out = std::move(*pending_opening);
    pending_opening->clear();
    for (const GroupEvent& e : events) {
      if (call.tools.active()) {
        (*held)[e.event.index] += e.event.text;
      } else if (!e.event.text.empty() || !e.event.logprobs.empty()) {
        out += chunk(e.event.index, {{"content", e.event.text}},
                     logprobs_or_null(call, e.event.logprobs, context), nullptr);
      }
      if (!e.event.error.empty()) {
        out += sse_event(openai_error_body(event_error(e.event.error, e.event.unavailable)));
      }
      if (!e.event.output) continue;
      usage->add(*e.event.output);
      for (size_t j = 0; j < e.event.output->completions.size(); ++j) {
        const FinishReason reason = e.event.output->completions[j].finish_reason;
        if (!call.tools.active()) {
          out += chunk(j, nlohmann::json::object(), nullptr, to_string(reason));
          continue;
        }
        out += tool_reply_chunks(tool_reply((*held)[j], reason, call.tools.named), j, chunk);
      }
    }
    return write(out);
  };
  const auto on_end = [model, id, usage, include_usage = call.include_usage](const WriteFn& write) {
    return write(
        openai_stream_end(envelope(id, "chat.completion.chunk", model), *usage, include_usage));
  };
  stream_events(response, "text/event-stream", kSseKeepAlive, std::move(group), on_events, on_end);
}

}  // namespace

void handle_chat_completions(const RouteContext& context, const httplib::Request& request,
                             httplib::Response& response) {
  nlohmann::json body = parse_json_body(request.body);
  refuse_unhonoured_fields(body, RequestObject::kChatCompletions);
  const bool max_tokens_given =
      field_given(body, "max_tokens") || field_given(body, "max_completion_tokens");
  ChatCall call = read_call(body, request.body, context);
  const bool renders_tools = context.llm.chat_template_renders_tools();
  std::vector<ChatMessage> messages = read_messages(body, renders_tools);
  std::string tools;
  if (call.tools.active()) {
    const std::string instructions = tool_instructions(call.tools, renders_tools);
    if (messages.front().role == "system") {
      messages.front().content += "\n\n" + instructions;
    } else {
      messages.insert(messages.begin(), ChatMessage{.role = "system", .content = instructions});
    }
    if (renders_tools) tools = call.tools.offered.dump();
  }
  ChatPrompt prompt;
  try {
    prompt =
        context.llm.chat_prompt(messages, read_bool(body, "add_generation_prompt", true), tools);
  } catch (const Error& e) {
    // The template refusing this conversation is the caller's fault; a template Baton cannot
    // parse is the server's.
    if (e.category() != ErrorCategory::kInvalidArgument) {
      throw ApiError(500, e.what(), "", "server_error");
    }
    throw ApiError(400, e.what(), "messages");
  }
  Request r{
      .params = call.params, .prompt_tokens = std::move(prompt.tokens), .priority = call.priority};
  fit_context(r.prompt_tokens, context, "messages", max_tokens_given, r.params);
  std::vector<Request> requests;
  requests.push_back(std::move(r));
  std::shared_ptr<RequestGroup> group = context.engine.submit(std::move(requests));
  const std::string id = new_response_id("chatcmpl");
  if (call.stream) {
    answer_stream(context, call, std::move(group), id, response);
  } else {
    answer_whole(context, call, *group, id, response);
  }
}

}  // namespace baton::serve
