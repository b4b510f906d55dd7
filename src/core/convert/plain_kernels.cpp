// SPDX-License-Identifier: Apache-2.0
// Integer, BOOL, F32 and F64 elements <-> float (one-byte decode is table-driven): static_cast semantics, with the
// float -> integer direction made total (truncate, clamp, NaN -> 0) and an optional
// range check that finds the first element that does not fit.
#include <cmath>
#include <cstring>
#include <limits>

#include "convert/kernels.h"

namespace safetensors::detail {
namespace {

template <class T, class Out>
void decode_as(const std::byte* src, Out* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = static_cast<Out>(v);
  }
}

template <class Out>
void decode_plain(dtype t, const std::byte* src, Out* dst, std::size_t n) noexcept {
  switch (t) {
    case dtype::U16: decode_as<std::uint16_t>(src, dst, n); break;
    case dtype::I16: decode_as<std::int16_t>(src, dst, n); break;
    case dtype::U32: decode_as<std::uint32_t>(src, dst, n); break;
    case dtype::I32: decode_as<std::int32_t>(src, dst, n); break;
    case dtype::U64: decode_as<std::uint64_t>(src, dst, n); break;
    case dtype::I64: decode_as<std::int64_t>(src, dst, n); break;
    case dtype::F32: decode_as<float>(src, dst, n); break;
    case dtype::F64: decode_as<double>(src, dst, n); break;
    default: break;
  }
}

// Valid integer results are those whose truncation t satisfies lo <= t < hi; both
// bounds are powers of two (or 0), exact in double.
template <class T>
constexpr double range_lo = static_cast<double>(std::numeric_limits<T>::min());
template <class T>
constexpr double range_hi = 2.0 * static_cast<double>(T{1} << (std::numeric_limits<T>::digits - 1));

template <class T>
bool fits(float x) noexcept {
  const double t = std::trunc(static_cast<double>(x));
  return t >= range_lo<T> && t < range_hi<T>;  // false for NaN
}

template <class T>
T to_int(float x) noexcept {
  const double t = std::trunc(static_cast<double>(x));
  if (t >= range_lo<T> && t < range_hi<T>) return static_cast<T>(t);
  if (std::isnan(t)) return T{0};
  return t < range_lo<T> ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
}

template <class T>
std::size_t encode_int(const float* src, std::byte* dst, std::size_t n, bool check_range) noexcept {
  if (check_range) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!fits<T>(src[i])) return i;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const T v = to_int<T>(src[i]);
    std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
  }
  return no_error;
}

std::size_t encode_bool(const float* src, std::byte* dst, std::size_t n, bool check_range) noexcept {
  if (check_range) {
    for (std::size_t i = 0; i < n; ++i) {
      if (src[i] != 0.0F && src[i] != 1.0F) return i;
    }
  }
  for (std::size_t i = 0; i < n; ++i) dst[i] = std::byte{static_cast<std::uint8_t>(src[i] != 0.0F ? 1 : 0)};
  return no_error;
}

template <class T>
void encode_float(const float* src, std::byte* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const T v = static_cast<T>(src[i]);
    std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
  }
}

}  // namespace

void plain_decode(dtype t, const std::byte* src, float* dst, std::size_t n) noexcept { decode_plain(t, src, dst, n); }
void plain_decode(dtype t, const std::byte* src, double* dst, std::size_t n) noexcept { decode_plain(t, src, dst, n); }

std::size_t plain_encode(dtype t, const float* src, std::byte* dst, std::size_t n, bool check_range) noexcept {
  switch (t) {
    case dtype::BOOL: return encode_bool(src, dst, n, check_range);
    case dtype::U8: return encode_int<std::uint8_t>(src, dst, n, check_range);
    case dtype::I8: return encode_int<std::int8_t>(src, dst, n, check_range);
    case dtype::U16: return encode_int<std::uint16_t>(src, dst, n, check_range);
    case dtype::I16: return encode_int<std::int16_t>(src, dst, n, check_range);
    case dtype::U32: return encode_int<std::uint32_t>(src, dst, n, check_range);
    case dtype::I32: return encode_int<std::int32_t>(src, dst, n, check_range);
    case dtype::U64: return encode_int<std::uint64_t>(src, dst, n, check_range);
    case dtype::I64: return encode_int<std::int64_t>(src, dst, n, check_range);
    case dtype::F32: encode_float<float>(src, dst, n); return no_error;
    case dtype::F64: encode_float<double>(src, dst, n); return no_error;
    default: return no_error;
  }
}

}  // namespace safetensors::detail
