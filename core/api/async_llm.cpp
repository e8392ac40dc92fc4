#include "baton/async_llm.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <variant>

#include "core/api/loaded_model.h"
#include "core/api/request_output.h"
#include "core/api/serving_engine.h"
#include "models/lora/lora_adapter.h"

namespace baton {
namespace {

using Clock = RequestOutput::Clock;

}  // namespace

// The text thread's side: it owns every live request's RequestOutput and is the only thread that
// tokenizes, detokenizes or calls a callback. Work reaches it as jobs, in order, so a request's
// submission is always handled before its abort and its updates.
struct AsyncLLM::Impl {
  struct Submit {
    uint64_t id;
    Request request;
    EventCallback on_event;
    Clock::time_point submitted;
  };
  struct Updates {
    std::vector<SequenceUpdate> updates;
  };
  struct Abort {
    uint64_t id;
  };
  using Job = std::variant<Submit, Updates, Abort>;

  struct Live {
    EventCallback on_event;
    RequestOutput output;
    Clock::time_point submitted;
  };

  explicit Impl(const LLMOptions& options)
      : loaded(options),
        engine(make_serving_engine(
            loaded,
            [this](std::vector<SequenceUpdate> updates) { push(Updates{std::move(updates)}); })),
        text_thread([this](std::stop_token stop) { run(stop); }) {}

  void push(Job job) {
    {
      std::lock_guard lock(mutex);
      jobs.push_back(std::move(job));
    }
    wake.notify_one();
  }

  void run(std::stop_token stop) {
    while (true) {
      std::deque<Job> batch;
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, stop, [&] { return !jobs.empty(); });
        if (stop.stop_requested()) break;
        batch.swap(jobs);
      }
      for (Job& job : batch) {
        std::visit([this](auto& j) { handle(j); }, job);
      }
    }
    shut_down();
  }

  void handle(Submit& s) {
    std::vector<int32_t> tokens;
    try {
      tokens = loaded.tokenize_prompt(s.request);
    } catch (const std::exception& e) {
      return fail(s.id, s.on_event, e.what());
    }
    live.emplace(s.id, Live{.on_event = std::move(s.on_event),
                            .output = RequestOutput(*loaded.tokenizer, tokens, s.request.params),
                            .submitted = s.submitted});
    engine->add(s.id, std::move(tokens), s.request.params, s.request.priority);
  }

  void handle(Updates& u) {
    const RequestOutput::AbortFn abort = [this](uint64_t id, int32_t sample) {
      if (sample == RequestOutput::kAllSamples) {
        engine->abort(id);
      } else {
        engine->abort_sample(id, sample);
      }
    };
    for (const SequenceUpdate& update : u.updates) {
      const auto it = live.find(update.id);
      if (it == live.end()) continue;  // aborted while this update was on its way
      if (!update.error.empty()) {
        EventCallback on_event = std::move(it->second.on_event);
        live.erase(it);
        fail(update.id, on_event, update.error, update.engine_failed);
        continue;
      }
      StreamEvent event{.request_id = update.id, .index = update.sample};
      event.tokens = update.new_tokens;
      event.logprobs = update.logprobs;
      it->second.output.apply(update, abort, [&](std::string_view text) {
        event.text += text;
        return true;
      });
      if (it->second.output.done()) finish(event, it->second);
      deliver(it, event);
    }
  }

  void handle(Abort& a) {
    const auto it = live.find(a.id);
    if (it == live.end()) return;
    engine->abort(a.id);
    StreamEvent event{.request_id = a.id};
    finish(event, it->second);
    deliver(it, event);
  }

  void finish(StreamEvent& event, Live& request) {
    GenerationOutput output = request.output.output(request.submitted);
    event.finished = true;
    event.finish_reason = output.finish_reason;
    {
      std::lock_guard lock(finished_mutex);
      finished.count(output);
    }
    event.output = std::move(output);
  }

  // Calls the request's callback; the last event, or a callback that throws, ends the request.
  void deliver(std::map<uint64_t, Live>::iterator it, const StreamEvent& event) {
    try {
      it->second.on_event(event);
    } catch (...) {
      if (!event.finished) engine->abort(it->first);
      live.erase(it);
      return;
    }
    if (event.finished) live.erase(it);
  }

  void fail(uint64_t id, const EventCallback& on_event, const std::string& error,
            bool unavailable = false) {
    {
      std::lock_guard lock(finished_mutex);
      ++finished.failed;
    }
    StreamEvent event{.request_id = id,
                      .finished = true,
                      .finish_reason = FinishReason::kAborted,
                      .error = error,
                      .unavailable = unavailable};
    try {
      on_event(event);
    } catch (...) {
      // The request has ended either way; an exception must not end the text thread.
    }
  }

  // Every request still in flight, and every one not yet started, ends with a kAborted event.
  void shut_down() {
    std::deque<Job> pending;
    {
      std::lock_guard lock(mutex);
      pending.swap(jobs);
    }
    for (Job& job : pending) {
      if (Submit* s = std::get_if<Submit>(&job)) {
        live.emplace(s->id, Live{.on_event = std::move(s->on_event),
                                 .output = RequestOutput(*loaded.tokenizer, {}, s->request.params),
                                 .submitted = s->submitted});
      }
    }
    while (!live.empty()) {
      Abort abort{live.begin()->first};
      handle(abort);
    }
  }

  LoadedModel loaded;
  std::mutex mutex;
  std::condition_variable_any wake;
  std::deque<Job> jobs;
  std::atomic<uint64_t> next_id{1};
  mutable std::mutex finished_mutex;
  FinishCounts finished;
  std::map<uint64_t, Live> live;  // text thread only
  std::unique_ptr<ReplicaEngine> engine;
  std::jthread text_thread;  // destroyed first: no callback runs once the destructor proceeds
};

AsyncLLM::AsyncLLM(const LLMOptions& options) : impl_(std::make_unique<Impl>(options)) {}

AsyncLLM::~AsyncLLM() = default;

uint64_t AsyncLLM::add_request(Request request, EventCallback on_event) {
  const uint64_t id = impl_->next_id++;
  impl_->push(Impl::Submit{.id = id,
                           .request = std::move(request),
                           .on_event = std::move(on_event),
                           .submitted = Clock::now()});
  return id;
}

void AsyncLLM::abort(uint64_t id) {
  impl_->push(Impl::Abort{id});
}

EngineStats AsyncLLM::stats() const {
  EngineStats stats = impl_->engine->stats();
  std::lock_guard lock(impl_->finished_mutex);
  stats.finished_stop = impl_->finished.stop;
  stats.finished_length = impl_->finished.length;
  stats.finished_aborted = impl_->finished.aborted;
  stats.failed = impl_->finished.failed;
  return stats;
}

std::vector<EngineStats> AsyncLLM::replica_stats() const {
  return impl_->engine->replica_stats();
}

void AsyncLLM::load_lora_adapter(const LoraOptions& options) {
  impl_->engine->add_lora(read_lora_adapter(options, impl_->loaded.model->config()));
}

void AsyncLLM::unload_lora_adapter(const std::string& name) {
  impl_->engine->remove_lora(name);
}

ModelSummary AsyncLLM::summary() const {
  return impl_->loaded.summary();
}

std::vector<int32_t> AsyncLLM::tokenize(std::string_view text, bool add_special,
                                        bool parse_special) const {
  return impl_->loaded.tokenizer->encode(text, add_special, parse_special);
}

std::string AsyncLLM::detokenize(const std::vector<int32_t>& tokens) const {
  return impl_->loaded.tokenizer->decode(tokens);
}

std::string AsyncLLM::token_text(int32_t token) const {
  return impl_->loaded.tokenizer->token_to_piece(token, /*render_special=*/true);
}

ChatPrompt AsyncLLM::chat_prompt(const std::vector<ChatMessage>& messages,
                                 bool add_generation_prompt, const std::string& tools) const {
  return impl_->loaded.chat.format(messages, add_generation_prompt, tools);
}

bool AsyncLLM::chat_template_renders_tools() const {
  return impl_->loaded.chat.renders_tools();
}

}  // namespace baton
