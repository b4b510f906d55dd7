// SPDX-License-Identifier: Apache-2.0
/// \file gguf_types.h
/// ggml's tensor element types: codes, names, block sizes, and which ones this library
/// can dequantize. The table is data: new ggml types are one line each.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "safetensors/dtype.h"

namespace safetensors::gguf {

/// ggml type codes as stored in a GGUF tensor entry. Codes 4, 5, 31-33 and 36-38
/// were removed from ggml and are rejected.
enum class ggml_type : std::uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q8_1 = 9,
  q2_k = 10,
  q3_k = 11,
  q4_k = 12,
  q5_k = 13,
  q6_k = 14,
  q8_k = 15,
  iq2_xxs = 16,
  iq2_xs = 17,
  iq3_xxs = 18,
  iq1_s = 19,
  iq4_nl = 20,
  iq3_s = 21,
  iq2_s = 22,
  iq4_xs = 23,
  i8 = 24,
  i16 = 25,
  i32 = 26,
  i64 = 27,
  f64 = 28,
  iq1_m = 29,
  bf16 = 30,
  tq1_0 = 34,
  tq2_0 = 35,
  mxfp4 = 39,
  nvfp4 = 40,
  q1_0 = 41,
  q2_0 = 42,
};

/// What the table knows about a type.
struct type_traits {
  ggml_type type;
  std::string_view name;         ///< ggml's name: "F32", "Q4_K", "IQ2_XXS", ...
  std::uint32_t block_elements;  ///< elements per block (1 for plain types)
  std::uint32_t block_bytes;     ///< bytes per block
  bool dequantizable;            ///< dequantize() supports it
};

/// The entry for `code`, or nullptr for unknown and removed codes.
[[nodiscard]] const type_traits* find_type(std::uint32_t code) noexcept;
[[nodiscard]] const type_traits& traits(ggml_type t) noexcept;
/// Every known type, in code order.
[[nodiscard]] std::span<const type_traits> all_types() noexcept;
/// ggml's name, or "type <code>" for an unknown code.
[[nodiscard]] std::string type_name(std::uint32_t code);

/// True for block-quantized types (block_elements > 1).
[[nodiscard]] inline bool is_quantized(ggml_type t) noexcept { return traits(t).block_elements > 1; }

/// The SafeTensors dtype with the same bytes (F32, F16, BF16, F64, I8..I64), or nullopt
/// for quantized types.
[[nodiscard]] std::optional<dtype> plain_dtype(ggml_type t) noexcept;
/// The GGUF type storing `t` unchanged, or nullopt (BOOL, unsigned, 8-bit and smaller floats, C64).
[[nodiscard]] std::optional<ggml_type> ggml_type_for(dtype t) noexcept;

}  // namespace safetensors::gguf
