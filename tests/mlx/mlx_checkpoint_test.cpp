// SPDX-License-Identifier: Apache-2.0
// Detecting quantized MLX layers: config.json (overrides that do not inherit), metadata
// keys, shape inference and its ambiguity rule, and errors that name the layer.
#include <gtest/gtest.h>

#include <fstream>

#include "safetensors/file.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace mlx = safetensors::mlx;
using safetensors::dtype;

/// A tensor with zero bytes of the right size.
struct spec {
  std::string name;
  dtype type;
  std::vector<std::uint64_t> shape;
};

struct built {
  std::vector<std::byte> bytes;
  safetensors::header h;
};

built make_file(const std::vector<spec>& specs, std::optional<safetensors::metadata_map> metadata = std::nullopt) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<safetensors::tensor_data> tensors;
  for (const auto& s : specs) {
    storage.emplace_back(safetensors::byte_size(s.type, s.shape).bytes);
    tensors.push_back({s.name, s.type, s.shape, storage.back()});
  }
  safetensors::write_options o;
  o.metadata = std::move(metadata);
  auto bytes = safetensors::serialize(tensors, o);
  EXPECT_TRUE(bytes);
  built b{std::move(bytes).value(), {}};
  auto h = safetensors::parse_file_bytes(b.bytes);
  EXPECT_TRUE(h);
  b.h = std::move(h).value();
  return b;
}

/// An affine layer P with logical [out, in] at `bits`/`g` and BF16 scales.
std::vector<spec> affine_layer(const std::string& p, std::uint64_t out, std::uint64_t in, unsigned bits, unsigned g) {
  return {{p + ".weight", dtype::U32, {out, in * bits / 32}},
          {p + ".scales", dtype::BF16, {out, in / g}},
          {p + ".biases", dtype::BF16, {out, in / g}}};
}

std::vector<spec> concat(std::initializer_list<std::vector<spec>> parts) {
  std::vector<spec> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

TEST(MlxConfig, OverridesDoNotInheritAndMissingModeIsAffine) {
  auto c = mlx::parse_config_json(R"({"model_type": "gpt_oss",
    "quantization": {"group_size": 32, "bits": 4, "mode": "mxfp4",
      "model.layers.0.mlp.router": {"group_size": 64, "bits": 8},
      "model.layers.0.mlp.down_proj": {"bits": 8},
      "model.norm": false, "lm_head": true, "quant_method": "mxfp4"}})");
  ASSERT_TRUE(c) << c.err().to_string();
  ASSERT_TRUE(c->has_value());
  const mlx::quant_config& q = **c;
  ASSERT_TRUE(q.global);
  EXPECT_EQ(*q.global, (mlx::quant_params{mlx::quant_mode::mxfp4, 4, 32}));
  EXPECT_EQ(q.layers.at("model.layers.0.mlp.router"), (mlx::quant_params{mlx::quant_mode::affine, 8, 64}));
  // {"bits": 8} under a g32 global is affine g64 8-bit: no inheritance.
  EXPECT_EQ(q.layers.at("model.layers.0.mlp.down_proj"), (mlx::quant_params{mlx::quant_mode::affine, 8, 64}));
  EXPECT_FALSE(q.layers.at("model.norm").has_value());
  EXPECT_EQ(q.layers.at("lm_head"), *q.global);
  EXPECT_EQ(q.layers.count("quant_method"), 0U);
}

TEST(MlxConfig, QuantizationConfigKeyAndAbsence) {
  auto c = mlx::parse_config_json(R"({"quantization_config": {"group_size": 128, "bits": 2}})");
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ(*(*c)->global, (mlx::quant_params{mlx::quant_mode::affine, 2, 128}));
  auto none = mlx::parse_config_json(R"({"hidden_size": 4096})");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
}

TEST(MlxConfig, BadConfigsAreErrors) {
  auto dup = mlx::parse_config_json(R"({"quantization": {"bits": 4, "bits": 8}})");
  ASSERT_ERROR(dup, safetensors::error_code::duplicate_key);
  auto deep_dup = mlx::parse_config_json(R"({"text_config": {"a": 1, "a": 2}})");
  ASSERT_ERROR(deep_dup, safetensors::error_code::duplicate_key);
  auto mode = mlx::parse_config_json(R"({"quantization": {"bits": 4, "mode": "int4"}})");
  ASSERT_FALSE(mode);
  EXPECT_NE(mode.err().message.find("unknown quantization mode 'int4'"), std::string::npos) << mode.err().message;
  EXPECT_FALSE(mlx::parse_config_json(R"({"quantization": {"bits": "4"}})"));
  EXPECT_FALSE(mlx::parse_config_json(R"({"quantization": {"bits": 4},)"));
  EXPECT_FALSE(mlx::parse_config_json(std::string(mlx::max_config_json_bytes + 1, ' ')));
}

TEST(MlxConfig, ReadsConfigBesideTheFile) {
  const auto dir = st_test::scratch_dir();
  const auto model = (dir / "model.safetensors").string();
  auto none = mlx::read_config_beside(model);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  std::ofstream(dir / "config.json") << R"({"quantization": {"group_size": 32, "bits": 8}})";
  auto some = mlx::read_config_beside(model);
  ASSERT_TRUE(some);
  ASSERT_TRUE(some->has_value());
  EXPECT_EQ(*(*some)->global, (mlx::quant_params{mlx::quant_mode::affine, 8, 32}));
  std::ofstream(dir / "config.json", std::ios::trunc) << R"({"quantization": {"bits": 8, "bits": 8}})";
  auto bad = mlx::read_config_beside(model);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.err().path, (dir / "config.json").string());
}

TEST(MlxMetadata, KeysAreDecimalStrings) {
  auto p =
      mlx::params_from_metadata({{"format", "mlx"}, {"quantization_bits", "8"}, {"quantization_group_size", "32"}});
  ASSERT_TRUE(p);
  EXPECT_EQ(**p, (mlx::quant_params{mlx::quant_mode::affine, 8, 32}));
  auto fp = mlx::params_from_metadata({{"quantization_mode", "nvfp4"}});
  ASSERT_TRUE(fp);
  EXPECT_EQ(**fp, mlx::default_params(mlx::quant_mode::nvfp4));
  auto none = mlx::params_from_metadata({{"format", "mlx"}});
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(mlx::params_from_metadata({{"quantization_bits", "4x"}}));
  EXPECT_FALSE(mlx::params_from_metadata({{"quantization_mode", "int4"}}));
}

TEST(MlxDescribe, FindsLayersExpertsEmbeddingsAndFpModes) {
  auto f = make_file(concat({affine_layer("model.embed_tokens", 512, 256, 4, 64),
                             affine_layer("model.layers.0.self_attn.q_proj", 128, 256, 3, 64),
                             {{"model.layers.0.mlp.switch_mlp.up_proj.weight", dtype::U32, {4, 64, 256 * 4 / 32}},
                              {"model.layers.0.mlp.switch_mlp.up_proj.scales", dtype::U8, {4, 64, 256 / 32}},
                              {"model.layers.0.input_layernorm.weight", dtype::BF16, {256}},
                              {"model.layers.0.self_attn.q_proj.bias", dtype::BF16, {128}}}}),
                     safetensors::metadata_map{{"format", "mlx"}});
  auto info = mlx::describe_checkpoint(f.h);
  ASSERT_TRUE(info) << info.err().to_string();
  EXPECT_TRUE(info->mlx_format);
  ASSERT_EQ(info->layers.size(), 3U);
  const auto* embed = info->find_weight("model.embed_tokens.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->params, (mlx::quant_params{mlx::quant_mode::affine, 4, 64}));
  EXPECT_TRUE(embed->ambiguous) << "256 = 4*64 = 8*32 = 2*128";
  EXPECT_EQ(embed->shape, (std::vector<std::uint64_t>{512, 256}));
  const auto* q = info->find_weight("model.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->params.bits, 3U);  // 192 = 3*64 = 6*32: g64 preferred
  EXPECT_TRUE(q->ambiguous);
  const auto* experts = info->find_weight("model.layers.0.mlp.switch_mlp.up_proj.weight");
  ASSERT_NE(experts, nullptr);
  EXPECT_EQ(experts->params, mlx::default_params(mlx::quant_mode::mxfp4));
  EXPECT_EQ(experts->shape, (std::vector<std::uint64_t>{4, 64, 256}));
  EXPECT_EQ(experts->rows, 256U);
  EXPECT_FALSE(experts->ambiguous);
  EXPECT_TRUE(info->is_companion("model.embed_tokens.scales"));
  EXPECT_TRUE(info->is_companion("model.embed_tokens.biases"));
  EXPECT_FALSE(info->is_companion("model.layers.0.mlp.switch_mlp.up_proj.biases"));
  EXPECT_FALSE(info->is_companion("model.layers.0.self_attn.q_proj.bias"));
  EXPECT_EQ(info->find_weight("model.layers.0.input_layernorm.weight"), nullptr);
  EXPECT_EQ(info->warnings.size(), 2U) << "one ambiguity warning per ambiguous layer";
}

TEST(MlxDescribe, SourcesInOrderOfTrust) {
  auto f = make_file(
      concat({affine_layer("a", 64, 256, 8, 32), affine_layer("b", 64, 256, 8, 32), affine_layer("c", 64, 256, 4, 64)}),
      safetensors::metadata_map{{"format", "mlx"}, {"quantization_bits", "2"}, {"quantization_group_size", "128"}});
  auto config = mlx::parse_config_json(R"({"quantization": {"group_size": 32, "bits": 8,
      "b": {"bits": 4}, "c": {"bits": 5}}})");
  ASSERT_TRUE(config);
  auto info = mlx::describe_checkpoint(f.h, &**config);
  ASSERT_TRUE(info) << info.err().to_string();
  // a: config.json global 8/32 and metadata 2/128 both fit; config.json wins.
  EXPECT_EQ(info->find_weight("a.weight")->params, (mlx::quant_params{mlx::quant_mode::affine, 8, 32}));
  EXPECT_EQ(info->find_weight("a.weight")->source, mlx::param_source::config);
  // b: the layer entry {"bits": 4} is 4/64 (no inheritance) and fits.
  EXPECT_EQ(info->find_weight("b.weight")->params, (mlx::quant_params{mlx::quant_mode::affine, 4, 64}));
  EXPECT_EQ(info->find_weight("b.weight")->source, mlx::param_source::layer_config);
  // c: its entry (5-bit g64) contradicts the shapes; the next fitting source decides.
  EXPECT_EQ(info->find_weight("c.weight")->params, (mlx::quant_params{mlx::quant_mode::affine, 8, 32}));
  bool warned = false;
  for (const auto& w : info->warnings) warned = warned || w.find("layer 'c'") != std::string::npos;
  EXPECT_TRUE(warned);
  // Without config.json, metadata decides.
  auto md_only = mlx::describe_checkpoint(f.h);
  ASSERT_TRUE(md_only);
  EXPECT_EQ(md_only->find_weight("a.weight")->params, (mlx::quant_params{mlx::quant_mode::affine, 2, 128}));
  EXPECT_EQ(md_only->find_weight("a.weight")->source, mlx::param_source::metadata);
}

TEST(MlxDescribe, BadLayersAreErrorsNamingTheLayer) {
  struct bad_case {
    const char* what;
    std::vector<spec> specs;
    const char* tensor;
  };
  const std::vector<bad_case> cases = {
      {"U32 weight without scales",
       {{"m.q.weight", dtype::U32, {8, 32}}, {"m.q.biases", dtype::BF16, {8, 4}}},
       "m.q.weight"},
      {"scales rows differ from the weight's",
       {{"m.q.weight", dtype::U32, {8, 32}}, {"m.q.scales", dtype::BF16, {4, 4}}, {"m.q.biases", dtype::BF16, {4, 4}}},
       "m.q.scales"},
      {"biases shape differs from the scales'",
       {{"m.q.weight", dtype::U32, {8, 32}}, {"m.q.scales", dtype::BF16, {8, 4}}, {"m.q.biases", dtype::BF16, {8, 2}}},
       "m.q.biases"},
      {"no parameters explain the shapes",
       {{"m.q.weight", dtype::U32, {8, 7}}, {"m.q.scales", dtype::BF16, {8, 4}}, {"m.q.biases", dtype::BF16, {8, 4}}},
       "m.q.weight"},
      {"scales beside a float weight",
       {{"m.q.weight", dtype::BF16, {8, 32}}, {"m.q.scales", dtype::BF16, {8, 4}}},
       "m.q.weight"},
      {"float scales without biases",
       {{"m.q.weight", dtype::U32, {8, 32}}, {"m.q.scales", dtype::BF16, {8, 4}}},
       "m.q.scales"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto f = make_file(c.specs, safetensors::metadata_map{{"format", "mlx"}});
    auto info = mlx::describe_checkpoint(f.h);
    ASSERT_FALSE(info);
    EXPECT_EQ(info.err().tensor, std::optional<std::string>(c.tensor)) << info.err().to_string();
    EXPECT_NE(info.err().message.find("m.q"), std::string::npos) << info.err().message;
  }
  // A U32 `.weight` in a file that is not MLX is just an integer tensor.
  auto plain = make_file({{"ids.weight", dtype::U32, {8, 32}}});
  auto ok = mlx::describe_checkpoint(plain.h);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->layers.empty());
}

TEST(MlxSelect, LinearAndEmbeddingWeightsLikeMlxLm) {
  auto f = make_file({{"model.embed_tokens.weight", dtype::BF16, {100, 128}},
                      {"model.layers.0.mlp.down_proj.weight", dtype::F32, {64, 256}},
                      {"model.layers.0.mlp.gate.weight", dtype::F16, {8, 96}},
                      {"model.layers.0.input_layernorm.weight", dtype::BF16, {128}},
                      {"model.layers.0.self_attn.q_proj.bias", dtype::BF16, {128}},
                      {"model.layers.0.experts.weight", dtype::BF16, {4, 16, 64}},
                      {"model.position_ids", dtype::I64, {1, 128}}});
  const mlx::quant_params p{mlx::quant_mode::affine, 4, 64};
  auto chosen = [&](const mlx::selection_rules& rules) {
    std::vector<std::string> names;
    for (const auto& t : f.h.tensors()) {
      if (mlx::selected_for_quantization(t, p, rules)) names.emplace_back(t.name);
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  EXPECT_EQ(chosen({}), (std::vector<std::string>{"model.embed_tokens.weight", "model.layers.0.experts.weight",
                                                  "model.layers.0.mlp.down_proj.weight"}));
  EXPECT_EQ(chosen({{"*mlp*"}, {}}), (std::vector<std::string>{"model.layers.0.mlp.down_proj.weight"}));
  EXPECT_EQ(chosen({{}, {"*embed*", "*experts*"}}), (std::vector<std::string>{"model.layers.0.mlp.down_proj.weight"}));
  // The one glob of every command: sets and escapes work here too (the MLX-only glob had `*`, `?`).
  EXPECT_EQ(chosen({{"model.layers.[0-3].mlp.*"}, {}}),
            (std::vector<std::string>{"model.layers.0.mlp.down_proj.weight"}));
  EXPECT_EQ(chosen({{}, {"model.[!l]*"}}),
            (std::vector<std::string>{"model.layers.0.experts.weight", "model.layers.0.mlp.down_proj.weight"}));
}

}  // namespace
