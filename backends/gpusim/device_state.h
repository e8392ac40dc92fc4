#pragma once

// What the device calls (device_api.cpp) record and the queue code (streams.cpp) consults.

#include <cstddef>

namespace gpusim {

// Whether [ptr, ptr + bytes) lies in memory from malloc_host, which copies may read or write
// while they run in the stream's order.
bool is_pinned(const void* ptr, size_t bytes);
// Bytes of dynamic shared memory a launch of `kernel` may ask for: 48 KiB unless raised with
// func_set_attribute.
size_t dynamic_shared_limit(const void* kernel);

}  // namespace gpusim
