// SPDX-License-Identifier: Apache-2.0
// A one-line progress bar on stderr for long operations: bytes done, rate, ETA.
// Silent unless stderr is a terminal, and with --quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace st_cli {

class progress {
 public:
  /// `total` bytes of work; `enabled` false (or stderr not a terminal) prints nothing.
  progress(std::string label, std::uint64_t total, bool enabled);
  ~progress();
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;

  void advance(std::uint64_t bytes);
  /// Clears the line; called by the destructor too.
  void finish();

 private:
  void draw(bool force);
  std::string label_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  bool active_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

/// The bar of a library pipeline (safetensors/pipeline/*.h), drawn from its progress callback:
/// made on the first call, when the total is known; cleared by finish() or the destructor.
class pipeline_progress {
 public:
  pipeline_progress(std::string label, bool quiet) : label_(std::move(label)), quiet_(quiet) {}
  /// For the pipeline's `progress` option; never cancels. Must not outlive this object.
  [[nodiscard]] std::function<bool(std::uint64_t done, std::uint64_t total)> callback();
  void finish();

 private:
  std::string label_;
  bool quiet_;
  std::unique_ptr<progress> bar_;
  std::uint64_t drawn_ = 0;
};

/// "1.5 MiB", "812 B": binary units, one decimal.
std::string human_bytes(std::uint64_t n);

}  // namespace st_cli
