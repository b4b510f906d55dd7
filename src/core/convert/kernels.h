// SPDX-License-Identifier: Apache-2.0
// Internal bulk conversion kernels behind convert.h. Each works on raw pointers with
// no alignment assumption; callers (convert.cpp) have checked the sizes already.
#pragma once

#include <cstddef>
#include <cstdint>

#include "safetensors/dtype.h"

namespace safetensors::detail {

/// Returned by encoders that can refuse an element: index of the first bad one, or none.
inline constexpr std::size_t no_error = static_cast<std::size_t>(-1);

// 16-bit floats (half_kernels.cpp; F16 uses F16C when the CPU has it).
void bf16_to_f32(const std::byte* src, float* dst, std::size_t n) noexcept;
void f16_to_f32(const std::byte* src, float* dst, std::size_t n) noexcept;
void f32_to_bf16(const float* src, std::byte* dst, std::size_t n) noexcept;
void f32_to_f16(const float* src, std::byte* dst, std::size_t n) noexcept;
void bf16_to_f64(const std::byte* src, double* dst, std::size_t n) noexcept;
void f16_to_f64(const std::byte* src, double* dst, std::size_t n) noexcept;

// The paths behind the run-time dispatch, so tests can compare them (x86/x86_kernels.cpp;
// elsewhere, and in SAFETENSORS_PORTABLE builds, portable/scalar_kernels.cpp, where the
// probes say no and the x86 names run the scalar loops).
void f16_to_f32_portable(const std::byte* src, float* dst, std::size_t n) noexcept;
void f32_to_f16_portable(const float* src, std::byte* dst, std::size_t n) noexcept;
bool has_f16c() noexcept;
bool has_avx2() noexcept;
bool has_avx512() noexcept;
bool has_avx512_bf16() noexcept;
void f16_to_f32_f16c(const std::byte* src, float* dst, std::size_t n) noexcept;
void f32_to_f16_f16c(const float* src, std::byte* dst, std::size_t n) noexcept;
void bf16_to_f32_avx2(const std::byte* src, float* dst, std::size_t n) noexcept;
void f32_to_bf16_avx2(const float* src, std::byte* dst, std::size_t n) noexcept;
void f32_to_bf16_avx512(const float* src, std::byte* dst, std::size_t n) noexcept;
void f32_to_bf16_avx512bf16(const float* src, std::byte* dst, std::size_t n) noexcept;
/// dst[i] = table[src[i]] for a 256-entry table (AVX2 gathers).
void table_decode_avx2(const float* table, const std::byte* src, float* dst, std::size_t n) noexcept;

// Table-driven decode (lut_decode.cpp): one-byte types (BOOL, U8, I8, F8_*) through a
// 256-entry table, F4 through a 256-entry table of pairs, F6 through a 64-entry table.
// `t` must be a one-byte type, F4 or F6_*; F4 needs an even n, F6 a multiple of 4.
void lut_decode(dtype t, const std::byte* src, float* dst, std::size_t n) noexcept;
void lut_decode(dtype t, const std::byte* src, double* dst, std::size_t n) noexcept;

// Float targets of 8 bits or fewer (minifloat_encode.cpp). Returns the first NaN's
// index for F6/F4 (no NaN code), else no_error.
std::size_t minifloat_encode(dtype t, const float* src, std::byte* dst, std::size_t n, bool saturate) noexcept;

// BOOL, integers, F32 and F64 (plain_kernels.cpp). Decoders round like static_cast.
void plain_decode(dtype t, const std::byte* src, float* dst, std::size_t n) noexcept;
void plain_decode(dtype t, const std::byte* src, double* dst, std::size_t n) noexcept;
/// Returns the first out-of-range or NaN index when `check_range`, else no_error.
std::size_t plain_encode(dtype t, const float* src, std::byte* dst, std::size_t n, bool check_range) noexcept;

}  // namespace safetensors::detail
