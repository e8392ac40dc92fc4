#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/formats/gguf/gguf_file.h"
#include "core/runtime/tensor.h"

namespace baton::gguf {

// Builds a GGUF file in the layout llama.cpp writes and reads: header, metadata in the order
// added, tensor infos (dimensions innermost first), padding to the alignment, then each tensor's
// bytes in the order added, each padded to the alignment. Invalid input is rejected when it is
// added, with Error(kInvalidArgument) naming the key or tensor; write() fails with Error(kIo).
//
// llama.cpp's loader does not read arrays of arrays or tensor names of 64 bytes or more; the
// writer refuses long names and leaves nested arrays (valid GGUF) to the caller's judgement.
class GgufWriter {
 public:
  // GGUF version 3 (current) or 2 (the same little-endian layout, for older readers).
  explicit GgufWriter(uint32_t version = 3);

  // Any metadata value. Integer values may be held as int64_t or uint64_t whatever their width,
  // and must fit it; float values as double; array items must all have the array's element type.
  // `general.alignment` must be a uint32 power of two and sets the alignment.
  void add(std::string key, Value value);
  void add_string(std::string key, std::string value);
  void add_uint32(std::string key, uint32_t value);
  void add_int32(std::string key, int32_t value);
  void add_uint64(std::string key, uint64_t value);
  void add_float32(std::string key, float value);
  void add_bool(std::string key, bool value);
  void add_string_array(std::string key, const std::vector<std::string>& values);
  void add_int32_array(std::string key, std::span<const int32_t> values);
  void add_float32_array(std::string key, std::span<const float> values);
  // Adds `general.alignment` (default 32 when never set).
  void set_alignment(uint32_t alignment);
  uint64_t alignment() const { return alignment_; }

  // A host tensor; its buffer is held, not copied, until the writer goes.
  void add_tensor(std::string name, const Tensor& tensor);
  // Raw bytes in the layout of `dtype` (or of any `ggml_type` code GGUF knows, for types Baton
  // does not compute with); `shape` is outermost first. The bytes are copied.
  void add_tensor(std::string name, Shape shape, DType dtype, std::span<const std::byte> bytes);
  void add_tensor(std::string name, Shape shape, uint32_t ggml_type,
                  std::span<const std::byte> bytes);
  // Bytes made on demand: write() calls `fill` with a zeroed buffer of the tensor's size just
  // before writing it, so a model larger than memory is written holding one tensor at a time.
  using TensorFiller = std::function<void(std::span<std::byte> bytes)>;
  void add_tensor(std::string name, Shape shape, DType dtype, TensorFiller fill);
  // Bytes that are all zero, skipped rather than written, so they are a hole of a sparse file:
  // a file that only describes a model's layout (`baton plan --shape`) takes neither disk nor
  // time, whatever the model's size.
  void add_zero_tensor(std::string name, Shape shape, DType dtype);

  // Writes the file beside `path` and renames it into place, so a failed write leaves no
  // half-written file behind.
  void write(const std::filesystem::path& path) const;

 private:
  struct PendingTensor {
    std::string name;
    Shape shape;
    uint32_t ggml_type;
    uint64_t nbytes;
    std::span<const std::byte> bytes;   // empty when `fill` makes them
    std::shared_ptr<const void> owner;  // keeps `bytes` alive
    TensorFiller fill;
    bool zero = false;  // neither bytes nor fill: a hole
  };

  // Validates the name, shape and type; returns the bytes the tensor takes.
  uint64_t checked_nbytes(const std::string& name, const Shape& shape, uint32_t ggml_type) const;
  void check_tensor(const std::string& name, const Shape& shape, uint32_t ggml_type,
                    size_t nbytes) const;

  uint32_t version_;
  uint64_t alignment_ = 32;
  std::vector<std::pair<std::string, Value>> metadata_;
  std::unordered_set<std::string> keys_;
  std::vector<PendingTensor> tensors_;
  std::unordered_set<std::string> tensor_names_;
};

}  // namespace baton::gguf
