// SPDX-License-Identifier: Apache-2.0
// `safetensors inspect`, `ls`, `meta`: exact output, JSON, sniffing and error paths.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>

#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using st_test::run_cli;

std::string corpus(const char* name) { return (st_test::conformance_dir() / "format" / name).string(); }

TEST(CliInspect, SummaryShowsTotalsAlignmentAndTable) {
  const std::string path = corpus("001-minimal-bf16.safetensors");
  auto r = run_cli({"inspect", path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "file:        " + path +
                       "\n"
                       "size:        244 B (244 bytes)\n"
                       "header:      216 bytes, data starts at byte 224 (aligned to 32)\n"
                       "tensors:     3\n"
                       "parameters:  8\n"
                       "  F16               1 tensor               2 params           4 B\n"
                       "  BF16              1 tensor               4 params           8 B\n"
                       "  F32               1 tensor               2 params           8 B\n"
                       "alignment:   every tensor aligned to its element size (all data at least 8-byte aligned)\n"
                       "metadata:\n"
                       "  format: pt\n"
                       "\n"
                       "name    dtype        shape                          bytes   align  data_offsets\n"
                       "scale   F32          [2]                                8     32   [0, 8]\n"
                       "weight  BF16         [2, 2]                             8      8   [8, 16]\n"
                       "bias    F16          [2]                                4     16   [16, 20]\n");
}

TEST(CliInspect, FlagsMisalignedTensors) {
  auto r = run_cli({"inspect", corpus("029-unaligned-offsets-all-multibyte-dtypes.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("alignment:   11 tensors not aligned to their element size (marked !)\n"), std::string::npos)
      << r.out;
  // U8 at the data start is fine; the next tensor (odd offset, 2-byte type or wider) is not.
  std::size_t marks = 0;
  for (std::size_t p = r.out.find("!  ["); p != std::string::npos; p = r.out.find("!  [", p + 1)) ++marks;
  EXPECT_EQ(marks, 11U);
}

TEST(CliInspect, TreeGroupsByPrefixWithParameterCounts) {
  auto r = run_cli({"inspect", "--tree", "--depth", "2", corpus("002-weights-bf16.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "(all)                    808  20 tensors\n"
            "  model                  808  20 tensors\n"
            "    embed_tokens.weight   64  BF16 [8, 8]\n"
            "    layers               736  18 tensors\n"
            "    norm.weight            8  BF16 [8]\n");
}

TEST(CliInspect, TreeOrdersLayersNumerically) {
  const auto dir = st_test::scratch_dir();
  std::vector<st_test::f32_tensor> tensors;
  for (int i : {10, 2, 1}) tensors.push_back({"layers." + std::to_string(i) + ".w", {2}, {1, 2}});
  st_test::make_f32_file(dir / "m.safetensors", tensors);
  auto r = run_cli({"inspect", "--tree", (dir / "m.safetensors").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "(all)     6  3 tensors\n"
            "  layers  6  3 tensors\n"
            "    1.w   2  F32 [2]\n"
            "    2.w   2  F32 [2]\n"
            "    10.w  2  F32 [2]\n");
}

TEST(CliInspect, TreeJson) {
  auto r = run_cli({"inspect", "--tree", "--json", corpus("002-weights-bf16.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(doc["params"].get_uint64().value(), 808U);
  simdjson::dom::element model = doc["children"].at(0);
  EXPECT_EQ(model["name"].get_string().value(), "model");
  EXPECT_EQ(model["tensors"].get_uint64().value(), 20U);
}

TEST(CliInspect, JsonIsTheHeader) {
  auto r = run_cli({"inspect", "--json", corpus("001-minimal-bf16.safetensors")});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.out, R"({"__metadata__":{"format":"pt"},"scale":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                   R"("weight":{"dtype":"BF16","shape":[2,2],"data_offsets":[8,16]},"bias":{"dtype":"F16","shape":[2],)"
                   R"("data_offsets":[16,20]}})"
                   "\n");
}

TEST(CliInspect, DetectsMlxQuantizedLayout) {
  const auto dir = st_test::scratch_dir();
  std::vector<std::uint32_t> packed(8, 0);
  std::vector<float> scales(2, 1.0F);
  std::vector<safetensors::tensor_data> data{
      {"l.weight", safetensors::dtype::U32, {2, 4}, std::as_bytes(std::span<const std::uint32_t>(packed))},
      {"l.scales", safetensors::dtype::F32, {2, 1}, std::as_bytes(std::span<const float>(scales))},
      {"l.biases", safetensors::dtype::F32, {2, 1}, std::as_bytes(std::span<const float>(scales))}};
  ASSERT_OK(safetensors::write_file((dir / "q.safetensors").string(), data));
  auto r = run_cli({"inspect", (dir / "q.safetensors").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("layout:      MLX quantized (1 packed U32 weights with .scales)\n"), std::string::npos) << r.out;
}

// inspect itself reads these formats; a SafeTensors-only command names them instead.
TEST(CliInspect, ForeignFormatsGetAClearError) {
  const auto dir = st_test::scratch_dir();
  const std::vector<std::pair<std::string, std::string>> cases{
      {std::string("GGUF\x03\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24), "GGUF"},
      {std::string("\x80\x02}q\x00(X\x01\0\0\0a", 12), "pickle"},
      {std::string("\x93NUMPY\x01\x00v\x00{'descr': '<f4'}", 26), "NumPy .npy"},
      {std::string("PK\x03\x04", 4) + std::string(22, '\0') + "\x10" + std::string(3, '\0') + "archive/data.pkl",
       "PyTorch (zip)"},
  };
  for (const auto& [bytes, name] : cases) {
    const auto path = (dir / "model.bin").string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    auto r = run_cli({"ls", path});
    EXPECT_EQ(r.status, 1) << name;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "safetensors: error: " + path + ": this is a " + name + " file, not SafeTensors\n");
  }
}

TEST(CliInspect, InvalidFileKeepsTheFormatError) {
  const std::string path = corpus("049-overlapping-tensors.safetensors");
  auto r = run_cli({"inspect", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("safetensors: error: " + path + ": ", 0), 0U) << r.err;
  EXPECT_NE(r.err.find("tensor '"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(CliInspect, MissingFileAndUsageErrorsExit2) {
  auto missing = run_cli({"inspect", (st_test::scratch_dir() / "absent.safetensors").string()});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("No such file or directory"), std::string::npos) << missing.err;
  auto usage = run_cli({"inspect"});
  EXPECT_EQ(usage.status, 2);
  EXPECT_EQ(usage.err, "safetensors: error: file is required (see 'safetensors inspect --help')\n");
  EXPECT_EQ(run_cli({"inspect", "--no-such-flag", "x"}).status, 2);
  EXPECT_EQ(run_cli({}).status, 2);
  EXPECT_EQ(run_cli({"no-such-command"}).status, 2);
  EXPECT_EQ(run_cli({"inspect", "--tree", "--depth", "-5", "x"}).status, 2);
  auto tol = run_cli({"diff", "a", "b", "--rtol", "-1"});
  EXPECT_EQ(tol.status, 2);
  EXPECT_EQ(tol.err, "safetensors: error: --rtol and --atol must be numbers >= 0\n");
}

TEST(CliInspect, EverySubcommandHasHelp) {
  for (const char* cmd : {"inspect", "validate", "ls", "meta", "stats", "diff", "checksum", "extract", "cast"}) {
    auto r = run_cli({cmd, "--help"});
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << cmd << ": " << r.out;
  }
}

TEST(CliLs, NamesOnePerLineInFileOrder) {
  auto r = run_cli({"ls", corpus("001-minimal-bf16.safetensors")});
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "scale\nweight\nbias\n");
  auto j = run_cli({"ls", "--json", corpus("001-minimal-bf16.safetensors")});
  EXPECT_EQ(j.out, "[\"scale\",\"weight\",\"bias\"]\n");
  auto empty = run_cli({"ls", corpus("004-empty-header-no-tensors.safetensors")});
  EXPECT_EQ(empty.status, 0);
  EXPECT_EQ(empty.out, "");
}

TEST(CliMeta, AllKeysOneKeyAndMissingKey) {
  const std::string path = corpus("001-minimal-bf16.safetensors");
  EXPECT_EQ(run_cli({"meta", path}).out, "format: pt\n");
  EXPECT_EQ(run_cli({"meta", path, "--json"}).out, "{\"format\":\"pt\"}\n");
  auto one = run_cli({"meta", path, "format"});
  EXPECT_EQ(one.status, 0);
  EXPECT_EQ(one.out, "pt\n");
  auto missing = run_cli({"meta", path, "license"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(missing.err, "safetensors: error: " + path + ": metadata key 'license' not found\n");
  auto none = run_cli({"meta", corpus("004-empty-header-no-tensors.safetensors"), "--json"});
  EXPECT_EQ(none.status, 0);
  EXPECT_EQ(none.out, "{}\n");
}

}  // namespace
