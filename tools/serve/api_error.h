#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace baton::serve {

// A request the server answers with an HTTP error: the status, the OpenAI error type and the
// request field at fault (empty when no single field is).
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, std::string param = "",
           std::string type = "invalid_request_error")
      : std::runtime_error(message),
        status_(status),
        param_(std::move(param)),
        type_(std::move(type)) {}

  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const std::string& type() const { return type_; }

 private:
  int status_;
  std::string param_;
  std::string type_;
};

// Whether `object` holds `key` with the value `expected`; false, never an exception, for a value
// of another type (nlohmann's value(key, default) throws for those).
template <typename Json>
bool has_value(const Json& object, const char* key, const char* expected) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() && *it == expected;
}

// 400: the field `param` is missing, of the wrong type or out of range.
inline ApiError bad_field(const std::string& param, const std::string& why) {
  return ApiError(400, "'" + param + "' " + why, param);
}

// A request the engine finished with an error: 400 when it refused the request, 503 when it
// failed to run it (StreamEvent::unavailable).
inline ApiError event_error(const std::string& message, bool unavailable) {
  return unavailable ? ApiError(503, message, "", "server_error") : ApiError(400, message);
}

// The body OpenAI's API sends with an error: {"error": {"message", "type", "param", "code"}}.
nlohmann::json openai_error_body(const ApiError& error);

}  // namespace baton::serve
