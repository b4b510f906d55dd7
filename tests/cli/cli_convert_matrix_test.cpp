// SPDX-License-Identifier: Apache-2.0
// `safetensors convert` over the whole matrix: every input format (SafeTensors, PyTorch,
// .npz, .npy, GGUF) to every output format (SafeTensors, .npz, .npy, GGUF), chosen by
// extension or --to; refused pairs exit 2 naming what is supported; values round-trip.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/sniff.h"
#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/gguf_fixtures.h"
#include "support/numpy_fixtures.h"
#include "support/paths.h"
#include "support/pytorch_fixtures.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
using st::dtype;
using st_test::gguf_fixture;

struct tensor_value {
  std::string type;
  std::vector<std::uint64_t> shape;
  std::vector<std::byte> bytes;
  bool operator==(const tensor_value&) const = default;
};

std::map<std::string, tensor_value> tensors_of(const fs::path& path) {
  std::map<std::string, tensor_value> out;
  auto f = st::file::open(path.string());
  EXPECT_OK(f) << path << ": " << (f.ok() ? "" : f.err().to_string());
  if (!f) return out;
  for (const auto& t : f->tensors()) {
    auto bytes = f->load(t.name);
    EXPECT_OK(bytes);
    out[std::string(t.name)] = {std::string(st::dtype_name(t.type)),
                                std::vector<std::uint64_t>(t.shape.begin(), t.shape.end()),
                                std::vector<std::byte>(bytes->begin(), bytes->end())};
  }
  return out;
}

// Tensors of every dtype all four outputs hold.
void write_mixed(const fs::path& path) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<st::tensor_data> tensors;
  std::uint8_t next = 1;
  for (const auto& [name, type, shape] :
       std::vector<std::tuple<std::string, dtype, std::vector<std::uint64_t>>>{{"model.w", dtype::F32, {2, 3}},
                                                                               {"model.h", dtype::F16, {4}},
                                                                               {"model.b", dtype::BF16, {2, 2}},
                                                                               {"model.d", dtype::F64, {3}},
                                                                               {"ids", dtype::I32, {3}},
                                                                               {"pos", dtype::I64, {2}}}) {
    storage.emplace_back(st::byte_size(type, shape).bytes);
    for (auto& b : storage.back()) b = std::byte{static_cast<std::uint8_t>(next++ % 0x3B)};  // finite values
    tensors.push_back({name, type, shape, storage.back()});
  }
  ASSERT_OK(st::write_file(path.string(), tensors));
}

enum class outcome { ok, refused_many, refused_dtype };

struct input_case {
  std::string label;
  std::string path;
  std::map<std::string, outcome> outputs;  // by extension; missing: ok
};

TEST(CliConvertMatrix, EveryInputConvertsToEveryOutputOrIsRefusedNamingWhatIsSupported) {
  const auto dir = st_test::scratch_dir();
  const auto mixed = dir / "mixed.safetensors";
  write_mixed(mixed);
  const auto one = dir / "one.safetensors";
  st_test::make_f32_file(one, {{"w", {2, 2}, {1.5F, -2.0F, 0.25F, 8.0F}}});

  const std::vector<input_case> cases{
      {"safetensors", mixed.string(), {{"npy", outcome::refused_many}}},
      {"safetensors-one", one.string(), {}},
      {"pytorch",
       st_test::pytorch_fixture("basic.pt").string(),
       {{"npy", outcome::refused_many}, {"gguf", outcome::refused_dtype}}},
      {"pytorch-nested", st_test::pytorch_fixture("nested.pt").string(), {{"npy", outcome::refused_many}}},
      {"npz",
       st_test::numpy_fixture("stored.npz").string(),
       {{"npy", outcome::refused_many}, {"gguf", outcome::refused_dtype}}},
      {"npy", st_test::numpy_fixture("dtype_f4.npy").string(), {}},
      {"gguf", gguf_fixture("plain.gguf"), {{"npy", outcome::refused_many}}},
      {"gguf-quantized", gguf_fixture("quantized.gguf"), {{"npy", outcome::refused_many}}},
  };
  const std::map<std::string, st::file_format> sniffed{{"safetensors", st::file_format::safetensors},
                                                       {"npz", st::file_format::npz},
                                                       {"npy", st::file_format::npy},
                                                       {"gguf", st::file_format::gguf}};
  for (const auto& c : cases) {
    // The reference: the input as SafeTensors (the input itself for SafeTensors).
    const auto reference = dir / (c.label + ".ref.safetensors");
    auto r = st_test::run_cli({"convert", c.path, reference.string(), "-q"});
    ASSERT_EQ(r.status, 0) << c.label << ": " << r.err;
    const auto want = tensors_of(reference);
    for (const auto& [ext, format] : sniffed) {
      SCOPED_TRACE(c.label + " -> " + ext);
      const auto out = dir / (c.label + "." + ext);
      r = st_test::run_cli({"convert", c.path, out.string(), "-q"});
      const auto expected = c.outputs.contains(ext) ? c.outputs.at(ext) : outcome::ok;
      if (expected != outcome::ok) {
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_FALSE(fs::exists(out));
        EXPECT_NE(r.err.find(expected == outcome::refused_many ? "an .npy file holds exactly one array"
                                                               : "has no GGUF equivalent (GGUF takes F32, F16"),
                  std::string::npos)
            << r.err;
        continue;
      }
      ASSERT_EQ(r.status, 0) << r.err;
      auto kind = st::sniff_file(out.string());
      ASSERT_OK(kind);
      EXPECT_EQ(*kind, format) << "the output's bytes are " << st::file_format_name(*kind);
      // Back to SafeTensors: the same tensors, bit for bit.
      const auto back = dir / (c.label + "." + ext + ".back.safetensors");
      r = st_test::run_cli({"convert", out.string(), back.string(), "-q"});
      ASSERT_EQ(r.status, 0) << r.err;
      auto got = tensors_of(back);
      if (ext == "npy") {
        // A lone .npy names its tensor after the file.
        ASSERT_EQ(got.size(), 1U);
        ASSERT_EQ(want.size(), 1U);
        EXPECT_TRUE(got.begin()->second == want.begin()->second);
      } else {
        EXPECT_EQ(got.size(), want.size());
        for (const auto& [name, value] : want) {
          ASSERT_TRUE(got.contains(name)) << name;
          EXPECT_EQ(got[name].type, value.type) << name;
          EXPECT_EQ(got[name].shape, value.shape) << name;
          EXPECT_TRUE(got[name].bytes == value.bytes) << name;
        }
      }
    }
  }
}

TEST(CliConvertMatrix, ToOverridesTheExtension) {
  const auto dir = st_test::scratch_dir();
  const auto in = dir / "in.safetensors";
  st_test::make_f32_file(in, {{"w", {2}, {1.0F, 2.0F}}});
  const std::vector<std::pair<std::string, st::file_format>> targets{{"npz", st::file_format::npz},
                                                                     {"npy", st::file_format::npy},
                                                                     {"gguf", st::file_format::gguf},
                                                                     {"safetensors", st::file_format::safetensors}};
  for (const auto& [to, format] : targets) {
    const auto out = dir / ("out-" + to + ".bin");
    auto r = st_test::run_cli({"convert", in.string(), out.string(), "--to", to, "-q"});
    ASSERT_EQ(r.status, 0) << to << ": " << r.err;
    auto kind = st::sniff_file(out.string());
    ASSERT_OK(kind);
    EXPECT_EQ(*kind, format) << to;
  }
  // --to wins over a misleading extension too.
  const auto misleading = dir / "really.npz";
  auto r = st_test::run_cli({"convert", in.string(), misleading.string(), "--to", "gguf", "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(*st::sniff_file(misleading.string()), st::file_format::gguf);
}

TEST(CliConvertMatrix, AnOutputNameWithoutAFormatIsRefusedNamingTheChoices) {
  const auto dir = st_test::scratch_dir();
  const auto in = dir / "in.safetensors";
  st_test::make_f32_file(in, {{"w", {2}, {1.0F, 2.0F}}});
  for (const char* name : {"out.xyz", "out"}) {
    const auto out = dir / name;
    auto r = st_test::run_cli({"convert", in.string(), out.string()});
    EXPECT_EQ(r.status, 2) << name;
    EXPECT_NE(
        r.err.find("end it in .safetensors, .npz, .npy or .gguf, or give the format (safetensors, npz, npy or gguf)"),
        std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  const auto pt = dir / "out.pt";
  auto r = st_test::run_cli({"convert", in.string(), pt.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("PyTorch files are read, not written"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(pt));
  r = st_test::run_cli({"convert", in.string(), pt.string(), "--to", "pt"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("safetensors"), std::string::npos) << r.err;
}

}  // namespace
