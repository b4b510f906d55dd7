// SPDX-License-Identifier: Apache-2.0
// Test helper: installs a system-call table (src/core/platform/sys.h) that fails or shortens
// chosen calls, counting every call so a test can sweep "fail the k-th call".
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "platform/sys.h"

namespace st_test {

enum class sys_call : std::uint8_t {
  open,
  close,
  fstat,
  pread,
  read,
  pwrite,
  fsync,
  ftruncate,
  rename,
  unlink,
  mmap,
  munmap,
  sync_file_range,
  set_direct_io
};
inline constexpr std::size_t sys_call_count = 14;

/// "open", "pread", ...
const char* sys_call_name(sys_call c);

/// One fault: calls of kind `call` numbered [first, first + times) (1-based, per kind) fail
/// with `err`, or, when `err` is 0, transfer at most `short_to` bytes (pread/read/pwrite).
struct fault {
  sys_call call = sys_call::pread;
  int err = 0;
  std::size_t short_to = 0;
  std::uint64_t first = 1;
  std::uint64_t times = 1;
};

/// While alive, routes the library's system calls through the injector. Not thread-safe.
class fault_injector {
 public:
  explicit fault_injector(std::vector<fault> faults = {});
  ~fault_injector();
  fault_injector(const fault_injector&) = delete;
  fault_injector& operator=(const fault_injector&) = delete;

  /// Fails the `k`-th call of any kind (1-based, counted over all calls) with `err`,
  /// skipping the kinds in `spared`.
  void fail_nth_call(std::uint64_t k, int err, std::vector<sys_call> spared = {});

  [[nodiscard]] std::uint64_t calls(sys_call c) const { return counts_[static_cast<std::size_t>(c)]; }
  [[nodiscard]] std::uint64_t total_calls() const { return total_; }
  /// Bytes that calls of kind `c` (pread, read, pwrite) transferred.
  [[nodiscard]] std::uint64_t bytes(sys_call c) const { return bytes_[static_cast<std::size_t>(c)]; }
  /// Calls that the injector failed or shortened.
  [[nodiscard]] std::uint64_t injected() const { return injected_; }

  /// Internal: decides the fate of the next call of kind `c`. Returns the errno to fail
  /// with (0: do not fail) and lowers `n` for a short transfer.
  int next(sys_call c, std::size_t* n);
  /// Internal: records `n` bytes transferred by a call of kind `c`.
  void add_bytes(sys_call c, ssize_t n) {
    if (n > 0) bytes_[static_cast<std::size_t>(c)] += static_cast<std::uint64_t>(n);
  }

 private:
  std::vector<fault> faults_;
  std::array<std::uint64_t, sys_call_count> counts_{};
  std::array<std::uint64_t, sys_call_count> bytes_{};
  std::uint64_t total_ = 0;
  std::uint64_t injected_ = 0;
  std::uint64_t nth_ = 0;
  int nth_err_ = 0;
  std::vector<sys_call> spared_;
  safetensors::detail::sys::scoped_override override_;
};

/// Names of the entries of `dir`, sorted (to check for stray temporaries).
std::vector<std::string> list_dir(const std::filesystem::path& dir);

/// Open file descriptors of this process (to check for leaks).
std::size_t open_fd_count();

}  // namespace st_test
