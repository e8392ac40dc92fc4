#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>

#include "baton/async_llm.h"
#include "baton/error.h"
#include "bindings.h"

namespace py = pybind11;

namespace baton::python {
namespace {

// A Python callable that AsyncLLM's text thread calls: it takes the GIL for each call, and for
// dropping its reference, whichever thread lets go of it last.
class EventCallbackFromPython {
 public:
  explicit EventCallbackFromPython(py::function callback) : callback_(std::move(callback)) {}
  EventCallbackFromPython(const EventCallbackFromPython&) = delete;
  EventCallbackFromPython& operator=(const EventCallbackFromPython&) = delete;
  ~EventCallbackFromPython() {
    py::gil_scoped_acquire gil;
    callback_ = py::function();
  }

  void operator()(const StreamEvent& event) const {
    py::gil_scoped_acquire gil;
    try {
      callback_(event);
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("baton.AsyncLLM event callback");
      throw std::runtime_error("the Python event callback raised an exception");
    }
  }

 private:
  py::function callback_;
};

// The engine behind a Python AsyncLLM. shutdown() stops it at a time the caller chooses, which a
// Python object's destructor does not give; every call after that is refused. The GIL is
// released around each call into the engine: its text thread takes the GIL to deliver events,
// so holding it while waiting on the engine could deadlock.
class AsyncEngine {
 public:
  explicit AsyncEngine(const LLMOptions& options) : llm_(std::make_unique<AsyncLLM>(options)) {}
  ~AsyncEngine() { shutdown(); }

  void shutdown() {
    if (!llm_) return;
    py::gil_scoped_release release;
    llm_.reset();
  }

  uint64_t add_request(Request request, py::function on_event) {
    auto callback = std::make_shared<EventCallbackFromPython>(std::move(on_event));
    py::gil_scoped_release release;
    return llm().add_request(std::move(request),
                             [callback](const StreamEvent& event) { (*callback)(event); });
  }

  AsyncLLM& llm() const {
    if (!llm_) throw Error(ErrorCategory::kInvalidArgument, "this AsyncLLM was shut down");
    return *llm_;
  }

 private:
  std::unique_ptr<AsyncLLM> llm_;
};

}  // namespace

void bind_async_llm(py::module_& m) {
  using Released = py::call_guard<py::gil_scoped_release>;
  py::class_<AsyncEngine>(m, "AsyncLLM")
      .def(py::init<const LLMOptions&>(), py::arg("options"), Released())
      .def("shutdown", &AsyncEngine::shutdown,
           "Aborts what is in flight, each request getting a final event, and stops the engine.")
      .def("add_request", &AsyncEngine::add_request, py::arg("request"), py::arg("on_event"),
           "Queues the request; on_event(StreamEvent) is called from the engine's text thread.")
      .def(
          "abort", [](const AsyncEngine& e, uint64_t id) { e.llm().abort(id); }, py::arg("id"),
          Released())
      .def(
          "stats", [](const AsyncEngine& e) { return e.llm().stats(); }, Released())
      .def(
          "summary", [](const AsyncEngine& e) { return e.llm().summary(); }, Released())
      .def(
          "tokenize",
          [](const AsyncEngine& e, const std::string& text, bool add_special, bool parse_special) {
            return e.llm().tokenize(text, add_special, parse_special);
          },
          py::arg("text"), py::arg("add_special"), py::arg("parse_special"), Released())
      .def(
          "detokenize",
          [](const AsyncEngine& e, const std::vector<int32_t>& tokens) {
            return e.llm().detokenize(tokens);
          },
          py::arg("tokens"), Released())
      .def(
          "token_text",
          [](const AsyncEngine& e, int32_t token) { return e.llm().token_text(token); },
          py::arg("token"), Released())
      .def(
          "chat_prompt",
          [](const AsyncEngine& e, const std::vector<ChatMessage>& messages,
             bool add_generation_prompt) {
            return e.llm().chat_prompt(messages, add_generation_prompt);
          },
          py::arg("messages"), py::arg("add_generation_prompt"), Released())
      .def(
          "load_lora_adapter",
          [](const AsyncEngine& e, const LoraOptions& adapter) {
            e.llm().load_lora_adapter(adapter);
          },
          py::arg("adapter"), Released())
      .def(
          "unload_lora_adapter",
          [](const AsyncEngine& e, const std::string& name) { e.llm().unload_lora_adapter(name); },
          py::arg("name"), Released());
}

}  // namespace baton::python
