#include "core/api/replica_wire.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "baton/error.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

class Writer {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* first = reinterpret_cast<const std::byte*>(&value);
    bytes_.insert(bytes_.end(), first, first + sizeof(T));
  }
  template <typename T>
  void put_list(const std::vector<T>& values) {
    put(static_cast<uint64_t>(values.size()));
    for (const T& v : values) put(v);
  }
  void put_text(const std::string& text) {
    put(static_cast<uint64_t>(text.size()));
    const auto* first = reinterpret_cast<const std::byte*>(text.data());
    bytes_.insert(bytes_.end(), first, first + text.size());
  }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

// Reads back what Writer wrote, refusing to run past the end.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T)).data(), sizeof(T));
    return value;
  }
  template <typename T>
  std::vector<T> get_list() {
    const uint64_t n = count(sizeof(T));
    std::vector<T> values;
    values.reserve(n);
    for (uint64_t i = 0; i < n; ++i) values.push_back(get<T>());
    return values;
  }
  std::string get_text() {
    const uint64_t n = count(1);
    const std::span<const std::byte> chars = take(n);
    return {reinterpret_cast<const char*>(chars.data()), chars.size()};
  }
  // A list's length, checked against the bytes left at `least` bytes per entry.
  uint64_t count(size_t least) {
    const auto n = get<uint64_t>();
    if (n > (bytes_.size() - at_) / std::max<size_t>(least, 1)) fail();
    return n;
  }
  void finish() const {
    if (at_ != bytes_.size()) fail();
  }

 private:
  std::span<const std::byte> take(size_t n) {
    if (n > bytes_.size() - at_) fail();
    const std::span<const std::byte> part = bytes_.subspan(at_, n);
    at_ += n;
    return part;
  }
  [[noreturn]] static void fail() {
    throw Error(ErrorCategory::kInternal, "a data-parallel message is malformed");
  }

  std::span<const std::byte> bytes_;
  size_t at_ = 0;
};

// The stats record: its version and field count, then each field of EngineStats' table in order,
// so that a build whose EngineStats differs is refused by name rather than misread.
void put_stats(Writer& w, const EngineStats& stats) {
  w.put(kStatsWireVersion);
  uint32_t fields = 0;
  for_each_stat_field([&](const StatField&, auto) { ++fields; });
  w.put(fields);
  for_each_stat_field([&](const StatField&, auto member) { w.put(stats.*member); });
}

EngineStats get_stats(Reader& r) {
  const auto version = r.get<uint32_t>();
  const auto fields = r.get<uint32_t>();
  uint32_t expected = 0;
  for_each_stat_field([&](const StatField&, auto) { ++expected; });
  if (version != kStatsWireVersion || fields != expected) {
    throw Error(ErrorCategory::kInternal,
                "a data-parallel replica sent engine stats of wire version " +
                    std::to_string(version) + " with " + std::to_string(fields) +
                    " fields; this build reads version " + std::to_string(kStatsWireVersion) +
                    " with " + std::to_string(expected));
  }
  EngineStats stats;
  for_each_stat_field([&](const StatField&, auto member) {
    stats.*member = r.get<std::remove_reference_t<decltype(stats.*member)>>();
  });
  return stats;
}

// Every field of GenerationParams, so a remote replica runs the request as asked.
void put_params(Writer& w, const GenerationParams& p) {
  w.put(p.sampling);
  w.put(p.max_tokens);
  w.put(p.add_special);
  w.put(p.parse_special);
  w.put(p.ignore_eos);
  w.put(static_cast<uint64_t>(p.stop.size()));
  for (const std::string& s : p.stop) w.put_text(s);
  w.put_list(p.stop_token_ids);
  w.put(p.n);
  w.put(p.best_of);
  w.put(p.logprobs);
  w.put(p.use_beam_search);
  w.put(p.beam_width);
  w.put(p.length_penalty);
  w.put_text(p.lora);
  w.put(p.expected_tokens);
  w.put_text(p.grammar);
}

GenerationParams get_params(Reader& r) {
  GenerationParams p;
  p.sampling = r.get<SamplingParams>();
  p.max_tokens = r.get<int32_t>();
  p.add_special = r.get<bool>();
  p.parse_special = r.get<bool>();
  p.ignore_eos = r.get<bool>();
  const uint64_t stops = r.count(sizeof(uint64_t));
  for (uint64_t i = 0; i < stops; ++i) p.stop.push_back(r.get_text());
  p.stop_token_ids = r.get_list<int32_t>();
  p.n = r.get<int32_t>();
  p.best_of = r.get<int32_t>();
  p.logprobs = r.get<int32_t>();
  p.use_beam_search = r.get<bool>();
  p.beam_width = r.get<int32_t>();
  p.length_penalty = r.get<float>();
  p.lora = r.get_text();
  p.expected_tokens = r.get<int32_t>();
  p.grammar = r.get_text();
  return p;
}

void put_update(Writer& w, const SequenceUpdate& u, Clock::time_point now) {
  w.put(u.id);
  w.put(u.sample);
  w.put_list(u.new_tokens);
  w.put(static_cast<uint64_t>(u.logprobs.size()));
  for (const TokenLogprobs& l : u.logprobs) {
    w.put(l.chosen);
    w.put_list(l.top);
  }
  w.put(u.cumulative_logprob);
  w.put(u.finished);
  w.put(u.finish_reason);
  w.put(u.last_token_is_text);
  w.put_text(u.error);
  w.put(u.engine_failed);
  const bool scheduled = u.first_scheduled != Clock::time_point{};
  w.put(scheduled);
  w.put(scheduled ? (now - u.first_scheduled).count() : Clock::rep{0});
  w.put(u.cached_prompt_tokens);
}

SequenceUpdate get_update(Reader& r, Clock::time_point now) {
  SequenceUpdate u;
  u.id = r.get<uint64_t>();
  u.sample = r.get<int32_t>();
  u.new_tokens = r.get_list<int32_t>();
  const uint64_t n = r.count(sizeof(TokenLogprob) + sizeof(uint64_t));
  for (uint64_t i = 0; i < n; ++i) {
    TokenLogprobs l;
    l.chosen = r.get<TokenLogprob>();
    l.top = r.get_list<TokenLogprob>();
    u.logprobs.push_back(std::move(l));
  }
  u.cumulative_logprob = r.get<double>();
  u.finished = r.get<bool>();
  u.finish_reason = r.get<FinishReason>();
  u.last_token_is_text = r.get<bool>();
  u.error = r.get_text();
  u.engine_failed = r.get<bool>();
  const bool scheduled = r.get<bool>();
  const auto age = Clock::duration(r.get<Clock::rep>());
  if (scheduled) u.first_scheduled = now - age;
  u.cached_prompt_tokens = r.get<int32_t>();
  return u;
}

}  // namespace

std::vector<std::byte> encode(const RouterFrame& frame) {
  Writer w;
  w.put(frame.shutdown);
  w.put(static_cast<uint64_t>(frame.commands.size()));
  for (const ReplicaCommand& c : frame.commands) {
    w.put(c.kind);
    w.put(c.id);
    w.put(c.sample);
    if (c.kind != ReplicaCommand::Kind::kAdd) continue;
    w.put_list(c.prompt);
    put_params(w, c.params);
    w.put(c.priority);
  }
  return w.take();
}

RouterFrame decode_router_frame(std::span<const std::byte> bytes) {
  Reader r(bytes);
  RouterFrame frame;
  frame.shutdown = r.get<bool>();
  const uint64_t n = r.count(sizeof(uint8_t) + sizeof(uint64_t) + sizeof(int32_t));
  for (uint64_t i = 0; i < n; ++i) {
    ReplicaCommand c;
    c.kind = r.get<ReplicaCommand::Kind>();
    c.id = r.get<uint64_t>();
    c.sample = r.get<int32_t>();
    if (c.kind == ReplicaCommand::Kind::kAdd) {
      c.prompt = r.get_list<int32_t>();
      c.params = get_params(r);
      c.priority = r.get<int32_t>();
    }
    frame.commands.push_back(std::move(c));
  }
  r.finish();
  return frame;
}

std::vector<std::byte> encode(const ReplicaFrame& frame, Clock::time_point now) {
  Writer w;
  w.put(frame.closing);
  put_stats(w, frame.stats);
  w.put(static_cast<uint64_t>(frame.updates.size()));
  for (const SequenceUpdate& u : frame.updates) put_update(w, u, now);
  return w.take();
}

ReplicaFrame decode_replica_frame(std::span<const std::byte> bytes, Clock::time_point now) {
  Reader r(bytes);
  ReplicaFrame frame;
  frame.closing = r.get<bool>();
  frame.stats = get_stats(r);
  const uint64_t n = r.count(sizeof(uint64_t) + sizeof(int32_t));
  for (uint64_t i = 0; i < n; ++i) frame.updates.push_back(get_update(r, now));
  r.finish();
  return frame;
}

Clock::duration replica_heartbeat(double timeout_seconds) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(1.0, timeout_seconds / 4)));
}

void send_frame(Communicator& comm, std::span<const std::byte> bytes, int32_t to) {
  const uint64_t size = bytes.size();
  comm.send(std::as_bytes(std::span<const uint64_t>(&size, 1)), to);
  if (size > 0) comm.send(bytes, to);
}

std::vector<std::byte> recv_frame(Communicator& comm, int32_t from) {
  uint64_t size = 0;
  comm.recv(std::as_writable_bytes(std::span<uint64_t>(&size, 1)), from);
  std::vector<std::byte> bytes(size);
  if (size > 0) comm.recv(bytes, from);
  return bytes;
}

}  // namespace baton
