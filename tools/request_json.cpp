#include "tools/request_json.h"

#include "baton/error.h"

namespace baton::cli {
namespace {

[[noreturn]] void bad_field(const std::string& field, const std::string& why) {
  throw Error(ErrorCategory::kInvalidArgument, "field '" + field + "': " + why);
}

// Sets `out` from body[field] when present; the JSON type must match T.
template <typename T>
void read(const nlohmann::json& body, const std::string& field, T& out) {
  const auto it = body.find(field);
  if (it == body.end() || it->is_null()) return;
  const bool ok = std::is_same_v<T, bool>          ? it->is_boolean()
                  : std::is_integral_v<T>          ? it->is_number_integer()
                  : std::is_floating_point_v<T>    ? it->is_number()
                  : std::is_same_v<T, std::string> ? it->is_string()
                                                   : true;
  if (!ok) bad_field(field, "has the wrong type (" + std::string(it->type_name()) + ")");
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    bad_field(field, e.what());
  }
}

}  // namespace

Request request_from_json(const nlohmann::json& body, const GenerationParams& defaults) {
  if (!body.is_object()) {
    throw Error(ErrorCategory::kInvalidArgument, "a request must be a JSON object");
  }
  Request r{.params = defaults};
  if (!body.contains("prompt") || !body["prompt"].is_string()) {
    bad_field("prompt", "is required and must be a string");
  }
  r.prompt = body["prompt"].get<std::string>();
  GenerationParams& g = r.params;
  SamplingParams& s = g.sampling;
  read(body, "max_tokens", g.max_tokens);
  read(body, "temperature", s.temperature);
  read(body, "top_k", s.top_k);
  read(body, "top_p", s.top_p);
  read(body, "min_p", s.min_p);
  read(body, "repetition_penalty", s.repetition_penalty);
  read(body, "presence_penalty", s.presence_penalty);
  read(body, "frequency_penalty", s.frequency_penalty);
  read(body, "seed", s.seed);
  read(body, "ignore_eos", g.ignore_eos);
  read(body, "priority", r.priority);
  read(body, "n", g.n);
  read(body, "best_of", g.best_of);
  read(body, "logprobs", g.logprobs);
  read(body, "use_beam_search", g.use_beam_search);
  read(body, "beam_width", g.beam_width);
  read(body, "length_penalty", g.length_penalty);
  if (const auto it = body.find("stop"); it != body.end() && !it->is_null()) {
    if (it->is_string()) {
      g.stop = {it->get<std::string>()};
    } else if (it->is_array() &&
               std::all_of(it->begin(), it->end(), [](const auto& v) { return v.is_string(); })) {
      g.stop = it->get<std::vector<std::string>>();
    } else {
      bad_field("stop", "must be a string or an array of strings");
    }
  }
  if (const auto it = body.find("stop_token_ids"); it != body.end() && !it->is_null()) {
    if (!it->is_array() ||
        !std::all_of(it->begin(), it->end(), [](const auto& v) { return v.is_number_integer(); })) {
      bad_field("stop_token_ids", "must be an array of integers");
    }
    g.stop_token_ids = it->get<std::vector<int32_t>>();
  }
  if (g.max_tokens < 0) bad_field("max_tokens", "must not be negative");
  if (s.temperature < 0) bad_field("temperature", "must not be negative");
  if (!(s.top_p > 0 && s.top_p <= 1)) bad_field("top_p", "must be in (0, 1]");
  return r;
}

namespace {

nlohmann::json completion_to_json(const Completion& c) {
  nlohmann::json j = {{"text", c.text},
                      {"token_ids", c.tokens},
                      {"finish_reason", to_string(c.finish_reason)},
                      {"cumulative_logprob", c.cumulative_logprob}};
  if (!c.logprobs.empty()) {
    nlohmann::json tokens = nlohmann::json::array();
    for (const TokenLogprobs& t : c.logprobs) {
      nlohmann::json top = nlohmann::json::array();
      for (const TokenLogprob& alt : t.top)
        top.push_back({{"id", alt.token}, {"logprob", alt.logprob}});
      tokens.push_back({{"id", t.chosen.token}, {"logprob", t.chosen.logprob}, {"top", top}});
    }
    j["logprobs"] = std::move(tokens);
  }
  return j;
}

}  // namespace

nlohmann::json output_to_json(const GenerationOutput& o) {
  size_t completion_tokens = 0;
  nlohmann::json completions = nlohmann::json::array();
  for (const Completion& c : o.completions) {
    completion_tokens += c.tokens.size();
    completions.push_back(completion_to_json(c));
  }
  // The first completion's fields stay at the top level, as for n = 1.
  nlohmann::json j =
      o.completions.empty() ? nlohmann::json::object() : completion_to_json(o.completions.front());
  if (o.completions.size() > 1) j["completions"] = std::move(completions);
  j["usage"] = {{"prompt_tokens", o.prompt_tokens.size()},
                {"completion_tokens", completion_tokens}};
  j["ttft_s"] = o.prompt_seconds;
  j["e2e_s"] = o.prompt_seconds + o.generation_seconds;
  return j;
}

}  // namespace baton::cli
