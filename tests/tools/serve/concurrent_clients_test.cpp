#include <thread>

#include "baton/llm.h"
#include "tests/models/greedy_params.h"
#include "tests/temp_file.h"
#include "tests/tools/serve/serve_test_support.h"
#include "tools/model_tools/quantize_model.h"

namespace baton::testing {
namespace {

using nlohmann::json;

constexpr int kClients = 16;

std::string prompt_of(int client) {
  static const char* const kStarts[] = {"Once upon a time", "The little dog", "Lily wanted",
                                        "One day, Tom",     "The sun was",    "She saw a"};
  return std::string(kStarts[client % 6]) + (client >= 6 ? " and" : "") +
         (client >= 12 ? " then" : "");
}

TEST(ConcurrentClients, SixteenClientsEachGetTheirOfflineGreedyOutput) {
  // An f32 copy of the model: f32 weights take the same kernel at every batch size, so a greedy
  // answer cannot depend on which other requests shared its steps. (The demo model's f16 weights
  // switch to a bf16 GEMM from a few rows of x, which may flip a near-tie.)
  TempFile f32_model("concurrent_clients_f32.gguf");
  quantize_model(served_model(), f32_model.path(), *find_quantize_preset("f32"));
  std::vector<std::string> expected(kClients);
  {
    LLM llm({.model = f32_model.str(), .threads = 1});
    for (int i = 0; i < kClients; ++i) expected[i] = llm.generate(prompt_of(i), greedy(48)).text;
  }
  serve::ServeOptions options;
  options.model.model = f32_model.str();
  RunningServer server(options);
  std::vector<std::string> answers(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      // Half stream, half wait for the whole answer; both ride in the same engine steps.
      const json request = {
          {"prompt", prompt_of(i)}, {"max_tokens", 48}, {"temperature", 0}, {"stream", i % 2 == 1}};
      if (i % 2 == 0) {
        const HttpAnswer a = post_json(server.port(), "/v1/completions", request);
        answers[i] = a.status == 200 ? a.json()["choices"][0]["text"].get<std::string>()
                                     : "HTTP " + std::to_string(a.status) + " " + a.body;
        return;
      }
      const StreamAnswer s = post_stream(server.port(), "/v1/completions", request);
      if (s.status != 200) answers[i] = "HTTP " + std::to_string(s.status) + " " + s.raw;
      for (const std::string& event : s.events) {
        if (event != "[DONE]") answers[i] += json::parse(event)["choices"][0]["text"];
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < kClients; ++i) {
    EXPECT_EQ(answers[i], expected[i]) << "client " << i << " prompt '" << prompt_of(i) << "'";
  }
  const std::string metrics = get(server.port(), "/metrics").body;
  EXPECT_NE(metrics.find("baton_e2e_request_latency_seconds_count 16"), std::string::npos);
}

}  // namespace
}  // namespace baton::testing
