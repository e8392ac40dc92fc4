#include "core/formats/hf_import/safetensors_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "baton/error.h"
#include "core/runtime/half.h"
#include "ops/reference.h"
#include "tests/core/formats/hf_import/safetensors_writer.h"
#include "tests/temp_file.h"

namespace baton::hf {
namespace {

using testing::SafetensorsEntry;

std::vector<SafetensorsEntry> sample_entries() {
  const std::vector<float> matrix = {1.5f, -2.0f, 3.25f, 0.0f, -0.5f, 8.0f};
  std::vector<uint16_t> halves, bf16s;
  for (float v : {0.5f, -1.0f, 2.0f}) halves.push_back(fp32_to_fp16(v));
  for (float v : {4.0f, -8.0f}) bf16s.push_back(fp32_to_bf16(v));
  const auto as_bytes = [](std::span<const uint16_t> v) {
    const auto b = std::as_bytes(v);
    return std::vector<std::byte>(b.begin(), b.end());
  };
  return {testing::f32_entry("model.norm.weight", {2, 3}, matrix),
          {"half", "F16", {3}, as_bytes(halves)},
          {"brain", "BF16", {2, 1}, as_bytes(bf16s)}};
}

std::vector<float> decoded(const Tensor& t) {
  std::vector<float> out;
  std::vector<float> row(t.row_length());
  for (int64_t r = 0; r < t.rows(); ++r) {
    reference::dequantize_row(t, r, row.data());
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

// The error open() throws for `path`.
Error open_failure(const std::filesystem::path& path) {
  try {
    SafetensorsFile::open(path);
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorCategory::kInternal, "no error");
}

// The message open() throws for a file with `header` and `entries`' bytes.
std::string open_error(const std::string& header, const std::vector<SafetensorsEntry>& entries) {
  const testing::TempFile file("corrupt.safetensors");
  testing::write_safetensors_raw(file.path(), header, entries);
  return open_failure(file.path()).what();
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << text;
}

TEST(SafetensorsFile, ReadsWhatWasWritten) {
  const testing::TempFile path("valid.safetensors");
  testing::write_safetensors(path.path(), sample_entries());
  const SafetensorsFile file = SafetensorsFile::open(path.path());
  ASSERT_EQ(file.tensors().size(), 3u);
  const SafetensorsTensor* norm = file.find("model.norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->dtype, DType::kF32);
  EXPECT_EQ(norm->shape, (Shape{2, 3}));
  EXPECT_EQ(norm->nbytes, 24u);
  EXPECT_EQ(decoded(file.tensor("model.norm.weight")),
            (std::vector<float>{1.5f, -2.0f, 3.25f, 0.0f, -0.5f, 8.0f}));
  EXPECT_EQ(decoded(file.tensor("half")), (std::vector<float>{0.5f, -1.0f, 2.0f}));
  EXPECT_EQ(file.tensor("brain").dtype(), DType::kBF16);
  EXPECT_EQ(decoded(file.tensor("brain")), (std::vector<float>{4.0f, -8.0f}));
  EXPECT_EQ(file.find("missing"), nullptr);
  EXPECT_THROW(file.tensor("missing"), Error);
}

TEST(SafetensorsFile, TensorsAtOddOffsetsAreCopiedToAlignedMemory) {
  // One F16 element first leaves the F32 tensor 2 bytes past an aligned address.
  const std::vector<uint16_t> one = {fp32_to_fp16(1.0f)};
  const auto one_bytes = std::as_bytes(std::span(one));
  const std::vector<float> values = {3.0f, -7.0f};
  const std::vector<SafetensorsEntry> entries = {
      {"a", "F16", {1}, {one_bytes.begin(), one_bytes.end()}},
      testing::f32_entry("b", {2}, values)};
  const testing::TempFile path("odd.safetensors");
  testing::write_safetensors(path.path(), entries);
  const SafetensorsFile file = SafetensorsFile::open(path.path());
  EXPECT_EQ(decoded(file.tensor("b")), values);
}

TEST(SafetensorsFile, TruncatedHeaderIsRejected) {
  const testing::TempFile path("short.safetensors");
  std::ofstream(path.path(), std::ios::binary) << "abc";
  const Error too_short = open_failure(path.path());
  EXPECT_EQ(too_short.category(), ErrorCategory::kInvalidModel);
  expect_contains(too_short.what(), "short.safetensors: 3 bytes is too short");
  // A header length that runs past the end of the file.
  const testing::TempFile cut("cut.safetensors");
  testing::write_safetensors(cut.path(), sample_entries());
  std::filesystem::resize_file(cut.path(), 20);
  const std::string error = open_failure(cut.path()).what();
  expect_contains(error, "cut.safetensors: header length");
  expect_contains(error, "runs past the end of the 20-byte file");
}

TEST(SafetensorsFile, OffsetsPastTheEndAreRejected) {
  auto entries = sample_entries();
  nlohmann::json header = testing::safetensors_header(entries);
  header["half"]["data_offsets"] = {24, 1024};
  const std::string error = open_error(header.dump(), entries);
  expect_contains(error, "corrupt.safetensors: tensor 'half' has data_offsets [24, 1024]");
  expect_contains(error, "outside the 34 bytes of data");
}

TEST(SafetensorsFile, ByteSizeThatDisagreesWithTheShapeIsRejected) {
  auto entries = sample_entries();
  nlohmann::json header = testing::safetensors_header(entries);
  header["model.norm.weight"]["shape"] = {2, 2};
  const std::string error = open_error(header.dump(), entries);
  expect_contains(error, "tensor 'model.norm.weight' takes 24 bytes");
  expect_contains(error, "[2, 2] of f32 needs 16");
}

TEST(SafetensorsFile, UnsupportedDtypeIsNamed) {
  auto entries = sample_entries();
  nlohmann::json header = testing::safetensors_header(entries);
  header["half"]["dtype"] = "I64";
  const testing::TempFile file("int.safetensors");
  testing::write_safetensors_raw(file.path(), header.dump(), entries);
  const Error error = open_failure(file.path());
  EXPECT_EQ(error.category(), ErrorCategory::kUnsupported);
  expect_contains(error.what(), "int.safetensors: tensor 'half' has dtype \"I64\"");
  expect_contains(error.what(), "(supported: F32, F16, BF16)");
}

TEST(SafetensorsFile, MalformedJsonIsRejected) {
  const std::string error = open_error("{\"a\": {\"dtype\": \"F32\",", {});
  expect_contains(error, "corrupt.safetensors: the header is not valid JSON");
  expect_contains(open_error("[1, 2]", {}), "the header is not a JSON object");
  expect_contains(
      open_error(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}})", {}),
      "tensor 'a' has a bad dimension -1");
  expect_contains(open_error(R"({"a": {"dtype": "F32", "shape": [1]}})", {}),
                  "tensor 'a' has no \"data_offsets\" pair");
}

}  // namespace
}  // namespace baton::hf
