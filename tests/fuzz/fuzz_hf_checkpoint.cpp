// Any bytes as the JSON files of a Hugging Face checkpoint, config.json, tokenizer.json and
// tokenizer_config.json separated by NUL bytes, through the importer's readers, the GGUF
// metadata `baton convert` writes from them, and the tokenizer built from that metadata, which
// then encodes and decodes a text. Every failure must be a baton::Error naming the problem;
// anything else (a crash, another exception, a sanitizer report, an id outside the vocabulary)
// is a finding.

#include <cstddef>
#include <memory>
#include <vector>

#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"
#include "core/formats/gguf/gguf_writer.h"
#include "core/formats/hf_import/llama_config.h"
#include "core/formats/hf_import/tokenizer_json_vocab.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const baton::fuzz::ScratchDir dir("fuzz_hf_checkpoint");
  const auto documents = baton::fuzz::split_documents(baton::fuzz::as_text(data, size), 3);
  dir.put("config.json", documents[0]);
  dir.put("tokenizer.json", documents[1]);
  dir.put("tokenizer_config.json", documents[2]);
  try {
    const baton::hf::LlamaConfig config = baton::hf::read_llama_config(dir.path() / "config.json");
    // Large vocabularies are valid but slow to pad out under the sanitizers; a few thousand
    // tokens reach every path of the readers.
    if (config.vocab_size > 4096) return 0;
    const baton::hf::HfVocab vocab = baton::hf::read_tokenizer_json_vocab(dir.path(), config);
    baton::gguf::GgufWriter writer;
    baton::hf::add_vocab_metadata(vocab, writer);
    writer.write(dir.path() / "vocab.gguf");
    const auto tokenizer = baton::Tokenizer::create(
        baton::vocabulary_from_gguf(baton::gguf::GgufFile::open(dir.path() / "vocab.gguf")));
    const std::vector<int32_t> ids = tokenizer->encode("Hi <s> naïve\n\t 42 </s>\xff", true, true);
    for (const int32_t id : ids) {
      if (id < 0 || id >= tokenizer->vocab_size()) __builtin_trap();
    }
    tokenizer->decode(ids, true);
  } catch (const baton::Error&) {
  }
  return 0;
}
