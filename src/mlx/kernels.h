// SPDX-License-Identifier: Apache-2.0
// Internal: the paths behind dequantize's run-time dispatch, named so tests can compare them.
// The vector path lives in x86/dequantize_avx2.cpp (x86 builds without SAFETENSORS_PORTABLE);
// elsewhere portable/dequantize_portable.cpp stands in, where the probe says no and the
// vector name runs the scalar reference.
#pragma once

#include <cstdint>

#include "mlx/real_io.h"
#include "safetensors/mlx_quant.h"

namespace safetensors::mlx::detail {

/// Rows [begin, end) of a tensor that passed dequantize's checks into `dst` (output type o):
/// the scalar reference, compiled for the baseline ISA (dequantize.cpp).
void dequantize_rows_scalar(const quantized_ref& q, real o, std::byte* dst, std::uint64_t begin,
                            std::uint64_t end) noexcept;

/// True when this build has the vector path and the CPU can run it (AVX2 and F16C).
bool has_vector_dequantize() noexcept;

/// The same rows through the vector path: AVX2 kernels for every mode (BF16, F16 and F32
/// output), bit-identical to the scalar reference, which it runs itself for what it does
/// not take (non-finite affine scales or biases, group sizes that are not a multiple of 16,
/// nvfp4 with a global scale). Only call it when has_vector_dequantize().
void dequantize_rows_vector(const quantized_ref& q, real o, std::byte* dst, std::uint64_t begin,
                            std::uint64_t end) noexcept;

}  // namespace safetensors::mlx::detail
