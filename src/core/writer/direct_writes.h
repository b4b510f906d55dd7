// SPDX-License-Identifier: Apache-2.0
// Internal: a large file written front to back around the page cache (atomic_file's fast path).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <string>

#include "safetensors/error.h"

namespace safetensors::detail {

/// Writes that continue one another go to the device directly (O_DIRECT): they gather in an
/// aligned 8 MiB buffer that is written whole, by a helper thread while the caller fills the
/// other of two buffers (a converter's CPU work and the disk overlap, as write-back overlaps
/// them for buffered writes). No page-cache page is allocated, filled and written back, so the
/// fsync at commit finds nothing left: a 1 GiB save with its fsync took 0.8-0.95 s this way
/// against 2.5-4.6 s through the page cache with write-back started as it went (2026-12-05, a
/// 2-vCPU VM whose host backs fresh guest memory slowly; docs/python.md). Anything else (a write
/// out of sequence, a file system that refuses direct I/O or a short write) falls back to
/// ordinary writes for the rest of the file. A failed write is reported by the call after it.
class direct_writes {
 public:
  /// Files known to be at least this large are written directly; smaller ones gain nothing.
  static constexpr std::uint64_t min_file_size = std::uint64_t{64} << 20;

  /// Turns direct I/O on for `fd` (a new, empty file); nullptr where it cannot be.
  [[nodiscard]] static std::unique_ptr<direct_writes> start(int fd);
  ~direct_writes();
  direct_writes(const direct_writes&) = delete;
  direct_writes& operator=(const direct_writes&) = delete;

  /// Whether a write at `offset` continues what was written (the only writes taken).
  [[nodiscard]] bool continues(std::uint64_t offset) const noexcept { return offset == end_; }
  /// Whether writes still go directly (false once the file system refused or cut one short).
  [[nodiscard]] bool direct() const noexcept { return direct_.load(); }
  /// Takes `bytes`, which continue the file, writing the buffer each time it fills.
  [[nodiscard]] status append(std::span<const std::byte> bytes, const std::string& path);
  /// Turns direct I/O off and writes what is gathered through the page cache: later writes,
  /// at any offset, are ordinary ones.
  [[nodiscard]] status finish(const std::string& path);

 private:
  struct aligned_delete {
    void operator()(std::byte* p) const noexcept;
  };
  using buffer = std::unique_ptr<std::byte[], aligned_delete>;
  direct_writes(int fd, buffer first, buffer second) noexcept;
  /// Hands the full buffer to the helper thread (after the previous write ended) and switches.
  [[nodiscard]] status submit(const std::string& path);
  /// The write in flight's outcome (ok when none).
  [[nodiscard]] status wait();
  /// Writes `n` bytes of `data` at `at`, directly while that works (on the helper thread).
  [[nodiscard]] status write_out(const std::byte* data, std::size_t n, std::uint64_t at, const std::string& path);
  void stop_direct() noexcept;

  int fd_;
  buffer buffers_[2];
  int filling_ = 0;  // the buffer being filled; the other may be in flight
  std::size_t filled_ = 0;
  std::uint64_t end_ = 0;  // the file offset one past the last byte taken
  std::atomic<bool> direct_{true};
  std::future<status> in_flight_;  // declared last: destroyed (waited for) before the buffers
};

}  // namespace safetensors::detail
