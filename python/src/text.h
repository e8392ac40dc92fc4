#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace baton::python {

// Text Baton hands out that need not be whole UTF-8 (a byte token's piece, a decoded slice of
// tokens that splits a character): invalid bytes become U+FFFD, as the engine's own streamed
// text does, instead of failing the conversion to str.
inline pybind11::str lenient_text(const std::string& text) {
  PyObject* decoded =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (!decoded) throw pybind11::error_already_set();
  return pybind11::reinterpret_steal<pybind11::str>(decoded);
}

}  // namespace baton::python
