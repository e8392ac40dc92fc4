#include "core/serving/engine/step_runner.h"

#include <algorithm>

#include "baton/error.h"
#include "core/serving/engine/step_message.h"

namespace baton {
namespace {

std::span<std::byte> writable(std::vector<float>& values) {
  return std::as_writable_bytes(std::span<float>(values));
}

std::span<const std::byte> readable(const std::vector<float>& values) {
  return std::as_bytes(std::span<const float>(values));
}

}  // namespace

std::vector<float> run_step(const Model& model, Backend& backend, const PagedKvCache& cache,
                            const StepInput& input) {
  Graph graph([&backend](DType dtype, Shape shape) {
    return backend.allocate_tensor(dtype, std::move(shape));
  });
  const Tensor out = model.build_step(graph, input, cache.tensors());
  graph.set_outputs({out});
  backend.execute(graph);
  std::vector<float> host(static_cast<size_t>(out.numel()));
  backend.download(host.data(), out, host.size() * sizeof(float));
  return host;
}

StepRunner::StepRunner(const Model& model, Backend& backend, const PagedKvCache& cache,
                       std::shared_ptr<const ReplicaGroup> group)
    : model_(model), backend_(backend), cache_(cache), group_(std::move(group)) {
  if (group_ && group_->replica->size() == 1) group_ = nullptr;
  if (group_ && group_->tensor) backend_.join_group(*group_->tensor);
  if (group_ && group_->pipeline && leader()) {
    // The last stage's first tensor rank sends the logits.
    io_ = std::make_unique<PipelineIo>(*group_->replica,
                                       group_->replica->size() - model_.shard().tp_size);
  }
}

StepRunner::~StepRunner() {
  if (!group_ || !leader() || failed_) return;
  try {
    std::vector<int32_t> stop = encode_step({.stop = true});
    if (io_) {
      io_->send([this, stop]() mutable { broadcast_vector(*group_->replica, stop, 0); });
      io_.reset();  // after the steps still in flight, and the stop
    } else {
      broadcast_vector(*group_->replica, stop, 0);
    }
  } catch (const std::exception&) {
    // The followers are gone already; nothing is left to stop.
  }
}

int32_t StepRunner::depth() const {
  return io_ ? group_->pipeline->size() : 1;
}

std::vector<float> StepRunner::run(BlockCopies copies, const StepInput& input) {
  launch(copies, input);
  return collect();
}

void StepRunner::launch(BlockCopies copies, const StepInput& input) {
  throw_if_failed();
  try {
    if (!group_) {
      ready_.push_back(run_here(copies, input));
      return;
    }
    std::vector<int32_t> words =
        encode_step({.copies = {copies.begin(), copies.end()}, .input = input});
    if (!io_) {
      broadcast_vector(*group_->replica, words, 0);
      ready_.push_back(run_here(copies, input));
      return;
    }
    io_->send([this, words = std::move(words)]() mutable {
      broadcast_vector(*group_->replica, words, 0);
    });
    for (const auto& [source, destination] : copies) {
      cache_.copy_block(source, destination, backend_);
    }
    std::vector<float> hidden = run_step(model_, backend_, cache_, input);
    io_->send([this, hidden = std::move(hidden)] {
      group_->pipeline->send(readable(hidden), group_->pipeline->rank() + 1);
    });
    io_->expect_logits(input.logit_rows.size() * static_cast<size_t>(model_.config().n_vocab));
  } catch (...) {
    failed_ = group_ != nullptr;
    throw;
  }
}

std::vector<float> StepRunner::collect() {
  throw_if_failed();
  if (!io_) {
    std::vector<float> logits = std::move(ready_.front());
    ready_.pop_front();
    return logits;
  }
  try {
    return io_->next_logits();
  } catch (...) {
    failed_ = true;
    throw;
  }
}

void StepRunner::throw_if_failed() const {
  if (failed_) {
    throw Error(ErrorCategory::kBackend,
                "an earlier step of this distributed replica failed; it cannot run more");
  }
}

void StepRunner::follow() {
  if (!group_) return;
  Communicator& replica = *group_->replica;
  for (;;) {
    // What broadcast_vector sends: the length, for which a follower waits however long the
    // leader idles, then the words.
    uint64_t length = 0;
    replica.wait_broadcast(std::as_writable_bytes(std::span<uint64_t>(&length, 1)), 0);
    std::vector<int32_t> words(length);
    replica.broadcast(std::as_writable_bytes(std::span<int32_t>(words)), 0);
    const StepMessage message = decode_step(words);
    if (message.stop) return;
    run_here(message.copies, message.input);
  }
}

std::vector<float> StepRunner::run_here(BlockCopies copies, const StepInput& input) {
  for (const auto& [source, destination] : copies) {
    cache_.copy_block(source, destination, backend_);
  }
  const ModelShard& shard = model_.shard();
  const ModelConfig& config = model_.config();
  std::vector<float> out = shard.first_stage()
                               ? run_step(model_, backend_, cache_, input)
                               : run_step(model_, backend_, cache_, with_received_hidden(input));
  if (!shard.last_stage(config.n_layer)) {
    // A follower of an earlier stage (the leader's transfers go through io_).
    group_->pipeline->send(readable(out), group_->pipeline->rank() + 1);
    return {};
  }
  std::vector<float> logits = whole_logits(std::move(out), input.logit_rows.size());
  if (leader()) return logits;
  // whole_logits gathered them on the stage's first tensor rank; on a last stage that is not
  // the leader's, that rank passes them on.
  if (shard.tp_rank == 0) group_->replica->send(readable(logits), 0);
  return {};
}

StepInput StepRunner::with_received_hidden(const StepInput& input) {
  const int64_t rows = static_cast<int64_t>(input.tokens.size());
  const int64_t n_embd = model_.config().n_embd;
  std::vector<float> hidden(static_cast<size_t>(rows * n_embd));
  group_->pipeline->recv(writable(hidden), group_->pipeline->rank() - 1);
  StepInput with_hidden = input;
  with_hidden.hidden = backend_.allocate_tensor(DType::kF32, {rows, n_embd});
  backend_.upload(*with_hidden.hidden, hidden.data(), hidden.size() * sizeof(float));
  return with_hidden;
}

// The tensor-parallel ranks' vocabulary slices, gathered on the stage's first rank as whole rows.
std::vector<float> StepRunner::whole_logits(std::vector<float> slice, size_t rows) {
  const ModelShard& shard = model_.shard();
  if (shard.tp_size == 1) return slice;
  const int64_t n_vocab = model_.config().n_vocab;
  const VocabularySlice mine = vocabulary_slice(n_vocab, shard.tp_rank, shard.tp_size);
  const size_t stride = static_cast<size_t>(mine.stride);
  std::vector<float> padded(rows * stride);
  for (size_t r = 0; r < rows; ++r) {
    std::copy_n(slice.begin() + static_cast<ptrdiff_t>(r * static_cast<size_t>(mine.count)),
                mine.count, padded.begin() + static_cast<ptrdiff_t>(r * stride));
  }
  Communicator& tensor = *group_->tensor;
  std::vector<float> all(tensor.rank() == 0 ? rows * stride * static_cast<size_t>(shard.tp_size)
                                            : 0);
  tensor.gather(readable(padded), writable(all), 0);
  if (tensor.rank() != 0) return {};
  std::vector<float> logits(rows * static_cast<size_t>(n_vocab));
  for (int32_t rank = 0; rank < shard.tp_size; ++rank) {
    const VocabularySlice part = vocabulary_slice(n_vocab, rank, shard.tp_size);
    for (size_t r = 0; r < rows; ++r) {
      const size_t from = (static_cast<size_t>(rank) * rows + r) * stride;
      std::copy_n(
          all.begin() + static_cast<ptrdiff_t>(from), part.count,
          logits.begin() + static_cast<ptrdiff_t>(r * static_cast<size_t>(n_vocab) + part.first));
    }
  }
  return logits;
}

SoloSequence::SoloSequence(const Model& model, Backend& backend, const PagedKvCache& cache,
                           int32_t context_size)
    : own_runner_(std::make_unique<StepRunner>(model, backend, cache)),
      runner_(*own_runner_),
      context_size_(context_size) {
  for (int32_t b = 0; b < cache.shape().n_blocks; ++b) blocks_.push_back(b);
  if (context_size_ <= 0) context_size_ = cache.shape().n_blocks * cache.shape().block_size;
}

SoloSequence::SoloSequence(StepRunner& runner, int32_t context_size)
    : runner_(runner), context_size_(context_size) {
  const KvCacheShape& shape = runner.cache().shape();
  for (int32_t b = 0; b < shape.n_blocks; ++b) blocks_.push_back(b);
  if (context_size_ <= 0) context_size_ = shape.n_blocks * shape.block_size;
}

std::vector<float> SoloSequence::step(std::span<const int32_t> tokens,
                                      std::vector<int32_t> logit_rows) {
  const KvCacheShape& shape = runner_.cache().shape();
  const int64_t capacity = int64_t{shape.n_blocks} * shape.block_size;
  if (length_ + static_cast<int64_t>(tokens.size()) > capacity) {
    throw Error(ErrorCategory::kInvalidArgument, std::to_string(length_ + tokens.size()) +
                                                     " tokens do not fit a cache of " +
                                                     std::to_string(capacity));
  }
  auto layout = std::make_shared<PagedBatch>();
  layout->block_size = shape.block_size;
  layout->block_tables = {blocks_};
  StepInput input;
  input.tokens.assign(tokens.begin(), tokens.end());
  for (size_t i = 0; i < tokens.size(); ++i) {
    layout->token_seq.push_back(0);
    layout->token_pos.push_back(length_++);
  }
  input.layout = std::move(layout);
  input.logit_rows = std::move(logit_rows);
  input.context_size = context_size_;
  if (lora_slots_) {
    input.lora = std::make_shared<StepInput::Lora>(StepInput::Lora{
        .slots = lora_slots_, .token_slots = std::vector(tokens.size(), lora_slot_)});
  }
  return runner_.run({}, input);
}

void SoloSequence::use_lora(const LoraSlots& slots, int32_t slot) {
  lora_slots_ = &slots;
  lora_slot_ = slot;
}

}  // namespace baton
