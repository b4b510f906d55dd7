// SPDX-License-Identifier: Apache-2.0
// `dump --limit 0` streams: values are read, decoded and printed a window at a time, so a
// large tensor needs no more memory than a small one, a reader that goes away (`| head`)
// stops it at once, and the text is the same as printing the whole tensor in one piece.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;

/// One F32 [2048, 2048] tensor "w" (16 MiB; about 40 MB of text).
fs::path write_large(const fs::path& dir) {
  std::vector<float> values(std::size_t{2048} * 2048);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000) * 0.001F;
  const fs::path path = dir / "large.safetensors";
  st_test::make_f32_file(path, {{"w", {2048, 2048}, std::move(values)}});
  return path;
}

TEST(CliDumpStream, WholeLargeTensorInBoundedMemory) {
#ifdef ST_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine make resident sizes meaningless";
#endif
  const fs::path in = write_large(st_test::scratch_dir());
  const long baseline = st_test::run_cli({"ls", in.string()}).max_rss_kib;
  ASSERT_GT(baseline, 0);
  st_test::cli_child child;
  child.stdout_to = st_test::cli_child::output::discarded;
  for (const bool json : {false, true}) {
    std::vector<std::string> args{"dump", in.string(), "w", "--limit", "0"};
    if (json) args.emplace_back("--json");
    const auto r = st_test::run_cli(args, child);
    ASSERT_EQ(r.status, 0) << r.err;
    // Holding the tensor (16 MiB), its values as doubles (32 MiB) or the text (40 MB) would pass this.
    EXPECT_LT(r.max_rss_kib - baseline, 12 * 1024)
        << (json ? "--json" : "text") << ": " << r.max_rss_kib << " KiB against " << baseline << " for ls";
  }
}

TEST(CliDumpStream, StopsQuietlyWhenTheReaderGoesAway) {
  const fs::path in = write_large(st_test::scratch_dir());
  st_test::cli_child child;
  child.stdout_to = st_test::cli_child::output::broken_pipe;  // EPIPE, as under a parent ignoring SIGPIPE
  const auto r = st_test::run_cli({"dump", in.string(), "w", "--limit", "0"}, child);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Formatting all 4M values takes about a second (several under ASan); the first failed write
  // ends it. The bound leaves room for the sanitizer build's start-up (0.36 s measured).
  EXPECT_LT(r.cpu_seconds, 0.9);
  // With SIGPIPE at its default, the shell's `| head -c 10` case.
  const auto head = st_test::run_command(st_test::shell_quote(st_test::cli_path()) + " dump " +
                                         st_test::shell_quote(in.string()) + " w --limit 0 | head -c 10");
  EXPECT_EQ(head.status, 0);
  EXPECT_EQ(head.out, "w: F32 [20");
}

/// I32 values 0..n-1 as tensor "v", more than one window (524,288 elements) of dump.
fs::path write_counting(const fs::path& dir, std::int32_t n) {
  std::vector<std::int32_t> values(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = i;
  const fs::path path = dir / "count.safetensors";
  const std::vector<safetensors::tensor_data> tensors{
      {"v", safetensors::dtype::I32, {static_cast<std::uint64_t>(n)}, std::as_bytes(std::span(values))}};
  EXPECT_OK(safetensors::write_file(path.string(), tensors));
  return path;
}

TEST(CliDumpStream, WindowsJoinIntoTheSameText) {
  constexpr std::int32_t n = 600000;
  const fs::path in = write_counting(st_test::scratch_dir(), n);
  std::vector<std::int32_t> forward(n);
  for (std::int32_t i = 0; i < n; ++i) forward[static_cast<std::size_t>(i)] = i;
  auto r = st_test::run_cli({"dump", in.string(), "v", "--limit", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, fmt::format("v: I32 [{}]\n[{}]\n", n, fmt::join(forward, ", ")));
  // One range per element, read window by window, backwards.
  const std::vector<std::int32_t> backward(forward.rbegin(), forward.rend());
  r = st_test::run_cli({"dump", "--json", "--slice", "::-1", in.string(), "v", "--limit", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, fmt::format(R"({{"tensor":"v","dtype":"I32","shape":[{}],"slice":"::-1","slice_shape":[{}],)"
                               R"("truncated":false,"values":[{}]}})"
                               "\n",
                               n, n, fmt::join(backward, ",")));
  // A limit past a window boundary, and the truncation marker after it.
  r = st_test::run_cli({"dump", "--json", in.string(), "v", "--limit", "524290"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::int32_t> head(forward.begin(), forward.begin() + 524290);
  EXPECT_EQ(r.out, fmt::format(R"({{"tensor":"v","dtype":"I32","shape":[{}],"slice":null,"slice_shape":[{}],)"
                               R"("truncated":true,"values":[{}]}})"
                               "\n",
                               n, n, fmt::join(head, ",")));
}

}  // namespace
