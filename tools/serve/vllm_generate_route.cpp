#include "tools/serve/accepted_fields.h"
#include "tools/serve/api_error.h"
#include "tools/serve/generate_routes.h"
#include "tools/serve/openai_format.h"
#include "tools/serve/output_constraint.h"
#include "tools/serve/request_fields.h"
#include "tools/serve/response_stream.h"
#include "tools/serve/routes.h"

namespace baton::serve {
namespace {

constexpr int32_t kDefaultMaxTokens = 16;  // vLLM's SamplingParams default

nlohmann::json texts_json(const std::string& prompt, const std::vector<std::string>& outputs) {
  nlohmann::json texts = nlohmann::json::array();
  for (const std::string& text : outputs) texts.push_back(prompt + text);
  return {{"text", std::move(texts)}};
}

}  // namespace

void vllm_generate(const RouteContext& context, const nlohmann::json& body,
                   const std::string& body_text, httplib::Response& response) {
  refuse_unhonoured_fields(body, RequestObject::kVllmGenerate);
  const auto prompt_field = body.find("prompt");
  if (prompt_field == body.end() || !prompt_field->is_string()) {
    throw bad_field("prompt", "must be a string");
  }
  const std::string prompt = prompt_field->get<std::string>();
  GenerationParams params = read_generation_params(body, kDefaultMaxTokens, context.limits);
  read_output_constraint(body, body_text, ConstraintApi::kOpenAi, "", params);
  const bool stream = read_stream_choice(body, params).stream;
  Request r{.params = params,
            .prompt_tokens = context.llm.tokenize(prompt, true, false),
            .priority = read_priority(body, context)};
  fit_context(r.prompt_tokens, context, "prompt", field_given(body, "max_tokens"), r.params);
  std::vector<Request> requests;
  requests.push_back(std::move(r));
  std::shared_ptr<RequestGroup> group = context.engine.submit(std::move(requests));
  if (!stream) {
    const GenerationOutput output = group->wait_outputs().front();
    std::vector<std::string> texts;
    for (const Completion& c : output.completions) texts.push_back(c.text);
    response.set_content(json_text(texts_json(prompt, texts)), "application/json");
    return;
  }
  auto texts = std::make_shared<std::vector<std::string>>(params.n);
  const auto on_events = [prompt, texts](const std::vector<GroupEvent>& events,
                                         const WriteFn& write) {
    for (const GroupEvent& e : events) {
      if (!e.event.error.empty()) return write(json_text({{"error", e.event.error}}) + "\n");
      (*texts)[e.event.index] += e.event.text;
    }
    return write(json_text(texts_json(prompt, *texts)) + "\n");
  };
  stream_events(response, "application/x-ndjson", "", std::move(group), on_events,
                [](const WriteFn&) { return true; });
}

void handle_generate(const RouteContext& context, const httplib::Request& request,
                     httplib::Response& response) {
  const nlohmann::json body = parse_json_body(request.body);
  if (body.contains("inputs")) return tgi_generate(context, body, request.body, false, response);
  if (!body.contains("prompt")) {
    throw ApiError(400, "a /generate body needs \"prompt\" (vLLM) or \"inputs\" (TGI)", "prompt");
  }
  vllm_generate(context, body, request.body, response);
}

void handle_generate_stream(const RouteContext& context, const httplib::Request& request,
                            httplib::Response& response) {
  tgi_generate(context, parse_json_body(request.body), request.body, true, response);
}

}  // namespace baton::serve
