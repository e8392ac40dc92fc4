#pragma once

#include <map>
#include <mutex>
#include <string>

namespace baton::serve {

// The LoRA adapters a server answers to by model name, and where each was loaded from.
// Thread-safe: the runtime load and unload routes change it while requests read it.
class ServedAdapters {
 public:
  void add(const std::string& name, const std::string& path) {
    std::lock_guard lock(mutex_);
    paths_[name] = path;
  }
  void remove(const std::string& name) {
    std::lock_guard lock(mutex_);
    paths_.erase(name);
  }
  bool contains(const std::string& name) const {
    std::lock_guard lock(mutex_);
    return paths_.contains(name);
  }
  // Name to path, in name order.
  std::map<std::string, std::string> list() const {
    std::lock_guard lock(mutex_);
    return paths_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> paths_;
};

}  // namespace baton::serve
