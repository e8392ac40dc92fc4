#include "tools/bench_serve/prompt_dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "baton/error.h"

namespace baton::bench_serve {
namespace {

// A dataset file with the given contents, removed when the test ends.
class DatasetFile {
 public:
  explicit DatasetFile(const std::string& contents)
      : path_((std::filesystem::temp_directory_path() /
               ("baton_dataset_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                  .string()) {
    std::ofstream(path_) << contents;
  }
  ~DatasetFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string load_error(const std::string& contents) {
  const DatasetFile f(contents);
  try {
    load_prompt_dataset(f.path(), 1, 16);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(f.path()), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << contents;
  return "";
}

TEST(PromptDataset, JsonLinesGivePromptsAndTheirMaxTokens) {
  const DatasetFile f("{\"prompt\": \"one\", \"max_tokens\": 5}\n\n{\"prompt\": \"two\"}\n");
  const std::vector<Prompt> p = load_prompt_dataset(f.path(), 2, 16);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].text, "one");
  EXPECT_EQ(p[0].max_tokens, 5);
  EXPECT_EQ(p[1].text, "two");
  EXPECT_EQ(p[1].max_tokens, 16);
}

TEST(PromptDataset, ShareGptTakesTheFirstTurnAndSkipsEmptyConversations) {
  const DatasetFile f(R"([
    {"id": "a", "conversations": [{"from": "human", "value": "hello"},
                                  {"from": "gpt", "value": "hi"}]},
    {"id": "b", "conversations": []},
    {"id": "c", "conversations": [{"from": "human", "value": "bye"}]}
  ])");
  const std::vector<Prompt> p = load_prompt_dataset(f.path(), 2, 32);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].text, "hello");
  EXPECT_EQ(p[1].text, "bye");
  EXPECT_EQ(p[1].max_tokens, 32);
}

TEST(PromptDataset, FewerRecordsThanRequestsAreCycled) {
  const DatasetFile f("{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n");
  const std::vector<Prompt> p = load_prompt_dataset(f.path(), 5, 8);
  std::vector<std::string> texts;
  for (const Prompt& x : p) texts.push_back(x.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"a", "b", "a", "b", "a"}));
}

TEST(PromptDataset, MissingFileIsAnIoErrorNamingIt) {
  try {
    load_prompt_dataset("/nonexistent/prompts.jsonl", 1, 8);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::kIo);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/prompts.jsonl"), std::string::npos);
  }
}

TEST(PromptDataset, BadRecordsAreErrorsNamingWhere) {
  EXPECT_NE(load_error("{\"prompt\": \"ok\"}\nnot json\n").find("line 2"), std::string::npos);
  EXPECT_NE(load_error("{\"text\": \"x\"}\n").find("\"prompt\""), std::string::npos);
  EXPECT_NE(load_error("{\"prompt\": \"x\", \"max_tokens\": 0}\n").find("max_tokens"),
            std::string::npos);
  EXPECT_NE(load_error("[{\"conversations\": [{\"from\": \"human\"}]}]").find("record 0"),
            std::string::npos);
  EXPECT_NE(load_error("[1, 2").find("not valid JSON"), std::string::npos);
  EXPECT_NE(load_error("\n\n").find("has no prompts"), std::string::npos);
}

TEST(PromptDataset, RandomPromptsHaveTheWordCountAndAreReproducible) {
  const std::vector<Prompt> a = random_prompts(8, 50, 64, 1);
  ASSERT_EQ(a.size(), 8u);
  std::set<std::string> distinct;
  for (const Prompt& p : a) {
    std::istringstream words(p.text);
    int n = 0;
    for (std::string w; words >> w;) ++n;
    EXPECT_EQ(n, 50);
    EXPECT_EQ(p.max_tokens, 64);
    distinct.insert(p.text);
  }
  EXPECT_EQ(distinct.size(), a.size());
  const std::vector<Prompt> again = random_prompts(8, 50, 64, 1);
  const std::vector<Prompt> other = random_prompts(8, 50, 64, 2);
  EXPECT_EQ(again[3].text, a[3].text);
  EXPECT_NE(other[3].text, a[3].text);
}

}  // namespace
}  // namespace baton::bench_serve
