// SPDX-License-Identifier: Apache-2.0
// The library's diff and checksum (safetensors/pipeline/diff.h, checksum.h): the reports the
// CLI prints and Python returns, computed without the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/pipeline/checksum.h"
#include "safetensors/pipeline/diff.h"
#include "safetensors/sha256.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
namespace sp = safetensors::pipeline;

fs::path write(const fs::path& path, const std::vector<float>& w, st::metadata_map metadata,
               const std::string& extra = "only_a") {
  static const std::vector<std::int32_t> n{1, 2};
  st::write_options options;
  options.metadata = std::move(metadata);
  const std::vector<st::tensor_data> tensors{{"w", st::dtype::F32, {w.size()}, std::as_bytes(std::span(w))},
                                             {extra, st::dtype::I32, {2}, std::as_bytes(std::span(n))}};
  EXPECT_TRUE(st::write_file(path.string(), tensors, options).ok());
  return path;
}

sp::diff_options tolerances(double rtol, double atol) {
  sp::diff_options options;
  options.rtol = rtol;
  options.atol = atol;
  return options;
}

sp::checksum_options per_tensor() {
  sp::checksum_options options;
  options.per_tensor = true;
  return options;
}

std::string sha256_hex(std::span<const std::byte> bytes) {
  auto h = st::sha256_hasher::create();
  EXPECT_TRUE(h.ok());
  h->update(bytes);
  return st::to_hex(h->finish());
}

TEST(PipelineDiff, ReportsNamesMetadataAndValuesWithinTolerance) {
  const auto dir = st_test::scratch_dir();
  const auto nan = std::numeric_limits<float>::quiet_NaN();
  const auto a = write(dir / "a.safetensors", {1, 2, 3, nan}, {{"k", "1"}, {"same", "x"}}, "only_a");
  const auto b = write(dir / "b.safetensors", {1, 2.001F, 3.5F, nan}, {{"k", "2"}, {"same", "x"}}, "only_b");
  auto exact = sp::diff(a.string(), b.string());
  ASSERT_OK(exact);
  EXPECT_FALSE(exact->equal());
  EXPECT_EQ(exact->only_in_a, std::vector<std::string>{"only_a"});
  EXPECT_EQ(exact->only_in_b, std::vector<std::string>{"only_b"});
  ASSERT_EQ(exact->metadata.size(), 1U);
  EXPECT_EQ(exact->metadata[0].key, "k");
  EXPECT_EQ(exact->metadata[0].a, "1");
  EXPECT_EQ(exact->metadata[0].b, "2");
  ASSERT_EQ(exact->tensors.size(), 1U);
  const auto& w = exact->tensors[0];
  EXPECT_TRUE(w.compared);
  EXPECT_EQ(w.values, 4U);
  EXPECT_EQ(w.mismatched, 2U);  // NaN equals NaN
  EXPECT_EQ(w.first_index, 1U);
  EXPECT_DOUBLE_EQ(w.max_abs, 0.5);

  auto loose = sp::diff(a.string(), b.string(), tolerances(0, 0.01));
  ASSERT_OK(loose);
  EXPECT_EQ(loose->tensors[0].mismatched, 1U);  // 3 vs 3.5 only
  EXPECT_EQ(loose->tensors[0].first_index, 2U);
  auto same = sp::diff(a.string(), a.string());
  ASSERT_OK(same);
  EXPECT_TRUE(same->equal());
}

TEST(PipelineDiff, RefusesBadTolerancesAndStopsWhenCancelled) {
  const auto dir = st_test::scratch_dir();
  const auto a = write(dir / "a.safetensors", std::vector<float>(1 << 20, 1.0F), {});
  const auto b = write(dir / "b.safetensors", std::vector<float>(1 << 20, 2.0F), {});
  EXPECT_ERROR(sp::diff(a.string(), b.string(), tolerances(-1, 0)), st::error_code::invalid_argument);
  EXPECT_ERROR(sp::diff(a.string(), b.string(), tolerances(0, std::nan(""))), st::error_code::invalid_argument);
  int calls = 0;
  sp::diff_options stop;
  stop.progress = [&](std::uint64_t, std::uint64_t) { return ++calls < 1; };
  EXPECT_ERROR(sp::diff(a.string(), b.string(), stop), st::error_code::cancelled);
  EXPECT_EQ(calls, 1);
}

TEST(PipelineChecksum, WholeFileAsSha256sumAndEachTensorInOnePass) {
  const auto dir = st_test::scratch_dir();
  const auto path = write(dir / "m.safetensors", {1, 2, 3}, {{"k", "v"}});
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  const std::string want = sha256_hex(std::as_bytes(std::span(bytes)));

  auto plain = sp::checksum(path.string());
  ASSERT_OK(plain);
  EXPECT_EQ(plain->sha256, want);
  EXPECT_EQ(plain->bytes, bytes.size());
  EXPECT_TRUE(plain->tensors.empty());

  std::vector<std::uint64_t> seen;
  sp::checksum_options options{.per_tensor = true, .progress = [&](std::uint64_t done, std::uint64_t total) {
                                 seen.push_back(done);
                                 EXPECT_EQ(total, bytes.size());
                                 return true;
                               }};
  auto per = sp::checksum(path.string(), options);
  ASSERT_OK(per);
  EXPECT_EQ(per->sha256, want);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), bytes.size());
  auto f = st::file::open(path.string());
  ASSERT_OK(f);
  ASSERT_EQ(per->tensors.size(), f->tensors().size());
  for (const auto& t : per->tensors) {
    auto view = f->view(t.name);
    ASSERT_OK(view);
    EXPECT_EQ(t.sha256, sha256_hex(view->data)) << t.name;
    EXPECT_EQ(t.bytes, view->data.size());
  }
}

TEST(PipelineChecksum, NamesWhatItCannotHash) {
  const auto dir = st_test::scratch_dir();
  EXPECT_ERROR_SAYING(sp::checksum(dir.string()), st::error_code::io, "Is a directory");
  EXPECT_ERROR_SAYING(sp::checksum((dir / "absent").string()), st::error_code::io, "No such file");
  EXPECT_ERROR_SAYING(sp::checksum("-", per_tensor()), st::error_code::invalid_argument, "standard input");
  const auto text = dir / "notes.txt";
  std::ofstream(text) << "not a model";
  auto whole = sp::checksum(text.string());  // any content has a whole-file digest
  ASSERT_OK(whole);
  EXPECT_EQ(whole->bytes, 11U);
  EXPECT_FALSE(sp::checksum(text.string(), per_tensor()).ok());
}

}  // namespace
