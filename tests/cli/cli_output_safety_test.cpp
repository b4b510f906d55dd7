// SPDX-License-Identifier: Apache-2.0
// Data safety of the writing subcommands: patterns that match nothing, one glob for every
// command, outputs that are inputs, outputs checked before anything is written, and
// in-place rewrites that keep the file's mode and symlinks.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "safetensors/file.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
using safetensors::dtype;

/// Two quantizable linear weights and a norm, F32.
fs::path write_quantizable_model(const fs::path& path) {
  std::vector<float> w(4 * 64);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 17) * 0.01F;
  st_test::make_f32_file(path, {{"model.layers.0.mlp.weight", {4, 64}, w},
                                {"model.layers.1.mlp.weight", {4, 64}, w},
                                {"model.norm.weight", {64}, std::vector<float>(64, 1.0F)}});
  return path;
}

std::string contents(const fs::path& p) {
  std::string bytes(static_cast<std::size_t>(fs::file_size(p)), '\0');
  std::ifstream in(p, std::ios::binary);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

dtype type_of(const fs::path& file, std::string_view tensor) {
  auto f = safetensors::file::open(file.string());
  EXPECT_OK(f);
  if (!f) return dtype::BOOL;
  const auto* t = f->find(tensor);
  EXPECT_NE(t, nullptr) << tensor;
  return t == nullptr ? dtype::BOOL : t->type;
}

TEST(CliPatterns, PatternMatchingNothingIsAnErrorOnEveryCommand) {
  const auto dir = st_test::scratch_dir();
  const auto in = write_quantizable_model(dir / "in.safetensors").string();
  const auto out = (dir / "out.safetensors").string();
  const std::vector<std::vector<std::string>> commands{
      {"extract", in, out, "--only", "nomatch*"},
      {"extract", in, out, "--exclude", "nomatch*"},
      {"cast", in, out, "--dtype", "BF16", "--only", "nomatch*"},
      {"cast", in, out, "--dtype", "BF16", "--exclude", "nomatch*"},
      {"quantize", in, out, "--only", "nomatch*"},
      {"quantize", in, out, "--exclude", "nomatch*"},
      {"stats", in, "nomatch*"},
  };
  for (const auto& args : commands) {
    auto r = st_test::run_cli(args);
    EXPECT_EQ(r.status, 2) << args[0] << " " << args.back() << ": " << r.err;
    EXPECT_NE(r.err.find("nomatch*"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << args[0] << " wrote an output";
  }
  // Matching only tensors that cannot be quantized: no file claiming quantization_bits.
  auto r = st_test::run_cli({"quantize", in, out, "--only", "model.norm.*"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("no tensor to quantize"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(CliPatterns, OneGlobSelectsTheSameTensorsEverywhere) {
  const auto dir = st_test::scratch_dir();
  const auto in = write_quantizable_model(dir / "in.safetensors").string();
  // A set: the MLX-only glob of quantize used to treat '[' literally and select nothing.
  const std::string pattern = "model.layers.[0].*";
  const auto sub = dir / "sub.safetensors";
  ASSERT_EQ(st_test::run_cli({"extract", in, sub.string(), "--only", pattern}).status, 0);
  EXPECT_EQ(st_test::run_cli({"ls", sub.string()}).out, "model.layers.0.mlp.weight\n");
  const auto cast = dir / "cast.safetensors";
  ASSERT_EQ(st_test::run_cli({"cast", in, cast.string(), "--dtype", "BF16", "--only", pattern}).status, 0);
  EXPECT_EQ(type_of(cast, "model.layers.0.mlp.weight"), dtype::BF16);
  EXPECT_EQ(type_of(cast, "model.layers.1.mlp.weight"), dtype::F32);
  const auto quantized = dir / "q.safetensors";
  auto r = st_test::run_cli({"quantize", in, quantized.string(), "--only", pattern});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(type_of(quantized, "model.layers.0.mlp.weight"), dtype::U32);
  EXPECT_EQ(type_of(quantized, "model.layers.1.mlp.weight"), dtype::F32);
}

TEST(CliOutputs, RefusesAnOutputThatIsAnInput) {
  const auto dir = st_test::scratch_dir();
  const auto in = write_quantizable_model(dir / "model.safetensors");
  const auto ck = dir / "ck";
  ASSERT_EQ(st_test::run_cli({"shard", in.string(), ck.string(), "--max-shard-size", "1100"}).status, 0);
  const auto shard1 = ck / "model-00001-of-00003.safetensors";
  ASSERT_TRUE(fs::exists(shard1));
  const std::string before = contents(shard1);
  fs::create_symlink(shard1, dir / "link.safetensors");
  fs::create_hard_link(shard1, dir / "hard.safetensors");
  for (const auto& target : {shard1, dir / "link.safetensors", dir / "hard.safetensors"}) {
    auto r = st_test::run_cli({"merge", ck.string(), target.string()});
    EXPECT_EQ(r.status, 2) << target << ": " << r.err;
    EXPECT_NE(r.err.find("same file"), std::string::npos) << r.err;
  }
  EXPECT_EQ(contents(shard1), before);
  EXPECT_TRUE(fs::is_symlink(dir / "link.safetensors"));

  const std::string model_before = contents(in);
  // quantize into its input; shard into the input's own directory (model.safetensors again).
  for (const auto& args : std::vector<std::vector<std::string>>{{"quantize", in.string(), in.string()},
                                                                {"shard", in.string(), dir.string()}}) {
    auto r = st_test::run_cli(args);
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(contents(in), model_before) << args[0];
  }
  // The documented in-place rewrite still works.
  auto r = st_test::run_cli({"cast", in.string(), in.string(), "--dtype", "BF16"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(type_of(in, "model.norm.weight"), dtype::BF16);
}

TEST(CliOutputs, EveryOutputIsCheckedBeforeAnyIsWritten) {
  const auto dir = st_test::scratch_dir();
  const auto in = write_quantizable_model(dir / "in.safetensors").string();
  const auto out = dir / "out.safetensors";
  auto r = st_test::run_cli({"quantize", in, out.string(), "--config-out", (dir / "missing" / "q.json").string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << "the main output was written before the config path failed";
  { std::ofstream(out) << "keep me"; }
  r = st_test::run_cli({"quantize", in, out.string(), "--config-out", (dir / "missing" / "q.json").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(contents(out), "keep me");

  fs::create_directory(dir / "adir");
  r = st_test::run_cli({"cast", in, (dir / "adir").string(), "--dtype", "BF16"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("Is a directory"), std::string::npos) << r.err;
  r = st_test::run_cli({"extract", in, (dir / "missing" / "x.safetensors").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
  r = st_test::run_cli({"merge", in, "/dev/null"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
}

TEST(CliOutputs, InPlaceRewriteKeepsModeAndSymlink) {
  const auto dir = st_test::scratch_dir();
  const auto in = write_quantizable_model(dir / "in.safetensors");
  const auto secret = dir / "secret.safetensors";
  fs::copy_file(in, secret);
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(st_test::run_cli({"cast", secret.string(), secret.string(), "--dtype", "BF16"}).status, 0);
  EXPECT_EQ(fs::status(secret).permissions() & fs::perms::mask, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(type_of(secret, "model.norm.weight"), dtype::BF16);

  const auto real = dir / "real.safetensors";
  fs::copy_file(in, real);
  const auto link = dir / "link.safetensors";
  fs::create_symlink("real.safetensors", link);
  ASSERT_EQ(st_test::run_cli({"cast", link.string(), link.string(), "--dtype", "F16"}).status, 0);
  EXPECT_TRUE(fs::is_symlink(link)) << "the symlink was replaced by a file";
  EXPECT_EQ(type_of(real, "model.norm.weight"), dtype::F16);
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  }

  // A new file gets 0666 less the umask, as cp would give it.
  const mode_t old_mask = ::umask(027);
  auto r = st_test::run_cli({"cast", in.string(), (dir / "new.safetensors").string(), "--dtype", "BF16"});
  ::umask(old_mask);
  ASSERT_EQ(r.status, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat((dir / "new.safetensors").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640U);
}

}  // namespace
