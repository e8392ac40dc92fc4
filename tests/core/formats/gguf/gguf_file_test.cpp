#include "core/formats/gguf/gguf_file.h"

#include <gtest/gtest.h>

#include <cstring>

#include "baton/error.h"
#include "tests/core/formats/gguf/gguf_test_util.h"
#include "tests/test_data.h"

namespace baton::gguf {
namespace {

using testing::read_bytes;

// The bundled demo model: F16 matrices, F32 norms, a 2048-token SentencePiece vocabulary.
std::filesystem::path demo_path() {
  return baton::testing::demo_model();
}

// llama2.c's stories260K from ../shared, checked against the checkpoint it was converted from.
std::filesystem::path stories_path() {
  return baton::testing::shared_model("stories260K.gguf");
}

// The llama2.c checkpoint the GGUF file was converted from: a 7 x int32 header, then fp32 weights
// starting with the token embedding table (512 x 64) and the attention norms (5 x 64).
constexpr size_t kCheckpointHeaderBytes = 28;
constexpr size_t kEmbeddingFloats = 512 * 64;

template <typename F>
void expect_error(F&& f, ErrorCategory category, std::initializer_list<std::string_view> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), category) << e.what();
    for (std::string_view part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message \"" << e.what() << "\" does not mention \"" << part << "\"";
    }
  }
}

TEST(GgufFile, DemoHeaderAndLayoutAreRead) {
  const GgufFile file = GgufFile::open(demo_path());
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.alignment(), 32u);
  EXPECT_EQ(file.file_size(), 14747872u);
  EXPECT_EQ(file.data_offset(), 50400u);
  EXPECT_EQ(file.tensors().size(), 75u);
  EXPECT_EQ(file.metadata().size(), 24u);
  EXPECT_EQ(file.metadata().front().first, "general.architecture");
  EXPECT_EQ(file.metadata().back().first, "tokenizer.chat_template");
}

TEST(GgufFile, DemoMetadataReadsThroughTypedGetters) {
  const GgufFile file = GgufFile::open(demo_path());
  EXPECT_EQ(file.get_string("general.architecture"), "llama");
  EXPECT_EQ(file.get_string("general.name"), "Baton KJV demo 7M");
  EXPECT_EQ(file.get_int("llama.embedding_length"), 256);
  EXPECT_EQ(file.get_int("llama.feed_forward_length"), 768);
  EXPECT_EQ(file.get_int("llama.block_count"), 8);
  EXPECT_EQ(file.get_int("llama.attention.head_count"), 8);
  EXPECT_EQ(file.get_int("llama.attention.head_count_kv"), 4);
  EXPECT_EQ(file.get_int("llama.rope.dimension_count"), 32);
  EXPECT_EQ(file.get_int("llama.context_length"), 256);
  EXPECT_FLOAT_EQ(static_cast<float>(file.get_float("llama.attention.layer_norm_rms_epsilon")),
                  1e-5f);
  EXPECT_DOUBLE_EQ(file.get_float("llama.rope.freq_base"), 10000.0);
  EXPECT_DOUBLE_EQ(file.get_float("llama.embedding_length"), 256.0);
  EXPECT_EQ(file.get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(file.find_int("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(file.find_int("tokenizer.ggml.eos_token_id"), 2);
  EXPECT_TRUE(file.get_bool("tokenizer.ggml.add_bos_token"));
  EXPECT_FALSE(file.get_bool("tokenizer.ggml.add_eos_token"));
  EXPECT_EQ(file.find("llama.embedding_length")->type, ValueType::kUint32);

  const std::vector<std::string> tokens = file.get_string_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 2048u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(tokens[3], "<0x00>");
  EXPECT_EQ(file.get_float_array("tokenizer.ggml.scores").size(), 2048u);
  const std::vector<int64_t> types = file.get_int_array("tokenizer.ggml.token_type");
  ASSERT_EQ(types.size(), 2048u);
  EXPECT_EQ(types[0], 2);
  EXPECT_EQ(types[1], 3);
  EXPECT_EQ(types[3], 6);
}

TEST(GgufFile, DemoTensorsAreF16MatricesAndF32VectorsWithOutermostFirstShapes) {
  const GgufFile file = GgufFile::open(demo_path());
  for (const TensorInfo& info : file.tensors()) {
    EXPECT_EQ(info.ggml_type, info.shape.size() == 2 ? 1u : 0u) << info.name;
    EXPECT_EQ(info.offset % 32, 0u) << info.name;
  }
  const TensorInfo* embedding = file.find_tensor("token_embd.weight");
  ASSERT_NE(embedding, nullptr);
  EXPECT_EQ(embedding->shape, (Shape{2048, 256}));
  EXPECT_EQ(embedding->nbytes, 2048u * 256 * 2);
  EXPECT_EQ(embedding->offset, 0u);
  EXPECT_EQ(file.find_tensor("blk.0.attn_norm.weight")->offset, 2048u * 256 * 2);
  EXPECT_EQ(file.find_tensor("output_norm.weight")->shape, (Shape{256}));
  EXPECT_EQ(file.find_tensor("blk.0.attn_k.weight")->shape, (Shape{128, 256}));
  EXPECT_EQ(file.find_tensor("blk.7.ffn_down.weight")->shape, (Shape{256, 768}));
  EXPECT_EQ(file.find_tensor("blk.7.ffn_up.weight")->shape, (Shape{768, 256}));
  EXPECT_EQ(file.find_tensor("no.such.tensor"), nullptr);
}

TEST(GgufFile, TensorBytesMatchTheLlama2cCheckpoint) {
  const std::filesystem::path checkpoint = baton::testing::shared_model("stories260K.bin");
  BATON_REQUIRE_SHARED_FILE(stories_path());
  BATON_REQUIRE_SHARED_FILE(checkpoint);
  const std::vector<std::byte> weights = read_bytes(checkpoint);
  const std::byte* embedding = weights.data() + kCheckpointHeaderBytes;
  const std::byte* attention_norm = embedding + kEmbeddingFloats * 4;

  Tensor token_embd;
  {
    // The tensor must outlive the GgufFile: it holds the mapping.
    const GgufFile file = GgufFile::open(stories_path());
    token_embd = file.tensor("token_embd.weight");
    const Tensor norm = file.tensor("blk.0.attn_norm.weight");
    EXPECT_EQ(norm.dtype(), DType::kF32);
    EXPECT_EQ(std::memcmp(norm.materialize(), attention_norm, 64 * 4), 0);
  }
  EXPECT_EQ(token_embd.dtype(), DType::kF32);
  EXPECT_EQ(token_embd.shape(), (Shape{512, 64}));
  EXPECT_TRUE(token_embd.buffer()->is_host());
  EXPECT_EQ(std::memcmp(token_embd.materialize(), embedding, kEmbeddingFloats * 4), 0);
}

// A repacked weight gives its mapped pages back; they read back from the file unchanged.
TEST(GgufFile, ReleasedPagesOfATensorReadBackUnchanged) {
  const std::vector<std::byte> bytes = read_bytes(demo_path());
  const GgufFile file = GgufFile::open(demo_path());
  const Tensor token_embd = file.tensor("token_embd.weight");
  const std::byte* in_file = bytes.data() + file.data_offset();
  ASSERT_EQ(std::memcmp(token_embd.materialize(), in_file, token_embd.nbytes()), 0);
  const auto offset = static_cast<size_t>(token_embd.materialize() - token_embd.buffer()->data());
  token_embd.buffer()->release_pages(offset, token_embd.nbytes());
  EXPECT_EQ(std::memcmp(token_embd.materialize(), in_file, token_embd.nbytes()), 0);
}

TEST(GgufFile, GettersNameTheKeyWhenMissingOrOfAnotherType) {
  const GgufFile file = GgufFile::open(demo_path());
  const ErrorCategory invalid = ErrorCategory::kInvalidModel;
  expect_error([&] { file.get_int("general.architecture"); }, invalid,
               {"kjv-7m-f16.gguf", "'general.architecture'", "is string", "integer"});
  expect_error([&] { file.get_string("llama.block_count"); }, invalid,
               {"'llama.block_count'", "is uint32", "string"});
  expect_error([&] { file.get_bool("llama.block_count"); }, invalid, {"'llama.block_count'"});
  expect_error([&] { file.get_string("no.such.key"); }, invalid, {"'no.such.key'", "missing"});
  expect_error([&] { file.get_string_array("tokenizer.ggml.scores"); }, invalid,
               {"'tokenizer.ggml.scores'", "array of float32"});
  expect_error([&] { file.get_int_array("tokenizer.ggml.tokens"); }, invalid,
               {"'tokenizer.ggml.tokens'", "array of string"});
  expect_error([&] { file.find_float("general.name"); }, invalid, {"'general.name'"});
  EXPECT_EQ(file.find_string("no.such.key"), std::nullopt);
  EXPECT_EQ(file.find_int("no.such.key"), std::nullopt);
  EXPECT_EQ(file.find_float("no.such.key"), std::nullopt);
  EXPECT_EQ(file.find_bool("no.such.key"), std::nullopt);
  EXPECT_EQ(file.find_string("general.name"), "Baton KJV demo 7M");
  EXPECT_FALSE(file.contains("no.such.key"));
}

TEST(GgufFile, MissingTensorIsAnInvalidModelError) {
  const GgufFile file = GgufFile::open(demo_path());
  expect_error([&] { file.tensor("no.such.tensor"); }, ErrorCategory::kInvalidModel,
               {"kjv-7m-f16.gguf", "'no.such.tensor'"});
}

TEST(GgufFile, UnreadablePathsAreIoErrors) {
  testing::TempDir dir;
  expect_error([&] { GgufFile::open(dir.file("absent.gguf")); }, ErrorCategory::kIo,
               {"absent.gguf"});
  expect_error([&] { GgufFile::open(dir.file("")); }, ErrorCategory::kIo, {"regular file"});
}

TEST(GgufFile, VocabFilesHaveNoTensorsAndATokenizer) {
  const std::filesystem::path vocab_dir = baton::testing::shared_model("vocab");
  BATON_REQUIRE_SHARED_FILE(vocab_dir);
  int opened = 0;
  for (const auto& entry : std::filesystem::directory_iterator(vocab_dir)) {
    if (entry.path().extension() != ".gguf") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const GgufFile file = GgufFile::open(entry.path());
    EXPECT_EQ(file.version(), 3u);
    EXPECT_TRUE(file.tensors().empty());
    EXPECT_FALSE(file.get_string("tokenizer.ggml.model").empty());
    const size_t tokens = file.get_string_array("tokenizer.ggml.tokens").size();
    EXPECT_GT(tokens, 0u);
    if (file.contains("tokenizer.ggml.token_type")) {
      EXPECT_EQ(file.get_int_array("tokenizer.ggml.token_type").size(), tokens);
    }
    ++opened;
  }
  EXPECT_GE(opened, 10);
}

}  // namespace
}  // namespace baton::gguf
