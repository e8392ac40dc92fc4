#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/runtime/backend.h"

namespace baton {

// How a backend presents itself before it is created.
struct BackendEntry {
  std::string name;                      // what --backend and BATON_BACKEND take
  std::string description;               // one line for `baton backends`
  std::function<BackendStatus()> probe;  // cheap: is it usable on this host?
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> create;
};

// Every backend this process knows. Built-in backends add themselves from a static
// initialiser in their own source file (see BATON_REGISTER_BACKEND), so the core never names
// them; plugin backends are added when loaded (core/runtime/backend_plugin.h).
class BackendRegistry {
 public:
  static BackendRegistry& global();

  void add(BackendEntry entry);
  // Adds the entry, or puts it in the place of one of the same name: a plugin found later takes
  // over from a built-in stub (the NPU slot).
  void add_or_replace(BackendEntry entry);
  std::vector<BackendEntry> entries() const;
  std::vector<std::string> names() const;

  // Creates the named backend, loading its plugin (libbaton-backend-NAME.so) first when none
  // of that name is registered or the registered one is unusable here. Throws Error(kBackend)
  // naming the available backends and the plugin directories when the name is unknown, or the
  // reason when it is known but unusable here.
  std::unique_ptr<Backend> create(const std::string& name, const BackendOptions& options);

 private:
  mutable std::mutex mutex_;
  std::vector<BackendEntry> entries_;
};

// The backend to use when none is named: $BATON_BACKEND if set, else "cpu".
std::string default_backend_name();

}  // namespace baton

// Registers a built-in backend at start-up: BATON_REGISTER_BACKEND(cpu, make_cpu_backend_entry()).
#define BATON_REGISTER_BACKEND(id, entry_expr)          \
  namespace {                                           \
  const bool kRegistered_##id = [] {                    \
    ::baton::BackendRegistry::global().add(entry_expr); \
    return true;                                        \
  }();                                                  \
  }
