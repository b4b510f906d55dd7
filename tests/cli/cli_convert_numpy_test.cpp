// SPDX-License-Identifier: Apache-2.0
// `safetensors convert` between SafeTensors and NumPy, and `inspect` of NumPy files.
#include <gtest/gtest.h>

#include "safetensors/file.h"
#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/numpy_fixtures.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
using safetensors::dtype;

std::string tensor_hex(const safetensors::file& f, std::string_view name) {
  auto bytes = f.load(name);
  EXPECT_OK(bytes) << name;
  return bytes ? st_test::hex(*bytes) : std::string();
}

TEST(CliConvertNumpy, NumpyFilesBecomeTheSameTensors) {
  const auto dir = st_test::scratch_dir();
  std::map<std::string, std::vector<st_test::numpy_expectation>> by_file;
  for (const auto& e : st_test::numpy_expectations()) {
    by_file[e.file].push_back(e);
  }
  for (const auto& [file, arrays] : by_file) {
    SCOPED_TRACE(file);
    const auto out = dir / (file + ".safetensors");
    auto r = st_test::run_cli({"convert", st_test::numpy_fixture(file).string(), out.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.rfind("converted ", 0), 0U) << "only the summary line: " << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
    auto f = safetensors::file::open(out.string());
    ASSERT_OK(f);
    ASSERT_EQ(f->tensors().size(), arrays.size());
    for (const auto& e : arrays) {
      const std::string name = e.member == "-" ? fs::path(file).stem().string() : e.member;
      const auto* t = f->find(name);
      ASSERT_NE(t, nullptr) << name;
      EXPECT_EQ(safetensors::dtype_name(t->type), e.dtype);
      EXPECT_EQ(std::vector<std::uint64_t>(t->shape.begin(), t->shape.end()), e.shape);
      EXPECT_EQ(tensor_hex(*f, name), e.hex) << name;
    }
  }
}

void write_every_dtype(const fs::path& path) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<safetensors::tensor_data> tensors;
  std::uint8_t next = 3;
  for (const dtype t : safetensors::all_dtypes()) {
    if (safetensors::dtype_bits(t) < 8 || (t >= dtype::F8_E5M2 && t <= dtype::F8_E5M2FNUZ)) continue;
    std::vector<std::uint64_t> shape{2, 3};
    storage.emplace_back(safetensors::byte_size(t, shape).bytes);
    for (auto& b : storage.back()) b = std::byte{t == dtype::BOOL ? static_cast<std::uint8_t>(next++ & 1) : next++};
    tensors.push_back({std::string("w.") + std::string(safetensors::dtype_name(t)), t, shape, storage.back()});
  }
  tensors.push_back({"arr_0", dtype::F32, {}, std::as_bytes(std::span("abcd", 4))});
  auto s = safetensors::write_file(path.string(), tensors, {.metadata = safetensors::metadata_map{{"format", "pt"}}});
  ASSERT_OK(s);
}

TEST(CliConvertNumpy, RoundTripThroughNpzKeepsTensorBytes) {
  const auto dir = st_test::scratch_dir();
  const auto original = dir / "in.safetensors";
  write_every_dtype(original);
  auto in = safetensors::file::open(original.string());
  ASSERT_OK(in);
  for (const bool compress : {false, true}) {
    const auto npz = dir / (compress ? "c.npz" : "s.npz");
    const auto back = dir / (compress ? "c.safetensors" : "s.safetensors");
    std::vector<std::string> args{"convert", original.string(), npz.string()};
    if (compress) args.emplace_back("--compress");
    auto to_npz = st_test::run_cli(args);
    ASSERT_EQ(to_npz.status, 0) << to_npz.err;
    EXPECT_NE(to_npz.err.find("warning: NumPy files cannot hold __metadata__: dropped 1 entry (format)"),
              std::string::npos)
        << to_npz.err;
    EXPECT_NE(to_npz.err.find("BF16"), std::string::npos) << to_npz.err;
    auto to_st = st_test::run_cli({"convert", npz.string(), back.string()});
    ASSERT_EQ(to_st.status, 0) << to_st.err;
    auto out = safetensors::file::open(back.string());
    ASSERT_OK(out);
    ASSERT_EQ(out->tensors().size(), in->tensors().size());
    EXPECT_FALSE(out->header().metadata().has_value());
    for (const auto& t : in->tensors()) {
      const auto* u = out->find(t.name);
      ASSERT_NE(u, nullptr) << t.name;
      EXPECT_EQ(u->type, t.type) << t.name;
      EXPECT_TRUE(std::equal(u->shape.begin(), u->shape.end(), t.shape.begin(), t.shape.end())) << t.name;
      EXPECT_EQ(tensor_hex(*out, t.name), tensor_hex(*in, t.name)) << t.name;
    }
  }
}

TEST(CliConvertNumpy, NpyOutputNeedsExactlyOneTensor) {
  const auto dir = st_test::scratch_dir();
  st_test::make_f32_file(dir / "one.safetensors", {{"w", {2, 2}, {1, 2, 3, 4}}});
  st_test::make_f32_file(dir / "two.safetensors", {{"a", {1}, {1}}, {"b", {1}, {2}}});
  auto one = st_test::run_cli({"convert", (dir / "one.safetensors").string(), (dir / "w.npy").string()});
  ASSERT_EQ(one.status, 0) << one.err;
  auto back = st_test::run_cli({"convert", (dir / "w.npy").string(), (dir / "w.safetensors").string()});
  ASSERT_EQ(back.status, 0) << back.err;
  auto f = safetensors::file::open((dir / "w.safetensors").string());
  ASSERT_OK(f);
  EXPECT_EQ(tensor_hex(*f, "w"), "0000803f000000400000404000008040");

  auto two = st_test::run_cli({"convert", (dir / "two.safetensors").string(), (dir / "x.npy").string()});
  EXPECT_EQ(two.status, 2);
  EXPECT_NE(two.err.find("exactly one array and the input has 2 tensors: write an .npz instead"), std::string::npos)
      << two.err;
  EXPECT_FALSE(fs::exists(dir / "x.npy"));
}

TEST(CliConvertNumpy, DtypesNumpyLacksAreRefusedBeforeWriting) {
  const auto dir = st_test::scratch_dir();
  const std::vector<std::byte> one(1);
  const std::vector<safetensors::tensor_data> tensors{{"fp8", dtype::F8_E4M3, {1}, one}};
  ASSERT_OK(safetensors::write_file((dir / "f8.safetensors").string(), tensors));
  auto r = st_test::run_cli({"convert", (dir / "f8.safetensors").string(), (dir / "f8.npz").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("F8_E4M3 has no NumPy dtype (NumPy files take BOOL"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tensor 'fp8'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "f8.npz"));
}

TEST(CliConvertNumpy, HostileInputsFailCleanly) {
  const auto dir = st_test::scratch_dir();
  for (const char* name : {"bad_bomb.npz", "bad_dotdot.npz", "bad_terabyte_shape.npy", "bad_eval.npy",
                           "bad_truncated_data.npy", "bad_overflow_shape.npy"}) {
    auto r = st_test::run_cli({"convert", st_test::numpy_fixture(name).string(), (dir / "out.safetensors").string()});
    EXPECT_EQ(r.status, 1) << name << ": " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out.safetensors")) << name;
  }
  auto tb = st_test::run_cli(
      {"convert", st_test::numpy_fixture("bad_terabyte_shape.npy").string(), (dir / "out.safetensors").string()});
  EXPECT_NE(tb.err.find("needs 4398046511104 data bytes, the file holds 64"), std::string::npos) << tb.err;
  EXPECT_LT(tb.max_rss_kib, 200 * 1024);
}

TEST(CliConvertNumpy, InspectListsArrays) {
  auto text = st_test::run_cli({"inspect", st_test::numpy_fixture("stored.npz").string()});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("format:      NumPy .npz\ntensors:     5 ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("layers.0.weight  F32          [2, 3]                            24  <f4"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("ids"), std::string::npos);
  EXPECT_NE(text.out.find("[3, 2]                            48  >i8 (fortran order)"), std::string::npos) << text.out;

  auto json = st_test::run_cli({"inspect", "--json", st_test::numpy_fixture("mlx_bf16.npy").string()});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.out,
            "{\"format\":\"npy\",\"arrays\":[{\"name\":\"mlx_bf16\",\"dtype\":\"BF16\",\"descr\":\"<V2\","
            "\"shape\":[3],\"bytes\":6,\"fortran_order\":true,\"version\":\"1.0\"}],\"total_bytes\":6}\n");
}

}  // namespace
