// SPDX-License-Identifier: Apache-2.0
// Internal: the temporary files of writes in progress, in storage allocated beforehand, so a
// signal handler can remove them without allocating (safetensors/cleanup.h).
#pragma once

#include <signal.h>

#include <string>

namespace safetensors::detail {

/// Records a live temporary file; returns its slot, or -1 when the path is too long or no
/// memory is left for more slots (the file is then only removed by its owner).
[[nodiscard]] int register_temporary(const std::string& path) noexcept;
/// Forgets a slot returned by register_temporary (no-op for -1).
void unregister_temporary(int slot) noexcept;

/// Holds back SIGINT, SIGTERM and SIGHUP in this thread while it lives, so a temporary is
/// never created without being registered yet (the signal is delivered afterwards).
class signals_held {
 public:
  signals_held() noexcept;
  ~signals_held();
  signals_held(const signals_held&) = delete;
  signals_held& operator=(const signals_held&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace safetensors::detail
