#pragma once

// Marks what libbaton.so exports. Baton builds with hidden symbols by default, so only
// declarations carrying BATON_API are part of the shared library's interface.
#define BATON_API __attribute__((visibility("default")))
