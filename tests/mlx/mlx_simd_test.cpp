// SPDX-License-Identifier: Apache-2.0
// The vector dequantization path (src/mlx/x86, AVX2) against the scalar reference over random
// inputs: every mode, affine bits 1..8, group sizes with ragged 16-code tails and ones the
// vector code hands back, every scale and output dtype, NaN/Inf/subnormal scales and biases,
// odd row and group counts, unaligned buffers. Where the CPU or the build has no vector path
// (SAFETENSORS_PORTABLE), the dispatched entry point is still compared with the reference.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mlx/kernels.h"
#include "safetensors/convert.h"
#include "safetensors/mlx_quant.h"

namespace {

namespace mlx = safetensors::mlx;
using safetensors::dtype;

/// A scale or bias of dtype t: mostly ordinary values, sometimes special or random bits.
void put_real(std::mt19937& rng, dtype t, std::byte* dst) {
  std::uniform_int_distribution<int> pick(0, 19);
  std::normal_distribution<float> normal(0.0F, 0.05F);
  const int k = pick(rng);
  float v = normal(rng);
  static constexpr float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                       -std::numeric_limits<float>::quiet_NaN(),
                                       std::numeric_limits<float>::infinity(),
                                       -std::numeric_limits<float>::infinity(),
                                       0.0F,
                                       -0.0F,
                                       1e-7F,
                                       -3e38F,
                                       65504.0F,
                                       1e-40F};
  if (k == 0) v = specials[rng() % std::size(specials)];
  if (k == 1) v = static_cast<float>(rng() % 2000) * 1000.0F;  // big: F16 products overflow
  if (t == dtype::F32) {
    std::uint32_t u = std::bit_cast<std::uint32_t>(v);
    if (k == 2) u = static_cast<std::uint32_t>(rng());  // any bits, NaN payloads included
    std::memcpy(dst, &u, 4);
    return;
  }
  std::uint16_t u = t == dtype::BF16 ? safetensors::f32_to_bf16(v) : safetensors::f32_to_f16(v);
  if (k == 2) u = static_cast<std::uint16_t>(rng());
  std::memcpy(dst, &u, 2);
}

struct tensor {
  std::vector<std::byte> weight, scales, biases;
  mlx::quantized_ref ref;
};

tensor random_tensor(std::mt19937& rng, mlx::quant_params p, dtype scale_type, std::uint64_t rows, std::uint64_t cols,
                     std::optional<float> global_scale) {
  tensor t;
  const bool affine = p.mode == mlx::quant_mode::affine;
  const std::uint64_t groups = rows * cols / p.group_size;
  // One extra leading byte, so every span starts unaligned.
  t.weight.resize(1 + rows * cols * p.bits / 8);
  for (auto& b : t.weight) b = static_cast<std::byte>(rng());
  const std::size_t scale_size = safetensors::dtype_bits(scale_type) / 8;
  t.scales.resize(1 + groups * scale_size);
  t.biases.resize(affine ? 1 + groups * scale_size : 0);
  for (std::uint64_t i = 0; i < groups; ++i) {
    if (affine) {
      put_real(rng, scale_type, t.scales.data() + 1 + i * scale_size);
      put_real(rng, scale_type, t.biases.data() + 1 + i * scale_size);
    } else {
      t.scales[1 + i] = static_cast<std::byte>(rng());  // every E8M0 / E4M3 byte, 0 and 255 too
    }
  }
  t.ref = {p,
           rows,
           cols,
           std::span<const std::byte>(t.weight).subspan(1),
           scale_type,
           std::span<const std::byte>(t.scales).subspan(1),
           affine ? std::span<const std::byte>(t.biases).subspan(1) : std::span<const std::byte>(),
           global_scale};
  return t;
}

/// Scalar reference, vector path and the public entry point give the same bytes.
void expect_paths_agree(const mlx::quantized_ref& q, dtype out_type, const std::string& what) {
  const std::size_t out_bytes = q.rows * q.cols * (safetensors::dtype_bits(out_type) / 8);
  const auto o = mlx::detail::real_of(out_type);
  std::vector<std::byte> ref(out_bytes + 1), vec(out_bytes + 1, std::byte{0x5A}), api(out_bytes + 1);
  mlx::detail::dequantize_rows_scalar(q, o, ref.data() + 1, 0, q.rows);
  if (mlx::detail::has_vector_dequantize()) mlx::detail::dequantize_rows_vector(q, o, vec.data() + 1, 0, q.rows);
  ASSERT_TRUE(mlx::dequantize(q, out_type, std::span(api).subspan(1), {1})) << what;
  const std::size_t es = safetensors::dtype_bits(out_type) / 8;
  // "" when equal, else the first differing element with both values (hex, little-endian bytes).
  const auto difference = [&](const std::vector<std::byte>& got) -> std::string {
    for (std::size_t i = 1; i < got.size(); ++i) {
      if (got[i] == ref[i]) continue;
      const std::size_t e = (i - 1) / es;
      std::string m = "element " + std::to_string(e) + " (group " + std::to_string(e / q.params.group_size) + "):";
      for (const std::vector<std::byte>* v : {static_cast<const std::vector<std::byte>*>(&ref), &got}) {
        m += v == &ref ? " reference" : " got";
        for (std::size_t k = 0; k < es; ++k) {
          char hex[4];
          std::snprintf(hex, sizeof hex, " %02x", std::to_integer<unsigned>((*v)[1 + e * es + k]));
          m += hex;
        }
      }
      return m;
    }
    return "";
  };
  if (mlx::detail::has_vector_dequantize()) {
    EXPECT_EQ(difference(vec), "") << what << " (vector path)";
  }
  EXPECT_EQ(difference(api), "") << what << " (dequantize)";
}

TEST(MlxSimd, AffineMatchesTheScalarReference) {
  std::mt19937 rng(2024);
  for (unsigned bits = 1; bits <= 8; ++bits) {
    // Group sizes with g*bits a multiple of 32: multiples of 32 and of 16 (a 16-code
    // tail), ones the vector code leaves to the reference, and one over a 256-code segment.
    for (unsigned g : {8U, 16U, 24U, 32U, 48U, 64U, 96U, 128U, 512U}) {
      if (g * bits % 32 != 0) continue;
      for (dtype st : {dtype::BF16, dtype::F16, dtype::F32}) {
        for (dtype ot : {dtype::BF16, dtype::F16, dtype::F32}) {
          const std::uint64_t rows = 1 + rng() % 5;        // odd counts included
          const std::uint64_t cols = g * (1 + rng() % 5);  // odd group counts included
          const auto t = random_tensor(rng, {mlx::quant_mode::affine, bits, g}, st, rows, cols, std::nullopt);
          expect_paths_agree(t.ref, ot,
                             testing::PrintToString(bits) + "-bit g" + std::to_string(g) + " " +
                                 std::string(safetensors::dtype_name(st)) + " -> " +
                                 std::string(safetensors::dtype_name(ot)));
          if (HasFailure()) return;
        }
      }
    }
  }
}

TEST(MlxSimd, FpModesMatchTheScalarReference) {
  std::mt19937 rng(77);
  for (auto mode : {mlx::quant_mode::mxfp4, mlx::quant_mode::mxfp8, mlx::quant_mode::nvfp4}) {
    for (dtype ot : {dtype::BF16, dtype::F16, dtype::F32}) {
      for (int round = 0; round < 6; ++round) {
        const auto p = mlx::default_params(mode);
        std::optional<float> gs;
        if (mode == mlx::quant_mode::nvfp4 && round % 3 == 2) gs = static_cast<float>(rng() % 1000) / 7.0F;
        const std::uint64_t rows = 1 + rng() % 7;
        const std::uint64_t cols = p.group_size * (1 + rng() % 9);
        const auto t = random_tensor(rng, p, dtype::U8, rows, cols, gs);
        expect_paths_agree(t.ref, ot,
                           std::string(mlx::mode_name(mode)) + " -> " + std::string(safetensors::dtype_name(ot)) +
                               (gs ? " with a global scale" : ""));
        if (HasFailure()) return;
      }
    }
  }
}

// Big rows, as in real checkpoints, split over threads: still the reference's bytes.
TEST(MlxSimd, LargeTensorsMatchOverThreads) {
  std::mt19937 rng(5);
  for (auto p : {mlx::quant_params{mlx::quant_mode::affine, 4, 64}, mlx::quant_params{mlx::quant_mode::affine, 8, 64},
                 mlx::default_params(mlx::quant_mode::mxfp4)}) {
    const auto t =
        random_tensor(rng, p, p.mode == mlx::quant_mode::affine ? dtype::BF16 : dtype::U8, 257, 4096, std::nullopt);
    std::vector<std::byte> ref(257 * 4096 * 2), many(257 * 4096 * 2);
    mlx::detail::dequantize_rows_scalar(t.ref, mlx::detail::real::bf16, ref.data(), 0, t.ref.rows);
    ASSERT_TRUE(mlx::dequantize(t.ref, dtype::BF16, many, {3}));
    EXPECT_TRUE(ref == many) << mlx::mode_name(p.mode) << " " << p.bits;
  }
}

}  // namespace
