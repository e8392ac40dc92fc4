// LoRA adapters served by name: /v1/models lists them under the base, a request's "model" picks
// one, an unknown name is 404, and /metrics counts each adapter's requests and tokens.

#include <gtest/gtest.h>

#include "core/formats/gguf/gguf_file.h"
#include "models/model_config.h"
#include "tests/temp_file.h"
#include "tests/tools/serve/serve_test_support.h"
#include "tools/model_tools/synthetic_lora.h"

namespace baton {
namespace {

using nlohmann::json;
using testing::get;
using testing::post_json;

class LoraServer : public ::testing::Test {
 protected:
  LoraServer() : adapter_("serve_lora.gguf") {
    const ModelConfig config = read_model_config(gguf::GgufFile::open(testing::served_model()));
    write_gguf_lora(adapter_.path(), config.architecture, random_lora(config, 8, 31), 16.0f);
    serve::ServeOptions options;
    options.model.lora = {{.name = "psalms", .path = adapter_.str()}};
    server_ = std::make_unique<testing::RunningServer>(options);
  }
  int port() const { return server_->port(); }

  std::string complete(const std::string& model) {
    const testing::HttpAnswer a = post_json(
        port(), "/v1/completions",
        {{"model", model}, {"prompt", "In the beginning"}, {"max_tokens", 12}, {"temperature", 0}});
    EXPECT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(a.json()["model"], model);
    return a.json()["choices"][0]["text"];
  }

  testing::TempFile adapter_;
  std::unique_ptr<testing::RunningServer> server_;
};

TEST_F(LoraServer, ModelsListTheAdapterUnderItsBase) {
  const json data = get(port(), "/v1/models").json()["data"];
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0]["id"], "kjv-7m-f16");
  EXPECT_TRUE(data[0]["parent"].is_null());
  EXPECT_EQ(data[1]["id"], "psalms");
  EXPECT_EQ(data[1]["parent"], "kjv-7m-f16");
  EXPECT_EQ(data[1]["root"], adapter_.str());
}

TEST_F(LoraServer, TheModelFieldPicksTheAdapter) {
  const std::string adapted = complete("psalms");
  EXPECT_NE(adapted, complete("kjv-7m-f16"));
  EXPECT_EQ(adapted, complete("psalms"));
  const testing::HttpAnswer chat = post_json(port(), "/v1/chat/completions",
                                             {{"model", "psalms"},
                                              {"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                                              {"max_tokens", 4}});
  EXPECT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.json()["model"], "psalms");

  const std::string metrics = get(port(), "/metrics").body;
  EXPECT_NE(metrics.find("baton_lora_requests_total{adapter=\"psalms\"} 3"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("baton_lora_generation_tokens_total{adapter=\"psalms\"}"),
            std::string::npos);
}

TEST_F(LoraServer, AnUnknownAdapterIs404InOpenAisErrorFormat) {
  const testing::HttpAnswer a =
      post_json(port(), "/v1/completions", {{"model", "proverbs"}, {"prompt", "In"}});
  EXPECT_EQ(a.status, 404) << a.body;
  EXPECT_EQ(a.json()["error"]["type"], "model_not_found");
  EXPECT_EQ(a.json()["error"]["param"], "model");
  EXPECT_NE(a.json()["error"]["message"].get<std::string>().find("psalms"), std::string::npos)
      << "the error lists what is served";
}

// vLLM's runtime routes: an adapter loaded while serving answers by its name, one unloaded is
// 404 again, and bad bodies or paths are 400 with the reason.
TEST(LoraServerRuntime, AdaptersLoadAndUnloadWhileServing) {
  const ModelConfig config = read_model_config(gguf::GgufFile::open(testing::served_model()));
  testing::TempFile adapter("serve_runtime_lora.gguf");
  write_gguf_lora(adapter.path(), config.architecture, random_lora(config, 8, 32), 16.0f);
  serve::ServeOptions options;
  options.allow_runtime_lora = true;
  testing::RunningServer server(options);
  const int port = server.port();
  const json request = {
      {"model", "job"}, {"prompt", "In the beginning"}, {"max_tokens", 8}, {"temperature", 0}};
  EXPECT_EQ(post_json(port, "/v1/completions", request).status, 404);

  const testing::HttpAnswer loaded = post_json(
      port, "/v1/load_lora_adapter", {{"lora_name", "job"}, {"lora_path", adapter.str()}});
  EXPECT_EQ(loaded.status, 200) << loaded.body;
  const testing::HttpAnswer adapted = post_json(port, "/v1/completions", request);
  EXPECT_EQ(adapted.status, 200) << adapted.body;
  EXPECT_EQ(get(port, "/v1/models").json()["data"].size(), 2u);

  EXPECT_EQ(
      post_json(port, "/v1/load_lora_adapter", {{"lora_name", "job"}, {"lora_path", adapter.str()}})
          .status,
      400)
      << "the name is taken";
  const testing::HttpAnswer missing = post_json(
      port, "/v1/load_lora_adapter", {{"lora_name", "ruth"}, {"lora_path", "/nonexistent"}});
  EXPECT_EQ(missing.status, 400) << missing.body;
  EXPECT_NE(missing.body.find("/nonexistent"), std::string::npos) << missing.body;
  EXPECT_EQ(post_json(port, "/v1/load_lora_adapter", {{"lora_name", "ruth"}}).status, 400);

  EXPECT_EQ(post_json(port, "/v1/unload_lora_adapter", {{"lora_name", "job"}}).status, 200);
  EXPECT_EQ(post_json(port, "/v1/completions", request).status, 404);
  EXPECT_EQ(post_json(port, "/v1/unload_lora_adapter", {{"lora_name", "job"}}).status, 404);
}

TEST(LoraServerRuntime, TheRoutesAreAbsentUnlessAllowed) {
  testing::RunningServer server(serve::ServeOptions{});
  EXPECT_EQ(post_json(server.port(), "/v1/load_lora_adapter", {{"lora_name", "x"}}).status, 404);
}

}  // namespace
}  // namespace baton
