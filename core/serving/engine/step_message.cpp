#include "core/serving/engine/step_message.h"

#include <string>

#include "baton/error.h"

namespace baton {
namespace {

void put(std::vector<int32_t>& out, const std::vector<int32_t>& values) {
  out.push_back(static_cast<int32_t>(values.size()));
  out.insert(out.end(), values.begin(), values.end());
}

// Reads back what put() wrote, refusing to run past the end.
class Reader {
 public:
  explicit Reader(std::span<const int32_t> words) : words_(words) {}
  int32_t next() {
    if (at_ >= words_.size()) fail();
    return words_[at_++];
  }
  std::vector<int32_t> list() {
    const int32_t n = next();
    if (n < 0 || static_cast<size_t>(n) > words_.size() - at_) fail();
    std::vector<int32_t> values(words_.begin() + static_cast<ptrdiff_t>(at_),
                                words_.begin() + static_cast<ptrdiff_t>(at_ + n));
    at_ += static_cast<size_t>(n);
    return values;
  }
  bool done() const { return at_ == words_.size(); }
  [[noreturn]] static void fail() {
    throw Error(ErrorCategory::kInternal, "a distributed step message is malformed");
  }

 private:
  std::span<const int32_t> words_;
  size_t at_ = 0;
};

}  // namespace

std::vector<int32_t> encode_step(const StepMessage& message) {
  std::vector<int32_t> out = {message.stop ? 1 : 0};
  if (message.stop) return out;
  const StepInput& input = message.input;
  const PagedBatch& layout = *input.layout;
  out.push_back(static_cast<int32_t>(message.copies.size()));
  for (const auto& [source, destination] : message.copies) {
    out.push_back(source);
    out.push_back(destination);
  }
  out.push_back(input.context_size);
  out.push_back(layout.block_size);
  put(out, input.tokens);
  put(out, layout.token_seq);
  put(out, layout.token_pos);
  out.push_back(static_cast<int32_t>(layout.block_tables.size()));
  for (const std::vector<int32_t>& table : layout.block_tables) put(out, table);
  put(out, input.logit_rows);
  return out;
}

StepMessage decode_step(std::span<const int32_t> words) {
  Reader in(words);
  StepMessage message;
  message.stop = in.next() != 0;
  if (message.stop) return message;
  const int32_t n_copies = in.next();
  for (int32_t i = 0; i < n_copies; ++i) {
    const int32_t source = in.next();
    message.copies.emplace_back(source, in.next());
  }
  auto layout = std::make_shared<PagedBatch>();
  StepInput& input = message.input;
  input.context_size = in.next();
  layout->block_size = in.next();
  input.tokens = in.list();
  layout->token_seq = in.list();
  layout->token_pos = in.list();
  const int32_t n_tables = in.next();
  if (n_tables < 0) Reader::fail();
  for (int32_t i = 0; i < n_tables; ++i) layout->block_tables.push_back(in.list());
  input.logit_rows = in.list();
  if (!in.done()) Reader::fail();
  input.layout = std::move(layout);
  return message;
}

}  // namespace baton
