#pragma once

// Starts a real `baton serve` server in the test process on a free loopback port, and talks HTTP
// to it the way clients do.

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "baton/llm.h"
#include "tests/test_data.h"
#include "tools/serve/http_server.h"

namespace baton::testing {

// The bundled demo model: every clone has it, so the server tests never skip.
inline std::filesystem::path served_model() {
  return demo_model();
}

// A server running on its own thread for the lifetime of the object.
class RunningServer {
 public:
  explicit RunningServer(serve::ServeOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    if (options.model.model.empty()) options.model.model = served_model().string();
    if (options.model.threads == 0) options.model.threads = 1;
    server_ = std::make_unique<serve::Server>(options);
    thread_ = std::thread([this] { server_->run(); });
  }
  ~RunningServer() {
    server_->shutdown();
    thread_.join();
  }
  int port() const { return server_->port(); }
  serve::Server& server() { return *server_; }

 private:
  std::unique_ptr<serve::Server> server_;
  std::thread thread_;
};

// A fresh server with `options()` for each test.
class ServedModelTest : public ::testing::Test {
 protected:
  void SetUp() override { server_ = std::make_unique<RunningServer>(options()); }
  virtual serve::ServeOptions options() const { return {}; }
  int port() const { return server_->port(); }

 private:
  std::unique_ptr<RunningServer> server_;
};

// The served model's greedy continuation of `prompt`, generated offline.
inline std::string offline_greedy(const std::string& prompt, int32_t max_tokens,
                                  bool ignore_eos = false) {
  LLM llm({.model = served_model().string(), .threads = 1});
  GenerationParams params;
  params.sampling.temperature = 0;
  params.max_tokens = max_tokens;
  params.ignore_eos = ignore_eos;
  return llm.generate(prompt, params).text;
}

struct HttpAnswer {
  int status = 0;  // 0: no answer (connection failed)
  std::string body;
  httplib::Headers headers;
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

inline HttpAnswer post(int port, const std::string& path, const std::string& body,
                       const httplib::Headers& headers = {}) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(std::chrono::seconds(120));
  const httplib::Result result = client.Post(path.c_str(), headers, body, "application/json");
  if (!result) return {.body = httplib::to_string(result.error())};
  return {result->status, result->body, result->headers};
}

inline HttpAnswer post_json(int port, const std::string& path, const nlohmann::json& body,
                            const httplib::Headers& headers = {}) {
  return post(port, path, body.dump(), headers);
}

// A body the server must answer with 400, naming `param` and saying `says` in the message.
inline void expect_refused(int port, const std::string& path, const nlohmann::json& body,
                           const std::string& param, const std::string& says) {
  const HttpAnswer a = post_json(port, path, body);
  EXPECT_EQ(a.status, 400) << body << ": " << a.body;
  if (a.status != 400) return;
  EXPECT_EQ(a.json()["error"]["param"], param) << a.body;
  EXPECT_NE(a.body.find(says), std::string::npos) << a.body;
}

inline HttpAnswer get(int port, const std::string& path, const httplib::Headers& headers = {}) {
  httplib::Client client("127.0.0.1", port);
  const httplib::Result result = client.Get(path.c_str(), headers);
  if (!result) return {};
  return {result->status, result->body, result->headers};
}

// A streamed answer: the `data:` payloads in order and when each network read arrived.
struct StreamAnswer {
  int status = 0;
  std::vector<std::string> events;
  std::vector<std::chrono::steady_clock::time_point> reads;
  std::string raw;
};

// Posts and reads the body as it arrives; `keep_reading` (given the events so far) returning
// false closes the connection mid-stream, as a client that goes away does.
inline StreamAnswer post_stream(int port, const std::string& path, const nlohmann::json& body,
                                const std::function<bool(const StreamAnswer&)>& keep_reading = {}) {
  StreamAnswer answer;
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(std::chrono::seconds(120));
  httplib::Request request;
  request.method = "POST";
  request.path = path;
  request.body = body.dump();
  request.set_header("Content-Type", "application/json");
  std::string pending;
  request.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    answer.reads.push_back(std::chrono::steady_clock::now());
    answer.raw.append(data, size);
    pending.append(data, size);
    for (size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
      const std::string event = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (event.starts_with("data: ")) answer.events.push_back(event.substr(6));
    }
    return !keep_reading || keep_reading(answer);
  };
  httplib::Response response;
  httplib::Error error;
  client.send(request, response, error);
  answer.status = response.status;
  return answer;
}

// The value of an unlabelled Prometheus sample in a /metrics text, or -1 when absent.
inline double metric_value(const std::string& metrics, const std::string& name) {
  const size_t at = metrics.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + name.size() + 2));
}

}  // namespace baton::testing
