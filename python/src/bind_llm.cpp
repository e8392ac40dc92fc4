#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>

#include "baton/llm.h"
#include "bindings.h"
#include "text.h"

namespace py = pybind11;

namespace baton::python {
namespace {

// The LLM behind a Python LLM. LLM takes one call at a time, and the GIL is released during
// each, so calls from several Python threads wait their turn here instead of overlapping.
class OfflineEngine {
 public:
  explicit OfflineEngine(const LLMOptions& options) : llm_(options) {}

  // Runs `call` on the LLM with the GIL released, once no other thread's call is running.
  template <typename Call>
  auto locked(Call call) {
    py::gil_scoped_release release;
    const std::lock_guard<std::mutex> lock(busy_);
    return call(llm_);
  }

 private:
  std::mutex busy_;
  LLM llm_;
};

// Loading a model and freeing it can take a while: neither holds other Python threads up.
struct DeleteWithoutTheGil {
  void operator()(OfflineEngine* engine) const {
    py::gil_scoped_release release;
    delete engine;
  }
};

// After every engine step: pending signals are handled (Ctrl-C raises KeyboardInterrupt, which
// aborts the batch), and `on_finished` hears of the requests that step finished.
std::vector<GenerationOutput> generate(OfflineEngine& engine, const std::vector<Request>& requests,
                                       const std::optional<py::function>& on_finished) {
  const StepCallback on_step = [&on_finished](const std::vector<size_t>& finished) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (on_finished && !finished.empty()) (*on_finished)(finished);
  };
  return engine.locked([&](LLM& llm) { return llm.generate(requests, on_step); });
}

}  // namespace

void bind_llm(py::module_& m) {
  py::class_<OfflineEngine, std::unique_ptr<OfflineEngine, DeleteWithoutTheGil>>(m, "LLM")
      .def(py::init<const LLMOptions&>(), py::arg("options"),
           py::call_guard<py::gil_scoped_release>())
      .def("generate", &generate, py::arg("requests"), py::arg("on_finished") = py::none(),
           "Runs every request through one continuous batch with the GIL released; "
           "on_finished(indices) is called as requests end.")
      .def(
          "tokenize",
          [](OfflineEngine& e, const std::string& text, bool add_special, bool parse_special) {
            return e.locked(
                [&](LLM& llm) { return llm.tokenize(text, add_special, parse_special); });
          },
          py::arg("text"), py::arg("add_special"), py::arg("parse_special"))
      .def(
          "detokenize",
          [](OfflineEngine& e, const std::vector<int32_t>& tokens) {
            return lenient_text(e.locked([&](LLM& llm) { return llm.detokenize(tokens); }));
          },
          py::arg("tokens"))
      .def(
          "token_text",
          [](OfflineEngine& e, int32_t token) {
            return lenient_text(e.locked([&](LLM& llm) { return llm.token_text(token); }));
          },
          py::arg("token"))
      .def(
          "chat_prompt",
          [](OfflineEngine& e, const std::vector<ChatMessage>& messages,
             bool add_generation_prompt) {
            return e.locked(
                [&](LLM& llm) { return llm.chat_prompt(messages, add_generation_prompt); });
          },
          py::arg("messages"), py::arg("add_generation_prompt"))
      .def("summary",
           [](OfflineEngine& e) { return e.locked([](LLM& llm) { return llm.summary(); }); })
      .def("stats", [](OfflineEngine& e) { return e.locked([](LLM& llm) { return llm.stats(); }); })
      .def(
          "perplexity",
          [](OfflineEngine& e, const std::string& text, const PerplexityParams& params) {
            return e.locked([&](LLM& llm) { return llm.perplexity(text, params); });
          },
          py::arg("text"), py::arg("params"))
      .def(
          "load_lora_adapter",
          [](OfflineEngine& e, const LoraOptions& adapter) {
            e.locked([&](LLM& llm) { llm.load_lora_adapter(adapter); });
          },
          py::arg("adapter"));
}

}  // namespace baton::python
