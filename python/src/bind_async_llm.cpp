#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>

#include "baton/async_llm.h"
#include "baton/error.h"
#include "bindings.h"
#include "text.h"

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

// AsyncLLM's destructor joins its text thread, which may be waiting for the GIL to deliver an
// event: whichever thread drops the last reference must not hold the GIL then.
void delete_without_the_gil(AsyncLLM* llm) {
  if (PyGILState_Check()) {
    py::gil_scoped_release release;
    delete llm;
  } else {
    delete llm;
  }
}

// The engine behind a Python AsyncLLM. Every call takes its own reference to the AsyncLLM while
// it holds the GIL, then releases the GIL for the call (the text thread needs it to deliver
// events), so shutdown() from another thread cannot free the engine under a running call: it
// drops this object's reference, and the last call to finish frees the engine. Calls after
// shutdown are refused, but aborts are no-ops: what they would end has ended.
class AsyncEngine {
 public:
  explicit AsyncEngine(const LLMOptions& options)
      : llm_(new AsyncLLM(options), &delete_without_the_gil) {}
  ~AsyncEngine() { shutdown(); }

  void shutdown() { llm_.reset(); }

  // Runs `action` on the engine with the GIL released.
  template <typename Action>
  auto call(Action action) const {
    if (!llm_) throw Error(ErrorCategory::kInvalidArgument, "this AsyncLLM was shut down");
    const std::shared_ptr<AsyncLLM> llm = llm_;
    py::gil_scoped_release release;
    return action(*llm);
  }

  uint64_t add_request(Request request, py::function on_event) {
    auto callback = std::make_shared<EventCallbackFromPython>(std::move(on_event));
    return call([&](AsyncLLM& llm) {
      return llm.add_request(std::move(request),
                             [callback](const StreamEvent& event) { (*callback)(event); });
    });
  }

  void abort(uint64_t id) {
    if (llm_) call([&](AsyncLLM& llm) { llm.abort(id); });
  }

 private:
  std::shared_ptr<AsyncLLM> llm_;
};

}  // namespace

void bind_async_llm(py::module_& m) {
  py::class_<AsyncEngine>(m, "AsyncLLM")
      .def(py::init<const LLMOptions&>(), py::arg("options"),
           py::call_guard<py::gil_scoped_release>())
      .def("shutdown", &AsyncEngine::shutdown,
           "Aborts what is in flight, each request getting a final event, and stops the engine.")
      .def("add_request", &AsyncEngine::add_request, py::arg("request"), py::arg("on_event"),
           "Queues the request; on_event(StreamEvent) is called from the engine's text thread.")
      .def("abort", &AsyncEngine::abort, py::arg("id"))
      .def("stats",
           [](const AsyncEngine& e) { return e.call([](AsyncLLM& llm) { return llm.stats(); }); })
      .def("summary",
           [](const AsyncEngine& e) { return e.call([](AsyncLLM& llm) { return llm.summary(); }); })
      .def(
          "tokenize",
          [](const AsyncEngine& e, const std::string& text, bool add_special, bool parse_special) {
            return e.call(
                [&](AsyncLLM& llm) { return llm.tokenize(text, add_special, parse_special); });
          },
          py::arg("text"), py::arg("add_special"), py::arg("parse_special"))
      .def(
          "detokenize",
          [](const AsyncEngine& e, const std::vector<int32_t>& tokens) {
            return lenient_text(e.call([&](AsyncLLM& llm) { return llm.detokenize(tokens); }));
          },
          py::arg("tokens"))
      .def(
          "token_text",
          [](const AsyncEngine& e, int32_t token) {
            return lenient_text(e.call([&](AsyncLLM& llm) { return llm.token_text(token); }));
          },
          py::arg("token"))
      .def(
          "load_lora_adapter",
          [](const AsyncEngine& e, const LoraOptions& adapter) {
            e.call([&](AsyncLLM& llm) { llm.load_lora_adapter(adapter); });
          },
          py::arg("adapter"));
}

}  // namespace baton::python
