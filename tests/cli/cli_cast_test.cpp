// SPDX-License-Identifier: Apache-2.0
// `safetensors cast`: float tensors converted exactly as the library's encoder does,
// others copied; selection; errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "safetensors/convert.h"
#include "safetensors/file.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;

const std::vector<float> values{1.0F, -2.25F, 3.0e38F, 1e-8F, 0.1F, -0.0F, 65504.0F, 7.5F};

struct cast_fixture {
  fs::path dir = st_test::scratch_dir();
  fs::path in = dir / "in.safetensors";
  fs::path out = dir / "out.safetensors";
  std::vector<std::int32_t> ints{1, -2, 3};
  cast_fixture() {
    std::vector<safetensors::tensor_data> data{
        {"w", safetensors::dtype::F32, {2, 4}, std::as_bytes(std::span<const float>(values))},
        {"v", safetensors::dtype::F32, {8}, std::as_bytes(std::span<const float>(values))},
        {"n", safetensors::dtype::I32, {3}, std::as_bytes(std::span<const std::int32_t>(ints))}};
    safetensors::write_options o;
    o.metadata = safetensors::metadata_map{{"format", "pt"}};
    auto s = safetensors::write_file(in.string(), data, o);
    EXPECT_OK(s);
  }
};

std::vector<std::byte> expected_encoding(safetensors::dtype to) {
  std::vector<std::byte> out(values.size() * safetensors::dtype_bits(to) / 8);
  if (to == safetensors::dtype::F64) {
    std::vector<double> d(values.begin(), values.end());
    std::memcpy(out.data(), d.data(), out.size());
  } else {
    EXPECT_OK(safetensors::encode_from_f32(to, values, out));
  }
  return out;
}

std::vector<std::byte> bytes_of(const safetensors::file& f, std::string_view name) {
  auto b = f.load(name);
  EXPECT_OK(b) << name;
  return b ? *b : std::vector<std::byte>{};
}

TEST(CliCast, CommonTargetsMatchTheEncoder) {
  for (auto to : {safetensors::dtype::BF16, safetensors::dtype::F16, safetensors::dtype::F64}) {
    cast_fixture fx;
    const std::string name(safetensors::dtype_name(to));
    auto r = st_test::run_cli({"cast", fx.in.string(), fx.out.string(), "--dtype", name});
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, "");
    auto f = safetensors::file::open(fx.out.string());
    ASSERT_OK(f);
    EXPECT_EQ(f->find("w")->type, to);
    EXPECT_EQ(bytes_of(*f, "w"), expected_encoding(to)) << name;
    EXPECT_EQ(bytes_of(*f, "v"), expected_encoding(to)) << name;
    EXPECT_EQ(f->find("n")->type, safetensors::dtype::I32) << "integers are copied";
    EXPECT_EQ(bytes_of(*f, "n"), std::vector<std::byte>(std::as_bytes(std::span(fx.ints)).begin(),
                                                        std::as_bytes(std::span(fx.ints)).end()));
    EXPECT_EQ(f->header().metadata()->at("format"), "pt");
  }
}

TEST(CliCast, EveryFloatTargetMatchesTheEncoder) {
  for (auto to : safetensors::all_dtypes()) {
    if (!safetensors::dtype_is_float(to) || to == safetensors::dtype::C64) continue;
    cast_fixture fx;
    const std::string name(safetensors::dtype_name(to));
    auto r = st_test::run_cli({"cast", fx.in.string(), fx.out.string(), "--dtype", name, "--only", "w"});
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    auto f = safetensors::file::open(fx.out.string());
    ASSERT_OK(f);
    EXPECT_EQ(bytes_of(*f, "w"), expected_encoding(to)) << name;
    EXPECT_EQ(f->find("v")->type, safetensors::dtype::F32) << "--only leaves the rest alone";
  }
}

TEST(CliCast, SaturateClampsF8Overflow) {
  cast_fixture fx;
  const fs::path sat = fx.dir / "sat.safetensors";
  ASSERT_EQ(st_test::run_cli({"cast", fx.in.string(), fx.out.string(), "--dtype", "F8_E4M3", "--only", "w"}).status, 0);
  ASSERT_EQ(st_test::run_cli({"cast", fx.in.string(), sat.string(), "--dtype", "F8_E4M3", "--only", "w", "--saturate"})
                .status,
            0);
  auto plain = safetensors::file::open(fx.out.string());
  auto clamped = safetensors::file::open(sat.string());
  ASSERT_OK(plain);
  ASSERT_OK(clamped);
  std::vector<std::byte> expected(values.size());
  safetensors::encode_options o;
  o.saturate = true;
  ASSERT_OK(safetensors::encode_from_f32(safetensors::dtype::F8_E4M3, values, expected, o));
  EXPECT_EQ(bytes_of(*clamped, "w"), expected);
  EXPECT_EQ(bytes_of(*plain, "w"), expected_encoding(safetensors::dtype::F8_E4M3));
  // 3e38 (element 2) is NaN without --saturate and 448 (0x7E) with it.
  EXPECT_EQ(bytes_of(*plain, "w")[2], std::byte{0x7F});
  EXPECT_EQ(bytes_of(*clamped, "w")[2], std::byte{0x7E});
}

TEST(CliCast, RoundTripThroughF64IsExact) {
  cast_fixture fx;
  const fs::path back = fx.dir / "back.safetensors";
  ASSERT_EQ(st_test::run_cli({"cast", fx.in.string(), fx.out.string(), "--dtype", "F64"}).status, 0);
  ASSERT_EQ(st_test::run_cli({"cast", fx.out.string(), back.string(), "--dtype", "F32"}).status, 0);
  auto r = st_test::run_cli({"diff", fx.in.string(), back.string()});
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(CliCast, ErrorsExit2) {
  cast_fixture fx;
  auto bad = st_test::run_cli({"cast", fx.in.string(), fx.out.string(), "--dtype", "I32"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err.rfind("safetensors: error: --dtype 'I32': expected a floating-point dtype", 0), 0U) << bad.err;
  EXPECT_EQ(st_test::run_cli({"cast", fx.in.string(), fx.out.string(), "--dtype", "bf16"}).status, 2);
  EXPECT_EQ(st_test::run_cli({"cast", fx.in.string(), fx.out.string()}).status, 2);
  auto none = st_test::run_cli({"cast", fx.in.string(), fx.out.string(), "--dtype", "F16", "--only", "q*"});
  EXPECT_EQ(none.status, 2);
  // F4 needs an even element count: "n" is not float, but a 3-element float is refused.
  const fs::path odd = fx.dir / "odd.safetensors";
  st_test::make_f32_file(odd, {{"x", {3}, {1, 2, 3}}});
  auto f4 = st_test::run_cli({"cast", odd.string(), fx.out.string(), "--dtype", "F4"});
  EXPECT_EQ(f4.status, 2) << f4.err;
  EXPECT_EQ(f4.err.rfind("safetensors: error: ", 0), 0U);
  EXPECT_FALSE(fs::exists(fx.out));
}

}  // namespace
