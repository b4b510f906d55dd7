// SPDX-License-Identifier: Apache-2.0
// The ggml type table (block sizes from ggml's ggml-common.h) and the SafeTensors mapping.
#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "safetensors/formats/gguf_types.h"

namespace safetensors::gguf {
namespace {

// In code order; lookups binary-search it.
constexpr auto type_table = [] {
  using enum ggml_type;  // here only: other files of a unity batch have functions named q4_0, ...
  return std::array{
      type_traits{f32, "F32", 1, 4, true},
      type_traits{f16, "F16", 1, 2, true},
      type_traits{q4_0, "Q4_0", 32, 18, true},
      type_traits{q4_1, "Q4_1", 32, 20, true},
      type_traits{q5_0, "Q5_0", 32, 22, true},
      type_traits{q5_1, "Q5_1", 32, 24, true},
      type_traits{q8_0, "Q8_0", 32, 34, true},
      type_traits{q8_1, "Q8_1", 32, 36, true},
      type_traits{q2_k, "Q2_K", 256, 84, true},
      type_traits{q3_k, "Q3_K", 256, 110, true},
      type_traits{q4_k, "Q4_K", 256, 144, true},
      type_traits{q5_k, "Q5_K", 256, 176, true},
      type_traits{q6_k, "Q6_K", 256, 210, true},
      type_traits{q8_k, "Q8_K", 256, 292, true},
      type_traits{iq2_xxs, "IQ2_XXS", 256, 66, false},
      type_traits{iq2_xs, "IQ2_XS", 256, 74, false},
      type_traits{iq3_xxs, "IQ3_XXS", 256, 98, false},
      type_traits{iq1_s, "IQ1_S", 256, 50, false},
      type_traits{iq4_nl, "IQ4_NL", 32, 18, false},
      type_traits{iq3_s, "IQ3_S", 256, 110, false},
      type_traits{iq2_s, "IQ2_S", 256, 82, false},
      type_traits{iq4_xs, "IQ4_XS", 256, 136, false},
      type_traits{i8, "I8", 1, 1, true},
      type_traits{i16, "I16", 1, 2, true},
      type_traits{i32, "I32", 1, 4, true},
      type_traits{i64, "I64", 1, 8, true},
      type_traits{f64, "F64", 1, 8, true},
      type_traits{iq1_m, "IQ1_M", 256, 56, false},
      type_traits{bf16, "BF16", 1, 2, true},
      type_traits{tq1_0, "TQ1_0", 256, 54, false},
      type_traits{tq2_0, "TQ2_0", 256, 66, false},
      type_traits{mxfp4, "MXFP4", 32, 17, false},
      type_traits{nvfp4, "NVFP4", 64, 36, false},
      type_traits{q1_0, "Q1_0", 128, 18, false},
      type_traits{q2_0, "Q2_0", 64, 18, false},
  };
}();

static_assert(std::ranges::is_sorted(type_table, {}, &type_traits::type));

struct plain_pair {
  ggml_type gguf;
  dtype st;
};
constexpr auto plain_types = [] {
  using enum ggml_type;
  return std::array{
      plain_pair{f32, dtype::F32}, plain_pair{f16, dtype::F16}, plain_pair{bf16, dtype::BF16},
      plain_pair{f64, dtype::F64}, plain_pair{i8, dtype::I8},   plain_pair{i16, dtype::I16},
      plain_pair{i32, dtype::I32}, plain_pair{i64, dtype::I64},
  };
}();

}  // namespace

const type_traits* find_type(std::uint32_t code) noexcept {
  const auto it = std::ranges::lower_bound(type_table, static_cast<ggml_type>(code), {}, &type_traits::type);
  return it != type_table.end() && it->type == static_cast<ggml_type>(code) ? &*it : nullptr;
}

const type_traits& traits(ggml_type t) noexcept {
  const type_traits* found = find_type(static_cast<std::uint32_t>(t));
  return found != nullptr ? *found : type_table.front();  // every enumerator is in the table
}

std::span<const type_traits> all_types() noexcept { return type_table; }

std::string type_name(std::uint32_t code) {
  const type_traits* found = find_type(code);
  return found != nullptr ? std::string(found->name) : fmt::format("type {}", code);
}

std::optional<dtype> plain_dtype(ggml_type t) noexcept {
  for (const plain_pair& p : plain_types) {
    if (p.gguf == t) return p.st;
  }
  return std::nullopt;
}

std::optional<ggml_type> ggml_type_for(dtype t) noexcept {
  for (const plain_pair& p : plain_types) {
    if (p.st == t) return p.gguf;
  }
  return std::nullopt;
}

}  // namespace safetensors::gguf
