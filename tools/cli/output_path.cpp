// SPDX-License-Identifier: Apache-2.0
#include "output_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace st_cli {

safetensors::error os_failure(const std::string& what, int err, const std::string& path) {
  safetensors::error e =
      safetensors::make_error(safetensors::error_code::io, fmt::format("{}: {}", what, std::strerror(err)));
  e.os_errno = err;
  e.path = path;
  return e;
}

namespace {

std::string parent_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

safetensors::status check_writable_dir(const std::string& dir, const std::string& output) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return os_failure(fmt::format("cannot write here: directory '{}'", dir), errno, output);
  }
  if (!S_ISDIR(st.st_mode)) return os_failure(fmt::format("cannot write here: '{}'", dir), ENOTDIR, output);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return os_failure(fmt::format("cannot write in directory '{}'", dir), errno, output);
  }
  return {};
}

}  // namespace

safetensors::status check_output_file(const std::string& path) {
  if (path.empty()) return os_failure("empty output path", ENOENT, path);
  std::string target = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return os_failure("cannot write the output", EISDIR, path);
    if (!S_ISREG(st.st_mode)) {
      safetensors::error e =
          safetensors::make_error(safetensors::error_code::io, "cannot replace the output: it is not a regular file");
      e.path = path;
      return e;
    }
    std::error_code ec;
    const auto resolved = std::filesystem::canonical(path, ec);  // the file a symlink leads to
    if (!ec) target = resolved.string();
  } else if (errno != ENOENT) {
    return os_failure("cannot check the output path", errno, path);
  } else if (path.back() == '/') {
    return os_failure("cannot write the output", EISDIR, path);
  }
  return check_writable_dir(parent_of(target), path);
}

safetensors::status check_output_dir(const std::string& path) {
  std::filesystem::path p(path.empty() ? "." : path);
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return os_failure("cannot write the output directory", ENOTDIR, path);
    return check_writable_dir(p.string(), path);
  }
  if (errno != ENOENT) return os_failure("cannot check the output directory", errno, path);
  // Created later with its missing parents: the nearest existing ancestor decides.
  for (p = p.parent_path(); !p.empty(); p = p.parent_path()) {
    if (::stat(p.c_str(), &st) == 0) return check_writable_dir(p.string(), path);
    if (errno != ENOENT) return os_failure("cannot check the output directory", errno, path);
    if (p == p.root_path()) break;
  }
  return check_writable_dir(".", path);
}

safetensors::status check_not_an_input(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (::stat(output.c_str(), &out) != 0) return {};
  for (const auto& in : inputs) {
    struct stat st {};
    if (::stat(in.c_str(), &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino) {
      safetensors::error e = safetensors::make_error(
          safetensors::error_code::invalid_argument,
          fmt::format("the output is the input '{}' (same file): refusing to overwrite an input", in));
      e.path = output;
      return e;
    }
  }
  return {};
}

std::vector<std::string> input_files(const safetensors::checkpoint& c) {
  std::vector<std::string> files;
  for (const auto& shard : c.shards()) files.push_back(shard.file.path());
  if (c.sharded()) files.push_back(c.index_path());
  return files;
}

safetensors::status check_checkpoint_outputs(const std::string& directory,
                                             std::span<const safetensors::tensor_spec> specs,
                                             const safetensors::shard_write_options& options,
                                             const std::vector<std::string>& inputs) {
  if (auto s = check_output_dir(directory); !s) return s;
  auto assignment = safetensors::assign_shards(specs, options);
  if (!assignment) return std::move(assignment).err();
  std::vector<std::string> files;
  for (const auto& name : assignment->file_names) files.push_back(directory + "/" + name);
  if (assignment->file_names.size() > 1) files.push_back(directory + "/" + options.prefix + ".safetensors.index.json");
  for (const auto& file : files) {
    if (auto s = check_not_an_input(file, inputs); !s) return s;
  }
  return {};
}

}  // namespace st_cli
