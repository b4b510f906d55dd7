// SPDX-License-Identifier: Apache-2.0
// The streaming subcommands keep memory bounded: on a 48 MiB file, each one's peak
// resident set stays within a fixed margin (smaller than the file) of a command that reads
// only the header.
#include <gtest/gtest.h>

#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/sanitizers.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t tensor_elements = std::uint64_t{4} << 20;  // 16 MiB of F32 each, three tensors

/// Writes the file chunk by chunk, so this test process stays small too (a forked
/// child's peak RSS starts from its parent's).
void write_large_file(const fs::path& path) {
  std::vector<safetensors::tensor_spec> specs;
  for (const char* name : {"a", "b", "c"}) specs.push_back({name, safetensors::dtype::F32, {tensor_elements}});
  auto plan = safetensors::write_plan::make(specs);
  ASSERT_OK(plan);
  auto writer = safetensors::stream_writer::create(path.string(), std::move(plan).value());
  ASSERT_OK(writer);
  std::vector<float> chunk(1 << 16);
  for (const char* name : {"a", "b", "c"}) {
    for (std::uint64_t done = 0; done < tensor_elements; done += chunk.size()) {
      for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<float>((done + i) % 1000) * 0.001F;
      ASSERT_OK(writer->append(name, std::as_bytes(std::span<const float>(chunk))));
    }
  }
  ASSERT_OK(writer->commit());
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
#if ST_TEST_UNDER_ASAN
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
  ASSERT_OK(cast);
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
  ASSERT_OK(plan);
  auto writer = safetensors::stream_writer::create(path.string(), std::move(plan).value());
  ASSERT_OK(writer);
  std::vector<float> row(cols);
  for (const auto& name : names) {
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < cols; ++i) row[i] = static_cast<float>((r * 7 + i) % 101) * 0.01F - 0.5F;
      ASSERT_OK(writer->append(name, std::as_bytes(std::span<const float>(row))));
    }
  }
  ASSERT_OK(writer->commit());
}

// quantize, dequantize, shard and merge read with pread in chunks too: a mapped input would
// add the whole file to the resident set as its pages are touched.
TEST(CliMemory, CheckpointAndMlxCommandsStayBounded) {
#if ST_TEST_UNDER_ASAN
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
  ASSERT_OK(restored);
  EXPECT_EQ(restored->data_size(), 48U << 20);
}

/// One F32 layer of `rows` x `cols` (48 MiB in all), the same values in row-major order
/// whatever the shape.
void write_layer(const fs::path& path, std::uint64_t rows, std::uint64_t cols) {
  auto plan = safetensors::write_plan::make({{"model.layers.0.mlp.weight", safetensors::dtype::F32, {rows, cols}}});
  ASSERT_OK(plan);
  auto writer = safetensors::stream_writer::create(path.string(), std::move(plan).value());
  ASSERT_OK(writer);
  std::vector<float> chunk(1 << 16);
  for (std::uint64_t done = 0; done < rows * cols; done += chunk.size()) {
    for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<float>((done + i) % 101) * 0.01F - 0.5F;
    ASSERT_OK(writer->append("model.layers.0.mlp.weight", std::as_bytes(std::span<const float>(chunk))));
  }
  ASSERT_OK(writer->commit());
}

/// The tensor bytes of a file (its data section).
std::vector<std::byte> data_of(const fs::path& path) {
  auto bytes = st_test::read_bytes(path);
  auto h = safetensors::read_header(path.string());
  EXPECT_OK(h);
  return {bytes.end() - static_cast<std::ptrdiff_t>(h->data_size()), bytes.end()};
}

// A layer of one 48 MiB row is quantized and dequantized in parts of the row (whole groups),
// not a row at a time: memory stays bounded, and the bytes equal those of the same values
// shaped into 1024 rows.
TEST(CliMemory, OneLongRowIsRewrittenInParts) {
#if ST_TEST_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine make resident sizes meaningless";
#endif
  const auto dir = st_test::scratch_dir();
  constexpr std::uint64_t elements = std::uint64_t{12} << 20;
  write_layer(dir / "row.safetensors", 1, elements);
  write_layer(dir / "rows.safetensors", 1024, elements / 1024);
  const long baseline = st_test::run_cli({"ls", (dir / "row.safetensors").string()}).max_rss_kib;
  ASSERT_GT(baseline, 0);
  expect_bounded(
      {{"quantize", (dir / "row.safetensors").string(), (dir / "q.safetensors").string()},
       {"dequantize", (dir / "q.safetensors").string(), (dir / "dq.safetensors").string(), "--dtype", "F32"}},
      baseline, 24 * 1024);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"quantize", (dir / "rows.safetensors").string(), (dir / "q2.safetensors").string()},
           {"dequantize", (dir / "q2.safetensors").string(), (dir / "dq2.safetensors").string(), "--dtype", "F32"}}) {
    ASSERT_EQ(st_test::run_cli(args).status, 0) << args[0];
  }
  EXPECT_TRUE(data_of(dir / "q.safetensors") == data_of(dir / "q2.safetensors"));
  EXPECT_TRUE(data_of(dir / "dq.safetensors") == data_of(dir / "dq2.safetensors"));
  EXPECT_EQ(fs::file_size(dir / "dq.safetensors"), fs::file_size(dir / "dq2.safetensors"));
}

/// CRC-32 (zip's polynomial), continued from `crc`.
std::uint32_t crc32_update(std::uint32_t crc, std::span<const std::byte> bytes) {
  crc = ~crc;
  for (std::byte b : bytes) {
    crc ^= std::to_integer<std::uint32_t>(b);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320U & (0U - (crc & 1U)));
  }
  return ~crc;
}

void put_le(std::string& out, std::uint64_t value, int width) {
  for (int i = 0; i < width; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

/// A torch.save-style zip checkpoint, written chunk by chunk: three F32 tensors of
/// `elements` each, in storages "0".."2" stored uncompressed, as torch writes them.
void write_large_pt(const fs::path& path, std::uint64_t elements) {
  auto text = [](const std::string& s) {
    std::string out = "X";
    put_le(out, s.size(), 4);
    return out + s;
  };
  auto binint = [](std::uint64_t v) {
    std::string out = "J";
    put_le(out, v, 4);
    return out;
  };
  std::string pickle = "\x80\x02}(";
  for (const char* key : {"0", "1", "2"}) {
    pickle += text(std::string("layer") + key + ".weight") + "ctorch._utils\n_rebuild_tensor_v2\n((" + text("storage") +
              "ctorch\nFloatStorage\n" + text(key) + text("cpu") + binint(elements) + "tQ" + binint(0) +
              binint(elements) + "\x85" + binint(1) +
              "\x85\x89"
              "ccollections\nOrderedDict\n)RtR";
  }
  pickle += "u.";
  std::ofstream out(path, std::ios::binary);
  std::string central;
  std::uint64_t at = 0;
  std::uint16_t count = 0;
  auto add_record = [&](const std::string& name, std::uint64_t size, std::uint32_t crc) {
    std::string local;
    put_le(local, 0x04034b50, 4);
    put_le(local, 20, 2);
    put_le(local, 0, 2);
    put_le(local, 0, 2);  // stored
    put_le(local, 0, 4);  // time, date
    put_le(local, crc, 4);
    put_le(local, size, 4);
    put_le(local, size, 4);
    put_le(local, name.size(), 2);
    put_le(local, 0, 2);
    local += name;
    std::string record;
    put_le(record, 0x02014b50, 4);
    put_le(record, 20, 2);
    put_le(record, 20, 2);
    put_le(record, 0, 2);
    put_le(record, 0, 2);
    put_le(record, 0, 4);
    put_le(record, crc, 4);
    put_le(record, size, 4);
    put_le(record, size, 4);
    put_le(record, name.size(), 2);
    put_le(record, 0, 8);  // extra and comment lengths, disk, internal attributes
    put_le(record, 0, 4);  // external attributes
    put_le(record, at, 4);
    central += record + name;
    out.write(local.data(), static_cast<std::streamsize>(local.size()));
    at += local.size() + size;
    ++count;
  };
  const auto pickle_bytes = std::as_bytes(std::span(pickle.data(), pickle.size()));
  add_record("archive/data.pkl", pickle.size(), crc32_update(0, pickle_bytes));
  out.write(pickle.data(), static_cast<std::streamsize>(pickle.size()));
  std::vector<float> chunk(1 << 16);
  for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<float>(i % 1000) * 0.001F;
  const auto chunk_bytes = std::as_bytes(std::span<const float>(chunk));
  for (const char* key : {"0", "1", "2"}) {
    std::uint32_t crc = 0;
    for (std::uint64_t done = 0; done < elements; done += chunk.size()) crc = crc32_update(crc, chunk_bytes);
    add_record(std::string("archive/data/") + key, elements * 4, crc);
    for (std::uint64_t done = 0; done < elements; done += chunk.size()) {
      out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(chunk_bytes.size()));
    }
  }
  std::string end;
  put_le(end, 0x06054b50, 4);
  put_le(end, 0, 4);
  put_le(end, count, 2);
  put_le(end, count, 2);
  put_le(end, central.size(), 4);
  put_le(end, at, 4);
  put_le(end, 0, 2);
  out.write(central.data(), static_cast<std::streamsize>(central.size()));
  out.write(end.data(), static_cast<std::streamsize>(end.size()));
}

// convert of a .pt reads each storage with pread in chunks (4 MiB): it used to map the
// input and touch every page, so its peak RSS grew by the whole file.
TEST(CliMemory, PytorchConvertStaysBounded) {
#if ST_TEST_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine make resident sizes meaningless";
#endif
  const auto dir = st_test::scratch_dir();
  const fs::path in = dir / "model.pt";
  write_large_pt(in, tensor_elements);  // 3 x 16 MiB
  ASSERT_GE(fs::file_size(in), 48U << 20);
  const long baseline = st_test::run_cli({"inspect", in.string()}).max_rss_kib;
  ASSERT_GT(baseline, 0);
  expect_bounded({{"convert", in.string(), (dir / "model.safetensors").string(), "-q"}}, baseline, 20 * 1024);
  auto converted = safetensors::read_header((dir / "model.safetensors").string());
  ASSERT_OK(converted);
  EXPECT_EQ(converted->data_size(), 3 * tensor_elements * 4);
}

}  // namespace
