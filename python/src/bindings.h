#pragma once

// The parts of the baton._baton extension module, each binding one area of include/baton.

#include <pybind11/pybind11.h>

namespace baton::python {

void bind_errors(pybind11::module_& m);
void bind_types(pybind11::module_& m);
void bind_llm(pybind11::module_& m);
void bind_async_llm(pybind11::module_& m);

}  // namespace baton::python
