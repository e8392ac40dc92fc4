#pragma once

#include <filesystem>
#include <vector>

namespace baton::cli {

// Where the demo model trained by tools/train_demo/ may be, most specific first: beside an
// installed binary (<prefix>/share/baton), then the source tree the binary was built from.
std::vector<std::filesystem::path> bundled_model_candidates();

// The first candidate that exists; throws Error(kIo) listing the places looked in.
std::filesystem::path bundled_model_path();

}  // namespace baton::cli
