// Integer ranges as GBNF (json_number_ranges.h): an alternative per length of their numbers.
#include "core/serving/sampling/json_number_ranges.h"

#include <algorithm>
#include <vector>

#include "core/serving/sampling/gbnf_text.h"

namespace baton::detail {
namespace {

std::string repeated(char c, size_t n) {
  return std::string(n, c);
}

// The decimal forms of the integers in [low, high], 0 <= low <= high, all of one length.
std::string same_length_range(const std::string& low, const std::string& high) {
  if (low.size() == 1) {
    return low == high ? gbnf::literal(low)
                       : gbnf::char_class({{uint32_t(low[0]), uint32_t(high[0])}}, false);
  }
  if (low[0] == high[0]) {
    return gbnf::literal(low.substr(0, 1)) + " " + same_length_range(low.substr(1), high.substr(1));
  }
  const size_t rest = low.size() - 1;
  const bool low_rest_zeros = low.find_first_not_of('0', 1) == std::string::npos;
  const bool high_rest_nines = high.find_first_not_of('9', 1) == std::string::npos;
  std::vector<std::string> parts;
  char first = low[0], last = high[0];
  if (!low_rest_zeros) {
    parts.push_back(gbnf::literal(low.substr(0, 1)) + " (" +
                    same_length_range(low.substr(1), repeated('9', rest)) + ")");
    ++first;
  }
  if (!high_rest_nines) --last;
  if (first <= last) {
    parts.push_back(gbnf::char_class({{uint32_t(first), uint32_t(last)}}, false) + " [0-9]{" +
                    std::to_string(rest) + "}");
  }
  if (!high_rest_nines) {
    parts.push_back(gbnf::literal(high.substr(0, 1)) + " (" +
                    same_length_range(repeated('0', rest), high.substr(1)) + ")");
  }
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : " | ") + part;
  return "(" + out + ")";
}

}  // namespace

std::string non_negative_range(int64_t low, int64_t top) {
  std::string out;
  int64_t band_low = 0, band_high = 9;
  while (band_low <= top) {
    const int64_t from = std::max(low, band_low), to = std::min(top, band_high);
    if (from <= to) {
      out +=
          (out.empty() ? "" : " | ") + same_length_range(std::to_string(from), std::to_string(to));
    }
    band_low = band_high + 1;
    band_high = band_high * 10 + 9;
  }
  return "(" + out + ")";
}

}  // namespace baton::detail
