// SPDX-License-Identifier: Apache-2.0
// The vector-path names of mlx/kernels.h on hosts without the x86 kernels and in
// SAFETENSORS_PORTABLE builds: the probe says no, and the vector name runs the scalar
// reference, for the tests that compare paths.
#include "mlx/kernels.h"

namespace safetensors::mlx::detail {

bool has_vector_dequantize() noexcept { return false; }

void dequantize_rows_vector(const quantized_ref& q, real o, std::byte* dst, std::uint64_t begin,
                            std::uint64_t end) noexcept {
  dequantize_rows_scalar(q, o, dst, begin, end);
}

}  // namespace safetensors::mlx::detail
