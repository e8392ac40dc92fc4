#include "core/api/engine_loop.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "tests/test_data.h"

namespace baton {
namespace {

using namespace std::chrono_literals;

// Runs everything on the backend it wraps and notes the threads that called execute(); with
// `fail_execute` every graph fails instead.
class ThreadNotingBackend final : public Backend {
 public:
  explicit ThreadNotingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}

  std::string_view name() const override { return inner_->name(); }
  int32_t host_threads() const override { return inner_->host_threads(); }
  std::vector<DeviceInfo> devices() const override { return inner_->devices(); }
  std::shared_ptr<Buffer> allocate(size_t bytes) override { return inner_->allocate(bytes); }
  bool supports(const Node& node) const override { return inner_->supports(node); }
  void execute(const Graph& graph) override {
    {
      std::lock_guard lock(mutex_);
      threads_.insert(std::this_thread::get_id());
    }
    if (fail_execute) throw std::runtime_error("this backend fails every graph");
    inner_->execute(graph);
  }
  Tensor import_tensor(const Tensor& host) override { return inner_->import_tensor(host); }
  void join_group(Communicator& group) override { inner_->join_group(group); }
  void upload(const Tensor& device_tensor, const void* host, size_t bytes) override {
    inner_->upload(device_tensor, host, bytes);
  }
  void download(void* host, const Tensor& device_tensor, size_t bytes) override {
    inner_->download(host, device_tensor, bytes);
  }

  std::set<std::thread::id> threads() const {
    std::lock_guard lock(mutex_);
    return threads_;
  }

  bool fail_execute = false;

 private:
  std::unique_ptr<Backend> inner_;
  mutable std::mutex mutex_;
  std::set<std::thread::id> threads_;
};

class EngineLoopTest : public ::testing::Test {
 protected:
  EngineLoopTest()
      : loaded_(
            LLMOptions{.model = testing::demo_model().string(), .backend = "cpu", .threads = 2}) {
    auto noting = std::make_unique<ThreadNotingBackend>(std::move(loaded_.backend));
    backend_ = noting.get();
    loaded_.backend = std::move(noting);
  }

  LoadedModel loaded_;
  ThreadNotingBackend* backend_ = nullptr;
};

// The warm-up is the engine's first OpenMP region: run from the constructing thread, it would
// leave that thread's idle team beside the engine thread's, and libgomp would then cut every
// barrier's spin short (engine_loop.h).
TEST_F(EngineLoopTest, WarmsUpAndStepsOnItsOwnThreadOnly) {
  std::mutex mutex;
  std::condition_variable finished_changed;
  bool finished = false;
  std::set<std::thread::id> sink_threads;
  EngineLoop loop(loaded_, [&](std::vector<SequenceUpdate> updates) {
    std::lock_guard lock(mutex);
    sink_threads.insert(std::this_thread::get_id());
    for (const SequenceUpdate& update : updates) finished = finished || update.finished;
    finished_changed.notify_all();
  });
  const std::set<std::thread::id> warm_up = backend_->threads();
  ASSERT_EQ(warm_up.size(), 1u)
      << "the warm-up step ran on more than one thread, or not before the constructor returned";
  EXPECT_NE(*warm_up.begin(), std::this_thread::get_id());

  GenerationParams params;
  params.max_tokens = 4;
  loop.add(7, {1, 2, 3}, params, 0);
  std::unique_lock lock(mutex);
  ASSERT_TRUE(finished_changed.wait_for(lock, 60s, [&] { return finished; }));
  EXPECT_EQ(backend_->threads(), warm_up);
  EXPECT_EQ(sink_threads, warm_up);
}

TEST_F(EngineLoopTest, ConstructorRethrowsWhatBuildingTheEngineThrew) {
  backend_->fail_execute = true;
  EXPECT_THROW(
      {
        try {
          EngineLoop loop(loaded_, [](std::vector<SequenceUpdate>) {});
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "this backend fails every graph");
          throw;
        }
      },
      std::runtime_error);
}

}  // namespace
}  // namespace baton
