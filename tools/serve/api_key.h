#pragma once

#include <string_view>

namespace baton::serve {

// Whether an Authorization header carries "Bearer KEY". The comparison takes the same time
// wherever the first wrong byte is, so response times do not leak the key byte by byte; only the
// header's length shows.
bool bearer_token_matches(std::string_view authorization, std::string_view key);

}  // namespace baton::serve
