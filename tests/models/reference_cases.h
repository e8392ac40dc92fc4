#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/test_data.h"

namespace baton::testing {

// One case of ../shared/models/stories260K_reference.json, produced by llama2.c's run.c.
struct ReferenceCase {
  std::string expected;
  std::vector<int32_t> token_ids;  // BOS, then one id per step (prompt ids forced)
};

inline ReferenceCase reference_case(const std::string& name) {
  std::ifstream in(shared_model("stories260K_reference.json"));
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (const auto& c : doc.at("cases")) {
    if (c.at("name") == name) {
      return {c.at("expected").get<std::string>(), c.at("token_ids").get<std::vector<int32_t>>()};
    }
  }
  throw std::runtime_error("no reference case " + name);
}

}  // namespace baton::testing
