#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

#include "baton/error.h"
#include "baton/llm_options.h"
#include "baton/option_values.h"
#include "core/runtime/option_ranges.h"

namespace baton {
namespace {

template <typename Enum>
void expect_names_round_trip() {
  for (const auto& entry : OptionEnum<Enum>::names) {
    EXPECT_EQ(parse_option_value<Enum>("option", entry.name), entry.value) << entry.name;
    // The value's own name is the first listed, which aliases never displace.
    EXPECT_EQ(parse_option_value<Enum>("option", option_value_name(entry.value)), entry.value);
  }
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(OptionTable, EveryEnumOptionsNamesRoundTrip) {
  expect_names_round_trip<SchedulingPolicy>();
  expect_names_round_trip<KvReservation>();
  expect_names_round_trip<GrammarMasks>();
  expect_names_round_trip<KvCacheType>();
  expect_names_round_trip<LoraType>();
  EXPECT_EQ(parse_option_value<LoraType>("lora_dtype", "float32"), LoraType::kF32);
  EXPECT_EQ(parse_option_value<LoraType>("lora_dtype", "auto"), LoraType::kF16);  // vLLM's
  EXPECT_STREQ(option_value_name(LoraType::kF32), "f32");
}

TEST(OptionTable, AnUnknownValueNamesTheOptionAndWhatItTakes) {
  EXPECT_EQ(message_of([] { parse_option_value<SchedulingPolicy>("scheduling_policy", "lifo"); }),
            "unknown scheduling_policy 'lifo' (use fcfs, priority or sjf)");
  // Aliases are accepted but not offered.
  EXPECT_EQ(message_of([] { parse_option_value<LoraType>("lora_dtype", "q4"); }),
            "unknown lora_dtype 'q4' (use f16 or f32)");
}

TEST(OptionTable, WeightTypeNamesForTheKvCacheSayWhichCacheTypeWasMeant) {
  EXPECT_NE(message_of([] {
              parse_option_value<KvCacheType>("kv_cache_dtype", "int8");
            }).find("the KV cache's int8 is int8_scaled"),
            std::string::npos);
  EXPECT_NE(
      message_of([] { parse_option_value<KvCacheType>("kv_cache_dtype", "fp8"); }).find("fp8_e4m3"),
      std::string::npos);
}

TEST(OptionTable, TheDefaultsAreInRange) {
  EXPECT_NO_THROW(check_option_ranges(LLMOptions{}));
}

TEST(OptionTable, AValueOutOfRangeIsRefusedNamingTheOption) {
  LLMOptions o;
  o.max_seqs = 0;
  EXPECT_EQ(message_of([&] { check_option_ranges(o); }), "max_seqs must be at least 1, got 0");
  o = {};
  o.sjf_max_wait_s = 0;
  EXPECT_EQ(message_of([&] { check_option_ranges(o); }), "sjf_max_wait_s must be above 0, got 0");
  o = {};
  o.kv_cache_mib = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(message_of([&] { check_option_ranges(o); }).find("kv_cache_mib must be at least 0"),
            std::string::npos);
}

// Every row reaches the CLI and Python under a name and a flag of its own, with help to show.
TEST(OptionTable, EveryRowHasItsOwnNameFlagAndHelp) {
  std::set<std::string> names, flags;
  int rows = 0;
  for_each_engine_option([&](const OptionField& field, auto member) {
    ++rows;
    EXPECT_TRUE(names.insert(field.name).second) << field.name;
    EXPECT_TRUE(flags.insert(field.flag).second) << field.flag;
    EXPECT_EQ(field.flag[0], '-') << field.name;
    EXPECT_GT(std::string(field.help).size(), 10u) << field.name;
    using Value = std::remove_cvref_t<decltype(LLMOptions{}.*member)>;
    // A negative flag sets false: the default it turns off must be true.
    if constexpr (std::is_same_v<Value, bool>) {
      if (std::string(field.flag).find("{false}") != std::string::npos) {
        EXPECT_TRUE(LLMOptions{}.*member) << field.name;
      }
    }
  });
  EXPECT_GE(rows, 20);
}

}  // namespace
}  // namespace baton
