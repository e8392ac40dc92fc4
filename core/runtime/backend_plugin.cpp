#include "core/runtime/backend_plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "baton/error.h"
#include "core/runtime/backend_plugin_abi.h"

namespace baton {
namespace {

constexpr std::string_view kPrefix = "libbaton-backend-";
constexpr std::string_view kSuffix = ".so";

std::filesystem::path plugin_file_name(const std::string& name) {
  return std::string(kPrefix) + name + std::string(kSuffix);
}

std::filesystem::path executable_directory() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : exe.parent_path();
}

// Where this code was loaded from: libbaton.so, or an executable that links Baton statically.
std::filesystem::path library_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&backend_plugin_directories), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  return std::filesystem::absolute(info.dli_fname).parent_path();
}

BackendEntry unusable_entry(const std::string& name, const std::filesystem::path& path,
                            const std::string& reason) {
  const std::string detail = path.string() + ": " + reason;
  return BackendEntry{
      .name = name,
      .description = "plugin " + path.filename().string(),
      .probe = [detail] { return BackendStatus{.usable = false, .detail = detail}; },
      .create = [name, detail](const BackendOptions&) -> std::unique_ptr<Backend> {
        throw Error(ErrorCategory::kBackend,
                    "backend '" + name + "' is not usable on this host: " + detail);
      }};
}

// Opens one plugin file. The library is never closed: backends it created may outlive any
// registry entry, and their code lives in it.
BackendEntry open_plugin(const std::string& name, const std::filesystem::path& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return unusable_entry(name, path,
                          std::string("cannot be loaded: ") + (why ? why : "unknown dlopen error"));
  }
  using EntryPoint = const BackendPluginInfo* (*)(uint32_t);
  const auto entry = reinterpret_cast<EntryPoint>(dlsym(handle, "baton_backend_plugin_entry"));
  if (entry == nullptr) {
    return unusable_entry(name, path,
                          "is not a Baton backend plugin (no baton_backend_plugin_entry symbol)");
  }
  const BackendPluginInfo* info = entry(kBackendAbiVersion);
  if (info == nullptr || info->abi_version != kBackendAbiVersion) {
    return unusable_entry(name, path,
                          "was built for backend ABI version " +
                              (info ? std::to_string(info->abi_version) : std::string("unknown")) +
                              " but this Baton uses version " + std::to_string(kBackendAbiVersion) +
                              "; rebuild the plugin from the same Baton source");
  }
  if (info->name == nullptr || info->name != name) {
    return unusable_entry(name, path,
                          "registers the backend '" + std::string(info->name ? info->name : "") +
                              "', not '" + name + "' as its file name says");
  }
  return BackendEntry{.name = name,
                      .description = info->description ? info->description : name,
                      .probe = info->probe,
                      .create = info->create};
}

}  // namespace

std::vector<std::filesystem::path> backend_plugin_directories() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("BATON_BACKEND_PATH"); env && *env) {
    std::stringstream paths(env);
    for (std::string dir; std::getline(paths, dir, ':');) {
      if (!dir.empty()) dirs.emplace_back(dir);
    }
  }
  // The plugins built with this library come before the executable's: a program that embeds
  // Baton (Python, with the package's own libbaton) may sit beside another installation's.
  if (const std::filesystem::path lib = library_directory(); !lib.empty()) dirs.push_back(lib);
  if (const std::filesystem::path exe = executable_directory(); !exe.empty()) {
    dirs.push_back(exe);
    dirs.push_back((exe / ".." / "lib").lexically_normal());
  }
  std::vector<std::filesystem::path> unique;
  for (const auto& dir : dirs) {
    if (std::ranges::find(unique, dir) == unique.end()) unique.push_back(dir);
  }
  return unique;
}

bool load_backend_plugin(BackendRegistry& registry, const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return false;
  for (const std::filesystem::path& dir : backend_plugin_directories()) {
    const std::filesystem::path path = dir / plugin_file_name(name);
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) continue;
    registry.add_or_replace(open_plugin(name, path));
    return true;
  }
  return false;
}

void load_all_backend_plugins(BackendRegistry& registry) {
  std::set<std::string> names;
  for (const std::filesystem::path& dir : backend_plugin_directories()) {
    std::error_code error;
    for (const auto& file : std::filesystem::directory_iterator(dir, error)) {
      const std::string file_name = file.path().filename().string();
      if (file_name.size() > kPrefix.size() + kSuffix.size() && file_name.starts_with(kPrefix) &&
          file_name.ends_with(kSuffix)) {
        names.insert(
            file_name.substr(kPrefix.size(), file_name.size() - kPrefix.size() - kSuffix.size()));
      }
    }
  }
  for (const std::string& name : names) load_backend_plugin(registry, name);
}

}  // namespace baton
