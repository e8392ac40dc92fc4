#pragma once

// The simulator's error state: each host thread's last error, as the CUDA runtime keeps it, and
// the detailed message behind each error code, which get_error_string returns in place of a
// fixed text (a fault names its kernel, block and thread; a bad copy names its range).

#include <string>

#include "backends/gpusim/sim_runtime.h"

namespace gpusim {

// Sets the calling thread's last error and the message of `error`, and returns `error`.
Error fail(Error error, const std::string& message);

}  // namespace gpusim
