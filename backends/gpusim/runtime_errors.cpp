#include "backends/gpusim/runtime_errors.h"

#include <deque>
#include <map>
#include <mutex>

namespace gpusim {
namespace {

thread_local Error last_error = kSuccess;

std::mutex messages_mutex;
// Never shrinks, so the pointers get_error_string hands out stay valid; errors are rare.
std::deque<std::string> messages;
std::map<Error, const char*> latest;

}  // namespace

Error fail(Error error, const std::string& message) {
  last_error = error;
  std::lock_guard lock(messages_mutex);
  const std::string text = "gpusim: " + message;
  // A faulted stream reports the same fault on every later call: keep one copy of it.
  if (const auto it = latest.find(error); it != latest.end() && text == it->second) return error;
  messages.push_back(text);
  latest[error] = messages.back().c_str();
  return error;
}

Error get_last_error() {
  const Error error = last_error;
  last_error = kSuccess;
  return error;
}

const char* get_error_string(Error error) {
  {
    std::lock_guard lock(messages_mutex);
    if (const auto it = latest.find(error); it != latest.end()) return it->second;
  }
  switch (error) {
    case kSuccess:
      return "no error";
    case kErrorInvalidValue:
      return "invalid argument";
    case kErrorMemoryAllocation:
      return "out of memory";
    case kErrorInvalidConfiguration:
      return "invalid launch configuration";
    case kErrorKernelFault:
      return "a kernel faulted";
    case kErrorInvalidDevice:
      return "invalid device ordinal";
  }
  return "unknown error";
}

}  // namespace gpusim
