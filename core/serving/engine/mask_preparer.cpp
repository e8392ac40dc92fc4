#include "core/serving/engine/mask_preparer.h"

#include <chrono>
#include <utility>

#include "baton/error.h"
#include "core/serving/sampling/sampler.h"

namespace baton {

MaskPreparer::Step::~Step() {
  if (preparer_) preparer_->wait();
}

MaskPreparer::Seconds MaskPreparer::Step::finish() {
  if (!preparer_) return {};
  return std::exchange(preparer_, nullptr)->wait();
}

MaskPreparer::~MaskPreparer() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

MaskPreparer::Step MaskPreparer::start(std::vector<Sampler*> samplers) {
  if (samplers.empty()) return Step(nullptr);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  {
    std::lock_guard lock(mutex_);
    // A second batch would replace the first before the preparer took it.
    if (busy_) {
      throw Error(ErrorCategory::kInternal, "grammar masks started before the last finished");
    }
    pending_ = std::move(samplers);
    busy_ = true;
  }
  changed_.notify_all();
  return Step(this);
}

MaskPreparer::Seconds MaskPreparer::wait() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !busy_; });
  return {
      .work = work_seconds_,
      .waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

void MaskPreparer::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return busy_ || stopping_; });
    if (stopping_) return;
    const std::vector<Sampler*> samplers = std::move(pending_);
    lock.unlock();
    const auto start = std::chrono::steady_clock::now();
    for (Sampler* sampler : samplers) {
      try {
        sampler->prepare_grammar_mask();
      } catch (...) {
        // Left unprepared: sampling computes the mask again on the engine's thread and fails
        // there, where a grammar's error ends its own request alone.
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    lock.lock();
    work_seconds_ = seconds;
    busy_ = false;
    changed_.notify_all();
  }
}

}  // namespace baton
