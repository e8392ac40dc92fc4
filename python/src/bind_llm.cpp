#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "baton/llm.h"
#include "bindings.h"

namespace py = pybind11;

namespace baton::python {
namespace {

// Loading a model and freeing it can take a while: neither holds other Python threads up.
struct DeleteWithoutTheGil {
  void operator()(LLM* llm) const {
    py::gil_scoped_release release;
    delete llm;
  }
};

std::vector<GenerationOutput> generate(LLM& llm, const std::vector<Request>& requests,
                                       const std::optional<py::function>& on_finished) {
  FinishedCallback finished;
  if (on_finished) {
    finished = [&on_finished](size_t index) {
      py::gil_scoped_acquire gil;
      (*on_finished)(index);
    };
  }
  py::gil_scoped_release release;
  return llm.generate(requests, finished);
}

}  // namespace

void bind_llm(py::module_& m) {
  using Released = py::call_guard<py::gil_scoped_release>;
  py::class_<LLM, std::unique_ptr<LLM, DeleteWithoutTheGil>>(m, "LLM")
      .def(py::init<const LLMOptions&>(), py::arg("options"), Released())
      .def("generate", &generate, py::arg("requests"), py::arg("on_finished") = py::none(),
           "Runs every request through one continuous batch; the GIL is released meanwhile and "
           "on_finished(index) is called as each request ends.")
      .def("tokenize", &LLM::tokenize, py::arg("text"), py::arg("add_special"),
           py::arg("parse_special"), Released())
      .def("detokenize", &LLM::detokenize, py::arg("tokens"), Released())
      .def("chat_prompt", &LLM::chat_prompt, py::arg("messages"), py::arg("add_generation_prompt"),
           Released())
      .def("summary", &LLM::summary)
      .def("stats", &LLM::stats)
      .def(
          "perplexity",
          [](LLM& llm, const std::string& text, const PerplexityParams& params) {
            return llm.perplexity(text, params);
          },
          py::arg("text"), py::arg("params"), Released())
      .def("load_lora_adapter", &LLM::load_lora_adapter, py::arg("adapter"), Released())
      .def("unload_lora_adapter", &LLM::unload_lora_adapter, py::arg("name"), Released());
}

}  // namespace baton::python
