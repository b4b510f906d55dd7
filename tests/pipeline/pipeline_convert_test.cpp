// SPDX-License-Identifier: Apache-2.0
// The conversion pipeline as a library call (safetensors/pipeline/convert.h): what the CLI,
// Python and the C API reach. Values against the fixtures' recorded SHA-256, progress and
// cancellation, warnings, refused options and outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/pipeline/convert.h"
#include "safetensors/sha256.h"
#include "safetensors/writer.h"
#include "support/amplification_fixtures.h"
#include "support/demo_store.h"
#include "support/paths.h"
#include "support/pytorch_fixtures.h"
#include "support/status_matchers.h"
#include "support/tensor_values.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
namespace sp = safetensors::pipeline;
using st_test::sha256_of;

fs::path f32_file(const fs::path& dir, std::size_t elements, st::metadata_map metadata = {}) {
  std::vector<float> values(elements);
  for (std::size_t i = 0; i < elements; ++i) values[i] = static_cast<float>(i) * 0.5F;
  const fs::path path = dir / "in.safetensors";
  st::write_options options;
  if (!metadata.empty()) options.metadata = std::move(metadata);
  const std::vector<st::tensor_data> tensors{{"w", st::dtype::F32, {elements}, std::as_bytes(std::span(values))}};
  EXPECT_OK(st::write_file(path.string(), tensors, options));
  return path;
}

TEST(PipelineConvert, PyTorchToSafetensorsKeepsEveryTensorExactly) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path out = dir / "basic.safetensors";
  auto summary = sp::convert(st_test::pytorch_fixture("basic.pt").string(), out.string());
  ASSERT_OK(summary);
  EXPECT_EQ(summary->input_format, "PyTorch");
  EXPECT_EQ(summary->output->id, "safetensors");
  const auto& want = st_test::pytorch_expected().tensors.at("basic.pt");
  auto f = st::file::open(out.string());
  ASSERT_OK(f);
  ASSERT_EQ(f->tensors().size(), want.size());
  EXPECT_EQ(summary->tensors, want.size());
  for (const auto& t : f->tensors()) {
    auto view = f->view(t.name);
    ASSERT_OK(view);
    EXPECT_EQ(sha256_of(view->data), want.at(std::string(t.name)).sha256) << t.name;
  }
  EXPECT_EQ(f->header().metadata()->at("format"), "pt");
}

TEST(PipelineConvert, ProgressReachesTheTotalAndCancellingLeavesNoOutput) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = f32_file(dir, 3U << 20);  // 12 MiB: several chunks
  std::vector<std::uint64_t> seen;
  sp::convert_options options;
  options.progress = [&](std::uint64_t done, std::uint64_t total) {
    EXPECT_EQ(total, std::uint64_t{12} << 20);
    seen.push_back(done);
    return true;
  };
  ASSERT_OK(sp::convert(in.string(), (dir / "out.npz").string(), options));
  ASSERT_GT(seen.size(), 1U);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.back(), std::uint64_t{12} << 20);

  int calls = 0;
  options.progress = [&](std::uint64_t, std::uint64_t) { return ++calls < 2; };
  const fs::path cancelled = dir / "cancelled.safetensors";
  EXPECT_ERROR(sp::convert(in.string(), cancelled.string(), options), st::error_code::cancelled);
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(fs::exists(cancelled));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);  // in + out.npz, no temporary
}

TEST(PipelineConvert, CastsFloatsAndReportsLossesAsWarnings) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = f32_file(dir, 8, {{"source", "test"}});
  std::vector<std::string> told;
  sp::convert_options options;
  options.cast = st::dtype::BF16;
  options.on_warning = [&](std::string_view w) { told.emplace_back(w); };
  auto summary = sp::convert(in.string(), (dir / "out.npz").string(), options);
  ASSERT_OK(summary);
  EXPECT_EQ(summary->bytes, 16U);           // 8 BF16 values
  ASSERT_EQ(summary->warnings.size(), 2U);  // __metadata__ dropped, BF16 as '<V2'
  EXPECT_EQ(told, summary->warnings);
  EXPECT_NE(summary->warnings[0].find("__metadata__"), std::string::npos) << summary->warnings[0];
}

TEST(PipelineConvert, OptionsThatDoNotApplyAndUnsafeOutputsAreRefusedBeforeWriting) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = f32_file(dir, 4);
  sp::convert_options compress;
  compress.compress = true;
  EXPECT_ERROR(sp::convert(in.string(), (dir / "o.safetensors").string(), compress), st::error_code::invalid_argument);
  sp::convert_options key;
  key.read.key = "state_dict";
  EXPECT_ERROR(sp::convert(in.string(), (dir / "o.npz").string(), key), st::error_code::invalid_argument);
  EXPECT_ERROR(sp::convert(in.string(), in.string()), st::error_code::invalid_argument);  // the input itself
  EXPECT_ERROR(sp::convert(in.string(), (dir / "o.pt").string()), st::error_code::invalid_argument);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(PipelineConvert, AnOpenedSourceConvertsLikeAPath) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = f32_file(dir, 4);
  st::open_options pread;
  pread.backend = st::io_backend::pread;
  auto f = st::file::open(in.string(), pread);
  ASSERT_OK(f);
  auto summary =
      sp::convert(sp::safetensors_source(std::move(f).value()), (dir / "o.gguf").string(), {}, {in.string()});
  ASSERT_OK(summary);
  EXPECT_EQ(summary->output->id, "gguf");
  EXPECT_EQ(summary->parameters, 4U);
}

TEST(PipelineConvert, UrlInputsAreReadThroughTheLocationDoor) {
  // A URL of a registered scheme is an input like a path: a file, or a checkpoint directory
  // (a base URL ending in '/'), read through the store its provider gives, with the caller's
  // url_options; a scheme nothing serves is refused before anything is written.
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = f32_file(dir, 6);
  const auto provider = std::make_shared<st_test::demo_provider>(dir);
  ASSERT_OK(st::register_store_provider("demo", provider));
  sp::convert_options options;
  options.url.bearer_token = "t0ken";
  const std::vector<std::string> file_url{"demo://host/in.safetensors"};
  auto summary = sp::convert(file_url, (dir / "o.npz").string(), options);
  ASSERT_OK(summary);
  EXPECT_EQ(summary->parameters, 6U);
  {
    std::lock_guard lock(provider->mutex);
    ASSERT_FALSE(provider->given.empty());
    EXPECT_EQ(provider->given.back().bearer_token, "t0ken");
  }
  ASSERT_OK(sp::convert(std::vector<std::string>{in.string()}, (dir / "sharded").string(), [] {
    sp::convert_options o;
    o.to = "sharded";
    o.layout.max_shard_bytes = 8;
    return o;
  }()));
  auto merged = sp::convert(std::vector<std::string>{"demo://host/sharded/"}, (dir / "merged.safetensors").string());
  ASSERT_OK(merged);
  EXPECT_EQ(merged->parameters, 6U);
  EXPECT_EQ(st_test::read_bytes(dir / "merged.safetensors"), st_test::read_bytes(in));
  ASSERT_OK(st::register_store_provider("demo", nullptr));
  EXPECT_ERROR(sp::convert(file_url, (dir / "never.npz").string()), st::error_code::unsupported);
  EXPECT_FALSE(fs::exists(dir / "never.npz"));
}

}  // namespace

namespace {

// --shared dedup: each view keeps one copy and every other name of it is an alias recorded in
// __metadata__; a few aliases get a note each, many get one line (not 1,999).
TEST(PipelineConvert, DeduplicatedAliasesAreRecordedAndSummed) {
  const fs::path dir = st_test::scratch_dir();
  sp::convert_options dedup;
  dedup.read.shared = sp::shared_tensors::dedup;
  const fs::path few = dir / "few.pt";
  st_test::write_aliasing_checkpoint(few, 16, 4, false);
  auto small = sp::convert(few.string(), (dir / "few.safetensors").string(), dedup);
  ASSERT_OK(small);
  EXPECT_EQ(small->tensors, 1U);
  EXPECT_EQ(small->notes, (std::vector<std::string>{"deduplicated: t1 is t0 (recorded in __metadata__)",
                                                    "deduplicated: t2 is t0 (recorded in __metadata__)",
                                                    "deduplicated: t3 is t0 (recorded in __metadata__)"}));

  const fs::path many = dir / "many.pt";
  st_test::write_aliasing_checkpoint(many, 16, 2000, false);
  const fs::path out = dir / "many.safetensors";
  auto large = sp::convert(many.string(), out.string(), dedup);
  ASSERT_OK(large);
  EXPECT_EQ(large->tensors, 1U);
  EXPECT_EQ(large->notes, (std::vector<std::string>{"deduplicated: 1999 names are t0: t1, t10, t100 and 1996 more "
                                                    "(recorded in __metadata__)"}));
  auto written = st::file::open(out.string());
  ASSERT_OK(written);
  const auto& metadata = *written->header().metadata();
  EXPECT_EQ(std::count_if(metadata.begin(), metadata.end(), [](const auto& kv) { return kv.second == "t0"; }), 1999);
  EXPECT_EQ(metadata.at("t1999"), "t0");
}

}  // namespace
