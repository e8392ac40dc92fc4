#include "tools/serve/api_error.h"

namespace baton::serve {

nlohmann::json openai_error_body(const ApiError& error) {
  return {{"error",
           {{"message", error.what()},
            {"type", error.type()},
            {"param", error.param().empty() ? nlohmann::json() : nlohmann::json(error.param())},
            {"code", error.status()}}}};
}

}  // namespace baton::serve
