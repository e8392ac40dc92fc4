#include "tools/request_json.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace baton::cli {
namespace {

[[noreturn]] void bad_field(const std::string& field, const std::string& why) {
  throw FieldError(field, why);
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
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // nlohmann's get<T> wraps an integer that does not fit T; refuse it instead.
    const bool fits = it->is_number_unsigned() ? std::cmp_less_equal(it->template get<uint64_t>(),
                                                                     std::numeric_limits<T>::max())
                                               : std::in_range<T>(it->template get<int64_t>());
    if (!fits) bad_field(field, "is out of range");
  }
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    bad_field(field, e.what());
  }
}

void read_stops(const nlohmann::json& body, GenerationParams& g) {
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
}

void check_ranges(const GenerationParams& g, const RequestLimits& limits) {
  const SamplingParams& s = g.sampling;
  if (g.max_tokens < 0) bad_field("max_tokens", "must not be negative");
  if (g.expected_tokens < 0) bad_field("expected_tokens", "must not be negative");
  if (s.temperature < 0) bad_field("temperature", "must not be negative");
  if (!(s.top_p > 0 && s.top_p <= 1)) bad_field("top_p", "must be in (0, 1]");
  if (s.top_k < -1) bad_field("top_k", "must be -1 (off), 0 (off) or positive");
  if (!(s.min_p >= 0 && s.min_p <= 1)) bad_field("min_p", "must be in [0, 1]");
  if (!(s.repetition_penalty > 0)) bad_field("repetition_penalty", "must be positive");
  const std::string max_completions = std::to_string(limits.max_completions);
  if (g.n < 1 || g.n > limits.max_completions) {
    bad_field("n", "must be between 1 and " + max_completions);
  }
  if (g.best_of > limits.max_completions)
    bad_field("best_of", "must be at most " + max_completions);
  if (g.use_beam_search && g.beam_width > limits.max_completions) {
    bad_field("beam_width", "must be at most " + max_completions);
  }
  if (std::cmp_greater(g.stop.size(), limits.max_stop_strings)) {
    bad_field("stop", "has " + std::to_string(g.stop.size()) + " strings; at most " +
                          std::to_string(limits.max_stop_strings) + " are accepted");
  }
  if (g.best_of != 0 && g.best_of < g.n) bad_field("best_of", "must not be less than n");
  if (g.use_beam_search && g.beam_width < g.n) bad_field("beam_width", "must not be less than n");
}

}  // namespace

const std::vector<std::string_view>& generation_fields() {
  static const std::vector<std::string_view> names = {"max_tokens",
                                                      "temperature",
                                                      "top_k",
                                                      "top_p",
                                                      "min_p",
                                                      "repetition_penalty",
                                                      "presence_penalty",
                                                      "frequency_penalty",
                                                      "seed",
                                                      "ignore_eos",
                                                      "n",
                                                      "best_of",
                                                      "use_beam_search",
                                                      "beam_width",
                                                      "length_penalty",
                                                      "expected_tokens",
                                                      "grammar",
                                                      "stop",
                                                      "stop_token_ids"};
  return names;
}

GenerationParams generation_params_from_json(const nlohmann::json& body,
                                             const GenerationParams& defaults,
                                             const RequestLimits& limits) {
  GenerationParams g = defaults;
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
  read(body, "n", g.n);
  read(body, "best_of", g.best_of);
  read(body, "use_beam_search", g.use_beam_search);
  read(body, "beam_width", g.beam_width);
  read(body, "length_penalty", g.length_penalty);
  read(body, "expected_tokens", g.expected_tokens);
  read(body, "grammar", g.grammar);
  read_stops(body, g);
  check_ranges(g, limits);
  if (s.top_k < 0) s.top_k = 0;
  return g;
}

Request request_from_json(const nlohmann::json& body, const GenerationParams& defaults) {
  if (!body.is_object()) {
    throw Error(ErrorCategory::kInvalidArgument, "a request must be a JSON object");
  }
  if (!body.contains("prompt") || !body["prompt"].is_string()) {
    bad_field("prompt", "is required and must be a string");
  }
  Request r{.prompt = body["prompt"].get<std::string>(),
            .params = generation_params_from_json(body, defaults)};
  read(body, "logprobs", r.params.logprobs);
  read(body, "priority", r.priority);
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
