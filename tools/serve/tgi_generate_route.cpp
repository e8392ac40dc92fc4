#include "tools/serve/accepted_fields.h"
#include "tools/serve/api_error.h"
#include "tools/serve/generate_routes.h"
#include "tools/serve/openai_format.h"
#include "tools/serve/output_constraint.h"
#include "tools/serve/request_fields.h"
#include "tools/serve/response_stream.h"

namespace baton::serve {
namespace {

constexpr int32_t kDefaultMaxNewTokens = 100;  // TGI's default

struct TgiCall {
  std::string inputs;
  GenerationParams params;
  bool details = false;
  bool return_full_text = false;
  bool sampling = false;
};

// TGI's parameters object, mapped onto Baton's names; sampling is off (greedy) unless do_sample
// or a sampling parameter asks for it, as in TGI.
TgiCall read_call(const nlohmann::json& body, const std::string& body_text, bool stream,
                  const cli::RequestLimits& limits) {
  refuse_unhonoured_fields(body, RequestObject::kTgiGenerate);
  // TGI's clients say which they want; the route decides it.
  if (read_bool(body, "stream", stream) != stream) {
    throw bad_field("stream", stream ? "must be true on /generate_stream"
                                     : "must be false on /generate (stream at /generate_stream)");
  }
  const auto inputs = body.find("inputs");
  if (inputs == body.end() || !inputs->is_string()) throw bad_field("inputs", "must be a string");
  TgiCall call{.inputs = inputs->get<std::string>()};
  nlohmann::json p = body.value("parameters", nlohmann::json::object());
  if (p.is_null()) p = nlohmann::json::object();
  if (!p.is_object()) throw bad_field("parameters", "must be an object");
  if (field_given(p, "max_new_tokens")) p["max_tokens"] = p["max_new_tokens"];
  // TGI returns one text per request: best_of picks it among samples, which a stream cannot.
  if (field_given(p, "n")) throw bad_field("n", "is not a TGI parameter (use best_of)");
  refuse_unhonoured_fields(p, RequestObject::kTgiParameters, "parameters.");
  if (stream && read_int(p, "best_of", 1) > 1) {
    throw bad_field("best_of", "must be 1 when streaming");
  }
  if (field_given(p, "temperature") && p["temperature"].is_number() &&
      p["temperature"].get<double>() <= 0) {
    throw bad_field("temperature", "must be strictly positive");
  }
  call.sampling = read_bool(p, "do_sample", false) || field_given(p, "temperature") ||
                  field_given(p, "top_k") || field_given(p, "top_p");
  // TGI's grammar is its own object, not the GBNF string the shared fields read.
  nlohmann::json shared = p;
  shared.erase("grammar");
  call.params = read_generation_params(shared, kDefaultMaxNewTokens, limits);
  read_output_constraint(p, body_text, ConstraintApi::kTgi, "parameters.", call.params);
  if (!call.sampling) call.params.sampling.temperature = 0;
  call.details = read_bool(p, "details", false);
  call.return_full_text = read_bool(p, "return_full_text", false);
  // Token logprobs are part of TGI's stream and details.
  call.params.logprobs = 1;
  return call;
}

const char* tgi_finish_reason(FinishReason reason, const GenerationParams& params) {
  if (reason == FinishReason::kLength) return "length";
  if (reason == FinishReason::kAborted) return "abort";
  return params.stop.empty() ? "eos_token" : "stop_sequence";
}

nlohmann::json token_json(int32_t token, float logprob, const RouteContext& context) {
  return {{"id", token},
          {"text", context.llm.token_text(token)},
          {"logprob", logprob},
          {"special", false}};
}

nlohmann::json details_json(const TgiCall& call, const Completion& c, const RouteContext& context,
                            bool with_tokens) {
  nlohmann::json details = {
      {"finish_reason", tgi_finish_reason(c.finish_reason, call.params)},
      {"generated_tokens", c.tokens.size()},
      {"seed", call.sampling ? nlohmann::json(call.params.sampling.seed) : nlohmann::json()}};
  if (with_tokens) {
    nlohmann::json tokens = nlohmann::json::array();
    for (const TokenLogprobs& t : c.logprobs) {
      tokens.push_back(token_json(t.chosen.token, t.chosen.logprob, context));
    }
    details["prefill"] = nlohmann::json::array();
    details["tokens"] = std::move(tokens);
  }
  return details;
}

void answer_stream(const RouteContext& context, const TgiCall& call,
                   std::shared_ptr<RequestGroup> group, httplib::Response& response) {
  struct Sent {
    std::string text;
    size_t tokens = 0;
  };
  auto sent = std::make_shared<Sent>();
  const auto on_events = [&context, call, sent](const std::vector<GroupEvent>& events,
                                                const WriteFn& write) {
    std::string out;
    for (const GroupEvent& e : events) {
      if (!e.event.error.empty()) {
        out += sse_event({{"error", e.event.error}, {"error_type", "generation"}});
        continue;
      }
      sent->text += e.event.text;
      for (size_t i = 0; i < e.event.logprobs.size(); ++i) {
        const TokenLogprob& t = e.event.logprobs[i].chosen;
        nlohmann::json token = token_json(t.token, t.logprob, context);
        // The event's text belongs to its last token: pieces join only as whole characters.
        token["text"] = i + 1 == e.event.logprobs.size() ? e.event.text : "";
        const bool last = e.event.finished && i + 1 == e.event.logprobs.size();
        nlohmann::json chunk = {{"index", sent->tokens++},
                                {"token", std::move(token)},
                                {"generated_text", nullptr},
                                {"details", nullptr}};
        if (last && e.event.output) {
          chunk["generated_text"] = (call.return_full_text ? call.inputs : "") + sent->text;
          chunk["details"] =
              details_json(call, e.event.output->completions.front(), context, false);
        }
        out += sse_event(chunk);
      }
    }
    return write(out);
  };
  stream_events(response, "text/event-stream", kSseKeepAlive, std::move(group), on_events,
                [](const WriteFn&) { return true; });
}

}  // namespace

void tgi_generate(const RouteContext& context, const nlohmann::json& body,
                  const std::string& body_text, bool stream, httplib::Response& response) {
  try {
    const TgiCall call = read_call(body, body_text, stream, context.limits);
    Request r{.params = call.params,
              .prompt_tokens = context.llm.tokenize(call.inputs, true, false)};
    const auto parameters = body.find("parameters");
    const bool max_given = parameters != body.end() && parameters->is_object() &&
                           field_given(*parameters, "max_new_tokens");
    fit_context(r.prompt_tokens, context, "inputs", max_given, r.params);
    std::vector<Request> requests;
    requests.push_back(std::move(r));
    std::shared_ptr<RequestGroup> group = context.engine.submit(std::move(requests));
    if (stream) return answer_stream(context, call, std::move(group), response);
    const GenerationOutput output = group->wait_outputs().front();
    const Completion& c = output.completions.front();
    nlohmann::json answer = {
        {"generated_text", (call.return_full_text ? call.inputs : "") + c.text}};
    if (call.details) answer["details"] = details_json(call, c, context, true);
    response.set_content(json_text(answer), "application/json");
  } catch (const ApiError& e) {
    // TGI's statuses and error body: 422 for validation, 429 when overloaded, 424 when the
    // generation itself failed.
    const bool overloaded = e.status() == 429 || e.status() == 503;
    const bool validation = e.status() == 400;
    response.status = overloaded ? e.status() : validation ? 422 : 424;
    response.set_content(json_text({{"error", e.what()},
                                    {"error_type", overloaded   ? "overloaded"
                                                   : validation ? "validation"
                                                                : "generation"}}),
                         "application/json");
  }
}

}  // namespace baton::serve
