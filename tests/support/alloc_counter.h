// SPDX-License-Identifier: Apache-2.0
// Test helper: the test binary replaces the global operator new/delete to count live
// heap bytes, so limits tests can assert a peak-memory bound without timing anything.
// Disabled (available() is false) in sanitizer builds, which own operator new.
#pragma once

#include <cstddef>

namespace st_test {

/// Measures the peak of live operator-new bytes while it is alive, above the level at
/// its construction. Memory obtained with malloc directly is not seen.
class alloc_probe {
 public:
  alloc_probe() noexcept;
  /// Peak live bytes allocated since construction, minus what was live at construction.
  [[nodiscard]] std::size_t peak() const noexcept;
  /// Number of allocations since construction.
  [[nodiscard]] std::size_t count() const noexcept;
  /// False when the counting operator new is not linked in (sanitizer builds).
  [[nodiscard]] static bool available() noexcept;

 private:
  std::size_t base_live_;
  std::size_t base_count_;
};

}  // namespace st_test
