// Any bytes through the demo model's tokenizer (SentencePiece with byte fallback), with and
// without special tokens: encoding never fails, every id is in the vocabulary, decoding never
// fails, and valid UTF-8 without special-token parsing decodes back to itself, unless it spells
// SentencePiece's own space mark U+2581, which decodes as a space (as in llama.cpp).

#include <cstdlib>
#include <memory>
#include <string>

#include "core/formats/gguf/gguf_file.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "core/formats/tokenizer/utf8.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

const baton::Tokenizer& demo_tokenizer() {
  static const std::unique_ptr<baton::Tokenizer> tokenizer = [] {
    const auto gguf = baton::gguf::GgufFile::open(std::string(BATON_SOURCE_DIR) +
                                                  "/assets/models/kjv-7m-f16.gguf");
    return baton::Tokenizer::create(baton::vocabulary_from_gguf(gguf));
  }();
  return *tokenizer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const baton::Tokenizer& tokenizer = demo_tokenizer();
  // The first byte picks the options, the rest is the text.
  const bool add_special = data[0] & 1, parse_special = data[0] & 2;
  const std::string_view text = baton::fuzz::as_text(data + 1, size - 1);
  const std::vector<int32_t> ids = tokenizer.encode(text, add_special, parse_special);
  for (const int32_t id : ids) {
    if (id < 0 || id >= tokenizer.vocab_size()) std::abort();
  }
  const std::string decoded = tokenizer.decode(ids);
  const bool round_trips = !add_special && !parse_special && baton::utf8::sanitize(text) == text &&
                           text.find("\u2581") == std::string_view::npos;
  if (round_trips && decoded != text) std::abort();
  return 0;
}
