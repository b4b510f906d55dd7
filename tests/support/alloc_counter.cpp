// SPDX-License-Identifier: Apache-2.0
// The counting global operator new/delete behind alloc_probe. Sizes come from
// malloc_usable_size so new and delete agree without a header.
#include "support/alloc_counter.h"
#include "support/sanitizers.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

#define ST_TEST_COUNT_ALLOCATIONS (!ST_TEST_UNDER_SANITIZER)

namespace {

std::atomic<std::size_t> live{0};
std::atomic<std::size_t> peak_live{0};
std::atomic<std::size_t> allocations{0};

}  // namespace

#if ST_TEST_COUNT_ALLOCATIONS

void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  const std::size_t now = live.fetch_add(malloc_usable_size(p), std::memory_order_relaxed) + malloc_usable_size(p);
  std::size_t seen = peak_live.load(std::memory_order_relaxed);
  while (now > seen && !peak_live.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
  allocations.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  live.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

#endif

namespace st_test {

alloc_probe::alloc_probe() noexcept : base_live_(live.load()), base_count_(allocations.load()) {
  peak_live.store(base_live_);
}

std::size_t alloc_probe::peak() const noexcept {
  const std::size_t p = peak_live.load();
  return p > base_live_ ? p - base_live_ : 0;
}

std::size_t alloc_probe::count() const noexcept { return allocations.load() - base_count_; }

bool alloc_probe::available() noexcept { return ST_TEST_COUNT_ALLOCATIONS != 0; }

}  // namespace st_test
