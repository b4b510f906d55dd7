// SPDX-License-Identifier: Apache-2.0
// `safetensors extract`: selection, renaming, metadata edits, atomicity and errors.
#include <gtest/gtest.h>

#include <cstring>

#include "safetensors/file.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;

struct fixture {
  fs::path dir = st_test::scratch_dir();
  fs::path in = dir / "in.safetensors";
  fs::path out = dir / "out.safetensors";
  fixture() {
    st_test::make_f32_file(in,
                           {{"model.layers.0.w", {2}, {1, 2}},
                            {"model.layers.0.b", {1}, {3}},
                            {"model.layers.1.w", {2}, {4, 5}},
                            {"model.norm", {3}, {6, 7, 8}}},
                           safetensors::metadata_map{{"format", "pt"}, {"owner", "x"}});
  }
};

std::vector<float> values_of(const safetensors::file& f, std::string_view name) {
  auto bytes = f.load(name);
  EXPECT_OK(bytes) << name;
  if (!bytes) return {};
  std::vector<float> out(bytes->size() / 4);
  std::memcpy(out.data(), bytes->data(), bytes->size());
  return out;
}

std::vector<std::string> names_of(const safetensors::file& f) {
  std::vector<std::string> names;
  for (const auto& t : f.tensors()) names.emplace_back(t.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::size_t files_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(CliExtract, SelectRenameAndEditMetadata) {
  fixture fx;
  auto r = st_test::run_cli({"extract", fx.in.string(), fx.out.string(), "--only", "model.layers.*", "--exclude", "*.b",
                             "--rename", "model.layers.*=blocks.*", "--set-meta", "license=mit", "--set-meta",
                             "format=st", "--del-meta", "owner"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  auto f = safetensors::file::open(fx.out.string());
  ASSERT_OK(f);
  EXPECT_EQ(names_of(*f), (std::vector<std::string>{"blocks.0.w", "blocks.1.w"}));
  EXPECT_EQ(values_of(*f, "blocks.0.w"), (std::vector<float>{1, 2}));
  EXPECT_EQ(values_of(*f, "blocks.1.w"), (std::vector<float>{4, 5}));
  ASSERT_TRUE(f->header().metadata().has_value());
  EXPECT_EQ(*f->header().metadata(), (safetensors::metadata_map{{"format", "st"}, {"license", "mit"}}));
}

TEST(CliExtract, ExactRenameAndAlignment) {
  fixture fx;
  auto r = st_test::run_cli(
      {"extract", fx.in.string(), fx.out.string(), "--rename", "model.norm=norm", "--align", "64", "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto f = safetensors::file::open(fx.out.string());
  ASSERT_OK(f);
  EXPECT_EQ(f->header().data_start() % 64, 0U);
  EXPECT_EQ(names_of(*f),
            (std::vector<std::string>{"model.layers.0.b", "model.layers.0.w", "model.layers.1.w", "norm"}));
  EXPECT_EQ(values_of(*f, "norm"), (std::vector<float>{6, 7, 8}));
}

TEST(CliExtract, InPlaceRewriteWorks) {
  fixture fx;
  auto r = st_test::run_cli({"extract", fx.in.string(), fx.in.string(), "--only", "model.norm"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto f = safetensors::file::open(fx.in.string());
  ASSERT_OK(f);
  EXPECT_EQ(names_of(*f), (std::vector<std::string>{"model.norm"}));
  EXPECT_EQ(values_of(*f, "model.norm"), (std::vector<float>{6, 7, 8}));
}

TEST(CliExtract, ErrorsExit2AndLeaveNoFile) {
  fixture fx;
  const std::string in = fx.in.string();
  const std::string out = fx.out.string();
  struct error_case {
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<error_case> cases{
      {{"--only", "nothing.*"}, in + ": no tensor matches 'nothing.*'"},
      {{"--rename", "model.norm"}, "--rename 'model.norm': expected FROM=TO"},
      {{"--rename", "a.*=b"}, "--rename 'a.*=b': a prefix rename needs '*' at the end of both sides"},
      {{"--rename", "absent=x"}, in + ": rename: no selected tensor matches 'absent'"},
      {{"--set-meta", "novalue"}, "--set-meta 'novalue': expected KEY=VALUE"},
      {{"--del-meta", "absent"}, in + ": metadata key 'absent' not found (nothing to remove)"},
      {{"--rename", "model.norm=model.layers.0.b"}, ""},  // name clash from the writer
      {{"--align", "12"}, ""},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"extract", in, out};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    auto r = st_test::run_cli(args);
    EXPECT_EQ(r.status, 2) << c.extra[0] << " " << c.extra[1];
    if (!c.message.empty()) {
      EXPECT_EQ(r.err, "safetensors: error: " + c.message + "\n");
    }
    EXPECT_EQ(r.err.rfind("safetensors: error: ", 0), 0U) << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.extra[0];
    EXPECT_EQ(files_in(fx.dir), 1U) << "no temporary file may be left behind";
  }
}

}  // namespace
