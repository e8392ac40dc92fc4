#pragma once

// Runs the built `baton` binary from a test and captures what it prints.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace baton::testing {

struct CommandResult {
  int exit_code;
  std::string out;
};

enum class Capture { kStdout, kStdoutAndStderr, kStderr };

// `args` must already be shell-quoted; `environment` ("NAME=value ...") prefixes the command. A
// binary killed by a signal fails the current test.
inline CommandResult run_baton(const std::string& args, Capture capture = Capture::kStdout,
                               const std::string& environment = "") {
  const char* redirect = capture == Capture::kStdout            ? " 2>/dev/null"
                         : capture == Capture::kStdoutAndStderr ? " 2>&1"
                                                                : " 2>&1 >/dev/null";
  const std::string cmd =
      environment + " " + std::string(BATON_BINARY_DIR) + "/bin/baton " + args + redirect;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status)) << "baton " << args << " did not exit normally (crashed?)";
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace baton::testing
