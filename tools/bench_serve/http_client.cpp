#include "tools/bench_serve/http_client.h"

#include <httplib.h>

#include <chrono>

#include "baton/error.h"

namespace baton::bench_serve {
namespace {

// A server that has not accepted a connection after this long is down or unreachable; failing
// fast beats waiting the full read timeout.
constexpr std::chrono::seconds kConnectTimeout{10};

// httplib names its errors in one word ("Connection", "Read"); say what happened.
std::string describe(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "could not connect (refused or unreachable)";
    case httplib::Error::ConnectionTimeout:
      return "timed out connecting";
    case httplib::Error::Read:
      return "connection closed or timed out while reading the response";
    case httplib::Error::Write:
      return "connection failed while sending the request";
    default:
      return httplib::to_string(error);
  }
}

}  // namespace

ServerAddress parse_server_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    throw Error(ErrorCategory::kInvalidArgument,
                "--url '" + url + "' must start with http:// or https://");
  }
  const size_t host_begin = scheme_end + 3;
  const size_t path_begin = url.find('/', host_begin);
  if (path_begin == host_begin || host_begin == url.size()) {
    throw Error(ErrorCategory::kInvalidArgument, "--url '" + url + "' has no host");
  }
  ServerAddress address{.origin = url.substr(0, path_begin)};
  if (path_begin != std::string::npos) address.base_path = url.substr(path_begin);
  while (!address.base_path.empty() && address.base_path.back() == '/') {
    address.base_path.pop_back();
  }
  return address;
}

HttpClient::HttpClient(const ServerAddress& address, const std::string& api_key, double timeout_s)
    : base_path_(address.base_path), client_(std::make_unique<httplib::Client>(address.origin)) {
  if (!client_->is_valid()) {
    throw Error(ErrorCategory::kInvalidArgument, "cannot use server URL " + address.origin);
  }
  // A connection per request: servers close kept-alive connections on their own terms
  // (llama-server after 5 requests or 5 s idle), and a request sent on a connection the server
  // is closing fails. Connecting costs microseconds next to a generation.
  client_->set_keep_alive(false);
  // httplib writes headers and body separately; with Nagle's algorithm the body could wait for
  // the server's delayed ACK, adding up to 40 ms to every measured latency.
  client_->set_tcp_nodelay(true);
  client_->set_connection_timeout(kConnectTimeout);
  client_->set_read_timeout(std::chrono::duration<double>(timeout_s));
  if (!api_key.empty()) client_->set_bearer_token_auth(api_key);
}

HttpClient::~HttpClient() = default;

HttpResponse HttpClient::get(const std::string& path) {
  HttpResponse out;
  const httplib::Result result = client_->Get(base_path_ + path);
  if (!result) {
    out.transport_error = describe(result.error());
    return out;
  }
  out.status = result->status;
  out.body = result->body;
  return out;
}

HttpResponse HttpClient::post(const std::string& path, const std::string& json_body,
                              const std::function<bool(std::string_view)>& on_body) {
  HttpResponse out;
  httplib::Request req;
  req.method = "POST";
  req.path = base_path_ + path;
  req.body = json_body;
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "application/json, text/event-stream");
  req.response_handler = [&out](const httplib::Response& res) {
    out.status = res.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (out.status != 200) {
      out.body.append(data, size);
      return true;
    }
    return on_body(std::string_view(data, size));
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  if (!client_->send(req, res, error)) out.transport_error = describe(error);
  return out;
}

}  // namespace baton::bench_serve
