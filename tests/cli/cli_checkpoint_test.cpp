// SPDX-License-Identifier: Apache-2.0
// `safetensors shard | merge | verify | dump` and checkpoint paths in inspect/validate.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
using safetensors::dtype;

/// A file of 12 tensors of assorted dtypes and sizes with `{"format":"pt"}`.
fs::path write_assorted_model(const fs::path& dir) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<safetensors::tensor_data> tensors;
  const dtype types[] = {dtype::F32, dtype::BF16, dtype::I64, dtype::U8};
  for (std::size_t i = 0; i < 12; ++i) {
    const dtype t = types[i % 4];
    const std::uint64_t n = 10 + 37 * i;
    std::vector<std::byte> b(n * safetensors::dtype_bits(t) / 8);
    for (std::size_t k = 0; k < b.size(); ++k) b[k] = static_cast<std::byte>((k * 13 + i) % 256);
    storage.push_back(std::move(b));
    tensors.push_back({fmt::format("layer.{}.w", i), t, {n}, {}});
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i].data = storage[i];
  safetensors::write_options o;
  o.metadata = safetensors::metadata_map{{"format", "pt"}};
  const auto path = dir / "in.safetensors";
  EXPECT_OK(safetensors::write_file(path.string(), tensors, o));
  return path;
}

TEST(CliShard, ShardVerifyMergeRoundTripIsByteIdentical) {
  const auto dir = st_test::scratch_dir();
  const auto in = write_assorted_model(dir);
  auto shard = st_test::run_command(st_test::cli_shell() + " shard " + st_test::quoted_path(in) + " " +
                                    st_test::quoted_path(dir / "out") + " --max-shard-size 1KB");
  ASSERT_EQ(shard.status, 0) << shard.out;
  EXPECT_NE(shard.out.find("model.safetensors.index.json"), std::string::npos) << shard.out;
  EXPECT_TRUE(fs::exists(dir / "out" / "model-00008-of-00008.safetensors")) << shard.out;
  auto verify = st_test::run_command(st_test::cli_shell() + " verify --checksums " + st_test::quoted_path(dir / "out"));
  EXPECT_EQ(verify.status, 0) << verify.out;
  EXPECT_NE(verify.out.find("ok: 12 tensors"), std::string::npos) << verify.out;
  auto sum =
      st_test::run_command("sha256sum " + st_test::quoted_path(dir / "out" / "model-00002-of-00008.safetensors"));
  ASSERT_EQ(sum.status, 0);
  EXPECT_NE(verify.out.find("sha256 " + sum.out.substr(0, 64)), std::string::npos) << verify.out;
  auto merge = st_test::run_command(st_test::cli_shell() + " merge " +
                                    st_test::quoted_path(dir / "out" / "model.safetensors.index.json") + " " +
                                    st_test::quoted_path(dir / "merged.safetensors"));
  ASSERT_EQ(merge.status, 0) << merge.out;
  EXPECT_EQ(st_test::read_bytes(dir / "merged.safetensors"), st_test::read_bytes(in));
  // One shard when everything fits: the file itself, no index.
  auto single = st_test::run_command(st_test::cli_shell() + " shard " + st_test::quoted_path(in) + " " +
                                     st_test::quoted_path(dir / "one"));
  ASSERT_EQ(single.status, 0) << single.out;
  EXPECT_EQ(st_test::read_bytes(dir / "one" / "model.safetensors"), st_test::read_bytes(in));
  EXPECT_FALSE(fs::exists(dir / "one" / "model.safetensors.index.json"));
}

TEST(CliShard, InspectAndValidateTakeCheckpoints) {
  const auto dir = st_test::scratch_dir();
  const auto in = write_assorted_model(dir);
  ASSERT_EQ(st_test::run_command(st_test::cli_shell() + " shard " + st_test::quoted_path(in) + " " +
                                 st_test::quoted_path(dir / "out") + " --max-shard-size 2KB")
                .status,
            0);
  auto inspect = st_test::run_command(st_test::cli_shell() + " inspect " + st_test::quoted_path(dir / "out"));
  EXPECT_EQ(inspect.status, 0);
  EXPECT_NE(inspect.out.find("tensors:     12"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("model-00001-of-"), std::string::npos) << inspect.out;
  auto validate = st_test::run_command(st_test::cli_shell() + " validate " + st_test::quoted_path(dir / "out") + " " +
                                       st_test::quoted_path(dir / "out" / "model.safetensors.index.json") + " " +
                                       st_test::quoted_path(in));
  EXPECT_EQ(validate.status, 0) << validate.out;
  EXPECT_NE(validate.out.find("ok (12 tensors in"), std::string::npos) << validate.out;
  // ls lists every shard's tensors, shard by shard: the same names as the single file.
  auto ls_checkpoint = st_test::run_command(st_test::cli_shell() + " ls " + st_test::quoted_path(dir / "out"));
  auto ls_index = st_test::run_command(st_test::cli_shell() + " ls " +
                                       st_test::quoted_path(dir / "out" / "model.safetensors.index.json"));
  auto ls_file = st_test::run_command(st_test::cli_shell() + " ls " + st_test::quoted_path(in));
  EXPECT_EQ(ls_checkpoint.status, 0);
  EXPECT_EQ(std::count(ls_checkpoint.out.begin(), ls_checkpoint.out.end(), '\n'), 12);
  EXPECT_EQ(ls_checkpoint.out, ls_index.out);
  EXPECT_EQ(ls_checkpoint.out, ls_file.out) << "shards keep the writer's order";
}

TEST(CliShard, ProblemsGiveExitCodes) {
  const auto dir = st_test::scratch_dir();
  const auto in = write_assorted_model(dir);
  EXPECT_EQ(st_test::run_command(st_test::cli_shell() + " shard " + st_test::quoted_path(in) + " " +
                                 st_test::quoted_path(dir / "x") + " --max-shard-size 5XB 2>&1")
                .status,
            2);
  // A prefix that would put files outside OUTDIR (or name none) is a usage error; nothing is written.
  for (const std::string prefix : {"../evil", "", "a/b", ".."}) {
    auto r = st_test::run_command(st_test::cli_shell() + " shard " + st_test::quoted_path(in) + " " +
                                  st_test::quoted_path(dir / "p") + " --max-shard-size 2KB --prefix " +
                                  st_test::shell_quote(prefix) + " 2>&1");
    EXPECT_EQ(r.status, 2) << prefix << ": " << r.out;
    EXPECT_EQ(r.out.rfind("safetensors: error: --prefix: the shard file name prefix '" + prefix + "'", 0), 0) << r.out;
    EXPECT_FALSE(fs::exists(dir / "p")) << prefix;
    EXPECT_FALSE(fs::exists(dir / "evil-00001-of-00005.safetensors")) << prefix;
  }
  ASSERT_EQ(st_test::run_command(st_test::cli_shell() + " shard " + st_test::quoted_path(in) + " " +
                                 st_test::quoted_path(dir / "out") + " --max-shard-size 2KB")
                .status,
            0);
  const auto index = dir / "out" / "model.safetensors.index.json";
  auto text = st_test::read_bytes(index);
  std::string json(reinterpret_cast<const char*>(text.data()), text.size());
  json.replace(json.find("\"total_size\": "), 14, "\"total_size\": 1");  // prepends a digit
  std::ofstream(index, std::ios::trunc) << json;
  auto verify = st_test::run_command(st_test::cli_shell() + " verify " + st_test::quoted_path(dir / "out"));
  EXPECT_EQ(verify.status, 1) << verify.out;
  EXPECT_NE(verify.out.find("total_size mismatch: ShardMismatch"), std::string::npos) << verify.out;
  EXPECT_EQ(st_test::run_command(st_test::cli_shell() + " validate " + st_test::quoted_path(dir / "out")).status, 1);
  // Merging recomputes sizes: a stale total_size is a warning there, not a failure.
  auto merge = st_test::run_command(st_test::cli_shell() + " merge " + st_test::quoted_path(dir / "out") + " " +
                                    st_test::quoted_path(dir / "m.safetensors") + " 2>&1");
  EXPECT_EQ(merge.status, 0) << merge.out;
  EXPECT_NE(merge.out.find("safetensors: warning: "), std::string::npos) << merge.out;
  EXPECT_EQ(st_test::read_bytes(dir / "m.safetensors"), st_test::read_bytes(in));
  fs::remove(dir / "out" / "model-00002-of-00005.safetensors");
  EXPECT_EQ(st_test::run_command(st_test::cli_shell() + " verify " + st_test::quoted_path(dir / "out")).status, 2);
}

TEST(CliDump, PrintsSlicesLikeNumpy) {
  const auto dir = st_test::scratch_dir();
  std::vector<std::int32_t> ints{0, 1, 2, 3, 4, 5};
  std::vector<float> floats{1.5F, -2.0F, 0.25F, 3.0F};
  const std::vector<safetensors::tensor_data> tensors{
      {"i", dtype::I32, {2, 3}, std::as_bytes(std::span(ints))},
      {"f", dtype::F32, {4}, std::as_bytes(std::span(floats))},
  };
  const auto path = dir / "d.safetensors";
  ASSERT_OK(safetensors::write_file(path.string(), tensors));
  auto whole = st_test::run_command(st_test::cli_shell() + " dump " + st_test::quoted_path(path) + " i");
  EXPECT_EQ(whole.status, 0);
  EXPECT_EQ(whole.out, "i: I32 [2, 3]\n[[0, 1, 2],\n [3, 4, 5]]\n");
  auto sliced =
      st_test::run_command(st_test::cli_shell() + " dump " + st_test::quoted_path(path) + " i --slice '::-1, 1:'");
  EXPECT_EQ(sliced.out, "i: I32 [2, 3] [::-1, 1:] -> [2, 2]\n[[4, 5],\n [1, 2]]\n");
  auto limited = st_test::run_command(st_test::cli_shell() + " dump " + st_test::quoted_path(path) + " i --limit 4");
  EXPECT_EQ(limited.out, "i: I32 [2, 3]\n[[0, 1, 2],\n [3, ...]]\n");
  auto scalar =
      st_test::run_command(st_test::cli_shell() + " dump " + st_test::quoted_path(path) + " i --slice '1, -1'");
  EXPECT_EQ(scalar.out, "i: I32 [2, 3] [1, -1] -> []\n5\n");
  auto f = st_test::run_command(st_test::cli_shell() + " dump " + st_test::quoted_path(path) + " f --slice ::2");
  EXPECT_EQ(f.out, "f: F32 [4] [::2] -> [2]\n[1.5, 0.25]\n");
  EXPECT_EQ(
      st_test::run_command(st_test::cli_shell() + " dump " + st_test::quoted_path(path) + " i --slice 7 2>&1").status,
      2);
  EXPECT_EQ(st_test::run_command(st_test::cli_shell() + " dump " + st_test::quoted_path(path) + " nope 2>&1").status,
            2);
}

}  // namespace
