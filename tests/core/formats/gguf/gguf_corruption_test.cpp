// A damaged GGUF file must give baton::Error, never a crash, a hang or another exception.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"
#include "tests/core/formats/gguf/gguf_test_util.h"
#include "tests/test_data.h"

namespace baton::gguf {
namespace {

using testing::expect_open_error;
using testing::RawGguf;
using testing::TempDir;

constexpr ErrorCategory kInvalid = ErrorCategory::kInvalidModel;
constexpr uint32_t kF32 = 0;
constexpr uint32_t kQ8_0 = 8;

std::filesystem::path demo_path() {
  return baton::testing::demo_model();
}

// Opens `path` and touches every tensor's first and last byte, so that a file that opens is also
// proven to keep its tensors inside the mapping. Returns false when open() threw baton::Error;
// any other exception escapes and fails the test.
bool opens_and_reads(const std::filesystem::path& path) {
  try {
    const GgufFile file = GgufFile::open(path);
    static volatile unsigned sink = 0;
    for (const TensorInfo& info : file.tensors()) {
      if (info.nbytes == 0 || !dtype_from_ggml_type(info.ggml_type)) continue;
      const Tensor tensor = file.tensor(info.name);
      sink = sink + static_cast<unsigned>(tensor.materialize()[0]) +
             static_cast<unsigned>(tensor.materialize()[tensor.nbytes() - 1]);
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}

void write_file(const std::filesystem::path& path, const RawGguf& raw) {
  testing::write_bytes(path, raw.bytes());
}

// Writes bytes over part of an existing file, in place.
void patch(int fd, uint64_t offset, std::span<const std::byte> bytes) {
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
            static_cast<ssize_t>(bytes.size()));
}

TEST(GgufCorruption, EveryTruncationOfARealFileIsAnInvalidModelError) {
  const std::vector<std::byte> original = testing::read_bytes(demo_path());
  const uint64_t data_offset = GgufFile::open(demo_path()).data_offset();
  TempDir dir;
  const std::filesystem::path copy = dir.file("demo.gguf");
  testing::write_bytes(copy, original);

  // Every length through the header, metadata and tensor infos, then a stride through the
  // tensor data. Lengths go down so that one file can be cut shorter each time.
  std::vector<uint64_t> lengths;
  for (uint64_t n = original.size() - 1; n > data_offset; n -= std::min<uint64_t>(n, 9973)) {
    lengths.push_back(n);
  }
  for (uint64_t n = data_offset + 1; n-- > 0;) lengths.push_back(n);
  for (uint64_t length : lengths) {
    ASSERT_EQ(::truncate(copy.c_str(), static_cast<off_t>(length)), 0);
    try {
      GgufFile::open(copy);
      ADD_FAILURE() << "truncated to " << length << " bytes and still opened";
    } catch (const Error& e) {
      ASSERT_EQ(e.category(), kInvalid) << e.what();
      ASSERT_NE(std::string(e.what()).find("demo.gguf: "), std::string::npos) << e.what();
    }
  }
}

TEST(GgufCorruption, TruncationMessagesNameTheFieldCut) {
  TempDir dir;
  const std::filesystem::path copy = dir.file("demo.gguf");
  testing::write_bytes(copy, testing::read_bytes(demo_path()));
  const struct {
    uint64_t length;
    const char* field;
  } cases[] = {// longest first: truncate() can only cut the one copy shorter
               {60000, "tensor 'token_embd.weight': data [offset 0, 1048576 bytes] extends"},
               {46010, "tensor 'token_embd.weight'"},
               {45990, "tensor #0 name"},
               {45850, "metadata key 'tokenizer.chat_template'"},
               {45808, "metadata key #23"},
               {45802, "metadata key 'tokenizer.ggml.add_eos_token'"},
               {45629, "metadata key 'tokenizer.ggml.bos_token_id'"},
               {30000, "metadata key 'tokenizer.ggml.scores'"},
               {10000, "metadata key 'tokenizer.ggml.tokens'"},
               {20, "tensor_count"},  // 75 tensor infos cannot fit in what is left
               {12, "tensor_count"},
               {6, "version"},
               {2, "magic"}};
  for (const auto& c : cases) {
    ASSERT_EQ(::truncate(copy.c_str(), static_cast<off_t>(c.length)), 0);
    expect_open_error(copy, kInvalid, {"demo.gguf", c.field});
  }
}

TEST(GgufCorruption, BitFlippedAndRandomisedCopiesOpenOrThrowBatonError) {
  const std::vector<std::byte> original = testing::read_bytes(demo_path());
  const uint64_t data_offset = GgufFile::open(demo_path()).data_offset();
  TempDir dir;
  const std::filesystem::path copy = dir.file("demo.gguf");
  testing::write_bytes(copy, original);
  const int fd = ::open(copy.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);

  std::mt19937_64 rng(20240601);
  // Values that turn a length, count or type code into something extreme.
  const uint8_t kSpecial[] = {0x00, 0xff, 0x80, 0x7f, 0x01, 0x40};
  int opened = 0;
  int rejected = 0;
  constexpr int kTrials = 600;
  for (int trial = 0; trial < kTrials; ++trial) {
    // Most damage lands where the structure is; some anywhere in the file.
    const uint64_t region = trial % 5 == 0 ? original.size() : data_offset;
    const uint64_t offset = rng() % region;
    const uint64_t length = std::min<uint64_t>(1 + rng() % 8, original.size() - offset);
    std::vector<std::byte> damaged(original.begin() + offset, original.begin() + offset + length);
    if (trial % 2 == 0) {
      damaged[rng() % length] ^= static_cast<std::byte>(1u << (rng() % 8));
    } else {
      for (std::byte& b : damaged) {
        b = static_cast<std::byte>(rng() % 3 == 0 ? rng() & 0xff : kSpecial[rng() % 6]);
      }
    }
    patch(fd, offset, damaged);
    SCOPED_TRACE("trial " + std::to_string(trial) + " at offset " + std::to_string(offset));
    (opens_and_reads(copy) ? opened : rejected)++;
    patch(fd, offset, std::span(original).subspan(offset, length));
  }
  ::close(fd);
  RecordProperty("opened", opened);
  RecordProperty("rejected", rejected);
  EXPECT_EQ(opened + rejected, kTrials);
  EXPECT_GT(rejected, 0);
  EXPECT_GT(opened, 0);
}

class GgufHandMade : public ::testing::Test {
 protected:
  // A valid file holding one f32 tensor of four elements; pieces of it are broken per test.
  static RawGguf one_tensor(uint32_t alignment_kv, uint64_t offset, uint32_t type = kF32,
                            uint64_t ne0 = 4) {
    RawGguf raw;
    raw.header(3, 1, alignment_kv ? 1 : 0);
    if (alignment_kv) raw.kv_u32("general.alignment", alignment_kv);
    raw.tensor_info("w", {ne0}, type, offset).pad_to(alignment_kv ? alignment_kv : 32);
    return raw.zeros(16);
  }
  std::filesystem::path write(const RawGguf& raw) {
    const std::filesystem::path path = dir_.file("bad.gguf");
    write_file(path, raw);
    return path;
  }
  TempDir dir_;
};

TEST_F(GgufHandMade, AValidMinimalFileOpens) {
  const GgufFile file = GgufFile::open(write(one_tensor(0, 0)));
  EXPECT_EQ(file.tensors().at(0).shape, (Shape{4}));
  EXPECT_EQ(file.tensor("w").nbytes(), 16u);
  EXPECT_EQ(GgufFile::open(write(one_tensor(8, 0))).alignment(), 8u);
}

TEST_F(GgufHandMade, HeaderErrorsNameMagicAndVersion) {
  expect_open_error(write(RawGguf()), kInvalid, {"bad.gguf: magic", "truncated"});
  expect_open_error(write(RawGguf().str_bytes("GGML").u32(3).u64(0).u64(0)), kInvalid,
                    {"magic", "not a GGUF file"});
  expect_open_error(write(RawGguf().header(1, 0, 0)), kInvalid, {"version", "version 1"});
  expect_open_error(write(RawGguf().header(99, 0, 0)), kInvalid, {"version", "version 99"});
  expect_open_error(write(RawGguf().header(0x03000000, 0, 0)), kInvalid, {"big-endian"});
  expect_open_error(write(RawGguf().header(3, 1ull << 62, 0)), kInvalid, {"tensor_count"});
  expect_open_error(write(RawGguf().header(3, 0, 1ull << 62)), kInvalid, {"metadata_kv_count"});
}

TEST_F(GgufHandMade, HugeLengthsAndCountsAreRejectedBeforeAllocating) {
  expect_open_error(write(RawGguf().header(3, 0, 1).u64(1ull << 60).zeros(64)), kInvalid,
                    {"metadata key #0", "string length"});
  expect_open_error(write(RawGguf().header(3, 0, 1).str("k").u32(8).u64(~0ull).zeros(64)), kInvalid,
                    {"metadata key 'k'", "string length 18446744073709551615"});
  expect_open_error(
      write(RawGguf().header(3, 0, 1).str("arr").u32(9).u32(4).u64(1ull << 60).zeros(64)), kInvalid,
      {"metadata key 'arr'", "array count"});
  expect_open_error(write(RawGguf().header(3, 0, 1).str("arr").u32(9).u32(8).u64(9).zeros(64)),
                    kInvalid, {"metadata key 'arr'", "array count 9"});
  expect_open_error(write(RawGguf().header(3, 1, 0).u64(1ull << 60).zeros(64)), kInvalid,
                    {"tensor #0 name", "string length"});
}

TEST_F(GgufHandMade, InvalidValuesNameTheKey) {
  expect_open_error(write(RawGguf().header(3, 0, 1).str("bad.type").u32(13).zeros(8)), kInvalid,
                    {"metadata key 'bad.type'", "value type 13"});
  expect_open_error(write(RawGguf().header(3, 0, 1).str("bad.elem").u32(9).u32(77).u64(1)),
                    kInvalid, {"metadata key 'bad.elem'", "array element type 77"});
  expect_open_error(write(RawGguf().header(3, 0, 1).str("flag").u32(7).u8(2)), kInvalid,
                    {"metadata key 'flag'", "bool value 2"});
  expect_open_error(write(RawGguf().header(3, 0, 2).kv_u32("twice", 1).kv_u32("twice", 2)),
                    kInvalid, {"metadata key 'twice'", "duplicate"});
  expect_open_error(write(RawGguf().header(3, 0, 1).str("bad\nkey").u32(13).zeros(8)), kInvalid,
                    {"metadata key 'bad\\x0akey'"});
  RawGguf nested = RawGguf().header(3, 0, 1).str("deep").u32(9);
  for (int i = 0; i < 20; ++i) nested.u32(9).u64(1);
  expect_open_error(write(nested.zeros(64)), kInvalid, {"metadata key 'deep'", "nested"});
}

TEST_F(GgufHandMade, AlignmentMustBeANonzeroPowerOfTwoUint32) {
  for (uint32_t bad : {0u, 3u, 48u}) {
    RawGguf raw;
    raw.header(3, 0, 1).kv_u32("general.alignment", bad);
    expect_open_error(write(raw), kInvalid,
                      {"metadata key 'general.alignment'", "not a nonzero power of two"});
  }
  RawGguf wrong_type;
  wrong_type.header(3, 0, 1).str("general.alignment").u32(5).u32(32);
  expect_open_error(write(wrong_type), kInvalid, {"'general.alignment'", "must be uint32"});
}

TEST_F(GgufHandMade, TensorInfoErrorsNameTheTensor) {
  expect_open_error(write(one_tensor(0, 0, 99)), kInvalid, {"tensor 'w'", "ggml type 99"});
  expect_open_error(write(one_tensor(0, 0, 4)), kInvalid, {"tensor 'w'", "q4_2"});
  expect_open_error(write(one_tensor(0, 0, kQ8_0, 33)), kInvalid,
                    {"tensor 'w'", "ne[0] = 33", "block size 32"});
  expect_open_error(write(one_tensor(0, 16)), kInvalid,
                    {"tensor 'w'", "offset 16 is not a multiple of the alignment 32"});
  expect_open_error(
      write(one_tensor(0, 4096)), kInvalid,
      {"bad.gguf: tensor 'w': data [offset 4096, 16 bytes] extends past end of file"});
  expect_open_error(write(RawGguf().header(3, 1, 0).tensor_info("w", {}, kF32, 0).zeros(64)),
                    kInvalid, {"tensor 'w'", "n_dims 0"});
  expect_open_error(
      write(RawGguf().header(3, 1, 0).tensor_info("w", {1, 1, 1, 1, 1}, kF32, 0).zeros(64)),
      kInvalid, {"tensor 'w'", "n_dims 5"});
  expect_open_error(write(RawGguf().header(3, 1, 0).tensor_info("w", {1ull << 63}, kF32, 0)),
                    kInvalid, {"tensor 'w'", "ne[0]"});
  expect_open_error(
      write(RawGguf().header(3, 1, 0).tensor_info("w", {1ull << 40, 1ull << 40}, kF32, 0)),
      kInvalid, {"tensor 'w'", "ne[1]", "overflow"});
  expect_open_error(write(RawGguf().header(3, 1, 0).tensor_info("w", {1ull << 60, 4}, kF32, 0)),
                    kInvalid, {"tensor 'w'", "overflows"});
  expect_open_error(write(RawGguf()
                              .header(3, 2, 0)
                              .tensor_info("w", {4}, kF32, 0)
                              .tensor_info("w", {4}, kF32, 32)
                              .pad_to(32)
                              .zeros(64)),
                    kInvalid, {"tensor 'w'", "duplicate tensor name"});
}

}  // namespace
}  // namespace baton::gguf
