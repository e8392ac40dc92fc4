#include "core/api/handshake.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "baton/llm_options.h"
#include "tests/test_data.h"

namespace baton {
namespace {

// Another value of the same type, whatever the type.
template <typename Value>
Value other_value(const Value& value) {
  if constexpr (std::is_same_v<Value, bool>) {
    return !value;
  } else if constexpr (std::is_same_v<Value, std::string>) {
    return value + "x";
  } else if constexpr (std::is_enum_v<Value>) {
    return static_cast<Value>(static_cast<int>(value) + 1);
  } else {
    return value + 1;
  }
}

// The ranks agree on exactly the options the table marks for all ranks, each named as the table
// names it, so that a new row is checked at start-up without a line of its own.
TEST(StartUpFingerprint, CoversEveryOptionMarkedForAllRanksAndNoOther) {
  const gguf::GgufFile file = gguf::GgufFile::open(testing::demo_model());
  const std::vector<Agreed> base = start_up_fingerprint(LLMOptions{}, file);
  for_each_engine_option([&](const OptionField& field, auto member) {
    LLMOptions changed;
    changed.*member = other_value(changed.*member);
    const std::vector<Agreed> mine = start_up_fingerprint(changed, file);
    ASSERT_EQ(mine.size(), base.size());
    std::vector<std::string> differing;
    for (size_t i = 0; i < base.size(); ++i) {
      if (mine[i].value != base[i].value) differing.push_back(mine[i].what);
    }
    if (field.scope == OptionScope::kAllRanks) {
      EXPECT_EQ(differing, std::vector<std::string>{field.name});
    } else {
      EXPECT_TRUE(differing.empty()) << field.name;
    }
  });
}

}  // namespace
}  // namespace baton
