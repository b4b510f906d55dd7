// SPDX-License-Identifier: Apache-2.0
// Test helper: a replaced global operator new that throws std::bad_alloc on this thread's
// n-th allocation while a failing_new is alive, so tests can show allocation failures
// inside libsafetensors_c come back as statuses (its operator new calls resolve to the
// executable's). Off in sanitizer builds, which own operator new.
#pragma once

#include <cstddef>

namespace st_test {

class failing_new {
 public:
  /// Allocations 0 .. n-1 succeed; allocation n (and every later one) throws.
  explicit failing_new(std::size_t n) noexcept;
  ~failing_new();
  failing_new(const failing_new&) = delete;
  failing_new& operator=(const failing_new&) = delete;
  /// True when an allocation was refused.
  [[nodiscard]] bool exhausted() const noexcept;
  [[nodiscard]] static bool available() noexcept;
};

}  // namespace st_test
