// SPDX-License-Identifier: Apache-2.0
// ggml block dequantization, written from the block layouts and reference formulas
// (ggml-common.h / ggml-quants.c). Each kernel decodes one block into `y`.
#include <fmt/format.h>

#include "safetensors/formats/gguf_dequantize.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "safetensors/convert.h"

namespace safetensors::gguf {
namespace {

using u8 = std::uint8_t;

[[nodiscard]] float half_at(const u8* p) noexcept { return f16_to_f32(static_cast<std::uint16_t>(p[0] | (p[1] << 8))); }

[[nodiscard]] std::uint32_t u32_at(const u8* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

[[nodiscard]] float f32_at(const u8* p) noexcept {
  float f = 0;
  const std::uint32_t bits = u32_at(p);
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

[[nodiscard]] float as_i8(u8 b) noexcept { return static_cast<float>(static_cast<std::int8_t>(b)); }

// Q8_0 {half d; int8 qs[32]}: y = q * d.
void q8_0(const u8* b, float* y) noexcept {
  const float d = half_at(b);
  for (int j = 0; j < 32; ++j) y[j] = as_i8(b[2 + j]) * d;
}

// Q8_1 {half d; half s; int8 qs[32]}: y = q * d (s = d * sum(q) is for dot products).
void q8_1(const u8* b, float* y) noexcept {
  const float d = half_at(b);
  for (int j = 0; j < 32; ++j) y[j] = as_i8(b[4 + j]) * d;
}

// Q4_0 {half d; u8 qs[16]}: low nibbles are elements 0..15, high nibbles 16..31; y = (q - 8) * d.
void q4_0(const u8* b, float* y) noexcept {
  const float d = half_at(b);
  const u8* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>((qs[j] & 0x0F) - 8) * d;
    y[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

// Q4_1 {half d; half m; u8 qs[16]}: y = q * d + m.
void q4_1(const u8* b, float* y) noexcept {
  const float d = half_at(b);
  const float m = half_at(b + 2);
  const u8* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>(qs[j] & 0x0F) * d + m;
    y[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

// The fifth bit of Q5 element j (0..31) is bit j of the little-endian u32 qh.
[[nodiscard]] int q5_value(const u8* qs, std::uint32_t qh, int j) noexcept {
  const int low = j < 16 ? (qs[j] & 0x0F) : (qs[j - 16] >> 4);
  return low | static_cast<int>(((qh >> j) & 1U) << 4);
}

// Q5_0 {half d; u8 qh[4]; u8 qs[16]}: y = (q - 16) * d.
void q5_0(const u8* b, float* y) noexcept {
  const float d = half_at(b);
  const std::uint32_t qh = u32_at(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(q5_value(b + 6, qh, j) - 16) * d;
}

// Q5_1 {half d; half m; u8 qh[4]; u8 qs[16]}: y = q * d + m.
void q5_1(const u8* b, float* y) noexcept {
  const float d = half_at(b);
  const float m = half_at(b + 2);
  const std::uint32_t qh = u32_at(b + 4);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(q5_value(b + 8, qh, j)) * d + m;
}

// Where element i of a 256-element K-quant block sits: which 128-element half, which
// 32-element quarter of it, and the index within the quarter.
struct k_pos {
  int half;
  int quarter;
  int l;
};
[[nodiscard]] constexpr k_pos k_position(int i) noexcept { return {i / 128, (i % 128) / 32, i % 32}; }

// Q2_K {u8 scales[16]; u8 qs[64]; half d; half dmin}: 16 groups of 16; group g has scale
// scales[g] & 15 and min scales[g] >> 4. Each 128-element half uses 32 bytes of qs; its
// four 32-element quarters take 2-bit fields at shifts 0, 2, 4, 6 (first 16 from bytes
// 0..15, next 16 from bytes 16..31). y = d * sc * q - dmin * m.
void q2_k(const u8* b, float* y) noexcept {
  const u8* scales = b;
  const float d = half_at(b + 80);
  const float dmin = half_at(b + 82);
  for (int i = 0; i < 256; ++i) {
    const auto [half, quarter, l] = k_position(i);
    const u8 sc = scales[i / 16];
    const int q = (b[16 + 32 * half + l] >> (2 * quarter)) & 3;
    const float dl = d * static_cast<float>(sc & 0x0F);
    const float ml = dmin * static_cast<float>(sc >> 4);
    y[i] = dl * static_cast<float>(q) - ml;
  }
}

// Q3_K's 16 six-bit scales: low 4 bits from bytes 0..7 (low nibbles first, then high
// nibbles), high 2 bits from bytes 8..11 (scale s uses byte 8 + s % 4, bits 2 * (s / 4)).
[[nodiscard]] int q3_k_scale(const u8* s, int index) noexcept {
  const int low = index < 8 ? (s[index] & 0x0F) : (s[index - 8] >> 4);
  const int high = (s[8 + index % 4] >> (2 * (index / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// Q3_K {u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d}: the 2-bit fields as Q2_K; the
// third bit of element i is bit (i / 32) of hmask[i % 32], and a clear bit subtracts 4.
// y = d * (scale - 32) * q.
void q3_k(const u8* b, float* y) noexcept {
  const u8* hmask = b;
  const u8* qs = b + 32;
  const u8* scales = b + 96;
  const float d = half_at(b + 108);
  for (int i = 0; i < 256; ++i) {
    const auto [half, quarter, l] = k_position(i);
    const int low = (qs[32 * half + l] >> (2 * quarter)) & 3;
    const int high_set = (hmask[l] >> (i / 32)) & 1;
    const float dl = d * static_cast<float>(q3_k_scale(scales, i / 16));
    y[i] = dl * static_cast<float>(low - (high_set != 0 ? 0 : 4));
  }
}

// Q4_K and Q5_K's eight six-bit (scale, min) pairs packed in 12 bytes.
void k4_scale_min(const u8* s, int j, int& scale, int& min) noexcept {
  if (j < 4) {
    scale = s[j] & 63;
    min = s[j + 4] & 63;
  } else {
    scale = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
    min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Q4_K {half d; half dmin; u8 scales[12]; u8 qs[128]} and Q5_K (qh[32] before qs): eight
// sub-blocks of 32; each 64-element pair shares 32 bytes of qs (low nibbles, then high).
// Q5_K's fifth bit of element i is bit (i / 32) of qh[i % 32]. y = d * sc * q - dmin * m.
template <bool five_bits>
void k_quant_4_5(const u8* b, float* y) noexcept {
  const float d = half_at(b);
  const float dmin = half_at(b + 2);
  const u8* scales = b + 4;
  const u8* qh = b + 16;
  const u8* qs = five_bits ? b + 48 : b + 16;
  for (int i = 0; i < 256; ++i) {
    const int sub = i / 32;
    const int l = i % 32;
    const u8 byte = qs[32 * (sub / 2) + l];
    int q = sub % 2 == 0 ? (byte & 0x0F) : (byte >> 4);
    if constexpr (five_bits) q |= ((qh[l] >> sub) & 1) << 4;
    int sc = 0;
    int m = 0;
    k4_scale_min(scales, sub, sc, m);
    const float dl = d * static_cast<float>(sc);
    const float ml = dmin * static_cast<float>(m);
    y[i] = dl * static_cast<float>(q) - ml;
  }
}

// Q6_K {u8 ql[128]; u8 qh[64]; int8 scales[16]; half d}: two halves of 128; in half h,
// quarter k (32 elements) takes its low 4 bits from ql[64h + 32(k % 2) + l] (low nibble
// for k < 2, high otherwise) and its high 2 bits from qh[32h + l] at shift 2k.
// y = d * scale[i / 16] * (q - 32).
void q6_k(const u8* b, float* y) noexcept {
  const u8* ql = b;
  const u8* qh = b + 128;
  const u8* scales = b + 192;
  const float d = half_at(b + 208);
  for (int i = 0; i < 256; ++i) {
    const auto [half, quarter, l] = k_position(i);
    const u8 low_byte = ql[64 * half + 32 * (quarter % 2) + l];
    const int low = quarter < 2 ? (low_byte & 0x0F) : (low_byte >> 4);
    const int high = (qh[32 * half + l] >> (2 * quarter)) & 3;
    const int q = (low | (high << 4)) - 32;
    y[i] = d * as_i8(scales[i / 16]) * static_cast<float>(q);
  }
}

// Q8_K {float d; int8 qs[256]; int16 bsums[16]}: y = d * q (bsums are for dot products).
void q8_k(const u8* b, float* y) noexcept {
  const float d = f32_at(b);
  for (int j = 0; j < 256; ++j) y[j] = d * as_i8(b[4 + j]);
}

using block_kernel = void (*)(const u8*, float*) noexcept;

[[nodiscard]] block_kernel kernel_for(ggml_type t) noexcept {
  switch (t) {
    case ggml_type::q4_0: return q4_0;
    case ggml_type::q4_1: return q4_1;
    case ggml_type::q5_0: return q5_0;
    case ggml_type::q5_1: return q5_1;
    case ggml_type::q8_0: return q8_0;
    case ggml_type::q8_1: return q8_1;
    case ggml_type::q2_k: return q2_k;
    case ggml_type::q3_k: return q3_k;
    case ggml_type::q4_k: return k_quant_4_5<false>;
    case ggml_type::q5_k: return k_quant_4_5<true>;
    case ggml_type::q6_k: return q6_k;
    case ggml_type::q8_k: return q8_k;
    default: return nullptr;
  }
}

}  // namespace

status dequantize(ggml_type type, std::span<const std::byte> src, std::span<float> dst) {
  const type_traits& tr = traits(type);
  if (dst.size() % tr.block_elements != 0) {
    return make_error(error_code::invalid_argument, fmt::format("{} elements is not a whole number of {} blocks of {}",
                                                                dst.size(), tr.name, tr.block_elements));
  }
  const std::size_t blocks = dst.size() / tr.block_elements;
  if (src.size() / tr.block_bytes != blocks || src.size() % tr.block_bytes != 0) {
    return make_error(error_code::invalid_argument,
                      fmt::format("{}: {} bytes do not hold {} elements", tr.name, src.size(), dst.size()));
  }
  if (const std::optional<dtype> plain = plain_dtype(type)) return decode_to_f32(*plain, src, dst);
  const block_kernel kernel = kernel_for(type);
  if (kernel == nullptr) {
    return make_error(error_code::unsupported, "cannot dequantize GGUF type " + std::string(tr.name));
  }
  const auto* in = reinterpret_cast<const u8*>(src.data());
  for (std::size_t i = 0; i < blocks; ++i) kernel(in + i * tr.block_bytes, dst.data() + i * tr.block_elements);
  return {};
}

}  // namespace safetensors::gguf
