#include "core/serving/engine/pipeline_io.h"

#include <utility>

namespace baton {

PipelineIo::PipelineIo(Communicator& replica, int32_t logits_from)
    : replica_(replica),
      logits_from_(logits_from),
      sender_([this](std::stop_token stop) { send_loop(stop); }),
      receiver_([this](std::stop_token stop) { receive_loop(stop); }) {}

PipelineIo::~PipelineIo() {
  sender_.request_stop();
  receiver_.request_stop();
  sender_.join();
  receiver_.join();
}

void PipelineIo::send(std::function<void()> transfer) {
  {
    std::lock_guard lock(mutex_);
    rethrow_failure();
    sends_.push_back(std::move(transfer));
  }
  changed_.notify_all();
}

void PipelineIo::expect_logits(size_t floats) {
  {
    std::lock_guard lock(mutex_);
    rethrow_failure();
    expected_.push_back(floats);
  }
  changed_.notify_all();
}

std::vector<float> PipelineIo::next_logits() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !received_.empty() || failure_; });
  rethrow_failure();
  std::vector<float> logits = std::move(received_.front());
  received_.pop_front();
  return logits;
}

void PipelineIo::send_loop(std::stop_token stop) {
  while (true) {
    std::function<void()> transfer;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, stop, [&] { return !sends_.empty() || failure_; });
      if (failure_ || sends_.empty()) return;  // failed, or stopped with nothing left
      transfer = std::move(sends_.front());
      sends_.pop_front();
    }
    try {
      transfer();
    } catch (...) {
      return failed(std::current_exception());
    }
  }
}

void PipelineIo::receive_loop(std::stop_token stop) {
  while (true) {
    size_t floats = 0;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, stop, [&] { return !expected_.empty() || failure_; });
      if (failure_ || expected_.empty()) return;
      floats = expected_.front();
      expected_.pop_front();
    }
    std::vector<float> logits(floats);
    try {
      replica_.recv(std::as_writable_bytes(std::span<float>(logits)), logits_from_);
    } catch (...) {
      return failed(std::current_exception());
    }
    {
      std::lock_guard lock(mutex_);
      received_.push_back(std::move(logits));
    }
    changed_.notify_all();
  }
}

void PipelineIo::rethrow_failure() {
  if (failure_) std::rethrow_exception(failure_);
}

void PipelineIo::failed(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::move(error);
  }
  changed_.notify_all();
}

}  // namespace baton
