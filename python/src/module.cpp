#include "bindings.h"

// baton._baton: the C++ library as it is, for the vLLM-shaped Python layer in baton/ to build on.
PYBIND11_MODULE(_baton, m) {
  m.doc() = "Baton's C++ library API (include/baton); use the baton package, not this module.";
  baton::python::bind_errors(m);
  baton::python::bind_types(m);
  baton::python::bind_llm(m);
  baton::python::bind_async_llm(m);
}
