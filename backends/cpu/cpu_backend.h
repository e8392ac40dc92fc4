#pragma once

// The built-in host CPU backend: host memory, OpenMP threads. It registers itself as "cpu" in
// BackendRegistry; tests and the library may also create it directly.

#include <memory>

#include "core/runtime/backend.h"

namespace baton {

// options.threads worker threads (0: one per hardware thread).
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options);

}  // namespace baton
