#pragma once

// Runs a kernel's grid on the calling host thread: block after block, each block's threads as
// fibers that take turns. A thread runs until it reaches __syncthreads(), a warp shuffle or its
// end; a barrier opens once every thread of the block (a shuffle: every lane of the warp) has
// arrived. Threads run in index order between barriers, so a missing barrier shows when a thread
// reads what a higher-numbered thread has yet to write (uninitialised: a fault; or stale: wrong
// results); a write that overtakes a lower-numbered thread's pending read goes unnoticed.

#include <functional>
#include <string>

#include "backends/gpusim/sim_device.h"

namespace gpusim {

// "(x, y, z)", for reports.
std::string to_string(const Dim3& d);

struct Grid {
  KernelLaunch config;
  std::string kernel_name;
  std::function<void()> thread_body;
};

// "" when every thread of every block finished, else the fault that stopped the grid, naming
// the kernel, the block and the thread.
std::string run_grid(const Grid& grid);

// Stops the running kernel thread with `what` ("read of 4 bytes at ... is out of bounds"); the
// grid's report adds the kernel, block and thread. Outside a kernel (a host task), throws
// HostFault instead.
[[noreturn]] void fault(const std::string& what);

// Where `ptr` is in the running block's shared memory ("byte 8 of shared array 1 (544 bytes)",
// "12 bytes past the end of shared array 0"), or "" when it is not in it.
std::string describe_shared(const void* ptr);

struct HostFault {
  std::string what;
};

}  // namespace gpusim
