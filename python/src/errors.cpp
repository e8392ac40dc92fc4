#include <string>

#include "baton/error.h"
#include "bindings.h"

namespace py = pybind11;

namespace baton::python {
namespace {

// The Python class of each category, defined in baton/errors.py so that it can also derive from
// the built-in exception a Python user expects (ValueError, OSError, MemoryError).
const char* class_name(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::kInvalidArgument:
      return "InvalidArgumentError";
    case ErrorCategory::kInvalidModel:
      return "InvalidModelError";
    case ErrorCategory::kUnsupported:
      return "UnsupportedError";
    case ErrorCategory::kBackend:
      return "BackendError";
    case ErrorCategory::kIo:
      return "BatonIOError";
    case ErrorCategory::kOutOfMemory:
      return "BatonMemoryError";
    case ErrorCategory::kInternal:
      break;
  }
  return "InternalError";
}

}  // namespace

void bind_errors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const Error& e) {
      const py::object cls = py::module_::import("baton.errors").attr(class_name(e.category()));
      const py::object error = cls(e.what());
      error.attr("category") = std::string(to_string(e.category()));
      PyErr_SetObject(cls.ptr(), error.ptr());
    }
  });
}

}  // namespace baton::python
