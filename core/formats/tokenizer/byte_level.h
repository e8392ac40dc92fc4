#pragma once

#include <string>
#include <string_view>

// GPT-2's reversible byte <-> printable-character mapping: byte-level BPE vocabularies spell
// every byte as one visible code point (space is "Ġ", newline "Ċ") so that merges never see
// raw whitespace or control bytes.
namespace baton::byte_level {

// Each byte of text as its mapped code point, UTF-8 encoded.
std::string encode(std::string_view text);

// The inverse of encode. Code points outside the mapping (e.g. from a malformed vocabulary)
// are kept as their own UTF-8 bytes.
std::string decode(std::string_view text);

}  // namespace baton::byte_level
