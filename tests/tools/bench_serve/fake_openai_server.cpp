#include "tests/tools/bench_serve/fake_openai_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace baton::testing {
namespace {

int64_t count_words(const std::string& text) {
  std::istringstream in(text);
  int64_t n = 0;
  for (std::string word; in >> word;) ++n;
  return n;
}

std::string event(const nlohmann::json& data) {
  return "data: " + data.dump() + "\n\n";
}

nlohmann::json text_chunk(bool chat, const std::string& text) {
  if (chat) return {{"choices", {{{"index", 0}, {"delta", {{"content", text}}}}}}};
  return {{"choices", {{{"index", 0}, {"text", text}}}}};
}

}  // namespace

FakeOpenAiServer::FakeOpenAiServer(FakeServerOptions options) : options_(options) {
  server_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"object":"list","data":[{"id":"fake-model","object":"model"}]})",
                    "application/json");
  });
  server_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    generate(req, res, false);
  });
  server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    generate(req, res, true);
  });
  // Like real servers: each small SSE write leaves at once rather than waiting for an ACK.
  server_.set_tcp_nodelay(true);
  port_ = server_.bind_to_any_port("127.0.0.1");
  EXPECT_GT(port_, 0);
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeOpenAiServer::~FakeOpenAiServer() {
  server_.stop();
  thread_.join();
}

void FakeOpenAiServer::enter() {
  const int now = ++in_flight_;
  int seen = max_in_flight_;
  while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
  }
}

void FakeOpenAiServer::generate(const httplib::Request& req, httplib::Response& res, bool chat) {
  const int n = ++requests_;
  if (options_.fail_every > 0 && n % options_.fail_every == 0) {
    res.status = 500;
    res.set_content(R"({"error":{"message":"fake failure"}})", "application/json");
    return;
  }
  const nlohmann::json body = nlohmann::json::parse(req.body);
  const int max_tokens = body.at("max_tokens").get<int>();
  const std::string prompt = chat ? body.at("messages").at(0).at("content").get<std::string>()
                                  : body.at("prompt").get<std::string>();
  const nlohmann::json usage = {{"prompt_tokens", count_words(prompt)},
                                {"completion_tokens", max_tokens}};
  const FakeServerOptions o = options_;
  enter();
  if (!body.value("stream", false)) {
    std::this_thread::sleep_for(o.first_token_delay + (max_tokens - 1) * o.token_interval);
    nlohmann::json response = {{"choices", {{{"index", 0}, {"text", "tok"}}}}};
    if (chat) response["choices"][0] = {{"index", 0}, {"message", {{"content", "tok"}}}};
    if (o.send_usage) response["usage"] = usage;
    leave();
    res.set_content(response.dump(), "application/json");
    return;
  }
  const bool include_usage = o.send_usage && body.contains("stream_options") &&
                             body["stream_options"].value("include_usage", false);
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, o, chat, max_tokens, usage, include_usage](size_t, httplib::DataSink& sink) {
        auto send = [&sink](const std::string& text) {
          const size_t half = text.size() / 2;
          return sink.write(text.data(), half) &&
                 sink.write(text.data() + half, text.size() - half);
        };
        bool open = send(": keep-alive\n\n");
        if (chat) open = open && send(event({{"choices", {{{"delta", {{"role", "assistant"}}}}}}}));
        std::this_thread::sleep_for(o.first_token_delay);
        for (int i = 0; open && i < max_tokens; ++i) {
          if (i > 0) std::this_thread::sleep_for(o.token_interval);
          open = send(event(text_chunk(chat, " tok")));
        }
        if (open && include_usage)
          open = send(event({{"choices", nlohmann::json::array()}, {"usage", usage}}));
        if (open) send("data: [DONE]\n\n");
        leave();
        sink.done();
        return true;
      });
}

int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace baton::testing
