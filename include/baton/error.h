#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "baton/export.h"

namespace baton {

// What kind of failure an Error reports; the C API maps each to a distinct return code.
enum class ErrorCategory {
  kInvalidArgument,  // a caller passed a bad value (flag, parameter, request field)
  kInvalidModel,     // a model file is corrupt, truncated or inconsistent
  kUnsupported,      // well-formed input that Baton does not implement (architecture, dtype, op)
  kBackend,          // a backend is missing, unusable here, or failed
  kIo,               // a file could not be opened, read or mapped
  kOutOfMemory,      // an allocation or the KV cache pool ran out
  kInternal,         // a broken invariant inside Baton
};

BATON_API std::string_view to_string(ErrorCategory category);

// The one exception type thrown across Baton's API boundaries. The message names the bad value.
class BATON_API Error : public std::runtime_error {
 public:
  Error(ErrorCategory category, const std::string& message)
      : std::runtime_error(message), category_(category) {}

  ErrorCategory category() const { return category_; }

 private:
  ErrorCategory category_;
};

}  // namespace baton
