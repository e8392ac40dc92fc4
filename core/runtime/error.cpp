#include "baton/error.h"

namespace baton {

std::string_view to_string(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::kInvalidArgument:
      return "invalid argument";
    case ErrorCategory::kInvalidModel:
      return "invalid model";
    case ErrorCategory::kUnsupported:
      return "unsupported";
    case ErrorCategory::kBackend:
      return "backend error";
    case ErrorCategory::kIo:
      return "i/o error";
    case ErrorCategory::kOutOfMemory:
      return "out of memory";
    case ErrorCategory::kInternal:
      return "internal error";
  }
  return "unknown error";
}

}  // namespace baton
