#include "core/formats/gguf/gguf_writer.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string_view>

#include "baton/error.h"
#include "core/formats/gguf/gguf_file.h"
#include "tests/core/formats/gguf/gguf_test_util.h"
#include "tests/test_data.h"

namespace baton::gguf {
namespace {

using testing::read_bytes;
using testing::same_value;
using testing::TempDir;

Value scalar(ValueType type, int64_t v) {
  return {type, v};
}
Value uscalar(ValueType type, uint64_t v) {
  return {type, v};
}

Value array_of(ValueType element_type, std::vector<Value> items) {
  return {ValueType::kArray, Array{element_type, std::move(items)}};
}

// One value of every type at the edges of its range, plus arrays of each kind, as the reader
// returns them (unsigned integers as uint64_t, signed as int64_t).
std::vector<std::pair<std::string, Value>> every_value_type() {
  using VT = ValueType;
  return {
      {"t.uint8", uscalar(VT::kUint8, 255)},
      {"t.int8", scalar(VT::kInt8, -128)},
      {"t.uint16", uscalar(VT::kUint16, 65535)},
      {"t.int16", scalar(VT::kInt16, -32768)},
      {"t.uint32", uscalar(VT::kUint32, 4294967295u)},
      {"t.int32", scalar(VT::kInt32, std::numeric_limits<int32_t>::min())},
      {"t.float32", {VT::kFloat32, 1.5}},
      {"t.bool_true", {VT::kBool, true}},
      {"t.bool_false", {VT::kBool, false}},
      {"t.string", {VT::kString, std::string("h\xc3\xa9llo \0world", 13)}},
      {"t.empty_string", {VT::kString, std::string()}},
      {"t.uint64", uscalar(VT::kUint64, std::numeric_limits<uint64_t>::max())},
      {"t.int64", scalar(VT::kInt64, std::numeric_limits<int64_t>::min())},
      {"t.float64", {VT::kFloat64, 3.141592653589793}},
      {"a.uint8", array_of(VT::kUint8, {uscalar(VT::kUint8, 0), uscalar(VT::kUint8, 200)})},
      {"a.int16", array_of(VT::kInt16, {scalar(VT::kInt16, -7), scalar(VT::kInt16, 300)})},
      {"a.float32", array_of(VT::kFloat32, {{VT::kFloat32, -0.25}, {VT::kFloat32, 1e10}})},
      {"a.float64", array_of(VT::kFloat64, {{VT::kFloat64, 1e-300}})},
      {"a.bool", array_of(VT::kBool, {{VT::kBool, true}, {VT::kBool, false}})},
      {"a.string", array_of(VT::kString, {{VT::kString, std::string("a")},
                                          {VT::kString, std::string()},
                                          {VT::kString, std::string("\xe2\x96\x81x")}})},
      {"a.uint64", array_of(VT::kUint64, {uscalar(VT::kUint64, 1ull << 63)})},
      {"a.int64", array_of(VT::kInt64, {scalar(VT::kInt64, -1)})},
      {"a.empty", array_of(VT::kInt32, {})},
      {"a.nested",
       array_of(VT::kArray,
                {array_of(VT::kInt32, {scalar(VT::kInt32, 1), scalar(VT::kInt32, 2)}),
                 array_of(VT::kInt32, {}), array_of(VT::kInt32, {scalar(VT::kInt32, -3)})})},
      {"a.nested_strings",
       array_of(VT::kArray, {array_of(VT::kString, {{VT::kString, std::string("x")}}),
                             array_of(VT::kArray, {array_of(VT::kUint8, {})})})},
  };
}

std::vector<std::byte> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> bytes(n);
  for (std::byte& b : bytes) b = static_cast<std::byte>(rng() & 0xff);
  return bytes;
}

template <typename F>
void expect_invalid_argument(F&& f, std::string_view part) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected one mentioning \"" << part << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

class GgufWriterVersions : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GgufWriterVersions, RoundTripsEveryValueTypeInOrder) {
  TempDir dir;
  GgufWriter writer(GetParam());
  const auto values = every_value_type();
  for (const auto& [key, value] : values) writer.add(key, value);
  writer.write(dir.file("values.gguf"));

  const GgufFile file = GgufFile::open(dir.file("values.gguf"));
  EXPECT_EQ(file.version(), GetParam());
  EXPECT_TRUE(file.tensors().empty());
  ASSERT_EQ(file.metadata().size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(file.metadata()[i].first, values[i].first);
    EXPECT_TRUE(same_value(file.metadata()[i].second, values[i].second)) << values[i].first;
  }
}

TEST_P(GgufWriterVersions, RoundTripsTensorBytesExactlyAtEachAlignment) {
  struct Case {
    const char* name;
    Shape shape;
    DType dtype;
  };
  const std::vector<Case> cases = {
      {"f32", {3, 5}, DType::kF32},         {"f16", {2, 7}, DType::kF16},
      {"q8_0", {4, 64}, DType::kQ8_0},      {"q4_0", {3, 32}, DType::kQ4_0},
      {"bf16", {1, 2, 3, 4}, DType::kBF16}, {"i32", {9}, DType::kI32}};
  for (uint32_t alignment : {32u, 64u, 1u}) {
    SCOPED_TRACE("alignment " + std::to_string(alignment));
    TempDir dir;
    GgufWriter writer(GetParam());
    if (alignment != 32) writer.set_alignment(alignment);
    writer.add_string("general.architecture", "test");
    std::vector<std::vector<std::byte>> contents;
    for (const Case& c : cases) {
      const size_t nbytes = Tensor(c.dtype, c.shape, nullptr).nbytes();
      contents.push_back(random_bytes(nbytes, static_cast<uint32_t>(contents.size())));
      writer.add_tensor(c.name, c.shape, c.dtype, contents.back());
    }
    writer.write(dir.file("tensors.gguf"));

    const GgufFile file = GgufFile::open(dir.file("tensors.gguf"));
    EXPECT_EQ(file.alignment(), alignment);
    EXPECT_EQ(file.data_offset() % alignment, 0u);
    ASSERT_EQ(file.tensors().size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
      const TensorInfo& info = file.tensors()[i];
      EXPECT_EQ(info.name, cases[i].name);
      EXPECT_EQ(info.shape, cases[i].shape);
      EXPECT_EQ(info.ggml_type, static_cast<uint32_t>(cases[i].dtype));
      EXPECT_EQ(info.offset % alignment, 0u);
      const Tensor tensor = file.tensor(info.name);
      EXPECT_EQ(tensor.dtype(), cases[i].dtype);
      ASSERT_EQ(tensor.nbytes(), contents[i].size());
      EXPECT_EQ(std::memcmp(tensor.materialize(), contents[i].data(), contents[i].size()), 0)
          << info.name;
    }
  }
}

// Zero tensors before, between and after written ones, the last one's size not a multiple of
// the alignment: the file is byte for byte the one written with the zeros spelled out, and its
// large hole takes no disk.
TEST(GgufWriter, ZeroTensorsAreHolesOfTheFileTheirZerosWouldMake) {
  struct Layout {
    const char* name;
    Shape shape;
    DType dtype;
  };
  const std::vector<Layout> layouts = {{"first", {3, 5}, DType::kF32},
                                       {"middle", {7}, DType::kF16},
                                       {"large", {4096, 4096}, DType::kQ8_0},
                                       {"last", {33, 31}, DType::kF16}};
  const std::vector<std::byte> middle = random_bytes(7 * 2, 1);
  TempDir dir;
  GgufWriter holes, spelled_out;
  for (GgufWriter* writer : {&holes, &spelled_out}) {
    writer->add_string("general.architecture", "test");
    for (const Layout& l : layouts) {
      const size_t nbytes = Tensor(l.dtype, l.shape, nullptr).nbytes();
      if (std::string_view(l.name) == "middle") {
        writer->add_tensor(l.name, l.shape, l.dtype, middle);
      } else if (writer == &holes) {
        writer->add_zero_tensor(l.name, l.shape, l.dtype);
      } else {
        writer->add_tensor(l.name, l.shape, l.dtype, std::vector<std::byte>(nbytes));
      }
    }
  }
  holes.write(dir.file("holes.gguf"));
  spelled_out.write(dir.file("spelled_out.gguf"));
  EXPECT_EQ(read_bytes(dir.file("holes.gguf")), read_bytes(dir.file("spelled_out.gguf")));
  EXPECT_EQ(GgufFile::open(dir.file("holes.gguf")).tensors().size(), layouts.size());
  struct stat st {};
  ASSERT_EQ(stat(dir.file("holes.gguf").c_str(), &st), 0);
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, uint64_t{4} << 20)
      << "17 MiB of zeros should be a hole, not written";
}

INSTANTIATE_TEST_SUITE_P(V2AndV3, GgufWriterVersions, ::testing::Values(2u, 3u),
                         [](const auto& info) {
                           return std::string(info.param == 2 ? "v2" : "v3");
                         });

TEST(GgufWriter, TypedAddersWriteTheMatchingValueTypes) {
  TempDir dir;
  GgufWriter writer;
  const std::vector<int32_t> ints = {3, -1};
  const std::vector<float> floats = {0.5f, -2.0f};
  writer.add_string("s", "text");
  writer.add_uint32("u32", 7);
  writer.add_int32("i32", -7);
  writer.add_uint64("u64", 1ull << 40);
  writer.add_float32("f32", 0.25f);
  writer.add_bool("b", true);
  writer.add_string_array("sa", {"x", "y"});
  writer.add_int32_array("ia", ints);
  writer.add_float32_array("fa", floats);
  writer.write(dir.file("typed.gguf"));

  const GgufFile file = GgufFile::open(dir.file("typed.gguf"));
  EXPECT_EQ(file.get_string("s"), "text");
  EXPECT_EQ(file.find("u32")->type, ValueType::kUint32);
  EXPECT_EQ(file.get_int("i32"), -7);
  EXPECT_EQ(file.find("i32")->type, ValueType::kInt32);
  EXPECT_EQ(file.get_int("u64"), 1ll << 40);
  EXPECT_EQ(file.find("f32")->type, ValueType::kFloat32);
  EXPECT_EQ(file.get_float("f32"), 0.25);
  EXPECT_TRUE(file.get_bool("b"));
  EXPECT_EQ(file.get_string_array("sa"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(file.get_int_array("ia"), (std::vector<int64_t>{3, -1}));
  EXPECT_EQ(file.get_float_array("fa"), floats);
}

TEST(GgufWriter, LaysOutTheFileAsTheFormatSpecifies) {
  TempDir dir;
  GgufWriter writer;
  writer.add_uint32("k", 9);
  const std::vector<std::byte> data = random_bytes(2 * 32 * 4, 7);
  writer.add_tensor("w", {2, 32}, DType::kF32, data);
  writer.write(dir.file("layout.gguf"));

  const std::vector<std::byte> bytes = read_bytes(dir.file("layout.gguf"));
  auto u32_at = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  auto u64_at = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, bytes.data() + at, 8);
    return v;
  };
  ASSERT_GE(bytes.size(), 96u);
  EXPECT_EQ(std::memcmp(bytes.data(), "GGUF", 4), 0);
  EXPECT_EQ(u32_at(4), 3u);   // version
  EXPECT_EQ(u64_at(8), 1u);   // tensor_count
  EXPECT_EQ(u64_at(16), 1u);  // metadata_kv_count
  EXPECT_EQ(u64_at(24), 1u);  // key length, "k"
  EXPECT_EQ(u32_at(33), 4u);  // uint32
  EXPECT_EQ(u32_at(37), 9u);
  EXPECT_EQ(u64_at(41), 1u);   // name length, "w"
  EXPECT_EQ(u32_at(50), 2u);   // n_dims
  EXPECT_EQ(u64_at(54), 32u);  // ne[0], innermost first
  EXPECT_EQ(u64_at(62), 2u);   // ne[1]
  EXPECT_EQ(u32_at(70), 0u);   // f32
  EXPECT_EQ(u64_at(74), 0u);   // offset
  // Tensor infos end at 82; the data section starts at the next multiple of 32.
  ASSERT_EQ(bytes.size(), 96u + data.size());
  EXPECT_EQ(std::memcmp(bytes.data() + 96, data.data(), data.size()), 0);
}

TEST(GgufWriter, RewritingTheDemoModelReproducesTheFileByteForByte) {
  const std::filesystem::path demo = baton::testing::demo_model();
  TempDir dir;
  {
    const GgufFile file = GgufFile::open(demo);
    GgufWriter writer(file.version());
    for (const auto& [key, value] : file.metadata()) writer.add(key, value);
    for (const TensorInfo& info : file.tensors())
      writer.add_tensor(info.name, file.tensor(info.name));
    writer.write(dir.file("copy.gguf"));
  }
  EXPECT_TRUE(read_bytes(demo) == read_bytes(dir.file("copy.gguf")));
}

TEST(GgufWriter, KeepsTensorTypesBatonDoesNotImplement) {
  TempDir dir;
  GgufWriter writer;
  constexpr uint32_t kIq4Xs = 23;  // 136 bytes per 256 elements
  const std::vector<std::byte> data = random_bytes(3 * 136, 3);
  writer.add_tensor("w", {3, 256}, kIq4Xs, data);
  writer.write(dir.file("iq4xs.gguf"));

  const GgufFile file = GgufFile::open(dir.file("iq4xs.gguf"));
  const TensorInfo& info = file.tensors().at(0);
  EXPECT_EQ(info.ggml_type, kIq4Xs);
  EXPECT_EQ(info.nbytes, data.size());
  EXPECT_EQ(info.shape, (Shape{3, 256}));
  try {
    file.tensor("w");
    ADD_FAILURE() << "iq4_xs tensor handed out";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("iq4_xs"), std::string::npos) << e.what();
  }
}

// Baton's own types carry a per-row header (int8: an f32 scale before each row's quants), so a
// tensor's size is rows x (header + quants), which reader and writer must agree on.
TEST(GgufWriter, RoundTripsBatonTypesWithRowHeaders) {
  TempDir dir;
  GgufWriter writer;
  const std::vector<std::byte> data = random_bytes(3 * (4 + 64), 4);
  writer.add_tensor("w", {3, 64}, DType::kI8Row, data);
  expect_invalid_argument(
      [&] {
        writer.add_tensor("short", {3, 64}, DType::kI8Row, random_bytes(3 * 64, 5));
      },
      "needs 204");
  writer.write(dir.file("int8.gguf"));

  const GgufFile file = GgufFile::open(dir.file("int8.gguf"));
  const Tensor t = file.tensor("w");
  EXPECT_EQ(t.dtype(), DType::kI8Row);
  EXPECT_EQ(t.row_bytes(), 68u);
  ASSERT_EQ(t.nbytes(), data.size());
  EXPECT_EQ(std::memcmp(t.materialize(), data.data(), data.size()), 0);
}

TEST(GgufWriter, RejectsInvalidMetadataNamingTheKey) {
  expect_invalid_argument([] { GgufWriter writer(1); }, "version 1");
  GgufWriter writer;
  writer.add_uint32("dup", 1);
  expect_invalid_argument([&] { writer.add_uint32("dup", 2); }, "'dup'");
  expect_invalid_argument([&] { writer.add("u8", uscalar(ValueType::kUint8, 256)); }, "'u8'");
  expect_invalid_argument([&] { writer.add("i8", scalar(ValueType::kInt8, -129)); }, "'i8'");
  expect_invalid_argument([&] { writer.add("u32", scalar(ValueType::kUint32, -1)); }, "'u32'");
  expect_invalid_argument([&] { writer.add("s", {ValueType::kString, 1.0}); }, "'s'");
  expect_invalid_argument(
      [&] {
        writer.add("t", {static_cast<ValueType>(13), int64_t{0}});
      },
      "'t'");
  expect_invalid_argument(
      [&] {
        writer.add("mixed", array_of(ValueType::kInt32, {{ValueType::kString, std::string()}}));
      },
      "'mixed'");
  expect_invalid_argument([&] { writer.set_alignment(3); }, "general.alignment");
  expect_invalid_argument([&] { writer.set_alignment(0); }, "general.alignment");
  expect_invalid_argument([&] { writer.add("general.alignment", scalar(ValueType::kInt32, 64)); },
                          "general.alignment");
  // Failed adds leave nothing behind.
  writer.add_uint32("u8", 5);
  writer.set_alignment(64);
  EXPECT_EQ(writer.alignment(), 64u);
}

TEST(GgufWriter, NestsArraysAsDeeplyAsTheReaderReads) {
  auto nested = [](int levels) {
    Value value = array_of(ValueType::kUint8, {uscalar(ValueType::kUint8, 7)});
    for (int i = 1; i < levels; ++i) value = array_of(ValueType::kArray, {std::move(value)});
    return value;
  };
  TempDir dir;
  GgufWriter writer;
  writer.add("deep", nested(16));
  expect_invalid_argument([&] { writer.add("deeper", nested(17)); }, "'deeper'");
  writer.write(dir.file("deep.gguf"));
  EXPECT_TRUE(same_value(*GgufFile::open(dir.file("deep.gguf")).find("deep"), nested(16)));
}

TEST(GgufWriter, RejectsInvalidTensorsNamingTheTensor) {
  GgufWriter writer;
  const std::vector<std::byte> f32x4(16);
  writer.add_tensor("ok", {4}, DType::kF32, f32x4);
  expect_invalid_argument([&] { writer.add_tensor("ok", {4}, DType::kF32, f32x4); }, "'ok'");
  expect_invalid_argument([&] { writer.add_tensor("short", {5}, DType::kF32, f32x4); }, "needs 20");
  expect_invalid_argument(
      [&] {
        writer.add_tensor("q", {2, 33}, DType::kQ8_0, f32x4);
      },
      "block size 32");
  expect_invalid_argument(
      [&] {
        writer.add_tensor("rank5", {1, 1, 1, 1, 4}, DType::kF32, f32x4);
      },
      "'rank5'");
  expect_invalid_argument([&] { writer.add_tensor("rank0", {}, DType::kF32, f32x4); }, "'rank0'");
  expect_invalid_argument([&] { writer.add_tensor("neg", {-1, 4}, DType::kF32, f32x4); }, "'neg'");
  expect_invalid_argument([&] { writer.add_tensor("removed", {4}, 4u, f32x4); }, "q4_2");
  expect_invalid_argument([&] { writer.add_tensor(std::string(64, 'n'), {4}, DType::kF32, f32x4); },
                          "longer than 63");
  expect_invalid_argument([&] { writer.add_tensor("undefined", Tensor()); }, "'undefined'");
}

TEST(GgufWriter, FilledTensorsAreMadeDuringWriteInFileOrder) {
  TempDir dir;
  GgufWriter writer;
  std::vector<std::string> calls;
  const std::vector<std::byte> held = random_bytes(12, 7);
  writer.add_tensor("filled_q8", {2, 32}, DType::kQ8_0, [&](std::span<std::byte> bytes) {
    calls.push_back("filled_q8:" + std::to_string(bytes.size()));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i);
  });
  writer.add_tensor("held", {3}, DType::kF32, held);
  writer.add_tensor("filled_f32", {5}, DType::kF32, [&](std::span<std::byte> bytes) {
    calls.push_back("filled_f32:" + std::to_string(bytes.size()));
    std::memset(bytes.data(), 0xab, bytes.size());
  });
  expect_invalid_argument(
      [&] {
        writer.add_tensor("bad", {2, 33}, DType::kQ4_0, [](std::span<std::byte>) {});
      },
      "'bad'");
  EXPECT_TRUE(calls.empty());  // nothing is made until write()
  writer.write(dir.file("filled.gguf"));
  EXPECT_EQ(calls, (std::vector<std::string>{"filled_q8:68", "filled_f32:20"}));

  const GgufFile file = GgufFile::open(dir.file("filled.gguf"));
  const Tensor q8 = file.tensor("filled_q8");
  for (size_t i = 0; i < q8.nbytes(); ++i)
    ASSERT_EQ(q8.materialize()[i], static_cast<std::byte>(i));
  EXPECT_EQ(std::memcmp(file.tensor("held").materialize(), held.data(), held.size()), 0);
  const Tensor f32 = file.tensor("filled_f32");
  for (size_t i = 0; i < f32.nbytes(); ++i) ASSERT_EQ(f32.materialize()[i], std::byte{0xab});
}

TEST(GgufWriter, WritingIntoAMissingDirectoryIsAnIoError) {
  TempDir dir;
  GgufWriter writer;
  try {
    writer.write(dir.file("no/such/dir/out.gguf"));
    ADD_FAILURE() << "write succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kIo) << e.what();
    EXPECT_NE(std::string(e.what()).find("out.gguf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton::gguf
