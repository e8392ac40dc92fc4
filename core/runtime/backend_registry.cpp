#include "core/runtime/backend_registry.h"

#include <algorithm>
#include <cstdlib>

#include "baton/error.h"
#include "core/runtime/backend_plugin.h"

namespace baton {

BackendRegistry& BackendRegistry::global() {
  static BackendRegistry registry;
  return registry;
}

void BackendRegistry::add(BackendEntry entry) {
  std::lock_guard lock(mutex_);
  for (const BackendEntry& e : entries_) {
    if (e.name == entry.name) {
      throw Error(ErrorCategory::kInternal, "backend '" + entry.name + "' registered twice");
    }
  }
  entries_.push_back(std::move(entry));
}

void BackendRegistry::add_or_replace(BackendEntry entry) {
  std::lock_guard lock(mutex_);
  for (BackendEntry& e : entries_) {
    if (e.name == entry.name) {
      e = std::move(entry);
      return;
    }
  }
  entries_.push_back(std::move(entry));
}

std::vector<BackendEntry> BackendRegistry::entries() const {
  std::lock_guard lock(mutex_);
  return entries_;
}

std::vector<std::string> BackendRegistry::names() const {
  std::vector<std::string> out;
  for (const BackendEntry& e : entries()) out.push_back(e.name);
  return out;
}

std::unique_ptr<Backend> BackendRegistry::create(const std::string& name,
                                                 const BackendOptions& options) {
  const std::vector<BackendEntry> known = entries();
  const auto it = std::ranges::find(known, name, &BackendEntry::name);
  if (it == known.end() || !it->probe().usable) load_backend_plugin(*this, name);
  std::string usable;
  for (const BackendEntry& e : entries()) {
    const BackendStatus status = e.probe();
    if (status.usable) usable += (usable.empty() ? "" : ", ") + e.name;
    if (e.name != name) continue;
    if (!status.usable) {
      throw Error(ErrorCategory::kBackend,
                  "backend '" + name + "' is not usable on this host: " + status.detail);
    }
    return e.create(options);
  }
  std::string searched;
  for (const auto& dir : backend_plugin_directories()) {
    searched += (searched.empty() ? "" : ", ") + dir.string();
  }
  throw Error(ErrorCategory::kBackend, "unknown backend '" + name +
                                           "'; available: " + (usable.empty() ? "none" : usable) +
                                           " (no plugin libbaton-backend-" + name + ".so in " +
                                           searched + "; BATON_BACKEND_PATH adds directories)");
}

std::string default_backend_name() {
  const char* env = std::getenv("BATON_BACKEND");
  return env && *env ? env : "cpu";
}

}  // namespace baton
