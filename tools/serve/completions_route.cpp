#include <map>

#include "tools/serve/accepted_fields.h"
#include "tools/serve/api_error.h"
#include "tools/serve/openai_format.h"
#include "tools/serve/output_constraint.h"
#include "tools/serve/request_fields.h"
#include "tools/serve/response_stream.h"
#include "tools/serve/routes.h"

namespace baton::serve {
namespace {

constexpr int32_t kDefaultMaxTokens = 16;  // OpenAI's and vLLM's default for completions

struct Prompt {
  std::string text;  // empty for a prompt given as token ids
  std::vector<int32_t> tokens;
};

std::vector<int32_t> token_ids(const nlohmann::json& ids, const RouteContext& context) {
  std::vector<int32_t> tokens;
  for (const auto& id : ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= context.vocab_size) {
      throw bad_field("prompt", "holds a token id outside the vocabulary of " +
                                    std::to_string(context.vocab_size) + " tokens");
    }
    tokens.push_back(id.get<int32_t>());
  }
  return tokens;
}

// OpenAI accepts a string, a list of strings, a list of token ids or a list of such lists.
std::vector<Prompt> read_prompts(const nlohmann::json& body, const RouteContext& context) {
  const auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) throw bad_field("prompt", "is required");
  const auto text_prompt = [&](const std::string& text) {
    return Prompt{text, context.llm.tokenize(text, /*add_special=*/true, /*parse_special=*/false)};
  };
  if (it->is_string()) return {text_prompt(it->get<std::string>())};
  if (!it->is_array() || it->empty()) {
    throw bad_field("prompt", "must be a string, a non-empty array of strings, or token ids");
  }
  if (it->front().is_number_integer()) return {Prompt{"", token_ids(*it, context)}};
  std::vector<Prompt> prompts;
  for (const auto& p : *it) {
    if (p.is_string()) {
      prompts.push_back(text_prompt(p.get<std::string>()));
    } else if (p.is_array() && !p.empty()) {
      prompts.push_back(Prompt{"", token_ids(p, context)});
    } else {
      throw bad_field("prompt", "must be a string, a non-empty array of strings, or token ids");
    }
  }
  return prompts;
}

struct CompletionCall {
  std::vector<Prompt> prompts;
  GenerationParams params;
  bool stream = false;
  bool include_usage = false;
  bool echo = false;
  int32_t priority = 0;
  int32_t top_logprobs = -1;  // alternatives shown per token; -1: no logprobs at all
};

CompletionCall read_call(const nlohmann::json& body, const std::string& body_text,
                         const RouteContext& context) {
  CompletionCall call;
  call.params = read_generation_params(body, kDefaultMaxTokens, context.limits);
  read_output_constraint(body, body_text, ConstraintApi::kOpenAi, "", call.params);
  call.params.lora = requested_lora(body, context);
  // As in OpenAI's API, logprobs: 0 still reports the chosen tokens' log-probabilities.
  const int64_t logprobs = read_int(body, "logprobs", -1);
  if (logprobs != -1) check_logprobs("logprobs", logprobs, context.limits);
  call.top_logprobs = static_cast<int32_t>(logprobs);
  call.params.logprobs = logprobs < 0 ? 0 : std::max<int32_t>(call.top_logprobs, 1);
  const StreamChoice stream = read_stream_choice(body, call.params);
  call.stream = stream.stream;
  call.include_usage = stream.include_usage;
  call.echo = read_bool(body, "echo", false);
  call.priority = read_priority(body, context);
  call.prompts = read_prompts(body, context);
  return call;
}

// `model`: the name the request asked for (served_model).
nlohmann::json envelope(const std::string& id, const std::string& model) {
  return {{"id", id}, {"object", "text_completion"}, {"created", unix_seconds()}, {"model", model}};
}

void answer_whole(const RouteContext& context, const CompletionCall& call, RequestGroup& group,
                  const std::string& id, httplib::Response& response) {
  const std::vector<GenerationOutput> outputs = group.wait_outputs();
  nlohmann::json choices = nlohmann::json::array();
  Usage usage;
  for (size_t i = 0; i < outputs.size(); ++i) {
    usage.add(outputs[i]);
    const std::string& prefix = call.echo ? call.prompts[i].text : std::string();
    for (size_t j = 0; j < outputs[i].completions.size(); ++j) {
      const Completion& c = outputs[i].completions[j];
      choices.push_back({{"index", i * call.params.n + j},
                         {"text", prefix + c.text},
                         {"logprobs", call.top_logprobs >= 0
                                          ? completion_logprobs(c.logprobs, context.llm,
                                                                prefix.size(), call.top_logprobs)
                                          : nlohmann::json()},
                         {"finish_reason", to_string(c.finish_reason)}});
    }
  }
  nlohmann::json body = envelope(id, served_model(call.params, context));
  body["choices"] = std::move(choices);
  body["usage"] = usage.to_json();
  response.set_content(json_text(body), "application/json");
}

// What a streamed completion has sent so far, per choice.
struct StreamState {
  std::map<size_t, size_t> text_sent;  // bytes of text per choice index, for text_offset
  Usage usage;
};

void answer_stream(const RouteContext& context, const CompletionCall& call,
                   std::shared_ptr<RequestGroup> group, const std::string& id,
                   httplib::Response& response) {
  auto state = std::make_shared<StreamState>();
  const std::string model = served_model(call.params, context);
  const auto chunk = [id, model](size_t index, const std::string& text,
                                 const nlohmann::json& logprobs, const char* finish_reason) {
    nlohmann::json c = envelope(id, model);
    c["choices"] = {
        {{"index", index},
         {"text", text},
         {"logprobs", logprobs},
         {"finish_reason", finish_reason ? nlohmann::json(finish_reason) : nlohmann::json()}}};
    return sse_event(c);
  };
  const auto on_events = [&context, call, state, chunk](const std::vector<GroupEvent>& events,
                                                        const WriteFn& write) {
    std::string out;
    for (const GroupEvent& e : events) {
      const size_t base = e.request * call.params.n;
      const size_t index = base + e.event.index;
      if (!state->text_sent.contains(index) && call.echo) {
        out += chunk(index, call.prompts[e.request].text, nullptr, nullptr);
        state->text_sent[index] = call.prompts[e.request].text.size();
      }
      if (!e.event.text.empty() || !e.event.tokens.empty()) {
        size_t& sent = state->text_sent[index];
        out += chunk(index, e.event.text,
                     call.top_logprobs >= 0 ? completion_logprobs(e.event.logprobs, context.llm,
                                                                  sent, call.top_logprobs)
                                            : nlohmann::json(),
                     nullptr);
        sent += e.event.text.size();
      }
      if (!e.event.error.empty()) {
        out += sse_event(openai_error_body(event_error(e.event.error, e.event.unavailable)));
      }
      if (!e.event.output) continue;
      state->usage.add(*e.event.output);
      for (size_t j = 0; j < e.event.output->completions.size(); ++j) {
        out +=
            chunk(base + j, "", nullptr, to_string(e.event.output->completions[j].finish_reason));
      }
    }
    return write(out);
  };
  const auto on_end = [model, id, state, include_usage = call.include_usage](const WriteFn& write) {
    return write(openai_stream_end(envelope(id, model), state->usage, include_usage));
  };
  stream_events(response, "text/event-stream", kSseKeepAlive, std::move(group), on_events, on_end);
}

}  // namespace

void handle_completions(const RouteContext& context, const httplib::Request& request,
                        httplib::Response& response) {
  const nlohmann::json body = parse_json_body(request.body);
  refuse_unhonoured_fields(body, RequestObject::kCompletions);
  CompletionCall call = read_call(body, request.body, context);
  const bool max_tokens_given = field_given(body, "max_tokens");
  std::vector<Request> requests;
  for (const Prompt& prompt : call.prompts) {
    Request r{.params = call.params, .prompt_tokens = prompt.tokens, .priority = call.priority};
    fit_context(prompt.tokens, context, "prompt", max_tokens_given, r.params);
    requests.push_back(std::move(r));
  }
  std::shared_ptr<RequestGroup> group = context.engine.submit(std::move(requests));
  const std::string id = new_response_id("cmpl");
  if (call.stream) {
    answer_stream(context, call, std::move(group), id, response);
  } else {
    answer_whole(context, call, *group, id, response);
  }
}

}  // namespace baton::serve
