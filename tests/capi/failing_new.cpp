// SPDX-License-Identifier: Apache-2.0
#include "capi/failing_new.h"

#include <cstdlib>
#include <new>

#include "support/sanitizers.h"

#define ST_TEST_FAILING_NEW (!ST_TEST_UNDER_SANITIZER)

namespace {

thread_local bool armed = false;
thread_local std::size_t remaining = 0;
thread_local bool refused = false;

}  // namespace

#if ST_TEST_FAILING_NEW
void* operator new(std::size_t n) {
  if (armed) {
    if (remaining == 0) {
      refused = true;
      throw std::bad_alloc();
    }
    --remaining;
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
#endif

namespace st_test {

failing_new::failing_new(std::size_t n) noexcept {
  remaining = n;
  refused = false;
  armed = true;
}
failing_new::~failing_new() { armed = false; }
bool failing_new::exhausted() const noexcept { return refused; }
bool failing_new::available() noexcept { return ST_TEST_FAILING_NEW != 0; }

}  // namespace st_test
