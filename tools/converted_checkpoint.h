#pragma once

// `-m path/to/hf-checkpoint-dir`: the runtime loads GGUF, so a Hugging Face directory is
// converted once (`baton convert`, in the checkpoint's own dtype) into a cache and the cached
// file is reused while the directory's files are unchanged.

#include <filesystem>

namespace baton::cli {

// The cache folder: $BATON_CACHE_DIR, else $XDG_CACHE_HOME/baton, else ~/.cache/baton, else
// baton-cache under the system's temporary folder.
std::filesystem::path cache_dir();

// The GGUF file for checkpoint `dir`, converting it first (with a line on stderr) when the cache
// has no conversion of its current files. The name holds a hash of the directory's absolute path
// and each file's name, size and modification time, so an edited checkpoint is converted again.
// Throws the errors of hf::convert_checkpoint, and Error(kIo) when the cache cannot be created.
std::filesystem::path converted_checkpoint(const std::filesystem::path& dir);

}  // namespace baton::cli
