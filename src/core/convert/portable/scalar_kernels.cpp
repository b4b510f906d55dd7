// SPDX-License-Identifier: Apache-2.0
// The x86 kernel names on hosts without them (ARM, RISC-V, ...) and in SAFETENSORS_PORTABLE
// builds: every probe says no, so the dispatch in half_kernels.cpp and lut_decode.cpp always
// takes the scalar loops, and each name forwards there for the tests that compare paths.
#include "convert/kernels.h"
#include "convert/loops.h"

namespace safetensors::detail {

bool has_f16c() noexcept { return false; }
bool has_avx2() noexcept { return false; }
bool has_avx512() noexcept { return false; }
bool has_avx512_bf16() noexcept { return false; }

void f16_to_f32_f16c(const std::byte* src, float* dst, std::size_t n) noexcept { f16_to_f32_portable(src, dst, n); }
void f32_to_f16_f16c(const float* src, std::byte* dst, std::size_t n) noexcept { f32_to_f16_portable(src, dst, n); }
void bf16_to_f32_avx2(const std::byte* src, float* dst, std::size_t n) noexcept { bf16_to_f32_loop(src, dst, n); }
void f32_to_bf16_avx2(const float* src, std::byte* dst, std::size_t n) noexcept { f32_to_bf16_loop(src, dst, n); }
void f32_to_bf16_avx512(const float* src, std::byte* dst, std::size_t n) noexcept { f32_to_bf16_loop(src, dst, n); }
void f32_to_bf16_avx512bf16(const float* src, std::byte* dst, std::size_t n) noexcept { f32_to_bf16_loop(src, dst, n); }
void table_decode_avx2(const float* table, const std::byte* src, float* dst, std::size_t n) noexcept {
  table_loop(table, src, dst, n);
}

}  // namespace safetensors::detail
