// Any bytes as a LoRA adapter for a small Llama: with an even first byte the rest is a
// llama.cpp GGUF adapter, with an odd one a PEFT directory, adapter_config.json and
// adapter_model.safetensors separated by a NUL byte. The reader validates the adapter against
// the base and reads every tensor it keeps; each target must then have the shapes of its linear
// node. Every failure must be a baton::Error naming the problem; anything else (a crash,
// another exception, a sanitizer report, a target of the wrong shape) is a finding.

#include <cstddef>
#include <map>
#include <string>

#include "baton/error.h"
#include "models/lora/lora_adapter.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/memory_file.h"
#include "tests/fuzz/scratch_dir.h"

namespace {

// tests/fuzz/make_seeds.py writes the seeds for this base.
baton::ModelConfig base_config() {
  baton::ModelConfig config;
  config.architecture = "llama";
  config.n_vocab = 32;
  config.n_ctx_train = 64;
  config.n_embd = 8;
  config.n_layer = 2;
  config.n_head = 2;
  config.n_head_kv = 1;
  config.head_dim = 4;
  config.n_ff = 16;
  return config;
}

void check_shapes(const baton::LoraAdapter& adapter, const baton::ModelConfig& base) {
  static const std::map<std::string, baton::Shape> shapes = baton::lora_linear_shapes(base);
  for (const auto& [node, target] : adapter.targets) {
    const auto shape = shapes.find(node);
    if (shape == shapes.end()) __builtin_trap();  // a target that is no linear node of the base
    const baton::Shape& weight = shape->second;
    const bool fits = target.a.rank() == 2 && target.b.rank() == 2 &&
                      target.a.dim(1) == weight[1] && target.b.dim(0) == weight[0] &&
                      target.a.dim(0) == target.b.dim(1);
    if (!fits) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const baton::ModelConfig base = base_config();
  static const baton::fuzz::ScratchDir peft("fuzz_lora");
  try {
    if (data[0] % 2 == 0) {
      const baton::fuzz::MemoryFile file(data + 1, size - 1);
      check_shapes(baton::read_lora_adapter(file.path(), base), base);
    } else {
      const auto documents =
          baton::fuzz::split_documents(baton::fuzz::as_text(data + 1, size - 1), 2);
      peft.put("adapter_config.json", documents[0]);
      peft.put("adapter_model.safetensors", documents[1]);
      check_shapes(baton::read_lora_adapter(peft.path(), base), base);
    }
  } catch (const baton::Error&) {
  }
  return 0;
}
