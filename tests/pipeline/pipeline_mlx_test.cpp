// SPDX-License-Identifier: Apache-2.0
// MLX quantization of whole checkpoints as library calls (safetensors/pipeline/mlx_rewrite.h):
// quantize then dequantize gives MLX's round trip of every layer, the rest is copied, and a
// cancelled run or a bad request leaves nothing behind.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/mlx_quant.h"
#include "safetensors/pipeline/mlx_rewrite.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
namespace sp = safetensors::pipeline;

/// layer.weight F32 [8, 128], norm.weight F32 [128], ids I32 [3].
fs::path model(const fs::path& path, std::vector<float>& weight) {
  weight.resize(8 * 128);
  for (std::size_t i = 0; i < weight.size(); ++i) weight[i] = std::sin(static_cast<float>(i) * 0.1F);
  static const std::vector<float> norm(128, 1.0F);
  static const std::vector<std::int32_t> ids{1, 2, 3};
  const std::vector<st::tensor_data> tensors{
      {"layer.weight", st::dtype::F32, {8, 128}, std::as_bytes(std::span(weight))},
      {"norm.weight", st::dtype::F32, {128}, std::as_bytes(std::span(norm))},
      {"ids", st::dtype::I32, {3}, std::as_bytes(std::span(ids))}};
  EXPECT_OK(st::write_file(path.string(), tensors));
  return path;
}

TEST(PipelineMlx, QuantizeThenDequantizeIsMlxsRoundTrip) {
  const auto dir = st_test::scratch_dir();
  std::vector<float> weight;
  const auto in = model(dir / "in.safetensors", weight);
  const auto q = dir / "q.safetensors";
  auto quantized = sp::quantize(in.string(), q.string());
  ASSERT_OK(quantized);
  EXPECT_EQ(quantized->layers, 1U);  // norm.weight is rank 1, ids are integers
  auto qf = st::file::open(q.string());
  ASSERT_OK(qf);
  EXPECT_EQ(qf->find("layer.weight")->type, st::dtype::U32);
  EXPECT_NE(qf->find("layer.scales"), nullptr);
  EXPECT_NE(qf->find("layer.biases"), nullptr);
  EXPECT_EQ(qf->header().metadata()->at("quantization_bits"), "4");

  // The expected values: MLX's quantizer and dequantizer on the same rows, in memory.
  const auto p = st::mlx::default_params(st::mlx::quant_mode::affine);
  std::vector<std::byte> w(8 * 128 * 4 / 8), s(8 * 2 * 4), b(8 * 2 * 4);
  ASSERT_OK(st::mlx::quantize(st::dtype::F32, std::as_bytes(std::span(weight)), 8, 128, p, {w, s, b}));
  st::mlx::quantized_ref ref;
  ref.params = p;
  ref.rows = 8;
  ref.cols = 128;
  ref.scale_type = st::dtype::F32;
  ref.weight = w;
  ref.scales = s;
  ref.biases = b;
  std::vector<float> want(8 * 128);
  ASSERT_OK(st::mlx::dequantize(ref, st::dtype::F32, std::as_writable_bytes(std::span(want))));

  const auto d = dir / "d.safetensors";
  auto dequantized = sp::dequantize(q.string(), d.string());
  ASSERT_OK(dequantized);
  EXPECT_EQ(dequantized->layers, 1U);
  auto df = st::file::open(d.string());
  ASSERT_OK(df);
  EXPECT_EQ(df->tensors().size(), 3U);
  auto got = df->view("layer.weight");
  ASSERT_OK(got);
  ASSERT_EQ(got->data.size(), want.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(got->data.data(), want.data(), got->data.size()), 0);
  EXPECT_FALSE(df->header().metadata() && df->header().metadata()->contains("quantization_bits"));
}

TEST(PipelineMlx, BadRequestsAndCancellationLeaveNoOutput) {
  const auto dir = st_test::scratch_dir();
  std::vector<float> weight;
  const auto in = model(dir / "in.safetensors", weight).string();
  const auto out = dir / "q.safetensors";
  sp::quantize_options none;
  none.select.only = {"ids"};  // not a float weight: nothing to quantize
  EXPECT_ERROR_SAYING(sp::quantize(in, out.string(), none), st::error_code::invalid_argument, "no tensor to quantize");
  sp::quantize_options typo;
  typo.select.only = {"zzz"};
  EXPECT_ERROR_SAYING(sp::quantize(in, out.string(), typo), st::error_code::tensor_not_found, "no tensor matches");
  sp::quantize_options stop;
  stop.progress = [](std::uint64_t, std::uint64_t) { return false; };
  EXPECT_ERROR(sp::quantize(in, out.string(), stop), st::error_code::cancelled);
  sp::dequantize_options to_int;
  to_int.to = st::dtype::I8;
  EXPECT_ERROR_SAYING(sp::dequantize(in, out.string(), to_int), st::error_code::invalid_argument, "F32, F16 or BF16");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // no temporary either
}

}  // namespace
