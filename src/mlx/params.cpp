// SPDX-License-Identifier: Apache-2.0
// MLX quantization modes and parameters, and the public code packing functions.
#include <fmt/format.h>

#include "mlx/bitstream.h"
#include "safetensors/mlx_quant.h"

namespace safetensors::mlx {

std::string_view mode_name(quant_mode m) noexcept {
  switch (m) {
    case quant_mode::affine: return "affine";
    case quant_mode::mxfp4: return "mxfp4";
    case quant_mode::mxfp8: return "mxfp8";
    case quant_mode::nvfp4: return "nvfp4";
  }
  return "affine";
}

std::optional<quant_mode> parse_mode(std::string_view name) noexcept {
  for (quant_mode m : {quant_mode::affine, quant_mode::mxfp4, quant_mode::mxfp8, quant_mode::nvfp4}) {
    if (name == mode_name(m)) return m;
  }
  return std::nullopt;
}

namespace {

status fp_params_check(const quant_params& p) {
  const quant_params want = default_params(p.mode);
  if (p.bits != want.bits || p.group_size != want.group_size) {
    return make_error(error_code::invalid_argument,
                      fmt::format("{} needs bits {} and group size {}, not bits {} and group size {}",
                                  mode_name(p.mode), want.bits, want.group_size, p.bits, p.group_size));
  }
  return {};
}

}  // namespace

status check_quantize_params(const quant_params& p) {
  if (p.mode != quant_mode::affine) return fp_params_check(p);
  if (p.bits < 2 || p.bits > 8 || p.bits == 7) {
    return make_error(error_code::invalid_argument,
                      fmt::format("affine quantization supports bits 2, 3, 4, 5, 6 and 8, not {}", p.bits));
  }
  if (p.group_size != 32 && p.group_size != 64 && p.group_size != 128) {
    return make_error(error_code::invalid_argument,
                      fmt::format("affine quantization supports group sizes 32, 64 and 128, not {}", p.group_size));
  }
  return {};
}

status check_dequantize_params(const quant_params& p) {
  if (p.mode != quant_mode::affine) return fp_params_check(p);
  if (p.bits < 1 || p.bits > 8) {
    return make_error(error_code::invalid_argument, fmt::format("affine bits must be 1 to 8, not {}", p.bits));
  }
  if (p.group_size == 0 || p.group_size > (1U << 20) || (static_cast<std::uint64_t>(p.group_size) * p.bits) % 32 != 0) {
    return make_error(
        error_code::invalid_argument,
        fmt::format("affine group size {} with {} bits does not fill whole 32-bit words", p.group_size, p.bits));
  }
  return {};
}

double bits_per_weight(const quant_params& p, dtype scale_type) noexcept {
  if (p.group_size == 0) return 0;
  const double side = p.mode == quant_mode::affine ? 2.0 * dtype_bits(scale_type) : 8.0;
  return p.bits + side / p.group_size;
}

dtype scale_dtype_for(quant_mode m, dtype in) noexcept { return m == quant_mode::affine ? in : dtype::U8; }

status pack_codes(std::span<const std::uint8_t> codes, unsigned bits, std::span<std::byte> words) {
  if (bits < 1 || bits > 8)
    return make_error(error_code::invalid_argument, fmt::format("bits must be 1 to 8, not {}", bits));
  if (words.size() % 4 != 0 ||
      static_cast<std::uint64_t>(codes.size()) * bits != static_cast<std::uint64_t>(words.size()) * 8) {
    return make_error(
        error_code::invalid_argument,
        fmt::format("{} codes of {} bits do not fill {} bytes of whole words", codes.size(), bits, words.size()));
  }
  for (std::size_t k = 0; k < codes.size(); ++k) {
    if (codes[k] >> bits != 0) {
      return make_error(error_code::invalid_argument,
                        fmt::format("code {} at index {} does not fit in {} bits", codes[k], k, bits));
    }
  }
  detail::pack_segment(codes.data(), bits, codes.size(), words.data());
  return {};
}

status unpack_codes(std::span<const std::byte> words, unsigned bits, std::span<std::uint8_t> codes) {
  if (bits < 1 || bits > 8)
    return make_error(error_code::invalid_argument, fmt::format("bits must be 1 to 8, not {}", bits));
  if (words.size() % 4 != 0 ||
      static_cast<std::uint64_t>(codes.size()) * bits != static_cast<std::uint64_t>(words.size()) * 8) {
    return make_error(error_code::invalid_argument, fmt::format("{} bytes of words do not hold {} codes of {} bits",
                                                                words.size(), codes.size(), bits));
  }
  detail::unpack_segment(words.data(), bits, codes.size(), codes.data());
  return {};
}

}  // namespace safetensors::mlx
