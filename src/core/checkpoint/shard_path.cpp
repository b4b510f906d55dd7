// SPDX-License-Identifier: Apache-2.0
// Confining shard names from an index to the index's directory.
#include <filesystem>

#include <fmt/format.h>

#include "checkpoint/index.h"

namespace safetensors {
namespace {

error unsafe(std::string_view name, std::string_view why) {
  return make_error(error_code::unsafe_path, fmt::format("unsafe shard name '{}': {}", name, why));
}

}  // namespace

std::string detail::parent_directory(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

status check_shard_name(std::string_view name) {
  if (name.empty()) return unsafe(name, "empty name");
  if (name.find('\0') != std::string_view::npos) return unsafe(name, "contains a NUL byte");
  if (name.front() == '/') return unsafe(name, "absolute path");
  // Windows rules too, as huggingface_hub applies them on every OS.
  if (name.find('\\') != std::string_view::npos) return unsafe(name, "contains a backslash");
  if (name.size() >= 2 && name[1] == ':') return unsafe(name, "drive letter");
  for (std::size_t begin = 0; begin <= name.size();) {
    std::size_t end = name.find('/', begin);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(begin, end - begin) == "..") return unsafe(name, "'..' component");
    begin = end + 1;
  }
  return {};
}

result<std::string> confined_shard_path(const std::string& directory, std::string_view name) {
  if (auto s = check_shard_name(name); !s) return std::move(s).err();
  std::string full = directory + "/" + std::string(name);
  // Symlinks: the resolved file must still be inside the resolved directory. A name that
  // does not resolve (missing file) is left for open() to report.
  std::error_code ec;
  const auto real_dir = std::filesystem::canonical(directory, ec);
  if (ec) return full;
  const auto real_file = std::filesystem::canonical(full, ec);
  if (ec) return full;
  const auto rel = real_file.lexically_relative(real_dir);
  if (rel.empty() || *rel.begin() == ".." || rel == ".") {
    return unsafe(name, fmt::format("resolves to '{}', outside '{}'", real_file.string(), real_dir.string()));
  }
  return full;
}

}  // namespace safetensors
