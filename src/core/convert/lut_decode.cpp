// SPDX-License-Identifier: Apache-2.0
// Table-driven decode of one-byte and sub-byte types: every code's value is computed
// once at compile time from the scalar codecs, so the loops are a load per element.
#include <array>
#include <cstring>
#include <type_traits>

#include "convert/kernels.h"
#include "convert/loops.h"
#include "safetensors/minifloat.h"

namespace safetensors::detail {
namespace {

using byte_decoder = float (*)(std::uint8_t) noexcept;

constexpr float bool_value(std::uint8_t b) noexcept { return b != 0 ? 1.0F : 0.0F; }
constexpr float u8_value(std::uint8_t b) noexcept { return static_cast<float>(b); }
constexpr float i8_value(std::uint8_t b) noexcept { return static_cast<float>(static_cast<std::int8_t>(b)); }

template <class Out, std::size_t N>
constexpr std::array<Out, N> make_table(byte_decoder f) {
  std::array<Out, N> t{};
  for (std::size_t i = 0; i < N; ++i) t[i] = static_cast<Out>(f(static_cast<std::uint8_t>(i)));
  return t;
}

// One table per one-byte type, indexed by the byte.
template <class Out>
struct byte_tables {
  static constexpr auto boolean = make_table<Out, 256>(bool_value);
  static constexpr auto u8 = make_table<Out, 256>(u8_value);
  static constexpr auto i8 = make_table<Out, 256>(i8_value);
  static constexpr auto e4m3 = make_table<Out, 256>(f8_e4m3_to_f32);
  static constexpr auto e5m2 = make_table<Out, 256>(f8_e5m2_to_f32);
  static constexpr auto e4m3fnuz = make_table<Out, 256>(f8_e4m3fnuz_to_f32);
  static constexpr auto e5m2fnuz = make_table<Out, 256>(f8_e5m2fnuz_to_f32);
  static constexpr auto e8m0 = make_table<Out, 256>(f8_e8m0_to_f32);
  static constexpr auto f6_e2m3 = make_table<Out, 64>(f6_e2m3_to_f32);
  static constexpr auto f6_e3m2 = make_table<Out, 64>(f6_e3m2_to_f32);
  // F4: both elements of a byte, low nibble first.
  static constexpr auto f4_pairs = [] {
    std::array<std::array<Out, 2>, 256> t{};
    for (unsigned i = 0; i < 256; ++i) {
      t[i][0] = static_cast<Out>(f4_to_f32(static_cast<std::uint8_t>(i & 0x0FU)));
      t[i][1] = static_cast<Out>(f4_to_f32(static_cast<std::uint8_t>(i >> 4)));
    }
    return t;
  }();
};

template <class Out>
const Out* byte_table(dtype t) noexcept {
  using tables = byte_tables<Out>;
  switch (t) {
    case dtype::BOOL: return tables::boolean.data();
    case dtype::U8: return tables::u8.data();
    case dtype::I8: return tables::i8.data();
    case dtype::F8_E4M3: return tables::e4m3.data();
    case dtype::F8_E5M2: return tables::e5m2.data();
    case dtype::F8_E4M3FNUZ: return tables::e4m3fnuz.data();
    case dtype::F8_E5M2FNUZ: return tables::e5m2fnuz.data();
    case dtype::F8_E8M0: return tables::e8m0.data();
    default: return nullptr;
  }
}

template <class Out>
void decode_bytes(const Out* table, const std::byte* src, Out* dst, std::size_t n) noexcept {
  if constexpr (std::is_same_v<Out, float>) {
    static const bool fast = has_avx2();
    if (fast) {
      table_decode_avx2(table, src, dst, n);
      return;
    }
  }
  table_loop(table, src, dst, n);
}

template <class Out>
void decode_f4(const std::byte* src, Out* dst, std::size_t n) noexcept {
  const auto& pairs = byte_tables<Out>::f4_pairs;
  for (std::size_t i = 0; i < n / 2; ++i) {
    std::memcpy(dst + 2 * i, pairs[std::to_integer<std::uint8_t>(src[i])].data(), 2 * sizeof(Out));
  }
}

// F6: each 3 bytes hold 4 codes as a little-endian 24-bit word, element k at bit 6k.
template <class Out>
void decode_f6(const Out* table, const std::byte* src, Out* dst, std::size_t n) noexcept {
  for (std::size_t g = 0; g < n / 4; ++g) {
    const std::byte* p = src + 3 * g;
    const std::uint32_t word = std::to_integer<std::uint32_t>(p[0]) | (std::to_integer<std::uint32_t>(p[1]) << 8) |
                               (std::to_integer<std::uint32_t>(p[2]) << 16);
    for (unsigned k = 0; k < 4; ++k) dst[4 * g + k] = table[(word >> (6 * k)) & 0x3FU];
  }
}

template <class Out>
void decode_any(dtype t, const std::byte* src, Out* dst, std::size_t n) noexcept {
  switch (t) {
    case dtype::F4: decode_f4(src, dst, n); return;
    case dtype::F6_E2M3: decode_f6(byte_tables<Out>::f6_e2m3.data(), src, dst, n); return;
    case dtype::F6_E3M2: decode_f6(byte_tables<Out>::f6_e3m2.data(), src, dst, n); return;
    default: break;
  }
  if (const Out* table = byte_table<Out>(t)) decode_bytes(table, src, dst, n);
}

}  // namespace

void lut_decode(dtype t, const std::byte* src, float* dst, std::size_t n) noexcept { decode_any(t, src, dst, n); }
void lut_decode(dtype t, const std::byte* src, double* dst, std::size_t n) noexcept { decode_any(t, src, dst, n); }

}  // namespace safetensors::detail
