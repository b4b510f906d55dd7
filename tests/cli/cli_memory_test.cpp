// SPDX-License-Identifier: Apache-2.0
// The streaming subcommands keep memory bounded: on a 48 MiB file, each one's peak
// resident set stays within a fixed margin (smaller than the file) of a command that reads
// only the header.
#include <gtest/gtest.h>

#include "safetensors/file.h"
#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/paths.h"

#if defined(__SANITIZE_ADDRESS__)
#define ST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ST_UNDER_ASAN 1
#endif
#endif

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t tensor_elements = std::uint64_t{4} << 20;  // 16 MiB of F32 each, three tensors

/// Writes the file chunk by chunk, so this test process stays small too (a forked
/// child's peak RSS starts from its parent's).
void write_large_file(const fs::path& path) {
  std::vector<safetensors::tensor_spec> specs;
  for (const char* name : {"a", "b", "c"}) specs.push_back({name, safetensors::dtype::F32, {tensor_elements}});
  auto plan = safetensors::write_plan::make(specs);
  ASSERT_TRUE(plan.ok());
  auto writer = safetensors::stream_writer::create(path.string(), std::move(plan).value());
  ASSERT_TRUE(writer.ok());
  std::vector<float> chunk(1 << 16);
  for (const char* name : {"a", "b", "c"}) {
    for (std::uint64_t done = 0; done < tensor_elements; done += chunk.size()) {
      for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<float>((done + i) % 1000) * 0.001F;
      ASSERT_TRUE(writer->append(name, std::as_bytes(std::span<const float>(chunk))).ok());
    }
  }
  ASSERT_TRUE(writer->commit().ok());
}

/// Runs each command and checks that it succeeds within `margin_kib` of `baseline_kib`.
void expect_bounded(const std::vector<std::vector<std::string>>& commands, long baseline_kib, long margin_kib) {
  for (const auto& args : commands) {
    auto r = st_test::run_cli(args);
    EXPECT_EQ(r.status, 0) << args[0] << ": " << r.err;
    EXPECT_LT(r.max_rss_kib, baseline_kib + margin_kib)
        << args[0] << " peak RSS " << r.max_rss_kib << " KiB vs baseline " << baseline_kib << " KiB";
  }
}

TEST(CliMemory, StreamingCommandsStayBounded) {
#ifdef ST_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine make resident sizes meaningless";
#endif
  const auto dir = st_test::scratch_dir();
  const fs::path in = dir / "big.safetensors";
  write_large_file(in);
  ASSERT_GE(fs::file_size(in), 3 * tensor_elements * 4);

  const long baseline = st_test::run_cli({"ls", in.string()}).max_rss_kib;
  ASSERT_GT(baseline, 0);
  // A whole-file load would add at least 48 MiB; chunked processing adds a few MiB.
  expect_bounded({{"checksum", "--per-tensor", in.string()},
                  {"stats", in.string()},
                  {"cast", in.string(), (dir / "bf16.safetensors").string(), "--dtype", "BF16"},
                  {"extract", in.string(), (dir / "sub.safetensors").string(), "--exclude", "b"},
                  {"diff", in.string(), in.string()}},
                 baseline, 20 * 1024);
  auto cast = safetensors::read_header((dir / "bf16.safetensors").string());
  ASSERT_TRUE(cast.ok());
  EXPECT_EQ(cast->data_size(), 3 * tensor_elements * 2);
}

/// Three F32 linear weights of 16 MiB each, rows x 4096, written chunk by chunk.
void write_large_model(const fs::path& path) {
  constexpr std::uint64_t rows = 1024;
  constexpr std::uint64_t cols = 4096;
  const std::vector<std::string> names{"model.layers.0.mlp.weight", "model.layers.1.mlp.weight",
                                       "model.layers.2.mlp.weight"};
  std::vector<safetensors::tensor_spec> specs;
  for (const auto& name : names) specs.push_back({name, safetensors::dtype::F32, {rows, cols}});
  auto plan = safetensors::write_plan::make(specs);
  ASSERT_TRUE(plan.ok());
  auto writer = safetensors::stream_writer::create(path.string(), std::move(plan).value());
  ASSERT_TRUE(writer.ok());
  std::vector<float> row(cols);
  for (const auto& name : names) {
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < cols; ++i) row[i] = static_cast<float>((r * 7 + i) % 101) * 0.01F - 0.5F;
      ASSERT_TRUE(writer->append(name, std::as_bytes(std::span<const float>(row))).ok());
    }
  }
  ASSERT_TRUE(writer->commit().ok());
}

// quantize, dequantize, shard and merge read with pread in chunks too: a mapped input would
// add the whole file to the resident set as its pages are touched.
TEST(CliMemory, CheckpointAndMlxCommandsStayBounded) {
#ifdef ST_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine make resident sizes meaningless";
#endif
  const auto dir = st_test::scratch_dir();
  const fs::path in = dir / "model.safetensors";
  write_large_model(in);
  ASSERT_GE(fs::file_size(in), 48U << 20);

  const long baseline = st_test::run_cli({"ls", in.string()}).max_rss_kib;
  ASSERT_GT(baseline, 0);
  // The file is 48 MiB; chunks and buffers stay far below.
  expect_bounded({{"quantize", in.string(), (dir / "q.safetensors").string()},
                  {"dequantize", (dir / "q.safetensors").string(), (dir / "dq.safetensors").string(), "--dtype", "F32"},
                  {"shard", in.string(), (dir / "shards").string(), "--max-shard-size", "20MB"},
                  {"merge", (dir / "shards").string(), (dir / "merged.safetensors").string()}},
                 baseline, 24 * 1024);
  EXPECT_EQ(fs::file_size(dir / "merged.safetensors"), fs::file_size(in));
  auto restored = safetensors::read_header((dir / "dq.safetensors").string());
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(restored->data_size(), 48U << 20);
}

}  // namespace
