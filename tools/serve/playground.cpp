#include "tools/serve/playground.h"

#include <string>

namespace baton::serve {
namespace {

std::string content_type(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace

void add_playground_routes(httplib::Server& http) {
  for (const EmbeddedFile& file : playground_files()) {
    const auto handler = [file](const httplib::Request&, httplib::Response& response) {
      // The files change with the binary, so a browser must ask again rather than keep an old
      // page beside a new server.
      response.set_header("Cache-Control", "no-cache");
      response.set_content(file.contents.data(), file.contents.size(), content_type(file.name));
    };
    std::string path = "/";
    path += file.name;
    http.Get(path, handler);
    if (file.name == "index.html") http.Get("/", handler);
  }
}

}  // namespace baton::serve
