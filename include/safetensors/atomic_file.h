// SPDX-License-Identifier: Apache-2.0
/// \file atomic_file.h
/// A file that appears at its path complete or not at all: every writer of the library (and of
/// the formats component) publishes through it. Data goes into a temporary file in the
/// target's directory; commit() fsyncs it, renames it over the target and fsyncs the
/// directory. Destroying it uncommitted removes the temporary, and so does a signal (the
/// temporary is registered for safetensors/cleanup.h). A target that is a symlink is written
/// through (the link stays a link), under the protected_symlinks rule (output_path.h); a
/// replaced file keeps its permission bits; a new file gets 0666 less the umask, as `cp` gives.
/// A file known to be large (64 MiB and up) and written front to back goes to the device
/// directly (Linux O_DIRECT, through an 8 MiB buffer), so commit's fsync finds nothing left and
/// the page cache is not filled with it; elsewhere write-back starts as each 8 MiB is written.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "safetensors/error.h"

namespace safetensors {
namespace detail {
class direct_writes;
}  // namespace detail

class atomic_file {
 public:
  /// Creates the temporary file; sync() gives it its final size of `size` bytes (0: the size
  /// of what was written, for writers that cannot know it up front). `target()` is then the
  /// path that will be replaced (a symlink's final target: resolve_output_path, whose IoError
  /// refusing a planted symlink is returned as it is).
  [[nodiscard]] static result<atomic_file> create(const std::string& target, std::uint64_t size);

  atomic_file(atomic_file&& other) noexcept;
  atomic_file& operator=(atomic_file&& other) noexcept;
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;
  ~atomic_file();

  [[nodiscard]] status write_at(std::uint64_t offset, std::span<const std::byte> bytes);
  /// sync() then publish().
  [[nodiscard]] status commit();
  /// Phase one of commit: fsync and close the temporary; it stays unpublished (and is
  /// still removed by abort() or the destructor).
  [[nodiscard]] status sync();
  /// Phase two: rename the synced temporary over the target, fsync the directory.
  [[nodiscard]] status publish();
  void abort() noexcept;

  [[nodiscard]] const std::string& target() const noexcept { return target_; }
  [[nodiscard]] const std::string& temporary() const noexcept { return temp_; }

 private:
  atomic_file() = default;
  std::string target_;
  std::string temp_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  int registry_slot_ = -1;
  std::unique_ptr<detail::direct_writes> direct_;  // while writes continue one another
  /// Ends direct writing: what it gathered is written, and later writes are ordinary ones.
  [[nodiscard]] status end_direct();
};

}  // namespace safetensors
