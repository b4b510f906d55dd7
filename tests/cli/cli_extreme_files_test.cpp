// SPDX-License-Identifier: Apache-2.0
// Valid files at the edges of what `validate` accepts (a rank of a million, zero-size
// dimensions, a million tensors, 64 KiB names, every dtype, metadata alone), through every
// command that reads one: each finishes with a verdict, never a signal. A one-tensor
// F32 [1]*40000 file once made `dump` recurse per dimension until the stack overflowed.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "safetensors/dtype.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/sanitizers.h"

namespace {

namespace fs = std::filesystem;

// Under the sanitizers (5x slower) the largest files shrink: a rank of 200,000 is still five
// times the one that overflowed the stack, and 200,000 tensors as many as a large model has.
constexpr std::size_t big = ST_TEST_UNDER_SANITIZER ? 200'000 : 1'000'000;

/// One tensor entry of a header: "name":{"dtype":...,"shape":[...],"data_offsets":[b,e]}.
struct raw_tensor {
  std::string name;
  std::string dtype;
  std::string shape;  ///< the JSON array's inside: "2,3"
  std::uint64_t bytes = 0;
};

/// Writes the 8-byte length, the header JSON and `bytes` zero bytes of data per tensor, in order.
fs::path write_raw(const fs::path& path, const std::vector<raw_tensor>& tensors, const std::string& metadata = {}) {
  std::string header = "{";
  if (!metadata.empty()) header += R"("__metadata__":)" + metadata;
  std::uint64_t offset = 0;
  for (const raw_tensor& t : tensors) {
    if (header.size() > 1) header += ',';
    fmt::format_to(std::back_inserter(header), R"("{}":{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}})", t.name,
                   t.dtype, t.shape, offset, offset + t.bytes);
    offset += t.bytes;
  }
  header += '}';
  std::string prefix(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) prefix[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFFU);
  std::ofstream out(path, std::ios::binary);
  out << prefix << header << std::string(offset, '\0');
  EXPECT_TRUE(out.good()) << path;
  return path;
}

/// "1,1,...,1": `rank` ones.
std::string ones(std::size_t rank) {
  std::string s;
  s.reserve(rank * 2);
  for (std::size_t i = 0; i < rank; ++i) s += i == 0 ? "1" : ",1";
  return s;
}

std::string command_line(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + (a.size() > 60 ? a.substr(0, 60) + "..." : a);
  return s;
}

/// Runs every reading command on `file` (with `tensor` for dump and extract; empty: none).
/// Reading commands must succeed; writing ones may refuse, with one error line.
void run_every_command(const fs::path& file, const std::string& tensor) {
  const std::string p = file.string();
  const fs::path dir = file.parent_path();
  const auto must_pass = [](const std::vector<std::string>& args) {
    const auto r = st_test::run_cli(args);
    EXPECT_EQ(r.status, 0) << command_line(args) << ": " << r.err.substr(0, 400);
  };
  const auto may_refuse = [](const std::vector<std::string>& args) {
    const auto r = st_test::run_cli(args);
    EXPECT_TRUE(r.status == 0 || ((r.status == 1 || r.status == 2) && r.err.starts_with("safetensors: error: ") &&
                                  r.err.find("internal error") == std::string::npos))
        << command_line(args) << ": status " << r.status << ": " << r.err.substr(0, 400);
  };
  must_pass({"validate", p});
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"ls", p},
           {"ls", "--json", p},
           {"inspect", p},
           {"inspect", "--json", p},
           {"inspect", "--tree", p},
           {"inspect", "--tree", "--json", p},
           {"meta", p},
           {"meta", "--json", p},
           {"checksum", p},
           {"checksum", "--per-tensor", p},
           {"diff", p, p},
       }) {
    must_pass(args);
  }
  may_refuse({"stats", p});
  if (!tensor.empty()) {
    must_pass({"dump", p, tensor});
    must_pass({"dump", "--json", p, tensor});
    may_refuse({"extract", p, (dir / "extract.safetensors").string(), "--only", tensor});
  }
  may_refuse({"cast", p, (dir / "cast.safetensors").string(), "--dtype", "F16"});
  for (const char* out : {"out.safetensors", "out.npz", "out.npy", "out.gguf"})
    may_refuse({"convert", p, (dir / out).string()});
  may_refuse({"shard", p, (dir / "shards").string()});
}

TEST(CliExtremeFiles, RankOfAMillion) {
  // Every dimension 1: 2 header bytes each. Past 40,000 the recursive printer overflowed the stack.
  const fs::path dir = st_test::scratch_dir();
  const fs::path f = write_raw(dir / "deep.safetensors", {{"t", "F32", ones(big), 4}});
  run_every_command(f, "t");
  const auto r = st_test::run_cli({"dump", "--json", f.string(), "t"});
  ASSERT_EQ(r.status, 0) << r.err;
  // All million lists, balanced, around the one value.
  EXPECT_NE(r.out.find(R"("values":)" + std::string(big, '[') + "0" + std::string(big, ']') + "}\n"),
            std::string::npos);
}

TEST(CliExtremeFiles, DeepRankWithSiblingsStaysProportional) {
  // [1000] then a million ones wraps each value in a million lists; [1]*1M + [1000, 2] puts a
  // million-space indent before each row. What dump prints stays proportional to the file.
  const fs::path dir = st_test::scratch_dir();
  const fs::path f = write_raw(dir / "wide.safetensors",
                               {{"a", "U8", "1000," + ones(big), 1000}, {"b", "U8", ones(big) + ",1000,2", 2000}});
  for (const char* name : {"a", "b"}) {
    for (const bool json : {false, true}) {
      std::vector<std::string> args{"dump", f.string(), name};
      if (json) args.emplace_back("--json");
      const auto r = st_test::run_cli(args);
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_LT(r.out.size(), std::size_t{100} << 20) << name << (json ? " --json" : "");
      if (json) {
        EXPECT_NE(r.out.find(R"("truncated":true)"), std::string::npos) << name;
      }
    }
  }
}

TEST(CliExtremeFiles, ZeroSizeDimensions) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path f = write_raw(dir / "empty.safetensors", {{"a", "F32", "0", 0},
                                                           {"b", "F32", "3,0,5", 0},
                                                           {"c", "BF16", "1000000000,0", 0},
                                                           {"d", "I64", "0,1000000000,1000000000", 0},
                                                           {"e", "F32", "", 4}});
  run_every_command(f, "c");
  const auto small = st_test::run_cli({"dump", "--json", f.string(), "b"});
  ASSERT_EQ(small.status, 0) << small.err;
  EXPECT_NE(small.out.find(R"("truncated":false,"values":[[],[],[]]})"), std::string::npos) << small.out;
  // A billion empty lists are not printed: the limit counts them as it counts values.
  const auto billion = st_test::run_cli({"dump", "--json", f.string(), "c"});
  ASSERT_EQ(billion.status, 0) << billion.err;
  EXPECT_NE(billion.out.find(R"("truncated":true)"), std::string::npos);
  EXPECT_LT(billion.out.size(), std::size_t{10000});
  const auto text = st_test::run_cli({"dump", f.string(), "c", "--limit", "3"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out, "c: BF16 [1000000000, 0]\n[[],\n [],\n [],\n ...]\n");
}

TEST(CliExtremeFiles, ManyTensors) {
  // Every command on 5,000 tensors; `ls` and `dump` on a million (every command on a million
  // takes minutes: a million-member .npz alone 78 s, inspect --tree 11 s, measured).
  const fs::path dir = st_test::scratch_dir();
  const auto tensors = [](std::size_t n) {
    std::vector<raw_tensor> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back({"layer." + std::to_string(i) + ".w", "U8", "1", 1});
    return out;
  };
  run_every_command(write_raw(dir / "many.safetensors", tensors(5'000)), "layer.4999.w");
  const std::string million = write_raw(dir / "million.safetensors", tensors(big)).string();
  const auto ls = st_test::run_cli({"ls", million});
  EXPECT_EQ(ls.status, 0) << ls.err;
  const std::string last = "layer." + std::to_string(big - 1) + ".w";
  EXPECT_TRUE(ls.out.ends_with(last + "\n"));
  const auto dump = st_test::run_cli({"dump", "--json", million, last});
  EXPECT_EQ(dump.status, 0) << dump.err;
  EXPECT_NE(dump.out.find(R"("values":[0])"), std::string::npos) << dump.out;
}

TEST(CliExtremeFiles, NamesOf64KiB) {
  // One name of 64 KiB letters, and one of 32,768 dotted components (the tree's deepest path).
  const fs::path dir = st_test::scratch_dir();
  std::string dotted;
  for (std::size_t i = 0; i < 32'768; ++i) dotted += i == 0 ? "x" : ".x";
  const std::string long_name(65'536, 'n');
  const fs::path f = write_raw(dir / "names.safetensors",
                               {{long_name, "F32", "2", 8}, {dotted, "F32", "1", 4}, {dotted + ".y", "F32", "1", 4}});
  run_every_command(f, dotted);
}

TEST(CliExtremeFiles, EveryDtype) {
  const fs::path dir = st_test::scratch_dir();
  std::vector<raw_tensor> tensors;
  for (const safetensors::dtype t : safetensors::all_dtypes()) {
    // 8 elements: whole bytes for every sub-byte type.
    tensors.push_back({fmt::format("t.{}", safetensors::dtype_name(t)), std::string(safetensors::dtype_name(t)), "2,4",
                       safetensors::dtype_bits(t)});
  }
  const fs::path f = write_raw(dir / "dtypes.safetensors", tensors);
  run_every_command(f, "t.F8_E4M3");
  for (const auto& t : tensors) {
    const auto r = st_test::run_cli({"dump", f.string(), t.name});
    EXPECT_EQ(r.status, 0) << t.name << ": " << r.err;
  }
}

TEST(CliExtremeFiles, MetadataOnly) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path f = write_raw(dir / "meta.safetensors", {}, R"({"format":"pt","empty":""})");
  run_every_command(f, "");
  const auto r = st_test::run_cli({"meta", f.string()});
  EXPECT_EQ(r.out, "empty: \nformat: pt\n");
}

}  // namespace
