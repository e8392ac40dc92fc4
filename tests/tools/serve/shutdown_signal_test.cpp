#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "tests/tools/serve/serve_test_support.h"

namespace baton::testing {
namespace {

using nlohmann::json;

// `baton serve` as a child process, as users run it; the port it picked is read from stderr.
class ServeProcess {
 public:
  explicit ServeProcess(const std::vector<std::string>& extra_args) {
    int err[2];
    EXPECT_EQ(pipe(err), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(err[1], STDERR_FILENO);
      close(err[0]);
      std::vector<std::string> args = {std::string(BATON_BINARY_DIR) + "/bin/baton",
                                       "serve",
                                       "-m",
                                       served_model().string(),
                                       "--port",
                                       "0",
                                       "-t",
                                       "1"};
      args.insert(args.end(), extra_args.begin(), extra_args.end());
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(err[1]);
    stderr_ = fdopen(err[0], "r");
    char line[1024];
    while (fgets(line, sizeof(line), stderr_)) {
      log_ += line;
      const std::string text = line;
      const size_t at = text.find("http://127.0.0.1:");
      if (at != std::string::npos) {
        port_ = std::stoi(text.substr(at + 17));
        break;
      }
    }
  }
  ~ServeProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stderr_) fclose(stderr_);
  }
  int port() const { return port_; }
  void signal(int number) { kill(pid_, number); }
  // The exit code, or -1 when it did not exit normally within `timeout`.
  int wait_exit(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* stderr_ = nullptr;
  int port_ = 0;
  bool exited_ = false;
  std::string log_;
};

// A streamed request that signals when its first chunk has arrived.
struct BackgroundStream {
  BackgroundStream(int port, int32_t max_tokens) {
    thread = std::thread([this, port, max_tokens] {
      answer = post_stream(port, "/v1/completions",
                           {{"prompt", "Once upon a time"},
                            {"max_tokens", max_tokens},
                            {"ignore_eos", true},
                            {"stream", true}},
                           [this](const StreamAnswer&) {
                             started = true;
                             return true;
                           });
      ended = true;
    });
    while (!started && !ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string finish_reason() const {
    for (const std::string& e : answer.events) {
      if (e == "[DONE]") continue;
      const json reason = json::parse(e)["choices"][0]["finish_reason"];
      if (!reason.is_null()) return reason;
    }
    return "";
  }

  std::atomic<bool> started{false};
  std::atomic<bool> ended{false};
  StreamAnswer answer;
  std::thread thread;
};

TEST(ShutdownSignal, SigtermFinishesRequestsInFlightRefusesNewOnesAndExitsZero) {
  ServeProcess serve({"--shutdown-timeout", "60"});
  ASSERT_GT(serve.port(), 0);
  BackgroundStream stream(serve.port(), 200);
  serve.signal(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const HttpAnswer refused = post_json(serve.port(), "/v1/completions", {{"prompt", "hi"}});
  // Refused while draining, or the listener is already gone: never accepted.
  EXPECT_TRUE(refused.status == 503 || refused.status == 0) << refused.status;
  stream.thread.join();
  EXPECT_EQ(stream.answer.events.back(), "[DONE]");
  EXPECT_EQ(stream.finish_reason(), "length");
  EXPECT_EQ(serve.wait_exit(std::chrono::seconds(30)), 0);
}

TEST(ShutdownSignal, SigintAfterTheTimeoutAbortsWhatIsLeftAndExitsZero) {
  ServeProcess serve({"--shutdown-timeout", "0"});
  ASSERT_GT(serve.port(), 0);
  BackgroundStream stream(serve.port(), 240);
  serve.signal(SIGINT);
  stream.thread.join();
  EXPECT_EQ(stream.answer.events.back(), "[DONE]");
  EXPECT_EQ(stream.finish_reason(), "abort");
  EXPECT_EQ(serve.wait_exit(std::chrono::seconds(30)), 0);
}

}  // namespace
}  // namespace baton::testing
