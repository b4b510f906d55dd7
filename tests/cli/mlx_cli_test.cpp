// SPDX-License-Identifier: Apache-2.0
// `safetensors quantize` / `dequantize` / `inspect` on small MLX files made here.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "safetensors/convert.h"
#include "safetensors/file.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/paths.h"

namespace {

namespace mlx = safetensors::mlx;
using safetensors::dtype;

/// A small BF16 model: two linear weights, an embedding, a norm, a bias, and a weight
/// whose rows (100) no group size divides.
std::filesystem::path write_bf16_model_with_odd_rows(const std::filesystem::path& dir) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0F, 0.05F);
  auto bf16 = [&](std::size_t n) {
    std::vector<std::uint16_t> v(n);
    for (auto& x : v) x = safetensors::f32_to_bf16(normal(rng));
    return v;
  };
  static std::vector<std::vector<std::uint16_t>> keep;
  keep = {bf16(64 * 128), bf16(32 * 128), bf16(96 * 128), bf16(128), bf16(32), bf16(8 * 100)};
  std::vector<safetensors::tensor_data> t = {
      {"model.embed_tokens.weight", dtype::BF16, {64, 128}, std::as_bytes(std::span(keep[0]))},
      {"model.layers.0.self_attn.q_proj.weight", dtype::BF16, {32, 128}, std::as_bytes(std::span(keep[1]))},
      {"model.layers.0.mlp.up_proj.weight", dtype::BF16, {96, 128}, std::as_bytes(std::span(keep[2]))},
      {"model.norm.weight", dtype::BF16, {128}, std::as_bytes(std::span(keep[3]))},
      {"model.layers.0.self_attn.q_proj.bias", dtype::BF16, {32}, std::as_bytes(std::span(keep[4]))},
      {"model.odd.weight", dtype::BF16, {8, 100}, std::as_bytes(std::span(keep[5]))},
  };
  safetensors::write_options o;
  o.metadata = safetensors::metadata_map{{"source", "test"}};
  const auto path = dir / "model.safetensors";
  EXPECT_TRUE(safetensors::write_file(path.string(), t, o));
  return path;
}

TEST(MlxCli, QuantizeThenDequantizeRoundTrip) {
  const auto dir = st_test::scratch_dir();
  const auto model = write_bf16_model_with_odd_rows(dir);
  const auto quant_dir = dir / "q";
  std::filesystem::create_directories(quant_dir);
  const auto quantized = quant_dir / "model.safetensors";
  auto run = st_test::run_command(
      st_test::cli_shell("quantize " + st_test::quoted_path(model) + " " + st_test::quoted_path(quantized) +
                         " --bits 4 --group-size 64 --config-out " + st_test::quoted_path(quant_dir / "config.json")),
      true);
  ASSERT_EQ(run.status, 0) << run.out;

  auto f = safetensors::file::open(quantized.string());
  ASSERT_TRUE(f) << f.err().to_string();
  const auto& md = *f->header().metadata();
  EXPECT_EQ(md.at("format"), "mlx");
  EXPECT_EQ(md.at("quantization_bits"), "4");
  EXPECT_EQ(md.at("quantization_group_size"), "64");
  EXPECT_EQ(md.at("quantization_mode"), "affine");
  EXPECT_EQ(md.at("source"), "test");
  auto config = mlx::read_config_beside(quantized.string());
  ASSERT_TRUE(config) << config.err().to_string();
  ASSERT_TRUE(config->has_value());
  EXPECT_EQ(*(*config)->global, (mlx::quant_params{mlx::quant_mode::affine, 4, 64}));
  auto info = mlx::describe_checkpoint(f->header(), &**config);
  ASSERT_TRUE(info);
  ASSERT_EQ(info->layers.size(), 3U);  // embedding and two linears; not the norm, bias, or 100-wide weight
  const auto* qp = f->find("model.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(qp->type, dtype::U32);
  EXPECT_EQ(std::vector<std::uint64_t>(qp->shape.begin(), qp->shape.end()), (std::vector<std::uint64_t>{32, 16}));
  EXPECT_EQ(f->find("model.odd.weight")->type, dtype::BF16);
  EXPECT_EQ(f->find("model.norm.weight")->type, dtype::BF16);

  // Dequantize (config.json beside it is read) and compare with the library's kernel.
  const auto restored = dir / "restored.safetensors";
  run = st_test::run_command(
      st_test::cli_shell("dequantize " + st_test::quoted_path(quantized) + " " + st_test::quoted_path(restored)), true);
  ASSERT_EQ(run.status, 0) << run.out;
  auto r = safetensors::file::open(restored.string());
  ASSERT_TRUE(r);
  auto original = safetensors::file::open(model.string());
  ASSERT_TRUE(original);
  EXPECT_EQ(r->tensors().size(), original->tensors().size());
  EXPECT_EQ(r->header().metadata()->count("quantization_bits"), 0U);
  EXPECT_EQ(r->header().metadata()->at("format"), "mlx");
  for (const auto& layer : info->layers) {
    SCOPED_TRACE(layer.weight);
    auto ref = mlx::layer_ref(*f, layer);
    ASSERT_TRUE(ref);
    std::vector<std::byte> want(layer.rows * layer.cols * 2);
    ASSERT_TRUE(mlx::dequantize(*ref, dtype::BF16, want));
    auto got = r->view(layer.weight);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->type(), dtype::BF16);
    ASSERT_EQ(got->data.size(), want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), got->data.begin()));
    // And close to the original weights (one quantization step at most).
    auto before = original->view(layer.weight);
    ASSERT_TRUE(before);
    const auto* a = reinterpret_cast<const std::uint16_t*>(before->data.data());
    const auto* b = reinterpret_cast<const std::uint16_t*>(got->data.data());
    for (std::size_t i = 0; i < layer.rows * layer.cols; ++i) {
      ASSERT_NEAR(safetensors::bf16_to_f32(a[i]), safetensors::bf16_to_f32(b[i]), 0.05) << i;
    }
  }
  for (const char* name : {"model.norm.weight", "model.odd.weight", "model.layers.0.self_attn.q_proj.bias"}) {
    EXPECT_TRUE(std::ranges::equal(r->view(name)->data, original->view(name)->data)) << name;
  }

  // --dtype F32 widens.
  const auto wide = dir / "wide.safetensors";
  run = st_test::run_command(st_test::cli_shell("dequantize " + st_test::quoted_path(quantized) + " " +
                                                st_test::quoted_path(wide) + " --dtype F32"),
                             true);
  ASSERT_EQ(run.status, 0) << run.out;
  auto w = safetensors::file::open(wide.string());
  ASSERT_TRUE(w);
  EXPECT_EQ(w->find("model.embed_tokens.weight")->type, dtype::F32);

  // inspect lists the quantized layers with their parameters and bits per weight.
  run = st_test::run_command(st_test::cli_shell("inspect " + st_test::quoted_path(quantized)), true);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("model.layers.0.mlp.up_proj"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("affine"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("4.50"), std::string::npos) << run.out;  // 4 + 2*16/64 bits per weight
}

TEST(MlxCli, FpModesAndOnlyExclude) {
  const auto dir = st_test::scratch_dir();
  const auto model = write_bf16_model_with_odd_rows(dir);
  const auto out = dir / "fp.safetensors";
  auto run = st_test::run_command(
      st_test::cli_shell("quantize " + st_test::quoted_path(model) + " " + st_test::quoted_path(out) +
                         " --mode mxfp4 --only '*proj*' --exclude '*q_proj*'"),
      true);
  ASSERT_EQ(run.status, 0) << run.out;
  auto f = safetensors::file::open(out.string());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->find("model.layers.0.mlp.up_proj.weight")->type, dtype::U32);
  EXPECT_EQ(f->find("model.layers.0.mlp.up_proj.scales")->type, dtype::U8);
  EXPECT_EQ(f->find("model.layers.0.mlp.up_proj.biases"), nullptr);
  EXPECT_EQ(f->find("model.layers.0.self_attn.q_proj.weight")->type, dtype::BF16);
  EXPECT_EQ(f->find("model.embed_tokens.weight")->type, dtype::BF16);
  const auto back = dir / "back.safetensors";
  run = st_test::run_command(
      st_test::cli_shell("dequantize " + st_test::quoted_path(out) + " " + st_test::quoted_path(back)), true);
  ASSERT_EQ(run.status, 0) << run.out;
  auto b = safetensors::file::open(back.string());
  ASSERT_TRUE(b);
  EXPECT_EQ(b->find("model.layers.0.mlp.up_proj.weight")->type, dtype::BF16);
  EXPECT_EQ(b->find("model.layers.0.mlp.up_proj.scales"), nullptr);
}

TEST(MlxCli, ErrorsNameTheLayerAndLeaveNoOutput) {
  const auto dir = st_test::scratch_dir();
  const auto model = write_bf16_model_with_odd_rows(dir);
  const auto out = dir / "out.safetensors";
  // Asked for by name, but 100 is not a multiple of 64.
  auto run = st_test::run_command(st_test::cli_shell("quantize " + st_test::quoted_path(model) + " " +
                                                     st_test::quoted_path(out) + " --only 'model.odd.*'"),
                                  true);
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("model.odd.weight"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("does not divide"), std::string::npos) << run.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  run = st_test::run_command(
      st_test::cli_shell("quantize " + st_test::quoted_path(model) + " " + st_test::quoted_path(out) + " --mode int4"),
      true);
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.out.find("int4"), std::string::npos) << run.out;
  run = st_test::run_command(
      st_test::cli_shell("quantize " + st_test::quoted_path(model) + " " + st_test::quoted_path(out) + " --bits 7"),
      true);
  EXPECT_EQ(run.status, 2) << run.out;

  // A quantized file whose scales do not match its weight.
  std::vector<std::byte> w(8 * 16 * 4), s(8 * 2 * 2), b(8 * 1 * 2);
  std::vector<safetensors::tensor_data> t = {{"m.q.weight", dtype::U32, {8, 16}, w},
                                             {"m.q.scales", dtype::BF16, {8, 2}, s},
                                             {"m.q.biases", dtype::BF16, {8, 1}, b}};
  const auto broken = dir / "broken.safetensors";
  ASSERT_TRUE(safetensors::write_file(broken.string(), t));
  run = st_test::run_command(
      st_test::cli_shell("dequantize " + st_test::quoted_path(broken) + " " + st_test::quoted_path(out)), true);
  EXPECT_NE(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("m.q"), std::string::npos) << run.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  // Unknown mode in config.json.
  std::ofstream(dir / "config.json") << R"({"quantization": {"bits": 4, "mode": "int4"}})";
  run = st_test::run_command(
      st_test::cli_shell("dequantize " + st_test::quoted_path(model) + " " + st_test::quoted_path(out)), true);
  EXPECT_NE(run.status, 0) << run.out;
  EXPECT_NE(run.out.find("unknown quantization mode 'int4'"), std::string::npos) << run.out;
}

}  // namespace
