#include "tools/serve/tool_calls.h"

#include <algorithm>
#include <utility>

#include "baton/error.h"
#include "baton/structured_output.h"
#include "core/runtime/bounded_json.h"
#include "tools/serve/api_error.h"
#include "tools/serve/openai_format.h"

namespace baton::serve {
namespace {

using Ordered = nlohmann::ordered_json;

bool valid_tool_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// One entry of "tools", checked: {"type": "function", "function": {"name", "description",
// "parameters", "strict"}}; its parameters default to an object without properties.
Ordered read_tool(const Ordered& tool, const std::string& field) {
  if (!tool.is_object() || !has_value(tool, "type", "function")) {
    throw bad_field(field, "must be {\"type\": \"function\", \"function\": {...}}");
  }
  for (const auto& [key, value] : tool.items()) {
    if (key != "type" && key != "function")
      throw bad_field(field + "." + key, "is not a field of a tool");
  }
  const auto function = tool.find("function");
  if (function == tool.end() || !function->is_object()) {
    throw bad_field(field + ".function", "must be an object");
  }
  Ordered checked = Ordered::object();
  for (const auto& [key, value] : function->items()) {
    if (key != "name" && key != "description" && key != "parameters" && key != "strict") {
      throw bad_field(field + ".function." + key, "is not a field of a function");
    }
  }
  const auto name = function->find("name");
  if (name == function->end() || !name->is_string() || !valid_tool_name(*name)) {
    throw bad_field(field + ".function.name",
                    "must be 1 to 64 letters, digits, underscores or dashes");
  }
  checked["name"] = *name;
  if (const auto description = function->find("description"); description != function->end()) {
    if (!description->is_string())
      throw bad_field(field + ".function.description", "must be a string");
    checked["description"] = *description;
  }
  checked["parameters"] =
      function->value("parameters", Ordered{{"type", "object"}, {"properties", Ordered::object()}});
  // Checked here, so that an unsupported schema is refused naming this field.
  try {
    json_schema_grammar(checked["parameters"].dump());
  } catch (const Error& e) {
    throw bad_field(field + ".function.parameters", e.what());
  }
  return checked;
}

// References inside `schema` re-rooted at `base`, where it is placed in a larger schema.
void rebase_references(Ordered& schema, const std::string& base) {
  if (schema.is_object()) {
    for (auto& [key, value] : schema.items()) {
      if (key == "$ref" && value.is_string() && value.get<std::string>().starts_with('#')) {
        value = "#" + base + value.get<std::string>().substr(1);
      } else {
        rebase_references(value, base);
      }
    }
  } else if (schema.is_array()) {
    for (Ordered& item : schema) rebase_references(item, base);
  }
}

Ordered only_property(const std::string& name, Ordered schema) {
  return {{"type", "object"},
          {"properties", {{name, std::move(schema)}}},
          {"required", {name}},
          {"additionalProperties", false}};
}

// A call's arguments as JSON where they parse.
Ordered parsed_arguments(const std::string& arguments) {
  try {
    return parse_bounded_json<Ordered>(arguments, "the arguments");
  } catch (const Error&) {
    return arguments;  // not JSON: kept as the text it is
  }
}

}  // namespace

ToolUse read_tool_use(const nlohmann::json& body, const std::string& body_text) {
  const bool has_tools = body.contains("tools") && !body["tools"].is_null();
  const bool has_choice = body.contains("tool_choice") && !body["tool_choice"].is_null();
  if (!has_tools) {
    if (has_choice && body["tool_choice"] != "none") {
      throw bad_field("tool_choice", "needs tools to choose from");
    }
    if (body.contains("parallel_tool_calls") && !body["parallel_tool_calls"].is_null()) {
      throw bad_field("parallel_tool_calls", "needs tools");
    }
    return {};
  }
  const Ordered request = Ordered::parse(body_text);
  const Ordered& tools = request.contains("tools") ? request["tools"] : Ordered();
  if (!tools.is_array() || tools.empty()) throw bad_field("tools", "must be a non-empty array");
  ToolUse use{.choice = ToolUse::Choice::kAuto, .offered = tools};
  for (size_t i = 0; i < tools.size(); ++i) {
    use.tools.push_back(read_tool(tools[i], "tools[" + std::to_string(i) + "]"));
  }
  if (const auto it = request.find("parallel_tool_calls"); it != request.end() && !it->is_null()) {
    if (!it->is_boolean()) throw bad_field("parallel_tool_calls", "must be a boolean");
    use.parallel = it->get<bool>();
  }
  if (!has_choice) return use;
  const Ordered& choice = request["tool_choice"];
  if (choice == "none") return {};
  if (choice == "auto") return use;
  if (choice == "required") {
    use.choice = ToolUse::Choice::kRequired;
    return use;
  }
  const bool named = choice.is_object() && has_value(choice, "type", "function") &&
                     choice.contains("function") && choice["function"].is_object() &&
                     choice["function"].contains("name") && choice["function"]["name"].is_string();
  if (!named) {
    throw bad_field("tool_choice",
                    "must be none, auto, required or {\"type\": \"function\", "
                    "\"function\": {\"name\": ...}}");
  }
  const auto tool = std::ranges::find_if(
      use.tools, [&](const Ordered& t) { return t["name"] == choice["function"]["name"]; });
  if (tool == use.tools.end()) {
    throw bad_field("tool_choice", "names '" + choice["function"]["name"].get<std::string>() +
                                       "', which is not among the tools");
  }
  use.tools = Ordered::array({*tool});
  use.choice = ToolUse::Choice::kRequired;
  use.named = true;
  use.parallel = false;
  return use;
}

std::string tool_call_grammar(const ToolUse& use) {
  // Each tool's parameters go under $defs, their own references re-rooted there.
  Ordered schema = Ordered::object();
  Ordered calls = Ordered::array();
  for (size_t i = 0; i < use.tools.size(); ++i) {
    const std::string place = "/$defs/tool" + std::to_string(i);
    Ordered parameters = use.tools[i]["parameters"];
    rebase_references(parameters, place);
    schema["$defs"]["tool" + std::to_string(i)] = std::move(parameters);
    calls.push_back(
        {{"type", "object"},
         {"properties",
          {{"name", {{"const", use.tools[i]["name"]}}}, {"arguments", {{"$ref", "#" + place}}}}},
         {"required", {"name", "arguments"}},
         {"additionalProperties", false}});
  }
  Ordered list = {{"type", "array"},
                  {"items", calls.size() == 1 ? calls[0] : Ordered{{"anyOf", calls}}},
                  {"minItems", 1}};
  if (!use.parallel) list["maxItems"] = 1;
  Ordered with_calls = only_property("tool_calls", std::move(list));
  if (use.choice == ToolUse::Choice::kRequired) {
    for (auto& [key, value] : with_calls.items()) schema[key] = value;
  } else {
    schema["anyOf"] = {std::move(with_calls), only_property("response", {{"type", "string"}})};
  }
  try {
    return json_schema_grammar(schema.dump());
  } catch (const Error& e) {
    // Each tool's parameters compiled alone; together they may still pass a bound.
    throw bad_field("tools", e.what());
  }
}

std::string tool_instructions(const ToolUse& use, bool template_renders_tools) {
  const bool may_answer = use.choice == ToolUse::Choice::kAuto;
  // Short: small models have small contexts.
  std::string text =
      "Reply in JSON: {\"tool_calls\": [{\"name\": ..., \"arguments\": {...}}]} to call tools";
  text += may_answer ? ", or {\"response\": \"...\"} to answer." : ".";
  if (template_renders_tools) return text;
  text += " Tools:";
  for (const Ordered& tool : use.tools) text += "\n" + tool.dump();
  return text;
}

ToolReply tool_reply(const std::string& text, FinishReason reason, bool named) {
  ToolReply reply{.message = {{"role", "assistant"}, {"content", text}},
                  .finish_reason = to_string(reason)};
  if (reason != FinishReason::kStop) return reply;
  // Arguments keep the order they were written in.
  Ordered parsed;
  try {
    parsed = parse_bounded_json<Ordered>(text, "the reply");
  } catch (const Error&) {
    return reply;
  }
  if (!parsed.is_object()) return reply;
  if (const auto response = parsed.find("response");
      response != parsed.end() && response->is_string()) {
    reply.message["content"] = *response;
    return reply;
  }
  const auto calls = parsed.find("tool_calls");
  if (calls == parsed.end() || !calls->is_array()) return reply;
  nlohmann::json tool_calls = nlohmann::json::array();
  for (const Ordered& call : *calls) {
    const auto name = call.find("name");
    const auto arguments = call.find("arguments");
    if (name == call.end() || !name->is_string() || arguments == call.end()) return reply;
    tool_calls.push_back(
        {{"id", new_response_id("call")},
         {"type", "function"},
         {"function", {{"name", name->get<std::string>()}, {"arguments", arguments->dump()}}}});
  }
  reply.message["content"] = nullptr;
  reply.message["tool_calls"] = std::move(tool_calls);
  // OpenAI answers a call it was made to make (a named tool_choice) with "stop".
  reply.finish_reason = named ? "stop" : "tool_calls";
  return reply;
}

std::string generic_tool_calls_text(const nlohmann::json& tool_calls) {
  Ordered calls = Ordered::array();
  for (const nlohmann::json& call : tool_calls) {
    const nlohmann::json& function = call["function"];
    calls.push_back({{"name", function["name"]},
                     {"arguments", parsed_arguments(function["arguments"].get<std::string>())}});
  }
  return Ordered{{"tool_calls", std::move(calls)}}.dump();
}

std::string template_tool_calls(const nlohmann::json& tool_calls) {
  Ordered calls = Ordered::array();
  for (const nlohmann::json& call : tool_calls) {
    Ordered copy = parse_bounded_json<Ordered>(call.dump(), "a tool call");
    copy["function"]["arguments"] = parsed_arguments(call["function"]["arguments"]);
    calls.push_back(std::move(copy));
  }
  return calls.dump();
}

}  // namespace baton::serve
