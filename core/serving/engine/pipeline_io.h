#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/runtime/comm/communicator.h"

namespace baton {

// The pipeline leader's transfers, off its compute thread: what it sends (each step's message to
// the replica, the first stage's hidden state to the next) and the logits the last stage sends
// back, each on a thread of its own and in order. So the leader computes the first stage of its
// next micro-batch while the later stages compute the earlier ones; a blocking send or receive on
// the compute thread would either stall it or deadlock against a stage waiting to hand over
// logits.
class PipelineIo {
 public:
  // Logits come from rank `logits_from` of `replica`.
  PipelineIo(Communicator& replica, int32_t logits_from);
  // Finishes every queued send and expected receive, then joins.
  ~PipelineIo();
  PipelineIo(const PipelineIo&) = delete;
  PipelineIo& operator=(const PipelineIo&) = delete;

  // Queues a send; they run one at a time, in order. Rethrows an earlier transfer's failure.
  void send(std::function<void()> transfer);
  // Queues the receive of the next step's `floats` logits.
  void expect_logits(size_t floats);
  // The oldest expected logits, once received. Rethrows a transfer's failure.
  std::vector<float> next_logits();

 private:
  void send_loop(std::stop_token stop);
  void receive_loop(std::stop_token stop);
  void rethrow_failure();
  void failed(std::exception_ptr error);

  Communicator& replica_;
  const int32_t logits_from_;
  std::mutex mutex_;
  std::condition_variable_any changed_;
  std::deque<std::function<void()>> sends_;
  std::deque<size_t> expected_;
  std::deque<std::vector<float>> received_;
  std::exception_ptr failure_;
  // Last: they start once every member they use exists. Stopping lets them finish their queues.
  std::jthread sender_;
  std::jthread receiver_;
};

}  // namespace baton
