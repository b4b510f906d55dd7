// SPDX-License-Identifier: Apache-2.0
// Bulk float -> 8-, 6- and 4-bit float encoders, including F4 nibble and F6 bit packing.
// The per-format codec is a template argument, so each loop is straight-line code.
#include <cmath>

#include "convert/kernels.h"
#include "safetensors/minifloat.h"

namespace safetensors::detail {
namespace {

template <detail::minifloat_format F>
void encode_bytes(const float* src, std::byte* dst, std::size_t n, bool saturate) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = std::byte{detail::minifloat_encode<F>(src[i], saturate)};
}

void encode_e8m0(const float* src, std::byte* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = std::byte{f32_to_f8_e8m0(src[i])};
}

std::size_t first_nan(const float* src, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(src[i])) return i;
  }
  return no_error;
}

// F4: element 2i in the low nibble of byte i, element 2i+1 in the high nibble.
void encode_f4(const float* src, std::byte* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n / 2; ++i) {
    const auto lo = static_cast<unsigned>(f32_to_f4(src[2 * i]));
    const auto hi = static_cast<unsigned>(f32_to_f4(src[2 * i + 1]));
    dst[i] = std::byte{static_cast<std::uint8_t>(lo | (hi << 4))};
  }
}

// F6: 4 codes per 3 bytes, LSB-first (element k of a group at bit 6k of a 24-bit LE word).
template <detail::minifloat_format F>
void encode_f6(const float* src, std::byte* dst, std::size_t n) noexcept {
  for (std::size_t g = 0; g < n / 4; ++g) {
    std::uint32_t word = 0;
    for (unsigned k = 0; k < 4; ++k) {
      word |= static_cast<std::uint32_t>(detail::minifloat_encode<F>(src[4 * g + k], true)) << (6 * k);
    }
    dst[3 * g] = std::byte{static_cast<std::uint8_t>(word & 0xFFU)};
    dst[3 * g + 1] = std::byte{static_cast<std::uint8_t>((word >> 8) & 0xFFU)};
    dst[3 * g + 2] = std::byte{static_cast<std::uint8_t>(word >> 16)};
  }
}

}  // namespace

std::size_t minifloat_encode(dtype t, const float* src, std::byte* dst, std::size_t n, bool saturate) noexcept {
  switch (t) {
    case dtype::F8_E4M3: encode_bytes<detail::f8_e4m3_format>(src, dst, n, saturate); return no_error;
    case dtype::F8_E5M2: encode_bytes<detail::f8_e5m2_format>(src, dst, n, saturate); return no_error;
    case dtype::F8_E4M3FNUZ: encode_bytes<detail::f8_e4m3fnuz_format>(src, dst, n, saturate); return no_error;
    case dtype::F8_E5M2FNUZ: encode_bytes<detail::f8_e5m2fnuz_format>(src, dst, n, saturate); return no_error;
    case dtype::F8_E8M0: encode_e8m0(src, dst, n); return no_error;
    case dtype::F4:
    case dtype::F6_E2M3:
    case dtype::F6_E3M2: {
      // No NaN code: refuse before writing anything.
      if (const std::size_t bad = first_nan(src, n); bad != no_error) return bad;
      if (t == dtype::F4) encode_f4(src, dst, n);
      if (t == dtype::F6_E2M3) encode_f6<detail::f6_e2m3_format>(src, dst, n);
      if (t == dtype::F6_E3M2) encode_f6<detail::f6_e3m2_format>(src, dst, n);
      return no_error;
    }
    default: return no_error;
  }
}

}  // namespace safetensors::detail
