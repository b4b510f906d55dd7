// SPDX-License-Identifier: Apache-2.0
// x86 vector path of MLX dequantization: AVX2 and F16C, chosen at run time through
// has_vector_dequantize(), so the library stays baseline x86-64. Compiled only for x86
// targets without SAFETENSORS_PORTABLE (src/CMakeLists.txt); portable/ stands in elsewhere.
//
// Codes of 4 bits or fewer (affine 1..4-bit, mxfp4, nvfp4) have at most 16 values per
// group: the group's 16 results are computed once, with the same float operations as the
// scalar reference, and the codes are mapped through them with byte shuffles (two per 32
// outputs). Wider codes (affine 5, 6, 8-bit, mxfp8) are computed 8 lanes at a time with
// the reference's operations in the same order (no FMA: this file is not built for it).
// Groups the vector code does not take run the scalar reference (dequantize_rows.h).
#include <cpuid.h>
#include <immintrin.h>

#include <cstring>

#include "mlx/dequantize_rows.h"
#include "mlx/kernels.h"

#if !defined(__x86_64__) && !defined(__i386__)
#error "x86 MLX kernels built for a non-x86 target: see SAFETENSORS_PORTABLE in src/CMakeLists.txt"
#endif

namespace safetensors::mlx::detail {

namespace {

#define ST_V [[gnu::always_inline, gnu::target("avx2,f16c")]] inline

/// How a float result becomes 16 output bits.
enum class cvt : std::uint8_t {
  exact,      ///< already a bfloat16 value: keep the high half
  finite,     ///< round to nearest even without the NaN case (fast_bits)
  nan_aware,  ///< f32_to_bf16: round to nearest even, NaN made quiet
};

ST_V __m256i bf16_round_finite(__m256 x) noexcept {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i sum = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF)));
  return _mm256_and_si256(sum, _mm256_set1_epi32(static_cast<int>(0xFFFF0000U)));
}

/// bfloat16 bits of 8 floats in the low halves of the lanes.
template <cvt C>
ST_V __m256i bf16_bits(__m256 x) noexcept {
  const __m256i u = _mm256_castps_si256(x);
  if constexpr (C == cvt::exact) {
    return _mm256_srli_epi32(u, 16);
  } else if constexpr (C == cvt::finite) {
    return _mm256_srli_epi32(bf16_round_finite(x), 16);
  } else {
    const __m256i rounded = _mm256_srli_epi32(bf16_round_finite(x), 16);
    const __m256i magnitude = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
    const __m256i is_nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7F800000));
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    return _mm256_blendv_epi8(rounded, quiet, is_nan);
  }
}

/// 16 floats (a: elements 0..7, b: 8..15) as 16 values of O (F16 or BF16), in order.
template <real O, cvt C>
ST_V __m256i pack16(__m256 a, __m256 b) noexcept {
  if constexpr (O == real::f16) {
    return _mm256_set_m128i(_mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT),
                            _mm256_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT));
  } else {
    // packus interleaves 128-bit lanes (a0-3 b0-3 a4-7 b4-7); the permute restores order.
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(bf16_bits<C>(a), bf16_bits<C>(b)), 0xD8);
  }
}

/// Stores 16 results (a: 0..7, b: 8..15) as O at out (bytes, unaligned).
template <real O, cvt C>
ST_V void store16(__m256 a, __m256 b, std::byte* out) noexcept {
  if constexpr (O == real::f32) {
    _mm256_storeu_ps(reinterpret_cast<float*>(out), a);
    _mm256_storeu_ps(reinterpret_cast<float*>(out) + 8, b);
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), pack16<O, C>(a, b));
  }
}

/// The 16 results of one group, ready for lookups: byte planes (16-bit O) or two vectors (F32).
struct table {
  __m256i lo, hi;  // low and high bytes of the 16-bit results, in both 128-bit lanes
  __m256 t0, t1;   // F32 results of codes 0..7 and 8..15
};

/// 16 16-bit values (in order) as byte planes: low bytes in lane 0, high bytes in lane 1.
ST_V __m256i byte_planes(__m256i w) noexcept {
  const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,  //
                                         0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  // After the shuffle, lane 0: low bytes of 0..7, high bytes of 0..7; lane 1: the same for 8..15.
  return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(w, split), _MM_SHUFFLE(3, 1, 2, 0));
}

template <real O, cvt C>
ST_V table make_table(__m256 v0, __m256 v1) noexcept {
  table t{};
  if constexpr (O == real::f32) {
    t.t0 = v0;
    t.t1 = v1;
  } else {
    const __m256i x = byte_planes(pack16<O, C>(v0, v1));
    t.lo = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(x));
    t.hi = _mm256_broadcastsi128_si256(_mm256_extracti128_si256(x, 1));
  }
  return t;
}

/// Two groups' tables in one (16-bit O): group a's in lane 0, group b's in lane 1, so one
/// lookup32 serves 16 codes of each.
template <real O, cvt C>
ST_V table make_table_pair(__m256 a0, __m256 a1, __m256 b0, __m256 b1) noexcept {
  const __m256i xa = byte_planes(pack16<O, C>(a0, a1));
  const __m256i xb = byte_planes(pack16<O, C>(b0, b1));
  table t{};
  t.lo = _mm256_permute2x128_si256(xa, xb, 0x20);
  t.hi = _mm256_permute2x128_si256(xa, xb, 0x31);
  return t;
}

/// out[i] = table[codes[i]] for 8 codes in the low bytes of c (F32 output).
ST_V void lookup8_f32(const table& t, __m128i c, std::byte* out) noexcept {
  const __m256i idx = _mm256_cvtepu8_epi32(c);
  const __m256 low = _mm256_permutevar8x32_ps(t.t0, idx);
  const __m256 high = _mm256_permutevar8x32_ps(t.t1, idx);
  _mm256_storeu_ps(reinterpret_cast<float*>(out),
                   _mm256_blendv_ps(low, high, _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28))));
}

/// 16 codes (bytes below 16) through the table into out.
template <real O>
ST_V void lookup16(const table& t, __m128i c, std::byte* out) noexcept {
  if constexpr (O == real::f32) {
    lookup8_f32(t, c, out);
    lookup8_f32(t, _mm_srli_si128(c, 8), out + 32);
  } else {
    const __m128i l = _mm_shuffle_epi8(_mm256_castsi256_si128(t.lo), c);
    const __m128i h = _mm_shuffle_epi8(_mm256_castsi256_si128(t.hi), c);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi8(l, h));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm_unpackhi_epi8(l, h));
  }
}

/// 32 codes (c0: codes 0..15, c1: 16..31) through the table into out.
template <real O>
ST_V void lookup32(const table& t, __m128i c0, __m128i c1, std::byte* out) noexcept {
  if constexpr (O == real::f32) {
    lookup16<O>(t, c0, out);
    lookup16<O>(t, c1, out + 64);
  } else {
    const __m256i c = _mm256_set_m128i(c1, c0);
    const __m256i l = _mm256_shuffle_epi8(t.lo, c);
    const __m256i h = _mm256_shuffle_epi8(t.hi, c);
    const __m256i a = _mm256_unpacklo_epi8(l, h);  // codes 0..7 | 16..23
    const __m256i b = _mm256_unpackhi_epi8(l, h);  // codes 8..15 | 24..31
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32), _mm256_permute2x128_si256(a, b, 0x31));
  }
}

/// n codes (a multiple of 16) of `bits` <= 4, starting on a word boundary at src, through
/// the table into out (real_size<O> bytes per output).
template <real O>
ST_V void lookup_codes(const table& t, const std::byte* src, unsigned bits, std::size_t n, std::byte* out) noexcept {
  constexpr std::size_t osize = real_size<O>;
  std::size_t i = 0;
  if (bits == 4) {
    const __m128i mask = _mm_set1_epi8(0x0F);
    for (; i + 32 <= n; i += 32) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i / 2));
      const __m128i lo = _mm_and_si128(x, mask);
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), mask);
      lookup32<O>(t, _mm_unpacklo_epi8(lo, hi), _mm_unpackhi_epi8(lo, hi), out + i * osize);
    }
    if (i < n) {  // 16 codes in 8 bytes
      const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i / 2));
      const __m128i lo = _mm_and_si128(x, mask);
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), mask);
      lookup16<O>(t, _mm_unpacklo_epi8(lo, hi), out + i * osize);
    }
    return;
  }
  if (bits == 2) {
    const __m128i mask = _mm_set1_epi8(0x03);
    for (; i + 32 <= n; i += 32) {
      const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i / 4));
      const __m128i c0 = _mm_and_si128(x, mask);
      const __m128i c1 = _mm_and_si128(_mm_srli_epi16(x, 2), mask);
      const __m128i c2 = _mm_and_si128(_mm_srli_epi16(x, 4), mask);
      const __m128i c3 = _mm_and_si128(_mm_srli_epi16(x, 6), mask);
      const __m128i a = _mm_unpacklo_epi8(c0, c1);
      const __m128i b = _mm_unpacklo_epi8(c2, c3);
      lookup32<O>(t, _mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b), out + i * osize);
    }
    if (i == n) return;
  }
  // Other widths, and a 2-bit tail: the scalar unpacker, then the shuffles.
  alignas(16) std::array<std::uint8_t, segment> codes;
  while (i < n) {
    const std::size_t m = std::min(segment, n - i);
    unpack_segment<0>(src + i * bits / 8, bits, m, codes.data());
    for (std::size_t j = 0; j < m; j += 16) {
      lookup16<O>(t, _mm_load_si128(reinterpret_cast<const __m128i*>(codes.data() + j)), out + (i + j) * osize);
    }
    i += m;
  }
}

// ---- affine ----

/// RN_S(RN_S(c * s) + b) for 8 code values, as floats (exact values of S).
template <real S>
ST_V __m256 affine_value(__m256 c, __m256 s, __m256 b) noexcept {
  if constexpr (S == real::f32) {
    return _mm256_add_ps(_mm256_mul_ps(c, s), b);
  } else if constexpr (S == real::bf16) {
    const __m256 t = _mm256_castsi256_ps(bf16_round_finite(_mm256_mul_ps(c, s)));
    return _mm256_castsi256_ps(bf16_round_finite(_mm256_add_ps(t, b)));
  } else {
    const __m256 t = _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_mul_ps(c, s), _MM_FROUND_TO_NEAREST_INT));
    return _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_add_ps(t, b), _MM_FROUND_TO_NEAREST_INT));
  }
}

/// How an exact value of S is stored as O (emit<S, O>): BF16 to BF16 keeps the bits.
template <real S, real O>
constexpr cvt affine_cvt = S == real::bf16 ? cvt::exact : cvt::nan_aware;

/// How 16 codes of `bits` (1..7) come out of the 2*bits bytes that hold them: a byte
/// shuffle brings each code's bytes into its 32-bit lane, a variable shift and a mask
/// finish (a: codes 0..7, b: codes 8..15; both 128-bit halves hold the same 16 bytes).
struct unpack16 {
  __m256i shuffle_a, shuffle_b, shift_a, shift_b, mask;
};

[[gnu::target("avx2,f16c")]] unpack16 make_unpack16(unsigned bits) noexcept {
  alignas(32) std::array<std::int8_t, 64> shuffles{};
  alignas(32) std::array<std::int32_t, 16> shifts{};
  for (unsigned j = 0; j < 16; ++j) {
    const unsigned bit = j * bits;
    shifts[j] = static_cast<std::int32_t>(bit % 8);
    for (unsigned t = 0; t < 4; ++t) {
      const unsigned byte = bit / 8 + t;  // a code spans at most 2 bytes; past byte 15 reads 0
      shuffles[4 * j + t] = byte > 15 ? static_cast<std::int8_t>(-128) : static_cast<std::int8_t>(byte);
    }
  }
  unpack16 u{};
  u.shuffle_a = _mm256_load_si256(reinterpret_cast<const __m256i*>(shuffles.data()));
  u.shuffle_b = _mm256_load_si256(reinterpret_cast<const __m256i*>(shuffles.data() + 32));
  u.shift_a = _mm256_load_si256(reinterpret_cast<const __m256i*>(shifts.data()));
  u.shift_b = _mm256_load_si256(reinterpret_cast<const __m256i*>(shifts.data() + 8));
  u.mask = _mm256_set1_epi32((1 << bits) - 1);
  return u;
}

/// The 16 bytes at p, reading nothing at or past `end` (zeros there).
ST_V __m128i load16_before(const std::byte* p, const std::byte* end) noexcept {
  if (end - p >= 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  alignas(16) std::array<std::byte, 16> tail{};
  std::memcpy(tail.data(), p, static_cast<std::size_t>(end - p));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(tail.data()));
}

template <real S, real O>
ST_V void affine_group_vector(const std::byte* wrow, const std::byte* wend, const unpack16& u, unsigned bits,
                              std::size_t g, std::size_t k0, float sf, float bf, std::byte* orow) noexcept {
  constexpr cvt C = affine_cvt<S, O>;
  const __m256 s = _mm256_set1_ps(sf);
  const __m256 b = _mm256_set1_ps(bf);
  std::byte* out = orow + k0 * real_size<O>;
  const std::byte* src = wrow + k0 * bits / 8;
  constexpr std::size_t osize = real_size<O>;
  if (bits == 4 || bits == 2) {
    const __m256 v0 = affine_value<S>(_mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7), s, b);
    const __m256 v1 = affine_value<S>(_mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15), s, b);
    lookup_codes<O>(make_table<O, C>(v0, v1), src, bits, g, out);
    return;
  }
  if (bits == 8) {
    for (std::size_t i = 0; i < g; i += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      const __m256 c0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(x));
      const __m256 c1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(x, 8)));
      store16<O, C>(affine_value<S>(c0, s, b), affine_value<S>(c1, s, b), out + i * osize);
    }
    return;
  }
  // 1, 3, 5, 6, 7 bits: 16 codes fill 2*bits whole bytes; shuffles and shifts split them.
  for (std::size_t i = 0; i < g; i += 16) {
    const __m256i x = _mm256_broadcastsi128_si256(load16_before(src + i * bits / 8, wend));
    const __m256i ia = _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(x, u.shuffle_a), u.shift_a), u.mask);
    const __m256i ib = _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(x, u.shuffle_b), u.shift_b), u.mask);
    const __m256 c0 = _mm256_cvtepi32_ps(ia);
    const __m256 c1 = _mm256_cvtepi32_ps(ib);
    store16<O, C>(affine_value<S>(c0, s, b), affine_value<S>(c1, s, b), out + i * osize);
  }
}

template <real S, real O>
[[gnu::target("avx2,f16c")]] void affine_rows_vector(const quantized_ref& q, std::byte* out, std::uint64_t row_begin,
                                                     std::uint64_t row_end) noexcept {
  const unsigned bits = q.params.bits;
  const std::size_t g = q.params.group_size;
  const std::size_t cols = q.cols;
  const std::size_t groups_per_row = cols / g;
  const std::size_t row_bytes = cols * bits / 8;
  if (g % 16 != 0) {
    affine_bits<S, O>(q, out, row_begin, row_end);
    return;
  }
  const std::byte* wend = q.weight.data() + q.weight.size();
  const unpack16 u = make_unpack16(bits);
  for (std::uint64_t r = row_begin; r < row_end; ++r) {
    const std::byte* wrow = q.weight.data() + r * row_bytes;
    std::byte* orow = out + r * cols * real_size<O>;
    for (std::size_t grp = 0; grp < groups_per_row; ++grp) {
      const std::size_t gi = r * groups_per_row + grp;
      const float s = load<S>(q.scales.data(), gi);
      const float b = load<S>(q.biases.data(), gi);
      if (std::isfinite(s) && std::isfinite(b)) {
        affine_group_vector<S, O>(wrow, wend, u, bits, g, grp * g, s, b, orow);
      } else {
        affine_group<S, O, 0>(wrow, bits, g, grp * g, s, b, orow);  // NaN and Inf as the reference
      }
    }
  }
}

// ---- fp modes ----

/// E4M3 as MLX decodes it, for 8 bytes in 32-bit lanes: 0x7F/0xFF read as +-480.
ST_V __m256 e4m3_value(__m256i c) noexcept {
  const __m256i m = _mm256_and_si256(c, _mm256_set1_epi32(0x7F));
  const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(c, _mm256_set1_epi32(0x80)), 24);
  const __m256i normal = _mm256_add_epi32(_mm256_slli_epi32(m, 20), _mm256_set1_epi32(120 << 23));
  const __m256 sub = _mm256_mul_ps(_mm256_cvtepi32_ps(m), _mm256_set1_ps(0x1p-9F));  // m < 8: m * 2^-9
  const __m256i is_normal = _mm256_cmpgt_epi32(m, _mm256_set1_epi32(7));
  const __m256i mag = _mm256_blendv_epi8(_mm256_castps_si256(sub), normal, is_normal);
  return _mm256_castsi256_ps(_mm256_or_si256(mag, sign));
}

/// fp_scale<O> of every scale byte without a global scale (E8M0 or E4M3 rounded to O).
template <real O, quant_mode Mode>
const std::array<float, 256>& scale_values() noexcept {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (unsigned i = 0; i < 256; ++i) {
      const auto byte = static_cast<std::uint8_t>(i);
      t[i] = Mode == quant_mode::nvfp4 ? round_to<O>(e4m3_to_f32(byte)) : round_to<O>(e8m0_to_f32(byte));
    }
    return t;
  }();
  return table;
}

template <real O, quant_mode Mode>
[[gnu::target("avx2,f16c")]] void fp_rows_vector(const quantized_ref& q, std::byte* out, std::uint64_t row_begin,
                                                 std::uint64_t row_end) noexcept {
  if (q.global_scale) {  // float32 products with a scale that is not a power of two: rare
    fp_rows<O, Mode>(q, out, row_begin, row_end);
    return;
  }
  constexpr std::size_t g = default_params(Mode).group_size;
  constexpr unsigned bits = default_params(Mode).bits;
  const std::size_t cols = q.cols;
  const std::size_t groups_per_row = cols / g;
  const std::size_t row_bytes = cols * bits / 8;
  const auto* scale_bytes = reinterpret_cast<const std::uint8_t*>(q.scales.data());
  const std::array<float, 256>& scales = scale_values<O, Mode>();
  for (std::uint64_t r = row_begin; r < row_end; ++r) {
    const std::byte* wrow = q.weight.data() + r * row_bytes;
    std::byte* orow = out + r * cols * real_size<O>;
    std::size_t grp = 0;
    if constexpr (Mode == quant_mode::nvfp4 && O != real::f32) {
      // Groups of 16 in pairs: one table per pair, one 32-code lookup.
      __m256 pos = _mm256_setr_ps(0.0F, 0.5F, 1.0F, 1.5F, 2.0F, 3.0F, 4.0F, 6.0F);
      __m256 neg = _mm256_setr_ps(-0.0F, -0.5F, -1.0F, -1.5F, -2.0F, -3.0F, -4.0F, -6.0F);
      __asm__("" : "+x"(pos), "+x"(neg));  // see below
      const __m128i mask = _mm_set1_epi8(0x0F);
      for (; grp + 2 <= groups_per_row; grp += 2) {
        const __m256 sa = _mm256_set1_ps(scales[scale_bytes[r * groups_per_row + grp]]);
        const __m256 sb = _mm256_set1_ps(scales[scale_bytes[r * groups_per_row + grp + 1]]);
        const table t = make_table_pair<O, cvt::finite>(_mm256_mul_ps(pos, sa), _mm256_mul_ps(neg, sa),
                                                        _mm256_mul_ps(pos, sb), _mm256_mul_ps(neg, sb));
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wrow + grp * g / 2));
        const __m128i lo = _mm_and_si128(x, mask);
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), mask);
        lookup32<O>(t, _mm_unpacklo_epi8(lo, hi), _mm_unpackhi_epi8(lo, hi), orow + grp * g * real_size<O>);
      }
    }
    for (; grp < groups_per_row; ++grp) {
      const __m256 s = _mm256_set1_ps(scales[scale_bytes[r * groups_per_row + grp]]);
      std::byte* o = orow + grp * g * real_size<O>;
      if constexpr (Mode == quant_mode::mxfp8) {
        // to_bits(round_to<O>(E4M3(c) * s)).
        for (std::size_t i = 0; i < g; i += 16) {
          const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wrow + grp * g + i));
          const __m256 a = _mm256_mul_ps(e4m3_value(_mm256_cvtepu8_epi32(x)), s);
          const __m256 b = _mm256_mul_ps(e4m3_value(_mm256_cvtepu8_epi32(_mm_srli_si128(x, 8))), s);
          store16<O, cvt::nan_aware>(a, b, o + i * real_size<O>);
        }
      } else {
        // fast_bits(E2M1(c) * s): the 16 products, then shuffles.
        // The E2M1 values are hidden from the optimiser: it may otherwise compute the
        // negative half as -(v0), which flips the sign of the NaN of 0 * inf.
        __m256 pos = _mm256_setr_ps(0.0F, 0.5F, 1.0F, 1.5F, 2.0F, 3.0F, 4.0F, 6.0F);
        __m256 neg = _mm256_setr_ps(-0.0F, -0.5F, -1.0F, -1.5F, -2.0F, -3.0F, -4.0F, -6.0F);
        __asm__("" : "+x"(pos), "+x"(neg));
        const __m256 v0 = _mm256_mul_ps(pos, s);
        const __m256 v1 = _mm256_mul_ps(neg, s);
        lookup_codes<O>(make_table<O, cvt::finite>(v0, v1), wrow + grp * g * bits / 8, bits, g, o);
      }
    }
  }
}

template <real S>
void affine_vector(const quantized_ref& q, real o, std::byte* dst, std::uint64_t b, std::uint64_t e) noexcept {
  switch (o) {
    case real::f32: affine_rows_vector<S, real::f32>(q, dst, b, e); break;
    case real::f16: affine_rows_vector<S, real::f16>(q, dst, b, e); break;
    case real::bf16: affine_rows_vector<S, real::bf16>(q, dst, b, e); break;
  }
}

template <real O>
void fp_vector(const quantized_ref& q, std::byte* dst, std::uint64_t b, std::uint64_t e) noexcept {
  switch (q.params.mode) {
    case quant_mode::mxfp4: fp_rows_vector<O, quant_mode::mxfp4>(q, dst, b, e); break;
    case quant_mode::mxfp8: fp_rows_vector<O, quant_mode::mxfp8>(q, dst, b, e); break;
    case quant_mode::nvfp4: fp_rows_vector<O, quant_mode::nvfp4>(q, dst, b, e); break;
    case quant_mode::affine: break;
  }
}

}  // namespace

bool has_vector_dequantize() noexcept {
  // The compiler's probe for AVX2 also checks that the OS saves the AVX registers, which F16C
  // needs too; clang 14's __builtin_cpu_supports does not know "f16c", so that is CPUID.1:ECX.
  static const bool yes = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx2") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  }();
  return yes;
}

void dequantize_rows_vector(const quantized_ref& q, real o, std::byte* dst, std::uint64_t begin,
                            std::uint64_t end) noexcept {
  if (q.params.mode == quant_mode::affine) {
    switch (real_of(q.scale_type)) {
      case real::f32: affine_vector<real::f32>(q, o, dst, begin, end); break;
      case real::f16: affine_vector<real::f16>(q, o, dst, begin, end); break;
      case real::bf16: affine_vector<real::bf16>(q, o, dst, begin, end); break;
    }
    return;
  }
  switch (o) {
    case real::f32: fp_vector<real::f32>(q, dst, begin, end); break;
    case real::f16: fp_vector<real::f16>(q, dst, begin, end); break;
    case real::bf16: fp_vector<real::bf16>(q, dst, begin, end); break;
  }
}

}  // namespace safetensors::mlx::detail
