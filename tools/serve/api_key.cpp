#include "tools/serve/api_key.h"

namespace baton::serve {

bool bearer_token_matches(std::string_view authorization, std::string_view key) {
  constexpr std::string_view kScheme = "Bearer ";
  // Every byte of the header is compared against the expected header, read cyclically when the
  // header is longer, and all differences are OR-ed together: no early exit.
  unsigned char difference = authorization.size() == kScheme.size() + key.size() ? 0 : 1;
  const size_t expected_size = kScheme.size() + key.size();
  for (size_t i = 0; i < authorization.size(); ++i) {
    const size_t at = i % expected_size;
    const char expected = at < kScheme.size() ? kScheme[at] : key[at - kScheme.size()];
    difference |= static_cast<unsigned char>(authorization[i] ^ expected);
  }
  return difference == 0;
}

}  // namespace baton::serve
