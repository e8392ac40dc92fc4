// Any bytes as a safetensors file of a Hugging Face checkpoint, through the header's validation
// and every tensor's bytes. Every failure must be a baton::Error naming the problem; anything
// else (a crash, another exception, a sanitizer report) is a finding.

#include <cstddef>

#include "baton/error.h"
#include "core/formats/hf_import/safetensors_file.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const baton::fuzz::MemoryFile file(data, size);
  try {
    const baton::hf::SafetensorsFile safetensors = baton::hf::SafetensorsFile::open(file.path());
    for (const baton::hf::SafetensorsTensor& t : safetensors.tensors()) {
      // The view holds exactly the header's byte range, and all of it can be read: a range past
      // the mapped data faults.
      const baton::Tensor tensor = safetensors.tensor(t.name);
      if (tensor.nbytes() != t.nbytes) __builtin_trap();
      const std::byte* bytes = tensor.materialize();
      for (size_t i = 0; i < t.nbytes; ++i) {
        const std::byte value = bytes[i];
        __asm__ volatile("" : : "r"(value));
      }
    }
  } catch (const baton::Error&) {
  }
  return 0;
}
