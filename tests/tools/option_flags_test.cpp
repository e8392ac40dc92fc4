#include "tools/option_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton::cli {
namespace {

// Parses `args` (after the program name) into options through the table's flags.
LLMOptions parsed(std::vector<std::string> args) {
  CLI::App app;
  LLMOptions options;
  add_engine_option_flags(app, options);
  args.insert(args.begin(), "baton");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return options;
}

TEST(OptionFlags, EveryKindOfRowParsesFromItsFlag) {
  const LLMOptions o = parsed({"-t", "3", "--kv-cache-size", "1.5", "--scheduling-policy", "sjf",
                               "--no-prefix-cache", "--kv-cache-dtype", "q8_0", "--lora-dtype",
                               "float32", "--length-head", "head.bin"});
  EXPECT_EQ(o.threads, 3);
  EXPECT_EQ(o.kv_cache_mib, 1.5);
  EXPECT_EQ(o.scheduling_policy, SchedulingPolicy::kSjf);
  EXPECT_FALSE(o.prefix_caching);
  EXPECT_EQ(o.kv_cache_dtype, KvCacheType::kQ8_0);
  EXPECT_EQ(o.lora_dtype, LoraType::kF32);
  EXPECT_EQ(o.length_head, "head.bin");
  EXPECT_EQ(o.max_seqs, LLMOptions{}.max_seqs);  // untouched rows keep their defaults
}

TEST(OptionFlags, AnUnknownEnumValueIsAUsageErrorListingTheValues) {
  try {
    parsed({"--kv-reservation", "all"});
    FAIL() << "accepted";
  } catch (const CLI::ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("use none, predicted or max"), std::string::npos)
        << e.what();
  }
}

TEST(OptionFlags, HelpShowsEachRowsFlagHelpAndDefault) {
  CLI::App app;
  LLMOptions options;
  add_engine_option_flags(app, options);
  const std::string help = app.help();
  for_each_engine_option([&](const OptionField& field, auto) {
    EXPECT_NE(help.find(std::string(field.help).substr(0, 30)), std::string::npos) << field.name;
  });
  EXPECT_NE(help.find("--grammar-masks TEXT=auto"), std::string::npos) << help;
}

TEST(OptionFlags, AToolsOwnSettingTakesTheRowsFlagAndKeepsItsDefault) {
  CLI::App app;
  KvCacheType plan_cache = KvCacheType::kF16;
  add_option_flag(app, "kv_cache_dtype", plan_cache);
  EXPECT_NE(app.help().find("TEXT=f16"), std::string::npos);
  const char* argv[] = {"baton", "--kv-cache-dtype", "fp8_e4m3"};
  app.parse(3, argv);
  EXPECT_EQ(plan_cache, KvCacheType::kFp8E4M3);
}

}  // namespace
}  // namespace baton::cli
