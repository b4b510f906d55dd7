// SPDX-License-Identifier: Apache-2.0
// Rewrites as the convert pipeline with options (safetensors/pipeline/convert.h): selecting,
// renaming, metadata edits, casting some tensors, sharding several inputs, writing over the
// input only when asked. What `extract`, `cast`, `merge` and `shard` and the bindings run.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "safetensors/checkpoint.h"
#include "safetensors/file.h"
#include "safetensors/pipeline/convert.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
namespace sp = safetensors::pipeline;

/// a.w [4] F32, a.b [2] F32, c.w [3] F32, n [2] I32, with `metadata`.
fs::path model(const fs::path& path, st::metadata_map metadata = {{"format", "pt"}, {"owner", "me"}}) {
  static const std::vector<float> aw{1, 2, 3, 1e6F};
  static const std::vector<float> ab{0.5F, -0.5F};
  static const std::vector<float> cw{7, 8, 9};
  static const std::vector<std::int32_t> n{-1, 1};
  st::write_options options;
  options.metadata = std::move(metadata);
  const std::vector<st::tensor_data> tensors{{"a.w", st::dtype::F32, {4}, std::as_bytes(std::span(aw))},
                                             {"a.b", st::dtype::F32, {2}, std::as_bytes(std::span(ab))},
                                             {"c.w", st::dtype::F32, {3}, std::as_bytes(std::span(cw))},
                                             {"n", st::dtype::I32, {2}, std::as_bytes(std::span(n))}};
  EXPECT_OK(st::write_file(path.string(), tensors, options));
  return path;
}

std::vector<std::string> names_of(const st::file& f) {
  std::vector<std::string> names;
  for (const auto& t : f.tensors()) names.emplace_back(t.name);
  return names;
}

std::vector<float> floats_of(const st::file& f, std::string_view name) {
  auto view = f.view(name);
  EXPECT_OK(view) << name;
  std::vector<float> out(view->data.size() / sizeof(float));
  std::memcpy(out.data(), view->data.data(), view->data.size());
  return out;
}

TEST(PipelineRewrite, SelectsRenamesAndEditsMetadata) {
  const auto dir = st_test::scratch_dir();
  const auto in = model(dir / "in.safetensors");
  const auto out = dir / "out.safetensors";
  sp::convert_options options;
  options.select = {{"a.*", "n"}, {"a.b"}};
  auto prefix = sp::rename_rule::make("a.*", "x.*");
  ASSERT_OK(prefix);
  options.rename = {*prefix};
  options.metadata.set = {{"owner", "you"}, {"new", "1"}};
  options.metadata.remove = {"format"};
  auto summary = sp::convert(in.string(), out.string(), options);
  ASSERT_OK(summary);
  EXPECT_EQ(summary->tensors, 2U);
  EXPECT_EQ(summary->files, std::vector<std::string>{out.string()});
  auto f = st::file::open(out.string());
  ASSERT_OK(f);
  EXPECT_EQ(names_of(*f), (std::vector<std::string>{"x.w", "n"}));
  EXPECT_EQ(floats_of(*f, "x.w"), (std::vector<float>{1, 2, 3, 1e6F}));
  EXPECT_EQ(*f->header().metadata(), (st::metadata_map{{"new", "1"}, {"owner", "you"}}));
}

TEST(PipelineRewrite, PatternsAndRulesThatMatchNothingFailBeforeWriting) {
  const auto dir = st_test::scratch_dir();
  const auto in = model(dir / "in.safetensors").string();
  const auto out = dir / "out.safetensors";
  sp::convert_options only;
  only.select.only = {"zzz.*"};
  EXPECT_ERROR_SAYING(sp::convert(in, out.string(), only), st::error_code::tensor_not_found,
                      "no tensor matches 'zzz.*'");
  sp::convert_options exclude;
  exclude.select.exclude = {"zzz"};
  EXPECT_ERROR_SAYING(sp::convert(in, out.string(), exclude), st::error_code::tensor_not_found,
                      "exclude pattern 'zzz' matches no tensor");
  sp::convert_options rename;
  rename.select.only = {"c.w"};
  rename.rename = {*sp::rename_rule::make("a.w", "b")};  // a.w is not selected
  EXPECT_ERROR_SAYING(sp::convert(in, out.string(), rename), st::error_code::invalid_argument,
                      "rename: no selected tensor matches 'a.w'");
  sp::convert_options remove;
  remove.metadata.remove = {"absent"};
  EXPECT_ERROR_SAYING(sp::convert(in, out.string(), remove), st::error_code::invalid_argument,
                      "metadata key 'absent' not found");
  EXPECT_ERROR_SAYING(sp::rename_rule::make("a.*", "b"), st::error_code::invalid_argument,
                      "needs '*' at the end of both");
  EXPECT_FALSE(fs::exists(out));
}

TEST(PipelineRewrite, CastsOnlyTheChosenFloatingTensorsAndSaturatesWhenAsked) {
  const auto dir = st_test::scratch_dir();
  const auto in = model(dir / "in.safetensors").string();
  const auto out = dir / "out.safetensors";
  sp::convert_options options;
  options.cast = st::dtype::F8_E4M3;
  options.cast_only = {{"a.*", "n"}, {"a.b"}};  // n is an integer: never cast
  options.saturate = true;
  ASSERT_OK(sp::convert(in, out.string(), options));
  auto f = st::file::open(out.string());
  ASSERT_OK(f);
  EXPECT_EQ(f->find("a.w")->type, st::dtype::F8_E4M3);
  EXPECT_EQ(f->find("a.b")->type, st::dtype::F32);
  EXPECT_EQ(f->find("c.w")->type, st::dtype::F32);
  EXPECT_EQ(f->find("n")->type, st::dtype::I32);
  auto w = f->view("a.w");
  ASSERT_OK(w);
  EXPECT_EQ(static_cast<std::uint8_t>(w->data[3]), 0x7E);  // 1e6 saturates to 448, the largest finite E4M3

  options.saturate = false;
  ASSERT_OK(sp::convert(in, out.string(), options));
  auto g = st::file::open(out.string());
  ASSERT_OK(g);
  auto unsaturated = g->view("a.w");
  ASSERT_OK(unsaturated);
  EXPECT_EQ(static_cast<std::uint8_t>(unsaturated->data[3]) & 0x7F, 0x7F);  // NaN, as torch casts it
}

TEST(PipelineRewrite, ShardsSeveralInputsIntoOneCheckpoint) {
  const auto dir = st_test::scratch_dir();
  const auto one = model(dir / "one.safetensors", {{"format", "pt"}, {"owner", "me"}});
  // A second input: the same tensors renamed, so names stay unique.
  const auto two_src = model(dir / "two_src.safetensors", {{"format", "pt"}, {"owner", "them"}});
  sp::convert_options rename;
  rename.rename = {*sp::rename_rule::make("a.*", "b.*"), *sp::rename_rule::make("c.w", "d.w"),
                   *sp::rename_rule::make("n", "m")};
  ASSERT_OK(sp::convert(two_src.string(), (dir / "two.safetensors").string(), rename));

  sp::convert_options options;
  options.to = "sharded";
  options.layout.max_shard_bytes = 24;
  options.layout.prefix = "m";
  std::vector<std::string> warnings;
  options.on_warning = [&](std::string_view w) { warnings.emplace_back(w); };
  const std::vector<std::string> ins{one.string(), (dir / "two.safetensors").string()};
  const auto out = dir / "ck";  // not there yet, no trailing '/': `to` says it is a directory
  auto summary = sp::convert(ins, out.string(), options);
  ASSERT_OK(summary);
  EXPECT_EQ(summary->output->id, "sharded");
  EXPECT_EQ(summary->tensors, 8U);
  ASSERT_GE(summary->files.size(), 3U);
  EXPECT_EQ(summary->files.back(), "m.safetensors.index.json");
  EXPECT_TRUE(summary->files.front().starts_with("m-00001-of-")) << summary->files.front();
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("dropped: owner"), std::string::npos) << warnings[0];

  auto c = st::checkpoint::open((out / "m.safetensors.index.json").string());
  ASSERT_OK(c);
  EXPECT_EQ(c->tensors().size(), 8U);
  for (const auto& shard : c->shards()) {
    EXPECT_EQ(*shard.file.header().metadata(), (st::metadata_map{{"format", "pt"}}));
  }
}

TEST(PipelineRewrite, FromSafeTensorsNamesAnyOtherFormat) {
  const auto dir = st_test::scratch_dir();
  const auto in = model(dir / "in.safetensors").string();
  const auto gguf = dir / "model.gguf";
  std::ofstream(gguf, std::ios::binary) << std::string("GGUF\x03\0\0\0", 8) << std::string(64, '\0');
  sp::convert_options options;
  options.from = "safetensors";
  const std::vector<std::string> ins{in, gguf.string()};
  auto refused = sp::convert(ins, (dir / "out.safetensors").string(), options);
  EXPECT_ERROR_SAYING(refused, st::error_code::header_too_large, "this is a GGUF file, not SafeTensors");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.err().path, gguf.string());
  EXPECT_FALSE(fs::exists(dir / "out.safetensors"));
  ASSERT_OK(sp::convert(std::span(&in, 1), (dir / "out.safetensors").string(), options));
  options.from = "gguf";
  EXPECT_ERROR_SAYING(sp::convert(in, (dir / "x.safetensors").string(), options), st::error_code::invalid_argument,
                      "option 'from': unknown input format 'gguf'");
}

TEST(PipelineRewrite, WritesOverItsInputOnlyWhenAsked) {
  const auto dir = st_test::scratch_dir();
  const auto in = model(dir / "in.safetensors");
  const std::string before = st_test::read_text(in);
  sp::convert_options options;
  options.cast = st::dtype::BF16;
  EXPECT_ERROR_SAYING(sp::convert(in.string(), in.string(), options), st::error_code::invalid_argument, "input");
  EXPECT_EQ(st_test::read_text(in), before);
  options.replace_input = true;
  ASSERT_OK(sp::convert(in.string(), in.string(), options));
  auto f = st::file::open(in.string());
  ASSERT_OK(f);
  EXPECT_EQ(f->find("c.w")->type, st::dtype::BF16);
  EXPECT_EQ(f->find("n")->type, st::dtype::I32);
}

TEST(PipelineRewrite, LayoutAndOptionsThatDoNotApplyAreRefused) {
  const auto dir = st_test::scratch_dir();
  const auto in = model(dir / "in.safetensors").string();
  sp::convert_options aligned;
  aligned.layout.alignment = 64;
  ASSERT_OK(sp::convert(in, (dir / "aligned.safetensors").string(), aligned));
  auto f = st::file::open((dir / "aligned.safetensors").string());
  ASSERT_OK(f);
  EXPECT_EQ(f->header().data_start() % 64, 0U);  // the data buffer starts at a multiple of the alignment
  ASSERT_OK(sp::convert(in, (dir / "plain.safetensors").string()));
  auto plain = st::file::open((dir / "plain.safetensors").string());
  ASSERT_OK(plain);
  EXPECT_NE(plain->header().data_start() % 64, 0U);  // so the check above is the option's doing

  EXPECT_ERROR_SAYING(sp::convert(in, (dir / "x.npz").string(), aligned), st::error_code::invalid_argument,
                      "option 'alignment' applies to SafeTensors output only");
  sp::convert_options prefix;
  prefix.layout.prefix = "p";
  EXPECT_ERROR_SAYING(sp::convert(in, (dir / "x.safetensors").string(), prefix), st::error_code::invalid_argument,
                      "option 'prefix' applies to sharded SafeTensors");
  sp::convert_options cast_only;
  cast_only.cast_only.only = {"a.*"};
  EXPECT_ERROR_SAYING(sp::convert(in, (dir / "x.safetensors").string(), cast_only), st::error_code::invalid_argument,
                      "needs a dtype to cast to");
  sp::convert_options metadata;
  metadata.metadata.set = {{"k", "v"}};
  EXPECT_ERROR_SAYING(sp::convert(in, (dir / "x.gguf").string(), metadata), st::error_code::invalid_argument,
                      "option 'set_metadata' applies to SafeTensors output only");
  EXPECT_FALSE(fs::exists(dir / "x.npz"));
  EXPECT_FALSE(fs::exists(dir / "x.safetensors"));
  EXPECT_FALSE(fs::exists(dir / "x.gguf"));
}

}  // namespace
