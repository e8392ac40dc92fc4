#include "tools/serve/server_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace baton::serve {
namespace {

const std::vector<double> kLatencyBuckets = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75,
                                             1.0,   2.5,  5.0,   7.5,  10,    20,  40,   80,  160};
const std::vector<double> kPerTokenBuckets = {0.001, 0.0025, 0.005, 0.01,  0.015, 0.02,
                                              0.03,  0.04,   0.05,  0.075, 0.1,   0.15,
                                              0.2,   0.3,    0.5,   0.75,  1.0,   2.5};
const std::vector<double> kTokenCountBuckets = {1,   8,   16,   32,   64,   128,
                                                256, 512, 1024, 2048, 4096, 8192};

// Shortest text that reads back as the same double, as Prometheus clients print values.
std::string number(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", v);
  for (int precision = 1; precision < 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof(shorter), "%.*g", precision, v);
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  return text;
}

void metric_header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, double value,
            const std::string& labels = "") {
  out += name + (labels.empty() ? "" : "{" + labels + "}") + " " + number(value) + "\n";
}

// A label value as the exposition format escapes it: backslash, double quote and newline.
std::string label_value(const std::string& value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + number(sum_) + "\n";
  out += name + "_count " + std::to_string(count_) + "\n";
}

namespace {

const char* type_name(MetricType type) {
  return type == MetricType::kCounter ? "counter" : "gauge";
}

double kv_cache_usage(const EngineStats& s) {
  return s.kv_blocks_total > 0 ? static_cast<double>(s.kv_blocks_used) / s.kv_blocks_total : 0.0;
}

// The engine's figures, from EngineStats' field table: one metric per field that names one, and
// fields that share a name as one labelled family.
void render_engine_stats(std::string& out, const EngineStats& s) {
  const char* previous = "";
  for_each_stat_field([&](const StatField& field, auto member) {
    if (field.metric_type == MetricType::kNone) return;
    if (std::string_view(field.metric) != previous) {
      metric_header(out, field.metric, type_name(field.metric_type), field.help);
    }
    previous = field.metric;
    sample(out, field.metric, static_cast<double>(s.*member), field.label);
  });
}

// Data parallelism: the engine's figures are sums over the replicas; these give each one's share
// of the fields the table marks per_replica, labelled replica="0", "1", ...
void render_replicas(std::string& out, const std::vector<EngineStats>& replicas) {
  const auto family = [&](const std::string& name, const char* type, const std::string& help,
                          const auto& value) {
    metric_header(out, name, type, help.c_str());
    for (size_t i = 0; i < replicas.size(); ++i) {
      sample(out, name, static_cast<double>(value(replicas[i])),
             "replica=\"" + std::to_string(i) + "\"");
    }
  };
  family("baton_replica_kv_cache_usage_ratio", "gauge",
         "Fraction of the replica's KV-cache blocks held by live sequences.", kv_cache_usage);
  for_each_stat_field([&](const StatField& field, auto member) {
    if (!field.per_replica) return;
    std::string help = field.help;
    if (help.ends_with('.')) help.pop_back();
    const std::string_view metric(field.metric);
    family("baton_replica_" + std::string(metric.substr(std::string_view("baton_").size())),
           type_name(field.metric_type), help + ", per replica.",
           [&](const EngineStats& r) { return r.*member; });
  });
}

}  // namespace

ServerMetrics::ServerMetrics()
    : ttft_(kLatencyBuckets),
      tpot_(kPerTokenBuckets),
      e2e_(kLatencyBuckets),
      queue_(kLatencyBuckets),
      prompt_tokens_(kTokenCountBuckets),
      output_tokens_(kTokenCountBuckets) {}

void ServerMetrics::observe(const StreamEvent& final_event, const std::string& adapter) {
  if (!final_event.output) return;
  const RequestMetrics& m = final_event.output->metrics;
  std::lock_guard lock(mutex_);
  if (!adapter.empty()) {
    AdapterCounts& counts = by_adapter_[adapter];
    ++counts.requests;
    counts.generated_tokens += static_cast<uint64_t>(m.output_tokens);
  }
  queue_.observe(m.queue_seconds);
  if (m.output_tokens > 0) ttft_.observe(m.ttft_seconds);
  if (m.output_tokens > 1) tpot_.observe(m.tpot_seconds);
  e2e_.observe(m.e2e_seconds);
  prompt_tokens_.observe(m.prompt_tokens);
  output_tokens_.observe(m.output_tokens);
}

void ServerMetrics::count_received(int64_t requests) {
  std::lock_guard lock(mutex_);
  received_ += static_cast<uint64_t>(requests);
}

void ServerMetrics::count_rejected(int64_t requests) {
  std::lock_guard lock(mutex_);
  rejected_ += static_cast<uint64_t>(requests);
}

void ServerMetrics::count_response(int status) {
  std::lock_guard lock(mutex_);
  ++responses_by_status_[status];
}

std::string ServerMetrics::render(const EngineStats& s, const std::vector<EngineStats>& replicas,
                                  int32_t in_flight) const {
  std::string out;
  const auto gauge = [&](const std::string& name, const char* help, double value) {
    metric_header(out, name, "gauge", help);
    sample(out, name, value);
  };
  const auto counter = [&](const std::string& name, const char* help, double value) {
    metric_header(out, name, "counter", help);
    sample(out, name, value);
  };
  gauge("baton_num_requests_in_flight", "HTTP-submitted requests not yet finished.", in_flight);
  gauge("baton_kv_cache_usage_ratio", "Fraction of KV-cache blocks held by live sequences.",
        kv_cache_usage(s));
  render_engine_stats(out, s);
  if (replicas.size() > 1) render_replicas(out, replicas);

  std::lock_guard lock(mutex_);
  counter("baton_requests_received_total",
          "Requests handed to the engine: finished, aborted, failed, rejected or in flight.",
          static_cast<double>(received_));
  counter("baton_requests_rejected_total",
          "Received requests refused before running (queue full, shutting down).",
          static_cast<double>(rejected_));
  metric_header(out, "baton_http_responses_total", "counter", "HTTP responses by status code.");
  for (const auto& [status, count] : responses_by_status_) {
    sample(out, "baton_http_responses_total", count, "code=\"" + std::to_string(status) + "\"");
  }
  const auto histogram = [&](const std::string& name, const char* help, const Histogram& h) {
    metric_header(out, name, "histogram", help);
    h.render(out, name);
  };
  histogram("baton_time_to_first_token_seconds", "Time to first token.", ttft_);
  histogram("baton_time_per_output_token_seconds", "Mean time per output token after the first.",
            tpot_);
  histogram("baton_e2e_request_latency_seconds", "End-to-end request latency.", e2e_);
  histogram("baton_request_queue_time_seconds", "Time waiting before the first schedule.", queue_);
  histogram("baton_request_prompt_tokens", "Prompt tokens per request.", prompt_tokens_);
  histogram("baton_request_generation_tokens", "Generated tokens per request.", output_tokens_);
  if (!by_adapter_.empty()) {
    metric_header(out, "baton_lora_requests_total", "counter",
                  "Finished requests by LoRA adapter.");
    for (const auto& [adapter, counts] : by_adapter_) {
      sample(out, "baton_lora_requests_total", static_cast<double>(counts.requests),
             "adapter=\"" + label_value(adapter) + "\"");
    }
    metric_header(out, "baton_lora_generation_tokens_total", "counter",
                  "Tokens generated by finished requests, by LoRA adapter.");
    for (const auto& [adapter, counts] : by_adapter_) {
      sample(out, "baton_lora_generation_tokens_total",
             static_cast<double>(counts.generated_tokens),
             "adapter=\"" + label_value(adapter) + "\"");
    }
  }
  return out;
}

}  // namespace baton::serve
