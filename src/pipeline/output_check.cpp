// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/output_check.h"

#include "safetensors/checkpoint_write.h"
#include "safetensors/cleanup.h"
#include "safetensors/output_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace safetensors::pipeline {

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

/// "a character device", ... for what is not a regular file or a directory.
const char* kind_of(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

safetensors::status check_writable_dir(const std::string& dir, const std::string& output) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return os_failure(fmt::format("cannot write here: directory '{}'", dir), errno, output);
  }
  if (!S_ISDIR(st.st_mode)) return os_failure(fmt::format("cannot write here: '{}'", dir), ENOTDIR, output);
  // The caller's own permissions (and EROFS for a read-only file system).
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return os_failure(fmt::format("cannot write in directory '{}'", dir), errno, output);
  }
  return {};
}

safetensors::status check_not_an_input(const std::string& output, const struct stat& out,
                                       std::span<const std::string> inputs) {
  for (const auto& in : inputs) {
    struct stat st {};
    if (::stat(in.c_str(), &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino) {
      return safetensors::make_error(
                 safetensors::error_code::invalid_argument,
                 fmt::format("the output is the input '{}' (same file): refusing to overwrite an input", in))
          .with_path(output);
    }
  }
  return {};
}

/// `path` without trailing slashes ("/" stays "/").
std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

safetensors::status check_output(const std::string& path, std::span<const std::string> inputs, in_place rule) {
  if (path.empty()) return os_failure("empty output path", ENOENT, path);
  // The temporary is made beside the file a symlink leads to; a link planted in a sticky
  // directory is refused here, before anything is written.
  auto landing = safetensors::resolve_output_path(path);
  if (!landing) return std::move(landing).err();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return os_failure("cannot write the output", EISDIR, path);
    if (!S_ISREG(st.st_mode)) {
      return safetensors::make_error(
                 safetensors::error_code::io,
                 fmt::format("cannot replace the output: it is {}, not a regular file", kind_of(st.st_mode)))
          .with_path(path);
    }
    if (rule == in_place::refuse) {
      if (auto s = check_not_an_input(path, st, inputs); !s) return s;
    }
  } else if (errno != ENOENT) {
    return os_failure("cannot check the output path", errno, path);
  } else if (path.back() == '/') {
    return os_failure("cannot write the output", EISDIR, path);
  }
  return check_writable_dir(parent_of(*landing), path);
}

safetensors::status check_output_dir(const std::string& path) {
  std::filesystem::path p(path.empty() ? "." : without_trailing_slashes(path));
  if (auto landing = safetensors::resolve_output_path(p.string()); !landing) return std::move(landing).err();
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

std::uint64_t default_output_budget(std::uint64_t input_bytes) noexcept {
  std::uint64_t budget = 0;
  if (__builtin_mul_overflow(input_bytes, output_budget_ratio, &budget)) return UINT64_MAX;
  return std::max(budget, output_budget_floor);
}

safetensors::status check_output_budget(std::uint64_t planned, std::uint64_t input_bytes,
                                        std::uint64_t max_output_bytes, std::string_view option) {
  const std::uint64_t limit = max_output_bytes != 0 ? max_output_bytes : default_output_budget(input_bytes);
  if (planned <= limit) return {};
  const std::string why = max_output_bytes != 0
                              ? fmt::format("as {} sets it", option)
                              : fmt::format("the default: {} times the {}-byte input, at least {} bytes",
                                            output_budget_ratio, input_bytes, output_budget_floor);
  return safetensors::make_error(
      safetensors::error_code::limit_exceeded,
      fmt::format("the output would hold {} bytes of tensor data, over the output budget of {} bytes ({}): refusing "
                  "a likely amplification (tensors sharing one storage or overlapping data, each written in full); "
                  "raise the budget with {} if this output is expected",
                  planned, limit, why, option));
}

bool is_directory_path(const std::string& path) {
  std::error_code ec;
  return (!path.empty() && path.back() == '/') || std::filesystem::is_directory(path, ec);
}

std::vector<std::string> input_files(const safetensors::checkpoint& c) {
  std::vector<std::string> files;
  for (const auto& shard : c.shards()) files.push_back(shard.file.path());
  if (c.sharded()) files.push_back(c.index_path());
  return files;
}

safetensors::result<std::vector<std::string>> checkpoint_output_names(std::span<const safetensors::tensor_spec> specs,
                                                                      const safetensors::shard_write_options& options) {
  auto assignment = safetensors::assign_shards(specs, options);
  if (!assignment) return std::move(assignment).err();
  std::vector<std::string> names = std::move(assignment->file_names);
  if (names.size() > 1) names.push_back(options.prefix + ".safetensors.index.json");
  return names;
}

safetensors::status check_checkpoint_outputs(const std::string& directory,
                                             std::span<const safetensors::tensor_spec> specs,
                                             const safetensors::shard_write_options& options,
                                             std::span<const std::string> inputs) {
  if (auto s = check_output_dir(directory); !s) return s;
  auto names = checkpoint_output_names(specs, options);
  if (!names) return std::move(names).err();
  const std::string dir = without_trailing_slashes(directory);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {};  // created later: nothing there to collide with
  for (const auto& name : *names) {
    if (auto s = check_output(dir + "/" + name, inputs); !s) return s;
  }
  return {};
}

safetensors::result<safetensors::shard_assignment> write_checkpoint_output(
    const std::string& directory, std::span<const safetensors::tensor_spec> specs,
    const safetensors::tensor_producer& produce, const safetensors::shard_write_options& options,
    std::span<const std::string> inputs) {
  if (auto s = check_checkpoint_outputs(directory, specs, options, inputs); !s) return std::move(s).err();
  auto names = checkpoint_output_names(specs, options);
  if (!names) return std::move(names).err();
  auto created = created_directory::create(directory);
  if (!created) return std::move(created).err();
  created->remember(std::move(names).value());
  auto written = safetensors::write_checkpoint(without_trailing_slashes(directory), specs, produce, options);
  if (written) created->keep();
  return written;
}

safetensors::result<created_directory> created_directory::create(const std::string& path) {
  created_directory d;
  d.path_ = without_trailing_slashes(path);
  std::error_code ec;
  for (std::filesystem::path p(d.path_); !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    d.created_.push_back(p.string());
    if (p == p.root_path()) break;
  }
  std::filesystem::create_directories(d.path_, ec);
  if (ec) return os_failure("cannot create the output directory", ec.value(), path);
  for (const auto& dir : d.created_) d.on_signal_.push_back(safetensors::remember_created_directory(dir));
  return d;
}

created_directory::created_directory(created_directory&& other) noexcept
    : path_(std::move(other.path_)),
      created_(std::move(other.created_)),
      on_signal_(std::move(other.on_signal_)),
      files_(std::move(other.files_)) {
  other.created_.clear();
  other.on_signal_.clear();
}

void created_directory::keep() noexcept {
  for (int handle : on_signal_) safetensors::forget_created_directory(handle);
  on_signal_.clear();
  created_.clear();
}

created_directory::~created_directory() {
  for (int handle : on_signal_) safetensors::forget_created_directory(handle);
  if (created_.empty()) return;
  // The output directory is new: whatever the write left there is its own.
  for (const auto& name : files_) ::unlink((path_ + "/" + name).c_str());
  for (const auto& dir : created_) {
    if (::rmdir(dir.c_str()) != 0) break;  // not empty: someone else's files stay
  }
}

}  // namespace safetensors::pipeline
