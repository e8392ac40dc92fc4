#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/formats/gguf/gguf_file.h"
#include "core/formats/tokenizer/tokenizer.h"
#include "tests/test_data.h"

namespace baton::testing {

inline std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& gguf_path) {
  return Tokenizer::create(vocabulary_from_gguf(gguf::GgufFile::open(gguf_path)));
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A hand-made SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte tokens, then `pieces`
// as normal tokens (all with score 0).
inline Vocabulary byte_fallback_vocabulary(const std::vector<std::string>& pieces = {}) {
  Vocabulary v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.token_types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (int byte = 0; byte < 256; ++byte) {
    char spelled[8];
    std::snprintf(spelled, sizeof(spelled), "<0x%02X>", byte);
    v.tokens.push_back(spelled);
    v.token_types.push_back(TokenType::kByte);
  }
  for (const std::string& piece : pieces) {
    v.tokens.push_back(piece);
    v.token_types.push_back(TokenType::kNormal);
  }
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  v.add_bos = true;
  return v;
}

// The parameter that stands for "no ../shared vocabulary present": a test suite over
// llama.cpp's vocabularies then has one test, which skips naming what it needs.
inline constexpr std::string_view kNoSharedVocabulary = "no_shared_vocabulary";

// ../shared/models/vocab/ggml-vocab-<name>.gguf of each of `names` that exists, with
// `companion` beside it when given (".inp" for the test vectors); {kNoSharedVocabulary} when
// none does.
inline std::vector<std::string> shared_vocabularies(const std::vector<std::string>& names,
                                                    const std::string& companion = "") {
  std::vector<std::string> present;
  for (const std::string& name : names) {
    const std::filesystem::path gguf = shared_model("vocab/ggml-vocab-" + name + ".gguf");
    if (gguf.empty() || !std::filesystem::exists(gguf)) continue;
    if (!companion.empty() && !std::filesystem::exists(gguf.string() + companion)) continue;
    present.push_back(name);
  }
  if (present.empty()) present.emplace_back(kNoSharedVocabulary);
  return present;
}

// A test name from a vocabulary name ("deepseek-llm" -> "deepseek_llm").
inline std::string vocabulary_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

}  // namespace baton::testing

// Skips the test when `name` is kNoSharedVocabulary, in the words scripts/test.sh groups skips by.
#define BATON_REQUIRE_SHARED_VOCABULARY(name, what)                                             \
  do {                                                                                          \
    if ((name) == baton::testing::kNoSharedVocabulary) {                                        \
      GTEST_SKIP() << "needs ../shared: llama.cpp vocabulary vectors (" << (what)               \
                   << " run on ../shared/models/vocab, absent here); clone beside the shared/ " \
                   << "folder to run this test.";                                               \
    }                                                                                           \
  } while (0)
