#pragma once

#include <string>

namespace baton::cli {

// The git commit the binary was built from ("unknown" outside a checkout); written at build time.
const char* build_commit();

// What `baton --version` prints: the version, commit and build type, the CPU kernel levels built
// in and the one this CPU runs, and the plugins this build configures (`baton backends` says
// which are found and usable).
std::string version_text();

}  // namespace baton::cli
