// `mpirun ... baton` as a user runs it: the distributed commands print what one process prints,
// and launch mistakes, mismatched ranks and silent ranks end the run with one clear line.

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "core/formats/gguf/gguf_file.h"
#include "tests/temp_file.h"
#include "tests/test_data.h"
#include "tests/tools/baton_command.h"
#include "tools/model_tools/quantize_model.h"

extern char** environ;

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;
using testing::Capture;
using testing::run_baton;

std::string quoted(const std::filesystem::path& path) {
  return "'" + path.string() + "'";
}

std::string baton_binary() {
  return std::string(BATON_BINARY_DIR) + "/bin/baton";
}

// mpirun with the test's loopback flags, ready for "-np N baton ARGS" (or MPMD ": -np ...").
std::string mpirun() {
  return std::string(BATON_MPIRUN) + " " + BATON_MPIRUN_FLAGS;
}

// Stdout and stderr together, or stdout alone when `with_stderr` is false.
testing::CommandResult run_shell(const std::string& command, bool with_stderr = true) {
  FILE* pipe = popen((command + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string distributed(int ranks, const std::string& args) {
  return mpirun() + " -np " + std::to_string(ranks) + " " + baton_binary() + " " + args;
}

const std::string kRun = "run -p 'And God said unto Moses' -n 48 --temp 0 -q -t 1 ";

TEST(DistributedCli, TensorAndPipelineParallelRunPrintsWhatOneProcessPrints) {
  const std::string args = kRun + "-m " + quoted(testing::demo_model());
  const std::string single = run_baton(args).out;
  ASSERT_FALSE(single.empty());
  for (const auto& [ranks, flags] :
       std::vector<std::pair<int, std::string>>{{2, "--tensor-parallel 2"},
                                                {2, "--pipeline-parallel 2"},
                                                {4, "--tensor-parallel 2 --pipeline-parallel 2"}}) {
    const testing::CommandResult r =
        run_shell(distributed(ranks, args + " " + flags), /*with_stderr=*/false);
    EXPECT_EQ(r.exit_code, 0) << flags << ": " << r.out;
    EXPECT_EQ(r.out, single) << flags;
  }
}

TEST(DistributedCli, Stories260KTensorParallelRunPrintsWhatOneProcessPrints) {
  const std::filesystem::path model = testing::shared_model("stories260K.gguf");
  BATON_REQUIRE_SHARED_FILE(model);
  const std::string args = "run -p 'Once upon a time' -n 60 --temp 0 -q -t 1 -m " + quoted(model);
  const testing::CommandResult r =
      run_shell(distributed(2, args + " --tensor-parallel 2"), /*with_stderr=*/false);
  EXPECT_NE(r.out.find("there was a little girl named Lily"), std::string::npos) << r.out;
}

TEST(DistributedCli, BenchTensorParallelReportsItsCommunication) {
  const testing::CommandResult r =
      run_shell(distributed(2, "bench -t 1 -p 32 -n 8 -r 1 --json --tensor-parallel 2 -m " +
                                   quoted(testing::demo_model())),
                /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json results = nlohmann::json::parse(r.out);
  ASSERT_EQ(results.size(), 2u) << r.out;
  for (const nlohmann::json& result : results) {
    EXPECT_GT(result.at("avg_ts").get<double>(), 0) << result;
    EXPECT_GT(result.at("communication_seconds_per_step").get<double>(), 0) << result;
    const double fraction = result.at("communication_fraction").get<double>();
    EXPECT_TRUE(fraction > 0 && fraction < 1) << result;
  }
}

TEST(DistributedCli, ARunThatNeedsMoreProcessesSaysHowToLaunchIt) {
  const std::string args = kRun + "-m " + quoted(testing::demo_model()) + " --tensor-parallel 2";
  const testing::CommandResult alone = run_baton(args, Capture::kStderr);
  EXPECT_EQ(alone.exit_code, 1);
  EXPECT_NE(alone.out.find("1 was started: launch with mpirun -np 2"), std::string::npos)
      << alone.out;
  const testing::CommandResult three = run_shell(distributed(3, args));
  EXPECT_NE(three.exit_code, 0);
  EXPECT_NE(three.out.find("needs --data-parallel 1 x --pipeline-parallel 1 x --tensor-parallel 2 "
                           "= 2 processes, but 3 were started"),
            std::string::npos)
      << three.out;
}

TEST(DistributedCli, RanksWithOtherFlagsOrAnotherModelFileFailFast) {
  const std::string model = quoted(testing::demo_model());
  const std::string common = kRun + "-m " + model + " --tensor-parallel 2 ";
  const testing::CommandResult flags = run_shell(
      mpirun() + " -np 1 " + baton_binary() + " " + common + "--kv-block-size 16 : -np 1 " +
      baton_binary() + " " + common + "--kv-block-size 32");
  EXPECT_NE(flags.exit_code, 0);
  EXPECT_NE(flags.out.find("rank 1's kv_block_size differs from rank 0's"), std::string::npos)
      << flags.out;

  // A copy of the demo model with one weight byte changed: same shapes, other weights.
  const testing::TempFile other("other_weights.gguf");
  std::filesystem::copy_file(testing::demo_model(), other.path(),
                             std::filesystem::copy_options::overwrite_existing);
  const gguf::GgufFile file = gguf::GgufFile::open(testing::demo_model());
  {
    std::fstream f(other.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(file.data_offset() + file.tensors()[0].offset + 3));
    f.put('\x5a');
  }
  const std::string run = kRun + "--tensor-parallel 2 -m ";
  const testing::CommandResult files =
      run_shell(mpirun() + " -np 1 " + baton_binary() + " " + run + model + " : -np 1 " +
                baton_binary() + " " + run + quoted(other.path()));
  EXPECT_NE(files.exit_code, 0);
  EXPECT_NE(files.out.find("rank 1's model file differs from rank 0's"), std::string::npos)
      << files.out;
}

// `mpirun -np RANKS baton serve FLAGS` started in the background, its output in a file.
class DistributedServer {
 public:
  explicit DistributedServer(const std::string& log, int ranks = 2,
                             const std::string& flags = "--tensor-parallel 2 --dist-timeout 5 -m " +
                                                        quoted(testing::demo_model()))
      : log_(log), tag_(log) {
    // mpirun's ranks inherit its environment: the tag tells this server's ranks apart.
    const std::string command = "BATON_TEST_TAG=" + tag_ + " " +
                                distributed(ranks, "serve -t 1 --port 0 " + flags) + " > " + log +
                                " 2>&1";
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    // Its own process group, so that the test can end the shell and mpirun at once (mpirun then
    // ends the ranks).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawn(&pid_, "/bin/sh", nullptr, &attr, const_cast<char**>(argv), environ);
    posix_spawnattr_destroy(&attr);
  }
  // mpirun's ranks are not in its process group, so killing the group would leave them
  // behind: SIGTERM lets mpirun end them (the server drains and stops), SIGKILL follows if not.
  ~DistributedServer() {
    const pid_t group = pid_ > 0 ? pid_ : -pid_;
    kill(-group, SIGTERM);
    if (pid_ > 0) waitpid(group, nullptr, 0);
    // mpirun, in the group, passes SIGTERM on to the ranks and exits once they have.
    for (const Clock::time_point until = Clock::now() + std::chrono::seconds(30);
         Clock::now() < until && kill(-group, 0) == 0;
         std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    }
    kill(-group, SIGKILL);
  }

  std::string log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // The port from "baton serve: model '...' on http://127.0.0.1:PORT", once it is printed.
  int wait_for_port() const {
    const std::regex listening(R"(on http://[^:]+:(\d+))");
    for (const Clock::time_point until = Clock::now() + std::chrono::seconds(60);
         Clock::now() < until; std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
      std::smatch m;
      const std::string text = log();
      if (std::regex_search(text, m, listening)) return std::stoi(m[1]);
    }
    return 0;
  }
  // The process of this server's world rank `rank`.
  pid_t rank_pid(int rank) const {
    const std::string tag = std::string("BATON_TEST_TAG=") + tag_ + '\0';
    const std::string rank_var = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank) + '\0';
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream env(entry.path() / "environ");
      const std::string vars =
          std::string(1, '\0') + std::string(std::istreambuf_iterator<char>(env), {});
      if (vars.find('\0' + tag) != std::string::npos &&
          vars.find('\0' + rank_var) != std::string::npos) {
        return std::stoi(name);
      }
    }
    return 0;
  }
  // Whether the run ended within `seconds`.
  bool ends_within(int seconds) {
    for (const Clock::time_point until = Clock::now() + std::chrono::seconds(seconds);
         Clock::now() < until; std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -pid_;  // reaped: the destructor only signals what is left of the group
        return true;
      }
    }
    return false;
  }

 private:
  std::string log_;
  std::string tag_;
  pid_t pid_ = 0;
};

TEST(DistributedCli, AHungRankFailsTheRequestAndEndsTheRunNamingIt) {
  const testing::TempFile log("hung_rank.log");
  DistributedServer server(log.path().string());
  const int port = server.wait_for_port();
  ASSERT_GT(port, 0) << server.log();
  const pid_t follower = server.rank_pid(1);
  ASSERT_GT(follower, 0);
  kill(follower, SIGSTOP);
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(std::chrono::seconds(30));
  const Clock::time_point start = Clock::now();
  const auto answer = client.Post(
      "/v1/completions", R"({"prompt": "And God said", "max_tokens": 8})", "application/json");
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_TRUE(answer) << server.log();
  EXPECT_EQ(answer->status, 503) << answer->body;
  EXPECT_NE(answer->body.find("rank 1 did not respond"), std::string::npos) << answer->body;
  EXPECT_LT(seconds, 15) << "--dist-timeout is 5 s";
  EXPECT_TRUE(server.ends_within(20)) << server.log();
  EXPECT_NE(server.log().find("rank 1 did not respond"), std::string::npos) << server.log();
}

TEST(DistributedCli, AKilledRankEndsTheRunNamingIt) {
  const testing::TempFile log("killed_rank.log");
  DistributedServer server(log.path().string());
  ASSERT_GT(server.wait_for_port(), 0) << server.log();
  const pid_t follower = server.rank_pid(1);
  ASSERT_GT(follower, 0);
  kill(follower, SIGKILL);
  EXPECT_TRUE(server.ends_within(20)) << server.log();
  EXPECT_NE(server.log().find("rank 1"), std::string::npos) << server.log();
}

using nlohmann::json;

// Greedy completions of `prompts`, all sent at once, every other one streamed when `streams`.
std::vector<std::string> complete_concurrently(int port, const std::vector<std::string>& prompts,
                                               bool streams = true) {
  std::vector<std::string> answers(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i) {
    clients.emplace_back([&, i] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(std::chrono::seconds(60));
      const bool stream = streams && i % 2 == 1;
      const json request = {
          {"prompt", prompts[i]}, {"max_tokens", 24}, {"temperature", 0}, {"stream", stream}};
      const auto a = client.Post("/v1/completions", request.dump(), "application/json");
      if (!a || a->status != 200) {
        answers[i] = a ? "HTTP " + std::to_string(a->status) + " " + a->body : "no answer";
        return;
      }
      if (!stream) {
        answers[i] = json::parse(a->body)["choices"][0]["text"];
        return;
      }
      std::istringstream lines(a->body);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind("data: {", 0) == 0)
          answers[i] += json::parse(line.substr(6))["choices"][0]["text"];
      }
    });
  }
  for (std::thread& t : clients) t.join();
  return answers;
}

// The value of the sample `name{labels}` in a Prometheus exposition; -1 when it is missing.
double metric(const std::string& text, const std::string& sample) {
  const size_t at = text.find("\n" + sample + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + sample.size() + 2));
}

// An f32 copy of the demo model: f32 weights take the same kernel at every batch size, so a
// greedy answer cannot depend on which requests shared its replica's steps.
class F32Demo {
 public:
  F32Demo() : file_("demo_f32_cli.gguf") {
    quantize_model(testing::demo_model(), file_.path(), *find_quantize_preset("f32"));
  }
  std::string path() const { return quoted(file_.path()); }

 private:
  testing::TempFile file_;
};

const std::vector<std::string> kPrompts = {"And God said",  "In the beginning", "Let there be",
                                           "And the earth", "The waters",       "And it was so",
                                           "Behold",        "And the evening"};

TEST(DistributedCli, DataParallelServerAnswersWhatOneServerDoesOverBothReplicas) {
  const F32Demo model;
  std::vector<std::string> expected;
  {
    const testing::TempFile log("single_server.log");
    DistributedServer single(log.path().string(), 1, "-m " + model.path());
    const int port = single.wait_for_port();
    ASSERT_GT(port, 0) << single.log();
    expected = complete_concurrently(port, kPrompts);
  }
  const testing::TempFile log("data_parallel_server.log");
  DistributedServer server(log.path().string(), 2, "--data-parallel 2 -m " + model.path());
  const int port = server.wait_for_port();
  ASSERT_GT(port, 0) << server.log();
  EXPECT_EQ(complete_concurrently(port, kPrompts), expected);

  httplib::Client client("127.0.0.1", port);
  const auto scraped = client.Get("/metrics");
  ASSERT_TRUE(scraped) << server.log();
  const std::string& text = scraped->body;
  const double total = metric(text, "baton_generation_tokens_total");
  const double first = metric(text, "baton_replica_generation_tokens_total{replica=\"0\"}");
  const double second = metric(text, "baton_replica_generation_tokens_total{replica=\"1\"}");
  EXPECT_GT(first, 0) << text;
  EXPECT_GT(second, 0) << text;
  EXPECT_EQ(first + second, total) << text;
}

TEST(DistributedCli, AHungReplicaFailsItsRequestsAndEndsTheRunNamingIt) {
  const testing::TempFile log("hung_replica.log");
  DistributedServer server(
      log.path().string(), 2,
      "--data-parallel 2 --dist-timeout 5 -m " + quoted(testing::demo_model()));
  const int port = server.wait_for_port();
  ASSERT_GT(port, 0) << server.log();
  const pid_t replica = server.rank_pid(1);
  ASSERT_GT(replica, 0);
  kill(replica, SIGSTOP);
  // Two at once: the router spreads them, so one lands on the stopped replica.
  const std::vector<std::string> answers =
      complete_concurrently(port, {"And God", "Behold"}, /*streams=*/false);
  const bool named = std::any_of(answers.begin(), answers.end(), [](const std::string& a) {
    return a.rfind("HTTP 503", 0) == 0 && a.find("rank 1 did not respond") != std::string::npos;
  });
  EXPECT_TRUE(named) << answers[0] << "\n" << answers[1];
  EXPECT_TRUE(server.ends_within(20)) << server.log();
  EXPECT_NE(server.log().find("rank 1 did not respond"), std::string::npos) << server.log();
}

}  // namespace
}  // namespace baton
