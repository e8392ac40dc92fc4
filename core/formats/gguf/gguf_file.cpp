#include "core/formats/gguf/gguf_file.h"

#include <bit>
#include <cstdio>
#include <new>
#include <unordered_set>

#include "baton/error.h"
#include "core/formats/gguf/byte_reader.h"
#include "core/formats/gguf/ggml_types.h"
#include "core/formats/gguf/mapped_file.h"

namespace baton::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
constexpr uint64_t kDefaultAlignment = 32;
constexpr std::string_view kAlignmentKey = "general.alignment";
constexpr uint32_t kMaxDims = 4;
// Real files nest at most one level; the cap keeps a corrupt file from exhausting the stack.
constexpr int kMaxArrayDepth = 16;
// Fewest bytes a metadata pair (key length, type, one-byte value) and a tensor info (name length,
// n_dims, one dimension, type, offset) occupy: counts above what the file could hold are
// rejected before anything is allocated for them.
constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

// Bytes of a fixed-size scalar value; 0 for strings and arrays.
uint64_t scalar_size(ValueType type) {
  switch (type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUint16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
      return 8;
    case ValueType::kString:
    case ValueType::kArray:
      return 0;
  }
  return 0;
}

uint64_t min_encoded_size(ValueType type) {
  if (type == ValueType::kString) return 8;     // length
  if (type == ValueType::kArray) return 4 + 8;  // element type, count
  return scalar_size(type);
}

std::string key_field(std::string_view key) {
  return "metadata key '" + printable(key) + "'";
}

ValueType read_type(ByteReader& r, std::string_view field, std::string_view what) {
  const uint32_t code = r.read<uint32_t>(field);
  if (code > static_cast<uint32_t>(ValueType::kFloat64)) {
    r.fail(field,
           std::string(what) + " " + std::to_string(code) + " is not a GGUF value type (0..12)");
  }
  return static_cast<ValueType>(code);
}

struct ArrayHeader {
  ValueType element_type;
  uint64_t count;
};

ArrayHeader read_array_header(ByteReader& r, std::string_view field, int depth) {
  if (depth >= kMaxArrayDepth) {
    r.fail(field, "arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
  }
  const ValueType element_type = read_type(r, field, "array element type");
  const uint64_t count = r.read<uint64_t>(field);
  if (count > r.remaining() / min_encoded_size(element_type)) {
    r.fail(field, "array count " + std::to_string(count) + " of " +
                      std::string(to_string(element_type)) + " exceeds the " +
                      std::to_string(r.remaining()) + " bytes left in the file");
  }
  return {element_type, count};
}

// Steps over a value without building it: the first pass only learns where values lie, so a
// corrupt count costs no memory before the rest of the file has been checked.
void skip_value(ByteReader& r, ValueType type, std::string_view field, int depth) {
  if (type == ValueType::kString) {
    r.read_string(field);
  } else if (type == ValueType::kArray) {
    const ArrayHeader array = read_array_header(r, field, depth);
    if (const uint64_t size = scalar_size(array.element_type)) {
      r.skip(array.count * size, field);  // cannot overflow: count <= remaining / size
    } else {
      for (uint64_t i = 0; i < array.count; ++i) {
        skip_value(r, array.element_type, field, depth + 1);
      }
    }
  } else {
    r.skip(scalar_size(type), field);
  }
}

Value read_value(ByteReader& r, ValueType type, std::string_view field, int depth) {
  switch (type) {
    case ValueType::kUint8:
      return {type, uint64_t{r.read<uint8_t>(field)}};
    case ValueType::kInt8:
      return {type, int64_t{r.read<int8_t>(field)}};
    case ValueType::kUint16:
      return {type, uint64_t{r.read<uint16_t>(field)}};
    case ValueType::kInt16:
      return {type, int64_t{r.read<int16_t>(field)}};
    case ValueType::kUint32:
      return {type, uint64_t{r.read<uint32_t>(field)}};
    case ValueType::kInt32:
      return {type, int64_t{r.read<int32_t>(field)}};
    case ValueType::kUint64:
      return {type, r.read<uint64_t>(field)};
    case ValueType::kInt64:
      return {type, r.read<int64_t>(field)};
    case ValueType::kFloat32:
      return {type, double{r.read<float>(field)}};
    case ValueType::kFloat64:
      return {type, r.read<double>(field)};
    case ValueType::kBool: {
      const uint8_t byte = r.read<uint8_t>(field);
      if (byte > 1) r.fail(field, "bool value " + std::to_string(byte) + " is neither 0 nor 1");
      return {type, byte == 1};
    }
    case ValueType::kString:
      return {type, std::string(r.read_string(field))};
    case ValueType::kArray: {
      const ArrayHeader header = read_array_header(r, field, depth);
      Array array{header.element_type, {}};
      array.items.reserve(header.count);
      for (uint64_t i = 0; i < header.count; ++i) {
        array.items.push_back(read_value(r, header.element_type, field, depth + 1));
      }
      return {type, std::move(array)};
    }
  }
  r.fail(field, "unreachable value type");
}

uint32_t read_version(ByteReader& r) {
  const uint32_t version = r.read<uint32_t>("version");
  if (version == 2 || version == 3) return version;
  if (version == 1) {
    r.fail("version",
           "GGUF version 1 is not supported (it uses 32-bit counts); convert the "
           "model again with a current llama.cpp");
  }
  const uint32_t swapped = __builtin_bswap32(version);
  if (swapped == 2 || swapped == 3) {
    r.fail("version", "the file is big-endian GGUF (version " + std::to_string(swapped) +
                          "), which Baton does not read");
  }
  r.fail("version",
         "unsupported GGUF version " + std::to_string(version) + " (Baton reads versions 2 and 3)");
}

uint64_t read_count(ByteReader& r, std::string_view field, uint64_t min_bytes_each) {
  const uint64_t count = r.read<uint64_t>(field);
  if (count > r.remaining() / min_bytes_each) {
    r.fail(field, std::to_string(count) + " entries cannot fit in the " +
                      std::to_string(r.remaining()) +
                      " bytes left in the file (truncated or corrupt)");
  }
  return count;
}

// Where a metadata value lies, found by the first pass.
struct KeyEntry {
  std::string_view key;
  ValueType type;
  uint64_t value_offset;
};

std::vector<KeyEntry> scan_metadata(ByteReader& r, uint64_t count) {
  std::vector<KeyEntry> entries;
  entries.reserve(count);
  std::unordered_set<std::string_view> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string_view key = r.read_string("metadata key #" + std::to_string(i));
    const std::string field = key_field(key);
    if (!seen.insert(key).second) r.fail(field, "duplicate key");
    const ValueType type = read_type(r, field, "value type");
    entries.push_back({key, type, r.position()});
    skip_value(r, type, field, 0);
  }
  return entries;
}

uint64_t read_alignment(ByteReader& r, const std::vector<KeyEntry>& entries) {
  for (const KeyEntry& entry : entries) {
    if (entry.key != kAlignmentKey) continue;
    const std::string field = key_field(entry.key);
    if (entry.type != ValueType::kUint32) {
      r.fail(field, "must be uint32, found " + std::string(to_string(entry.type)));
    }
    const uint64_t resume = r.position();
    r.seek(entry.value_offset);
    const uint32_t alignment = r.read<uint32_t>(field);
    r.seek(resume);
    if (!std::has_single_bit(alignment)) {
      r.fail(field, "alignment " + std::to_string(alignment) + " is not a nonzero power of two");
    }
    return alignment;
  }
  return kDefaultAlignment;
}

TensorInfo read_tensor_info(ByteReader& r, uint64_t index, uint64_t alignment) {
  TensorInfo info;
  info.name = r.read_string("tensor #" + std::to_string(index) + " name");
  const std::string field = "tensor '" + printable(info.name) + "'";
  const uint32_t n_dims = r.read<uint32_t>(field);
  if (n_dims == 0 || n_dims > kMaxDims) {
    r.fail(field,
           "n_dims " + std::to_string(n_dims) + " is outside 1.." + std::to_string(kMaxDims));
  }
  // GGUF lists dimensions innermost first; Baton's shapes are outermost first.
  info.shape.assign(n_dims, 0);
  int64_t elements = 1;
  for (uint32_t i = 0; i < n_dims; ++i) {
    const uint64_t ne = r.read<uint64_t>(field);
    const std::string dim = "ne[" + std::to_string(i) + "] = " + std::to_string(ne);
    if (ne > static_cast<uint64_t>(INT64_MAX)) r.fail(field, dim + " does not fit int64");
    if (__builtin_mul_overflow(elements, static_cast<int64_t>(ne), &elements)) {
      r.fail(field, dim + " makes the element count overflow int64");
    }
    info.shape[n_dims - 1 - i] = static_cast<int64_t>(ne);
  }
  info.ggml_type = r.read<uint32_t>(field);
  const std::string type_name = std::string(ggml_type_name(info.ggml_type));
  const std::optional<GgmlBlockLayout> layout = ggml_block_layout(info.ggml_type);
  if (!layout) {
    r.fail(field, "ggml type " + std::to_string(info.ggml_type) + " (" + type_name +
                      ") is not a tensor type GGUF files can hold");
  }
  const int64_t row = info.shape.back();
  if (row % layout->block_size != 0) {
    r.fail(field, "row length ne[0] = " + std::to_string(row) + " is not a multiple of the " +
                      type_name + " block size " + std::to_string(layout->block_size));
  }
  uint64_t nbytes = layout->row_bytes(row);
  for (uint32_t i = 0; i + 1 < n_dims; ++i) {
    if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(info.shape[i]), &nbytes)) {
      r.fail(field, "byte size of shape " + baton::to_string(info.shape) + " overflows");
    }
  }
  info.nbytes = nbytes;
  info.offset = r.read<uint64_t>(field);
  if (info.offset % alignment != 0) {
    r.fail(field, "offset " + std::to_string(info.offset) + " is not a multiple of the alignment " +
                      std::to_string(alignment));
  }
  return info;
}

void check_data_range(const ByteReader& r, const TensorInfo& info, uint64_t data_offset) {
  const uint64_t size = r.size();
  if (data_offset > size || info.offset > size - data_offset ||
      info.nbytes > size - data_offset - info.offset) {
    r.fail("tensor '" + printable(info.name) + "'",
           "data [offset " + std::to_string(info.offset) + ", " + std::to_string(info.nbytes) +
               " bytes] extends past end of file (data section at " + std::to_string(data_offset) +
               ", file size " + std::to_string(size) + ")");
  }
}

struct ParsedFile {
  uint32_t version = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;
  std::vector<std::pair<std::string, Value>> metadata;
  std::vector<TensorInfo> tensors;
};

// Checks the whole layout before building metadata values, so that no allocation depends on a
// count that a later check would have rejected.
ParsedFile parse(ByteReader& r) {
  ParsedFile file;
  const uint32_t magic = r.read<uint32_t>("magic");
  if (magic != kMagic) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%08x", magic);
    r.fail("magic",
           std::string("expected \"GGUF\" (0x46554747), found ") + hex + "; not a GGUF file");
  }
  file.version = read_version(r);
  const uint64_t tensor_count = read_count(r, "tensor_count", kMinTensorInfoBytes);
  const uint64_t kv_count = read_count(r, "metadata_kv_count", kMinKeyValueBytes);

  const std::vector<KeyEntry> entries = scan_metadata(r, kv_count);
  file.alignment = read_alignment(r, entries);

  file.tensors.reserve(tensor_count);
  std::unordered_set<std::string> names;
  for (uint64_t i = 0; i < tensor_count; ++i) {
    file.tensors.push_back(read_tensor_info(r, i, file.alignment));
    if (!names.insert(file.tensors.back().name).second) {
      r.fail("tensor '" + printable(file.tensors.back().name) + "'", "duplicate tensor name");
    }
  }
  file.data_offset = (r.position() + file.alignment - 1) / file.alignment * file.alignment;
  for (const TensorInfo& info : file.tensors) check_data_range(r, info, file.data_offset);

  file.metadata.reserve(entries.size());
  for (const KeyEntry& entry : entries) {
    r.seek(entry.value_offset);
    file.metadata.emplace_back(std::string(entry.key),
                               read_value(r, entry.type, key_field(entry.key), 0));
  }
  return file;
}

}  // namespace

GgufFile GgufFile::open(const std::filesystem::path& path) {
  auto mapping = std::make_shared<const MappedFile>(path);
  GgufFile file;
  file.path_ = path;
  file.bytes_ = mapping->data();
  file.size_ = mapping->size();
  file.mapping_ = mapping;
  const std::string name = path.filename().string();
  ByteReader reader(file.bytes_, file.size_, name);
  ParsedFile parsed;
  try {
    parsed = parse(reader);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCategory::kOutOfMemory, name + ": out of memory while reading the header");
  }
  file.version_ = parsed.version;
  file.alignment_ = parsed.alignment;
  file.data_offset_ = parsed.data_offset;
  file.metadata_ = std::move(parsed.metadata);
  file.tensors_ = std::move(parsed.tensors);
  for (size_t i = 0; i < file.metadata_.size(); ++i) {
    file.metadata_index_.emplace(file.metadata_[i].first, i);
  }
  for (size_t i = 0; i < file.tensors_.size(); ++i) {
    file.tensor_index_.emplace(file.tensors_[i].name, i);
  }
  return file;
}

uint64_t GgufFile::file_size() const {
  return size_;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Tensor GgufFile::tensor(std::string_view name) const {
  const std::string file_name = path_.filename().string();
  const TensorInfo* info = find_tensor(name);
  if (!info) {
    throw Error(ErrorCategory::kInvalidModel,
                file_name + ": no tensor named '" + std::string(name) + "'");
  }
  const std::optional<DType> dtype = dtype_from_ggml_type(info->ggml_type);
  if (!dtype) {
    throw Error(ErrorCategory::kUnsupported,
                file_name + ": tensor '" + printable(info->name) + "' has ggml type " +
                    std::string(ggml_type_name(info->ggml_type)) + " (" +
                    std::to_string(info->ggml_type) + "), which Baton does not implement");
  }
  // The mapping is read-only: the const_cast only satisfies Buffer's interface.
  auto* data = const_cast<std::byte*>(bytes_ + data_offset_ + info->offset);
  return Tensor(*dtype, info->shape, wrap_mapped_file(data, info->nbytes, mapping_));
}

}  // namespace baton::gguf
