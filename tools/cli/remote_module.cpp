// SPDX-License-Identifier: Apache-2.0
#include "remote_module.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "safetensors/location.h"
#include "safetensors/version.h"

namespace st_cli {
namespace {

namespace st = safetensors;
namespace fs = std::filesystem;

#if SAFETENSORS_HAVE_REMOTE
constexpr const char* module_file = "safetensors-remote.so";

using module_entry = const std::shared_ptr<const st::store_provider>* (*)(const char*);

/// Where the module may be: $SAFETENSORS_REMOTE_MODULE alone when set; else beside the
/// executable (the build tree), then where the install puts it relative to the executable.
std::vector<fs::path> module_candidates() {
  if (const char* given = std::getenv("SAFETENSORS_REMOTE_MODULE"); given != nullptr && *given != '\0') {
    return {fs::path(given)};
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path dir = exe.parent_path();
  return {dir / module_file, (dir / SAFETENSORS_REMOTE_MODULE_DIR / module_file).lexically_normal()};
}

st::error module_error(std::string message) { return st::make_error(st::error_code::unsupported, std::move(message)); }

st::result<std::shared_ptr<const st::store_provider>> load_module() {
  const std::vector<fs::path> candidates = module_candidates();
  std::vector<std::string> looked;
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      looked.push_back(p.string());
      continue;
    }
    // Never closed: the stores and files it makes live until the process ends.
    void* handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      return module_error(
          fmt::format("reading http(s) URLs needs the remote module, and {} does not load: {}", p.string(), dlerror()));
    }
    auto entry = reinterpret_cast<module_entry>(dlsym(handle, "safetensors_remote_module_v1"));
    const auto* provider = entry != nullptr ? entry(SAFETENSORS_VERSION_STRING) : nullptr;
    if (provider == nullptr || *provider == nullptr) {
      return module_error(
          fmt::format("the remote module {} is not the one of safetensors {}", p.string(), SAFETENSORS_VERSION_STRING));
    }
    return *provider;
  }
  return module_error(
      fmt::format("reading http(s) URLs needs the remote module {}, which is not installed: looked for {} (or set "
                  "SAFETENSORS_REMOTE_MODULE to its path)",
                  module_file, fmt::join(looked, " and ")));
}

/// Loads the module once, at the first URL; every later URL gets its provider (or its error).
class module_provider final : public st::store_provider {
 public:
  st::result<std::shared_ptr<const st::checkpoint_store>> store(const st::url_options& options) const override {
    static const st::result<std::shared_ptr<const st::store_provider>> loaded = load_module();
    if (!loaded) return st::error(loaded.err());
    return (*loaded)->store(options);
  }
};
#else
class module_provider final : public st::store_provider {
 public:
  st::result<std::shared_ptr<const st::checkpoint_store>> store(const st::url_options&) const override {
    return st::make_error(st::error_code::unsupported, "this build reads no URLs (it was built without libcurl)");
  }
};
#endif

}  // namespace

void register_remote_module() {
  const auto provider = std::make_shared<const module_provider>();
  for (const char* scheme : {"http", "https"}) (void)st::register_store_provider(scheme, provider);
}

}  // namespace st_cli
