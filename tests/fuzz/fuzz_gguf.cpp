// Any bytes as a GGUF file, through the reader, the model configuration, the tokenizer's
// vocabulary and the model loader's checks on the CPU backend. Every failure must be a
// baton::Error naming the problem; anything else (a crash, another exception, a sanitizer
// report) is a finding.

#include "backends/cpu/cpu_backend.h"
#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "models/model.h"
#include "models/model_config.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/memory_file.h"

namespace {

// One backend for the whole run: making one per input would measure its start-up, not the
// loader.
baton::Backend& cpu_backend() {
  static const std::unique_ptr<baton::Backend> cpu =
      baton::make_cpu_backend({.threads = 1, .prepack_weights = false});
  return *cpu;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const baton::fuzz::MemoryFile file(data, size);
  try {
    const baton::gguf::GgufFile gguf = baton::gguf::GgufFile::open(file.path());
    baton::Tokenizer::create(baton::vocabulary_from_gguf(gguf));
    baton::read_model_config(gguf);
    baton::load_model(gguf, cpu_backend());
  } catch (const baton::Error&) {
  }
  return 0;
}
