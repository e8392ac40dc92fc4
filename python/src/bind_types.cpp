#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <type_traits>

#include "baton/async_llm.h"
#include "baton/llm.h"
#include "baton/option_values.h"
#include "bindings.h"

namespace py = pybind11;

namespace baton::python {
namespace {

void bind_options(py::module_& m) {
  py::class_<LoraOptions>(m, "LoraOptions")
      .def(py::init<>())
      .def_readwrite("name", &LoraOptions::name)
      .def_readwrite("path", &LoraOptions::path)
      .def_readwrite("scale", &LoraOptions::scale);

  // Every row of the table: enum options as their names, so Python passes the strings the CLI
  // takes; engine_options() describes them for EngineArgs and the stub's generator.
  py::class_<LLMOptions> options(m, "LLMOptions");
  options.def(py::init<>()).def_readwrite("model", &LLMOptions::model);
  py::list rows;
  const LLMOptions defaults;
  for_each_engine_option([&](const OptionField& field, auto member) {
    using Value = std::remove_cvref_t<decltype(defaults.*member)>;
    py::object default_value;
    std::string type;
    if constexpr (std::is_enum_v<Value>) {
      options.def_property(
          field.name, [member](const LLMOptions& o) { return option_value_name(o.*member); },
          [member, name = std::string(field.name)](LLMOptions& o, const std::string& text) {
            o.*member = parse_option_value<Value>(name, text);
          });
      default_value = py::str(option_value_name(defaults.*member));
      type = "str";
    } else {
      options.def_readwrite(field.name, member);
      default_value = py::cast(defaults.*member);
      type = std::is_same_v<Value, bool>          ? "bool"
             : std::is_floating_point_v<Value>    ? "float"
             : std::is_same_v<Value, std::string> ? "str"
                                                  : "int";
    }
    py::dict row;
    row["name"] = field.name;
    row["type"] = type;
    row["default"] = default_value;
    row["flag"] = field.flag;
    row["help"] = field.help;
    row["all_ranks"] = field.scope == OptionScope::kAllRanks;
    row["min"] = std::isinf(field.range.min) ? py::none() : py::object(py::float_(field.range.min));
    row["min_exclusive"] = field.range.min_exclusive;
    rows.append(row);
  });
  m.attr("ENGINE_OPTIONS") = rows;

  py::class_<SamplingParams>(m, "SamplingParams")
      .def(py::init<>())
      .def_readwrite("temperature", &SamplingParams::temperature)
      .def_readwrite("top_k", &SamplingParams::top_k)
      .def_readwrite("top_p", &SamplingParams::top_p)
      .def_readwrite("min_p", &SamplingParams::min_p)
      .def_readwrite("repetition_penalty", &SamplingParams::repetition_penalty)
      .def_readwrite("repeat_last_n", &SamplingParams::repeat_last_n)
      .def_readwrite("presence_penalty", &SamplingParams::presence_penalty)
      .def_readwrite("frequency_penalty", &SamplingParams::frequency_penalty)
      .def_readwrite("seed", &SamplingParams::seed);

  py::class_<GenerationParams>(m, "GenerationParams")
      .def(py::init<>())
      .def_readwrite("sampling", &GenerationParams::sampling)
      .def_readwrite("max_tokens", &GenerationParams::max_tokens)
      .def_readwrite("ignore_eos", &GenerationParams::ignore_eos)
      .def_readwrite("stop", &GenerationParams::stop)
      .def_readwrite("stop_token_ids", &GenerationParams::stop_token_ids)
      .def_readwrite("n", &GenerationParams::n)
      .def_readwrite("best_of", &GenerationParams::best_of)
      .def_readwrite("logprobs", &GenerationParams::logprobs)
      .def_readwrite("use_beam_search", &GenerationParams::use_beam_search)
      .def_readwrite("beam_width", &GenerationParams::beam_width)
      .def_readwrite("length_penalty", &GenerationParams::length_penalty)
      .def_readwrite("lora", &GenerationParams::lora);

  py::class_<Request>(m, "Request")
      .def(py::init<>())
      .def_readwrite("prompt", &Request::prompt)
      .def_readwrite("params", &Request::params)
      .def_readwrite("prompt_tokens", &Request::prompt_tokens)
      .def_readwrite("priority", &Request::priority);

  py::class_<ChatMessage>(m, "ChatMessage")
      .def(py::init<std::string, std::string>(), py::arg("role"), py::arg("content"))
      .def_readwrite("role", &ChatMessage::role)
      .def_readwrite("content", &ChatMessage::content)
      .def_readwrite("tool_calls", &ChatMessage::tool_calls)
      .def_readwrite("tool_call_id", &ChatMessage::tool_call_id);

  py::class_<PerplexityParams>(m, "PerplexityParams")
      .def(py::init<>())
      .def_readwrite("context", &PerplexityParams::context)
      .def_readwrite("batch_tokens", &PerplexityParams::batch_tokens)
      .def_readwrite("lora", &PerplexityParams::lora);
}

void bind_outputs(py::module_& m) {
  py::enum_<FinishReason>(m, "FinishReason")
      .value("STOP", FinishReason::kStop)
      .value("LENGTH", FinishReason::kLength)
      .value("ABORTED", FinishReason::kAborted);

  py::class_<TokenLogprob>(m, "TokenLogprob")
      .def_readonly("token", &TokenLogprob::token)
      .def_readonly("logprob", &TokenLogprob::logprob);

  py::class_<TokenLogprobs>(m, "TokenLogprobs")
      .def_readonly("chosen", &TokenLogprobs::chosen)
      .def_readonly("top", &TokenLogprobs::top);

  py::class_<Completion>(m, "Completion")
      .def_readonly("text", &Completion::text)
      .def_readonly("tokens", &Completion::tokens)
      .def_readonly("finish_reason", &Completion::finish_reason)
      .def_readonly("cumulative_logprob", &Completion::cumulative_logprob)
      .def_readonly("logprobs", &Completion::logprobs);

  py::class_<RequestMetrics>(m, "RequestMetrics")
      .def_readonly("queue_seconds", &RequestMetrics::queue_seconds)
      .def_readonly("ttft_seconds", &RequestMetrics::ttft_seconds)
      .def_readonly("tpot_seconds", &RequestMetrics::tpot_seconds)
      .def_readonly("e2e_seconds", &RequestMetrics::e2e_seconds)
      .def_readonly("prompt_tokens", &RequestMetrics::prompt_tokens)
      .def_readonly("output_tokens", &RequestMetrics::output_tokens)
      .def_readonly("cached_prompt_tokens", &RequestMetrics::cached_prompt_tokens);

  py::class_<GenerationOutput>(m, "GenerationOutput")
      .def_readonly("text", &GenerationOutput::text)
      .def_readonly("tokens", &GenerationOutput::tokens)
      .def_readonly("finish_reason", &GenerationOutput::finish_reason)
      .def_readonly("completions", &GenerationOutput::completions)
      .def_readonly("prompt_tokens", &GenerationOutput::prompt_tokens)
      .def_readonly("metrics", &GenerationOutput::metrics);

  py::class_<StreamEvent>(m, "StreamEvent")
      .def_readonly("request_id", &StreamEvent::request_id)
      .def_readonly("index", &StreamEvent::index)
      .def_readonly("text", &StreamEvent::text)
      .def_readonly("tokens", &StreamEvent::tokens)
      .def_readonly("logprobs", &StreamEvent::logprobs)
      .def_readonly("finished", &StreamEvent::finished)
      .def_readonly("finish_reason", &StreamEvent::finish_reason)
      .def_readonly("output", &StreamEvent::output)
      .def_readonly("error", &StreamEvent::error)
      .def_readonly("unavailable", &StreamEvent::unavailable);

  py::class_<ChatPrompt>(m, "ChatPrompt")
      .def_readonly("text", &ChatPrompt::text)
      .def_readonly("tokens", &ChatPrompt::tokens);

  py::class_<PerplexityReport>(m, "PerplexityReport")
      .def_readonly("context", &PerplexityReport::context)
      .def_readonly("tokens", &PerplexityReport::tokens)
      .def_readonly("chunks", &PerplexityReport::chunks)
      .def_readonly("scored", &PerplexityReport::scored)
      .def_readonly("perplexity", &PerplexityReport::perplexity)
      .def_readonly("standard_error", &PerplexityReport::standard_error)
      .def("__repr__", [](const PerplexityReport& r) {
        return "PerplexityReport(perplexity=" + std::to_string(r.perplexity) +
               ", standard_error=" + std::to_string(r.standard_error) +
               ", context=" + std::to_string(r.context) + ", chunks=" + std::to_string(r.chunks) +
               ")";
      });
}

void bind_state(py::module_& m) {
  // Every field of EngineStats' table, read-only.
  py::class_<EngineStats> stats(m, "EngineStats");
  for_each_stat_field(
      [&](const StatField& field, auto member) { stats.def_readonly(field.name, member); });

  py::class_<ModelSummary>(m, "ModelSummary")
      .def_readonly("architecture", &ModelSummary::architecture)
      .def_readonly("backend", &ModelSummary::backend)
      .def_readonly("n_vocab", &ModelSummary::n_vocab)
      .def_readonly("n_ctx_train", &ModelSummary::n_ctx_train)
      .def_readonly("context_size", &ModelSummary::context_size)
      .def_readonly("n_embd", &ModelSummary::n_embd)
      .def_readonly("n_layer", &ModelSummary::n_layer)
      .def_readonly("n_head", &ModelSummary::n_head)
      .def_readonly("n_head_kv", &ModelSummary::n_head_kv)
      .def_readonly("n_ff", &ModelSummary::n_ff)
      .def_readonly("kv_cache_dtype", &ModelSummary::kv_cache_dtype)
      .def_readonly("kv_cache_tokens", &ModelSummary::kv_cache_tokens)
      .def_readonly("lora_slots", &ModelSummary::lora_slots);
}

}  // namespace

void bind_types(py::module_& m) {
  bind_options(m);
  bind_outputs(m);
  bind_state(m);
}

}  // namespace baton::python
