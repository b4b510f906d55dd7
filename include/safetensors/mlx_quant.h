// SPDX-License-Identifier: Apache-2.0
/// \file mlx_quant.h
/// Kernels for MLX quantized weights: packing codes into U32 words, and dequantizing
/// and quantizing affine, mxfp4, mxfp8 and nvfp4 tensors bit-identically to MLX's CPU
/// backend (see docs/mlx.md; the formulas are those of MLX v0.32).
///
/// Layout of one quantized tensor with logical shape `[..., K]` (`rows` = product of the
/// leading axes), group size `g` and `bits` per code:
///
///     weight  U32 [..., K*bits/32]  codes of each row as an LSB-first bitstream in
///                                   little-endian words (code k at bits [k*bits, (k+1)*bits))
///     scales  T or U8 [..., K/g]    affine: dtype T (F32/F16/BF16); mx: E8M0; nvfp4: E4M3
///     biases  T [..., K/g]          affine only
///
/// All byte spans may be unaligned (MLX writes tensors without padding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "safetensors/dtype.h"
#include "safetensors/error.h"

namespace safetensors::mlx {

/// How codes map to values.
enum class quant_mode : std::uint8_t {
  affine,  ///< w = s * q + b per group, unsigned q of 2..8 bits
  mxfp4,   ///< FP4 E2M1 codes, E8M0 power-of-two scale per 32
  mxfp8,   ///< FP8 E4M3 codes, E8M0 scale per 32
  nvfp4,   ///< FP4 E2M1 codes, E4M3 scale per 16
};

/// "affine", "mxfp4", "mxfp8" or "nvfp4".
[[nodiscard]] std::string_view mode_name(quant_mode m) noexcept;
/// Exact lower-case names as written by MLX; nullopt otherwise.
[[nodiscard]] std::optional<quant_mode> parse_mode(std::string_view name) noexcept;

/// The three numbers that describe a quantization.
struct quant_params {
  quant_mode mode = quant_mode::affine;
  unsigned bits = 4;
  unsigned group_size = 64;
  friend bool operator==(const quant_params&, const quant_params&) = default;
};

/// MLX's per-mode defaults: affine 4-bit g64, mxfp4 4-bit g32, mxfp8 8-bit g32, nvfp4 4-bit g16.
[[nodiscard]] constexpr quant_params default_params(quant_mode m) noexcept {
  switch (m) {
    case quant_mode::affine: return {m, 4, 64};
    case quant_mode::mxfp4: return {m, 4, 32};
    case quant_mode::mxfp8: return {m, 8, 32};
    case quant_mode::nvfp4: return {m, 4, 16};
  }
  return {};
}

/// What `quantize` accepts (MLX's rules): affine bits {2,3,4,5,6,8} and g {32,64,128};
/// fp modes exactly their fixed bits and group size. Error: InvalidArgument.
[[nodiscard]] status check_quantize_params(const quant_params& p);
/// What `dequantize` accepts: affine bits 1..8 with g*bits a multiple of 32 (groups start
/// on word boundaries); fp modes as for quantize. Error: InvalidArgument.
[[nodiscard]] status check_dequantize_params(const quant_params& p);

/// Storage cost per weight in bits: codes plus the group's scale (and bias).
/// `scale_type` is the dtype of scales and biases (ignored for fp modes: U8 scales).
[[nodiscard]] double bits_per_weight(const quant_params& p, dtype scale_type) noexcept;

/// Dtype of the scales `quantize` writes for input dtype `in`: `in` (affine) or U8.
[[nodiscard]] dtype scale_dtype_for(quant_mode m, dtype in) noexcept;

/// Packs one code per byte into words (little-endian U32 bytes). `codes.size() * bits`
/// must equal `words.size() * 8`; codes above 2^bits - 1 are an error. bits: 1..8.
[[nodiscard]] status pack_codes(std::span<const std::uint8_t> codes, unsigned bits, std::span<std::byte> words);
/// The inverse: `codes.size() * bits == words.size() * 8`.
[[nodiscard]] status unpack_codes(std::span<const std::byte> words, unsigned bits, std::span<std::uint8_t> codes);

/// One quantized tensor's parts, non-owning. Sizes are checked against rows and cols.
struct quantized_ref {
  quant_params params;
  std::uint64_t rows = 0;             ///< product of the leading axes
  std::uint64_t cols = 0;             ///< K, the logical last axis
  std::span<const std::byte> weight;  ///< rows * cols*bits/32 words
  dtype scale_type = dtype::BF16;     ///< affine: F32, F16 or BF16; fp modes: U8
  std::span<const std::byte> scales;  ///< rows * cols/g elements
  std::span<const std::byte> biases;  ///< affine: same size as scales; fp modes: empty
  std::optional<float> global_scale;  ///< nvfp4 only: MLX's optional float32 global scale
};

/// Threads used by the kernels: 0 picks min(hardware threads, 8) for big tensors, 1 runs
/// on the caller's thread only.
struct kernel_options {
  unsigned threads = 0;
};

/// MLX's default output dtype: the scales' dtype (affine) or BF16 (fp modes).
[[nodiscard]] dtype default_output_dtype(const quantized_ref& q) noexcept;

/// Dequantizes into `out` (rows*cols elements of `out_type`: F32, F16 or BF16), with
/// MLX-CPU semantics: affine computes `RN_T(RN_T(q*s) + b)` in the scales' dtype T and then
/// casts; fp modes evaluate the scale and the product in `out_type`; nvfp4 with a global
/// scale computes in float32 and then rounds to `out_type`.
/// Errors: InvalidArgument for bad parameters, dtypes or sizes.
[[nodiscard]] status dequantize(const quantized_ref& q, dtype out_type, std::span<std::byte> out,
                                const kernel_options& options = {});

/// Where `quantize` writes. Sizes: weight rows*cols*bits/8 bytes; scales and biases
/// rows*cols/g elements of scale_dtype_for(mode, in); biases empty for fp modes.
struct quantized_out {
  std::span<std::byte> weight;
  std::span<std::byte> scales;
  std::span<std::byte> biases;
};

/// Quantizes `rows` x `cols` elements of `in_type` (F32, F16 or BF16) with MLX's CPU
/// algorithm: codes, scales and biases are bit-identical to `mx.quantize` on the CPU.
/// `nvfp4_global_scale` (nvfp4 only) is MLX's optional float32 global scale: group scales
/// are stored as E4M3(amax/6 * 2688/gs) and dequantize needs the same value back.
/// Errors: InvalidArgument (params, dtype, sizes, cols not a multiple of the group size).
[[nodiscard]] status quantize(dtype in_type, std::span<const std::byte> in, std::uint64_t rows, std::uint64_t cols,
                              const quant_params& params, const quantized_out& out, const kernel_options& options = {},
                              std::optional<float> nvfp4_global_scale = std::nullopt);

}  // namespace safetensors::mlx
