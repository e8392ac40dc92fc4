#include "tools/bench_serve/server_counters.h"

#include <sstream>

#include "tools/bench_serve/http_client.h"

namespace baton::bench_serve {
namespace {

// The value of an unlabelled sample "name value" on its own line.
std::optional<int64_t> sample_value(const std::string& page, const std::string& name) {
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) != 0) continue;
    try {
      return static_cast<int64_t>(std::stod(line.substr(name.size() + 1)));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<ServerCounters> parse_server_counters(const std::string& metrics_page) {
  const std::optional<int64_t> preemptions = sample_value(metrics_page, "baton_preemptions_total");
  const std::optional<int64_t> recomputed =
      sample_value(metrics_page, "baton_recomputed_tokens_total");
  if (!preemptions || !recomputed) return std::nullopt;
  return ServerCounters{.preemptions = *preemptions,
                        .recomputed_tokens = *recomputed,
                        .suspensions = sample_value(metrics_page, "baton_suspensions_total")};
}

std::optional<ServerCounters> scrape_server_counters(const LoadOptions& options) {
  HttpClient client(parse_server_url(options.url), options.api_key, options.timeout_s);
  const HttpResponse response = client.get("/metrics");
  if (!response.transport_error.empty() || response.status != 200) return std::nullopt;
  return parse_server_counters(response.body);
}

}  // namespace baton::bench_serve
