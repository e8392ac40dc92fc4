#include "tools/length_head/length_record.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "baton/error.h"

namespace baton {

std::string to_json_line(const LengthRecord& record) {
  const nlohmann::json line = {{"prompt_tokens", record.prompt_tokens},
                               {"max_tokens", record.max_tokens},
                               {"has_stop", record.has_stop},
                               {"expected_tokens", record.expected_tokens},
                               {"generated", record.generated}};
  return line.dump() + "\n";
}

std::vector<LengthRecord> read_length_log(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw Error(ErrorCategory::kIo, "cannot read " + path.string() + ": " + std::strerror(errno));
  }
  std::vector<LengthRecord> records;
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    if (text.empty()) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(text);
      LengthRecord r{.prompt_tokens = j.at("prompt_tokens").get<std::vector<int32_t>>(),
                     .max_tokens = j.at("max_tokens").get<int32_t>(),
                     .has_stop = j.at("has_stop").get<bool>(),
                     .expected_tokens = j.value("expected_tokens", 0),
                     .generated = j.at("generated").get<int32_t>()};
      if (r.prompt_tokens.empty() || r.max_tokens < 1 || r.generated < 0) {
        throw std::invalid_argument("an empty prompt, max_tokens below 1 or a negative length");
      }
      records.push_back(std::move(r));
    } catch (const std::exception& e) {
      throw Error(ErrorCategory::kInvalidArgument, path.string() + ":" + std::to_string(line) +
                                                       ": not a length record: " + e.what());
    }
  }
  return records;
}

}  // namespace baton
