// SPDX-License-Identifier: Apache-2.0
// Memory for large header arrays: anonymous mappings the kernel may back with transparent
// huge pages (see detail::allocate_array in safetensors/header.h).
#include <new>

#include "safetensors/header.h"

// Under AddressSanitizer every array comes from operator new, so overflows stay detected.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SAFETENSORS_ARRAYS_FROM_NEW 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SAFETENSORS_ARRAYS_FROM_NEW 1
#endif
#if defined(__linux__) && !defined(SAFETENSORS_ARRAYS_FROM_NEW)
#define SAFETENSORS_ARRAYS_MAPPED 1
#include <sys/mman.h>
#endif

namespace safetensors::detail {
namespace {

#if defined(SAFETENSORS_ARRAYS_MAPPED)
constexpr std::size_t huge_page = std::size_t{2} << 20;

/// Whole huge pages: a length the kernel aligns on a huge-page boundary (Linux >= 6.7 does
/// for anonymous mappings of such lengths), so every page of it can be a huge one.
std::size_t mapping_length(std::size_t bytes) noexcept { return (bytes + huge_page - 1) / huge_page * huge_page; }
#endif

}  // namespace

void* allocate_array(std::size_t bytes) {
#if defined(SAFETENSORS_ARRAYS_MAPPED)
  if (bytes >= large_array_bytes) {
    const std::size_t length = mapping_length(bytes);
    void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    (void)::madvise(p, length, MADV_HUGEPAGE);  // a hint: without THP, ordinary pages
    return p;
  }
#endif
  return ::operator new(bytes);
}

void deallocate_array(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
#if defined(SAFETENSORS_ARRAYS_MAPPED)
  if (bytes >= large_array_bytes) {
    (void)::munmap(p, mapping_length(bytes));
    return;
  }
#endif
  ::operator delete(p);
}

}  // namespace safetensors::detail
