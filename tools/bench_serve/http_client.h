#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace httplib {
class Client;
}

namespace baton::bench_serve {

// A server URL split the way httplib wants it: "http://host:8000/prefix" becomes origin
// "http://host:8000" and base path "/prefix" (empty when the URL has no path), which is put in
// front of every request path.
struct ServerAddress {
  std::string origin;
  std::string base_path;
};

// Throws baton::Error naming `url` unless it is http:// or https:// with a host.
ServerAddress parse_server_url(const std::string& url);

// The outcome of one request. `transport_error` is set when no complete HTTP response arrived
// (connection refused, timeout, stream cut off, or the body receiver asked to stop).
struct HttpResponse {
  int status = 0;
  std::string body;
  std::string transport_error;
};

// One keep-alive connection to the server; not for use by two threads at once.
class HttpClient {
 public:
  // `timeout_s` bounds each wait for bytes from the server (not the whole request).
  HttpClient(const ServerAddress& address, const std::string& api_key, double timeout_s);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResponse get(const std::string& path);

  // POSTs a JSON body. A 200 response's body goes to `on_body` piece by piece as it arrives
  // (returning false stops the transfer) and is not kept; any other status keeps its body in
  // the response, for the error message.
  HttpResponse post(const std::string& path, const std::string& json_body,
                    const std::function<bool(std::string_view)>& on_body);

 private:
  std::string base_path_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace baton::bench_serve
