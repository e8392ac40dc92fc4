#pragma once

#include <httplib.h>

#include <span>
#include <string_view>

namespace baton::serve {

// A file built into the binary (see cmake/embed_files.cmake).
struct EmbeddedFile {
  std::string_view name;  // file name, without its directory
  std::string_view contents;
};

// The browser playground's files from tools/serve/playground/, embedded at build time so an
// installed binary needs no data files.
std::span<const EmbeddedFile> playground_files();

// Serves the playground: index.html at / and /index.html, the other files at /NAME. These routes
// need no API key; the page asks for one and sends it to /v1.
void add_playground_routes(httplib::Server& http);

}  // namespace baton::serve
