// SPDX-License-Identifier: Apache-2.0
// The library's diff and checksum (safetensors/pipeline/diff.h, checksum.h): the reports the
// CLI prints and Python returns, computed without the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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
  EXPECT_OK(st::write_file(path.string(), tensors, options));
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
  EXPECT_OK(h);
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
  const std::string bytes = st_test::read_text(path);
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

/// Bytes in memory read by range, failing past `fail_at` (a dropped connection).
class memory_bytes final : public st::range_reader {
 public:
  explicit memory_bytes(std::string bytes, std::uint64_t fail_at = UINT64_MAX)
      : bytes_(std::move(bytes)), fail_at_(fail_at) {}
  const std::string& name() const noexcept override { return name_; }
  std::uint64_t size() const noexcept override { return bytes_.size(); }
  st::status read(std::uint64_t offset, std::span<std::byte> destination) const override {
    if (offset + destination.size() > fail_at_) return st::make_error(st::error_code::io, "connection reset");
    std::memcpy(destination.data(), bytes_.data() + offset, destination.size());
    return {};
  }

 private:
  std::string bytes_;
  std::uint64_t fail_at_;
  std::string name_ = "memory";
};

TEST(PipelineChecksum, AnyRangeReaderHashesLikeTheFile) {
  // Over two chunks, so the reads are really chunked.
  std::string bytes(sp::chunk_bytes + 12345, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 % 251);
  const memory_bytes remote(bytes);
  std::uint64_t last = 0;
  auto d = sp::checksum(remote, {.progress = [&](std::uint64_t done, std::uint64_t) { return (last = done), true; }});
  ASSERT_OK(d);
  EXPECT_EQ(d->sha256, sha256_hex(std::as_bytes(std::span(bytes))));
  EXPECT_EQ(d->bytes, bytes.size());
  EXPECT_EQ(last, bytes.size());
  EXPECT_ERROR_SAYING(sp::checksum(memory_bytes(bytes, sp::chunk_bytes + 1)), st::error_code::io, "connection reset");
  EXPECT_ERROR(sp::checksum(remote, {.progress = [](std::uint64_t, std::uint64_t) { return false; }}),
               st::error_code::cancelled);
}

TEST(PipelineChecksum, CheckListsAsSha256sumWritesThemWithTensorLines) {
  const std::string a(64, 'a');
  const std::string b(64, 'B');
  const std::string c(64, 'c');
  const auto list =
      sp::parse_checksum_list("# comment\n" + a + "  m.safetensors\r\n" + "tensor " + b + "  w\n" + "tensor " + c +
                              "  only_a\n\n" + c + " *other.bin\n" + a + "  \ntensor " + b);
  ASSERT_EQ(list.entries.size(), 2U);
  EXPECT_EQ(list.malformed_lines, 3U);  // the comment, a line without a name, a tensor line without a name
  EXPECT_EQ(list.entries[0].path, "m.safetensors");
  EXPECT_EQ(list.entries[0].sha256, a);
  EXPECT_EQ(list.entries[0].tensors.at("w"), std::string(64, 'b'));               // lowercased
  EXPECT_EQ(list.entries[1].path, "other.bin");                                   // sha256sum's binary mark
  EXPECT_TRUE(sp::parse_checksum_list("tensor " + a + "  w\n").entries.empty());  // no file line above it

  sp::file_digest computed{a, 10, {{"w", 4, std::string(64, 'b')}, {"only_a", 6, a}}};
  auto verdict = sp::check(list.entries[0], computed);
  EXPECT_EQ(verdict.file, sp::digest_match::ok);
  ASSERT_EQ(verdict.tensors.size(), 2U);
  EXPECT_EQ(verdict.failures(), 1U);  // only_a's digest differs
  computed.tensors.pop_back();
  computed.sha256 = c;
  verdict = sp::check(list.entries[0], computed);
  EXPECT_EQ(verdict.file, sp::digest_match::mismatch);
  EXPECT_EQ(verdict.failures(), 2U);
  const auto missing =
      std::find_if(verdict.tensors.begin(), verdict.tensors.end(), [](const auto& t) { return t.first == "only_a"; });
  ASSERT_NE(missing, verdict.tensors.end());
  EXPECT_EQ(missing->second, sp::digest_match::missing);
}

}  // namespace
