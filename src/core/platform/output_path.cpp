// SPDX-License-Identifier: Apache-2.0
// Output paths resolved one component at a time, so that every symlink on the way is seen
// and judged by the protected_symlinks rule before it is followed (realpath(3) would follow
// them all unseen: it reads links with readlink(2), which the kernel's rule does not cover).
#include "safetensors/output_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace safetensors {
namespace {

constexpr int max_symlink_hops = 40;  // Linux's MAXSYMLINKS

/// A path's components, without empty and "." ones.
std::deque<std::string> components_of(const std::string& path) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    start = slash + 1;
  }
  return parts;
}

/// A resolved, symlink-free path held as its components.
struct walked_path {
  bool absolute = false;
  std::vector<std::string> parts;

  [[nodiscard]] std::string text() const {
    std::string out = absolute ? "/" : (parts.empty() ? "." : "");
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) out += '/';
      out += parts[i];
    }
    return out;
  }
  [[nodiscard]] std::string with(const std::string& name) const {
    if (!absolute && parts.empty()) return name;
    const std::string dir = text();
    return dir == "/" ? dir + name : dir + "/" + name;
  }
  void up() {
    if (!parts.empty() && parts.back() != "..") {
      parts.pop_back();
    } else if (!absolute) {
      parts.emplace_back("..");  // above the working directory
    }
  }
};

error refused_link(const std::string& path, const std::string& link, uid_t link_owner, const std::string& dir,
                   uid_t dir_owner) {
  error e = make_error(error_code::io,
                       fmt::format("refusing to follow the symlink '{}' (owned by uid {}) in the sticky "
                                   "world-writable directory '{}' (owned by uid {}): there, only links owned by the "
                                   "directory's owner or by you are followed (the kernel's protected_symlinks rule), "
                                   "since anyone could have planted it; remove the link or write elsewhere",
                                   link, link_owner, dir, dir_owner));
  e.os_errno = EACCES;
  e.path = path;
  return e;
}

/// The protected_symlinks rule for the link `link_st` found in directory `dir`.
status check_followable(const std::string& path, const std::string& link, const struct stat& link_st,
                        const std::string& dir) {
  struct stat dir_st {};
  if (::stat(dir.c_str(), &dir_st) != 0) return {};  // the write fails later with the system's reason
  const bool sticky_world_writable = (dir_st.st_mode & S_ISVTX) != 0 && (dir_st.st_mode & S_IWOTH) != 0;
  if (!sticky_world_writable || link_st.st_uid == dir_st.st_uid || link_st.st_uid == ::geteuid()) return {};
  return refused_link(path, link, link_st.st_uid, dir, dir_st.st_uid);
}

result<std::string> read_link(const std::string& link, std::size_t size_hint) {
  std::string target(std::max<std::size_t>(size_hint, 255) + 1, '\0');
  for (;;) {
    const ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
    if (n < 0) {
      error e = make_error(error_code::io, fmt::format("cannot read the symlink '{}'", link));
      e.os_errno = errno;
      return e;
    }
    if (static_cast<std::size_t>(n) < target.size()) {
      target.resize(static_cast<std::size_t>(n));
      return target;
    }
    target.resize(target.size() * 2);
  }
}

}  // namespace

result<std::string> resolve_output_path(const std::string& path) {
  walked_path done;
  done.absolute = !path.empty() && path.front() == '/';
  std::deque<std::string> todo = components_of(path);
  int hops = 0;
  std::string final_link;  // the link that the path ends in, if any: a dangling one is replaced
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == "..") {
      done.up();
      continue;
    }
    const std::string candidate = done.with(part);
    struct stat st {};
    if (::lstat(candidate.c_str(), &st) != 0) {
      if (hops == 0) return path;  // nothing followed: the path is written as given
      if (todo.empty() && !final_link.empty()) return final_link;
      for (const auto& rest : todo) part += "/" + rest;
      return done.with(part);  // created (or refused by the system) later
    }
    if (!S_ISLNK(st.st_mode)) {
      done.parts.push_back(std::move(part));
      continue;
    }
    if (auto s = check_followable(path, candidate, st, done.text()); !s) return std::move(s).err();
    if (++hops > max_symlink_hops) {
      error e = make_error(error_code::io, "too many levels of symlinks in the output path");
      e.os_errno = ELOOP;
      e.path = path;
      return e;
    }
    auto target = read_link(candidate, static_cast<std::size_t>(st.st_size));
    if (!target) return std::move(target).err().with_path(path);
    if (todo.empty() && final_link.empty()) final_link = candidate;
    std::deque<std::string> inner = components_of(*target);
    todo.insert(todo.begin(), inner.begin(), inner.end());
    if (!target->empty() && target->front() == '/') done = walked_path{true, {}};
  }
  return hops == 0 ? path : done.text();
}

}  // namespace safetensors
