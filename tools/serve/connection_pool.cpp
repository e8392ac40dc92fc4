#include "tools/serve/connection_pool.h"

namespace baton::serve {
namespace {

// Refusing takes one short write per request, so two threads keep up with a flood; a refused
// client that holds its connection open only delays the next refusal by httplib's read timeout.
constexpr size_t kRefusalThreads = 2;

thread_local bool refusing = false;

}  // namespace

ConnectionPool::ConnectionPool(size_t max_connections)
    : max_connections_(max_connections), served_(max_connections), refusals_(kRefusalThreads) {}

void ConnectionPool::enqueue(std::function<void()> serve_connection) {
  if (open_.fetch_add(1) < max_connections_) {
    served_.enqueue([this, serve = std::move(serve_connection)] {
      serve();
      open_.fetch_sub(1);
    });
    return;
  }
  open_.fetch_sub(1);
  refusals_.enqueue([serve = std::move(serve_connection)] {
    refusing = true;
    serve();
    refusing = false;
  });
}

void ConnectionPool::shutdown() {
  served_.shutdown();
  refusals_.shutdown();
}

bool ConnectionPool::refusing_connection() {
  return refusing;
}

}  // namespace baton::serve
