#include <fstream>

#include "tests/temp_file.h"
#include "tests/tools/baton_command.h"

namespace baton::testing {
namespace {

// Runs `baton chat` on the bundled demo model (no -m) with `script` as its standard input.
CommandResult chat(const std::string& script, Capture capture) {
  TempFile input("chat_input.txt");
  std::ofstream(input.path()) << script;
  return run_baton("chat -n 12 --temp 0 -t 1 < " + input.str(), capture);
}

TEST(ChatCli, ScriptedConversationStreamsAnswersResetsAndReportsSpeed) {
  const CommandResult out = chat("Hi\n/reset\nHi\n/exit\nnot read\n", Capture::kStdout);
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_NE(out.out.find("(conversation reset)"), std::string::npos) << out.out;
  // Greedy answers to the same opening line are the same once the conversation is reset.
  const size_t reset = out.out.find("(conversation reset)");
  const std::string first = out.out.substr(2, out.out.find("\n> ") - 2);
  ASSERT_FALSE(first.empty());
  EXPECT_NE(out.out.find(first, reset), std::string::npos) << out.out;
  EXPECT_EQ(out.out.find("not read"), std::string::npos);

  const CommandResult err = chat("Hi\n", Capture::kStderr);
  EXPECT_EQ(err.exit_code, 0);
  EXPECT_NE(err.out.find("tok/s"), std::string::npos) << err.out;
  EXPECT_NE(err.out.find("/reset"), std::string::npos) << err.out;
}

TEST(ChatCli, SecondTurnSeesTheFirst) {
  // The second prompt holds the first exchange, so the greedy answer to the same line differs
  // from the first one only because the history reached the model.
  const CommandResult two = chat("Hi\nHi\n", Capture::kStdout);
  ASSERT_EQ(two.exit_code, 0);
  const size_t second_prompt = two.out.find("\n> ");
  ASSERT_NE(second_prompt, std::string::npos);
  const std::string first = two.out.substr(2, second_prompt - 2);
  const std::string second = two.out.substr(second_prompt + 3);
  EXPECT_NE(second.substr(0, first.size()), first) << two.out;
}

}  // namespace
}  // namespace baton::testing
