#include <gtest/gtest.h>

#include "baton/error.h"
#include "tests/temp_file.h"
#include "tests/tools/serve/serve_test_support.h"
#include "tools/length_head/length_record.h"

namespace baton::testing {
namespace {

// Every finished request is a line of the log: the prompt as the engine took it, its settings
// and the length of its answer, as the response's usage counts them.
TEST(LengthLog, LogsEachFinishedRequestAsItsUsageCountsIt) {
  const TempFile log("length.jsonl");
  {
    serve::ServeOptions options;
    options.length_log = log.str();
    RunningServer server(options);
    const HttpAnswer plain =
        post_json(server.port(), "/v1/completions",
                  {{"prompt", "And God said"}, {"max_tokens", 12}, {"temperature", 0}});
    ASSERT_EQ(plain.status, 200) << plain.body;
    const HttpAnswer stopped = post_json(server.port(), "/v1/completions",
                                         {{"prompt", "In the beginning"},
                                          {"max_tokens", 20},
                                          {"stop", {"\n"}},
                                          {"expected_tokens", 7},
                                          {"temperature", 0}});
    ASSERT_EQ(stopped.status, 200) << stopped.body;
    const std::vector<LengthRecord> records = read_length_log(log.path());
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].max_tokens, 12);
    EXPECT_FALSE(records[0].has_stop);
    EXPECT_EQ(records[0].expected_tokens, 0);
    EXPECT_EQ(static_cast<int>(records[0].prompt_tokens.size()),
              plain.json()["usage"]["prompt_tokens"].get<int>());
    EXPECT_EQ(records[0].generated, plain.json()["usage"]["completion_tokens"].get<int>());
    EXPECT_EQ(records[1].max_tokens, 20);
    EXPECT_TRUE(records[1].has_stop);
    EXPECT_EQ(records[1].expected_tokens, 7);
    EXPECT_EQ(records[1].generated, stopped.json()["usage"]["completion_tokens"].get<int>());
  }
  serve::ServeOptions unwritable;
  unwritable.length_log = "/nonexistent-dir/length.jsonl";
  try {
    RunningServer server(unwritable);
    FAIL() << "a log that cannot be opened was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--length-log"), std::string::npos) << e.what();
  }
}

// Only a whole answer of one completion from the base model is a length to learn from.
TEST(LengthLog, LeavesOutAbortsSeveralCompletionsAdaptersAndBeams) {
  const TempFile file("length_filtered.jsonl");
  serve::LengthLog log(file.path());
  GenerationOutput answer;
  answer.prompt_tokens = {1, 2, 3};
  answer.tokens = {4, 5};
  answer.finish_reason = FinishReason::kStop;
  GenerationOutput aborted = answer;
  aborted.finish_reason = FinishReason::kAborted;
  GenerationOutput never_tokenized = answer;
  never_tokenized.prompt_tokens.clear();
  GenerationParams plain;
  GenerationParams two = plain, best_of = plain, beams = plain, adapter = plain;
  two.n = 2;
  best_of.best_of = 3;
  beams.use_beam_search = true;
  adapter.lora = "sql";
  for (const GenerationParams& p : {two, best_of, beams, adapter}) {
    log.write(serve::LengthLog::settings_of(p), answer);
  }
  log.write(serve::LengthLog::settings_of(plain), aborted);
  log.write(serve::LengthLog::settings_of(plain), never_tokenized);
  EXPECT_TRUE(read_length_log(file.path()).empty());
  log.write(serve::LengthLog::settings_of(plain), answer);
  const std::vector<LengthRecord> records = read_length_log(file.path());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].generated, 2);
  EXPECT_EQ(records[0].prompt_tokens, answer.prompt_tokens);
}

}  // namespace
}  // namespace baton::testing
