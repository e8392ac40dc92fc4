// The request and connection limits of `baton serve` (docs/serving.md, "Limits"): past each one a
// clear error naming the field or the flag, and the server goes on serving.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/tools/serve/serve_test_support.h"

namespace baton::testing {
namespace {

using nlohmann::json;

void expect_refused(const HttpAnswer& a, int status, const std::string& param,
                    const std::string& says) {
  EXPECT_EQ(a.status, status) << a.body;
  ASSERT_FALSE(a.body.empty());
  const json error = a.json()["error"];
  if (!param.empty()) {
    EXPECT_EQ(error["param"], param) << a.body;
  }
  EXPECT_NE(error["message"].get<std::string>().find(says), std::string::npos) << a.body;
}

// A TCP connection that sends nothing: it holds one of the server's connection threads until the
// server's read timeout or until it closes.
class IdleConnection {
 public:
  explicit IdleConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  }
  ~IdleConnection() { close(fd_); }
  IdleConnection(const IdleConnection&) = delete;
  IdleConnection& operator=(const IdleConnection&) = delete;

 private:
  int fd_;
};

class ServerLimits : public ::testing::Test {
 protected:
  void start(serve::ServeOptions options) {
    server_ = std::make_unique<RunningServer>(std::move(options));
  }
  int port() const { return server_->port(); }

  std::unique_ptr<RunningServer> server_;
};

TEST_F(ServerLimits, RequestsPastEachLimitAre400NamingTheField) {
  start({.limits = {.max_completions = 2,
                    .max_stop_strings = 1,
                    .max_logprobs = 3,
                    .max_prompt_tokens = 5,
                    .max_output_tokens = 4}});
  const json ok = {{"prompt", "In the"}, {"max_tokens", 4}};
  EXPECT_EQ(post_json(port(), "/v1/completions", ok).status, 200);

  expect_refused(post_json(port(), "/v1/completions", {{"prompt", "In the"}, {"n", 3}}), 400, "n",
                 "between 1 and 2");
  expect_refused(
      post_json(port(), "/v1/completions", {{"prompt", "In the"}, {"best_of", 3}, {"n", 1}}), 400,
      "best_of", "at most 2");
  expect_refused(post_json(port(), "/v1/completions", {{"prompt", "In the"}, {"stop", {"a", "b"}}}),
                 400, "stop", "at most 1");
  expect_refused(post_json(port(), "/v1/completions", {{"prompt", "In the"}, {"logprobs", 4}}), 400,
                 "logprobs", "between 0 and 3");
  expect_refused(post_json(port(), "/v1/chat/completions",
                           {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                            {"logprobs", true},
                            {"top_logprobs", 4}}),
                 400, "top_logprobs", "between 0 and 3");
  expect_refused(post_json(port(), "/v1/completions",
                           {{"prompt", "In the beginning God created the heaven and the earth"}}),
                 400, "prompt", "at most 5");
  expect_refused(post_json(port(), "/v1/completions", {{"prompt", "In the"}, {"max_tokens", 5}}),
                 400, "max_tokens", "at most 4");
  // TGI's route answers in TGI's error format.
  const HttpAnswer tgi = post_json(port(), "/generate",
                                   {{"inputs", "In the"}, {"parameters", {{"max_new_tokens", 9}}}});
  EXPECT_EQ(tgi.status, 422);
  EXPECT_NE(tgi.json()["error"].get<std::string>().find("at most 4"), std::string::npos);

  // Without max_tokens, a request gets what the limit allows rather than an error.
  const HttpAnswer chat =
      post_json(port(), "/v1/chat/completions",
                {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"ignore_eos", true}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.json()["usage"]["completion_tokens"], 4);
}

TEST_F(ServerLimits, BadLimitFlagsFailAtStartNamingTheFlag) {
  for (const cli::RequestLimits& limits :
       {cli::RequestLimits{.max_completions = 0}, cli::RequestLimits{.max_logprobs = 21},
        cli::RequestLimits{.max_prompt_tokens = -1}}) {
    try {
      RunningServer server(serve::ServeOptions{.limits = limits});
      ADD_FAILURE() << "the server started";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("--max-"), std::string::npos) << e.what();
    }
  }
}

TEST_F(ServerLimits, ConnectionsPastTheLimitGet503AndTheServerRecovers) {
  start({.max_queue = 1, .max_connections = 2});
  {
    const IdleConnection first(port());
    const IdleConnection second(port());
    // Connections are handed to threads as they are accepted: give the server that moment.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const HttpAnswer refused = post_json(port(), "/v1/completions", {{"prompt", "hi"}});
    expect_refused(refused, 503, "", "--max-connections");
    EXPECT_EQ(refused.headers.find("Retry-After")->second, "1");
    EXPECT_EQ(get(port(), "/health").status, 503);
  }
  // Closed connections free their threads at once.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (status != 200 && std::chrono::steady_clock::now() < deadline) {
    status = post_json(port(), "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 2}}).status;
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(status, 200);
}

}  // namespace
}  // namespace baton::testing
