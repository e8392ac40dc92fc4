// Any bytes as a GGUF file, through the reader, the model configuration, the tokenizer's
// vocabulary and the model loader's checks on the CPU backend. Every failure must be a
// baton::Error naming the problem; anything else (a crash, another exception, a sanitizer
// report) is a finding.

#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "backends/cpu/cpu_backend.h"
#include "baton/error.h"
#include "core/gguf/gguf_file.h"
#include "core/tokenizer/tokenizer.h"
#include "models/model.h"
#include "models/model_config.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

// The bytes as a file the reader can map: an in-memory file, named through /proc.
class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(memfd_create("fuzz.gguf", 0)) {
    for (size_t written = 0; written < size;) {
      const ssize_t n = write(fd_, data + written, size - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() { close(fd_); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

// One backend for the whole run: making one per input would measure its start-up, not the
// loader.
baton::Backend& cpu_backend() {
  static const std::unique_ptr<baton::Backend> cpu =
      baton::make_cpu_backend({.threads = 1, .prepack_weights = false});
  return *cpu;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const MemoryFile file(data, size);
  try {
    const baton::gguf::GgufFile gguf = baton::gguf::GgufFile::open(file.path());
    baton::Tokenizer::create(baton::vocabulary_from_gguf(gguf));
    baton::read_model_config(gguf);
    baton::load_model(gguf, cpu_backend());
  } catch (const baton::Error&) {
  }
  return 0;
}
