#include <string>

#include "baton/error.h"
#include "bindings.h"
#include "text.h"

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

// Raises `error` as its baton.errors class. Should that class be out of reach (the package
// half torn down at exit), a RuntimeError still carries Baton's message.
void raise_as_python(const Error& error) {
  try {
    const py::str message = lenient_text(error.what());
    const py::object cls = py::module_::import("baton.errors").attr(class_name(error.category()));
    const py::object instance = cls(message);
    instance.attr("category") = std::string(to_string(error.category()));
    PyErr_SetObject(cls.ptr(), instance.ptr());
  } catch (const py::error_already_set&) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
}

}  // namespace

void bind_errors(py::module_&) {
  py::register_local_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const Error& error) {
      raise_as_python(error);
    }
  });
}

}  // namespace baton::python
