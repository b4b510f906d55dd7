// SPDX-License-Identifier: Apache-2.0
// `safetensors convert` between GGUF and SafeTensors, and `inspect` of GGUF files, on the
// fixtures of scripts/fixtures/make_gguf_fixtures.py.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/convert.h"
#include "safetensors/file.h"
#include "safetensors/formats/gguf.h"
#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/gguf_fixtures.h"
#include "support/paths.h"
#include "support/status_matchers.h"
#include "support/tensor_values.h"

namespace {

namespace fs = std::filesystem;
namespace gguf = safetensors::gguf;
using st_test::floats_of;
using st_test::gguf_fixture;
using st_test::run_cli;

safetensors::file open_st(const fs::path& p) {
  auto f = safetensors::file::open(p.string());
  EXPECT_OK(f) << (f.ok() ? "" : f.err().to_string());
  return std::move(f).value();
}

std::vector<std::byte> gguf_tensor_bytes(const gguf::reader& r, const std::string& name) {
  const gguf::tensor_info* t = r.header().find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  std::vector<std::byte> out(t->byte_size);
  EXPECT_OK(r.read(*t, 0, out));
  return out;
}

TEST(CliConvertGguf, KeepsNamesTypesShapesAndMetadataAsText) {
  const auto out = st_test::scratch_dir() / "plain.safetensors";
  const auto r = run_cli({"convert", gguf_fixture("plain.gguf"), out.string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto f = open_st(out);
  ASSERT_EQ(f.tensors().size(), 8U);
  const auto* t = f.find("blk.0.f32");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, safetensors::dtype::F32);
  EXPECT_EQ(std::vector<std::uint64_t>(t->shape.begin(), t->shape.end()), (std::vector<std::uint64_t>{2, 3, 4}));
  EXPECT_EQ(f.find("blk.0.bf16")->type, safetensors::dtype::BF16);
  EXPECT_EQ(f.find("i64")->type, safetensors::dtype::I64);
  EXPECT_EQ(floats_of(f, "blk.0.f16"), (std::vector<float>{1, -2, 0.5, 65504}));
  const auto& meta = *f.header().metadata();
  EXPECT_EQ(meta.at("general.name"), "plain \"fixture\" \xC3\xA9");
  EXPECT_EQ(meta.at("test.u64"), "18446744073709551615");
  EXPECT_EQ(meta.at("test.i8"), "-100");
  EXPECT_EQ(meta.at("test.f32"), "0.1");
  EXPECT_EQ(meta.at("test.bool"), "true");
  EXPECT_EQ(meta.at("test.array.str"), R"(["a","b,\"c\"","ü"])");
  EXPECT_EQ(meta.at("test.array.f32"), R"([0.5,"inf",-1.25])");
  EXPECT_NE(meta.at("__gguf_types__").find(R"(["test.u16","UINT16"])"), std::string::npos);
}

TEST(CliConvertGguf, RoundTripRestoresTensorBytesAndTypedMetadata) {
  const auto dir = st_test::scratch_dir();
  ASSERT_EQ(run_cli({"convert", gguf_fixture("plain.gguf"), (dir / "a.safetensors").string(), "-q"}).status, 0);
  const auto back = run_cli({"convert", (dir / "a.safetensors").string(), (dir / "b.gguf").string(), "-q"});
  ASSERT_EQ(back.status, 0) << back.err;
  auto original = gguf::reader::open(gguf_fixture("plain.gguf"));
  auto round = gguf::reader::open((dir / "b.gguf").string());
  ASSERT_OK(original);
  ASSERT_OK(round);
  EXPECT_EQ(round->header().alignment, 32U);
  ASSERT_EQ(round->header().tensors.size(), original->header().tensors.size());
  for (const auto& t : original->header().tensors) {
    const gguf::tensor_info* r = round->header().find_tensor(t.name);
    ASSERT_NE(r, nullptr) << t.name;
    EXPECT_EQ(r->type, t.type) << t.name;
    EXPECT_EQ(r->shape, t.shape) << t.name;
    EXPECT_EQ(gguf_tensor_bytes(*round, t.name), gguf_tensor_bytes(*original, t.name)) << t.name;
  }
  // Every key comes back with its type and value, in the original order, then general.alignment.
  const auto& before = original->header().metadata;
  const auto& after = round->header().metadata;
  ASSERT_EQ(after.size(), before.size() + 1);
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].key, before[i].key);
    EXPECT_EQ(after[i].val.index(), before[i].val.index()) << before[i].key;
    EXPECT_TRUE(after[i].val == before[i].val) << before[i].key;
  }
  EXPECT_EQ(after.back().key, "general.alignment");
}

TEST(CliConvertGguf, DequantizesBlocksToF32ByDefault) {
  const auto out = st_test::scratch_dir() / "q.safetensors";
  const auto r = run_cli({"convert", gguf_fixture("quantized.gguf"), out.string(), "-q"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto f = open_st(out);
  EXPECT_EQ(f.find("q8")->type, safetensors::dtype::F32);
  const auto q8 = floats_of(f, "q8");
  ASSERT_EQ(q8.size(), 64U);
  EXPECT_EQ(q8[0], -8.0F);   // block 1: d 0.5, code -16
  EXPECT_EQ(q8[31], 7.5F);   // code 15
  EXPECT_EQ(q8[32], 0.0F);   // block 2: d 2, code 0
  EXPECT_EQ(q8[63], 62.0F);  // code 31
  const auto q4 = floats_of(f, "q4");
  EXPECT_EQ(q4[0], -2.0F);   // (0 - 8) * 0.25
  EXPECT_EQ(q4[16], 1.75F);  // high nibble 15: (15 - 8) * 0.25
  const auto q6 = floats_of(f, "q6");
  EXPECT_EQ(q6, std::vector<float>(256, 2.0F));  // d 1 * scale 2 * (33 - 32)
}

TEST(CliConvertGguf, DtypeOptionConvertsFloatsButKeepsIntegers) {
  const auto dir = st_test::scratch_dir();
  ASSERT_EQ(run_cli({"convert", gguf_fixture("plain.gguf"), (dir / "b.safetensors").string(), "--dtype", "BF16", "-q"})
                .status,
            0);
  const auto f = open_st(dir / "b.safetensors");
  EXPECT_EQ(f.find("blk.0.f32")->type, safetensors::dtype::BF16);
  EXPECT_EQ(f.find("f64")->type, safetensors::dtype::BF16);
  EXPECT_EQ(f.find("i32")->type, safetensors::dtype::I32);
  EXPECT_EQ(floats_of(f, "blk.0.f32")[0], -5.5F);
  ASSERT_EQ(
      run_cli({"convert", gguf_fixture("quantized.gguf"), (dir / "h.safetensors").string(), "--dtype", "F16", "-q"})
          .status,
      0);
  const auto h = open_st(dir / "h.safetensors");
  EXPECT_EQ(h.find("q8")->type, safetensors::dtype::F16);
  EXPECT_EQ(floats_of(h, "q8")[63], 62.0F);
}

TEST(CliConvertGguf, UnsupportedQuantTypeIsNamedAndNothingIsWritten) {
  const auto out = st_test::scratch_dir() / "iq.safetensors";
  const auto r = run_cli({"convert", gguf_fixture("iq2.gguf"), out.string(), "-q"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("IQ2_XXS"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'iq'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(CliConvertGguf, MalformedInputReportsTheByteOffset) {
  const auto dir = st_test::scratch_dir();
  auto bytes = st_test::read_bytes(gguf_fixture("plain.gguf"));
  bytes.resize(100);
  st_test::write_bytes(dir / "cut.gguf", bytes);
  const auto r = run_cli({"convert", (dir / "cut.gguf").string(), (dir / "x.safetensors").string(), "-q"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cut.gguf"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at byte"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.safetensors"));
}

TEST(CliConvertGguf, LongNamesAreAnErrorUnlessHashed) {
  const auto dir = st_test::scratch_dir();
  const std::string long_name = "model.layers.0.self_attention.query_key_value_projection.weight.extra";  // 69 bytes
  st_test::make_f32_file(dir / "long.safetensors", {{long_name, {2}, {1, 2}}, {"short", {1}, {3}}});
  const auto refused = run_cli({"convert", (dir / "long.safetensors").string(), (dir / "a.gguf").string(), "-q"});
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.err.find(long_name), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--rename-long hash"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(dir / "a.gguf"));
  const auto hashed = run_cli(
      {"convert", (dir / "long.safetensors").string(), (dir / "b.gguf").string(), "--rename-long", "hash", "-q"});
  ASSERT_EQ(hashed.status, 0) << hashed.err;
  auto g = gguf::reader::open((dir / "b.gguf").string());
  ASSERT_OK(g);
  const auto& from = std::get<gguf::array_value>(*g->header().find("safetensors.renamed.from"));
  const auto& to = std::get<gguf::array_value>(*g->header().find("safetensors.renamed.to"));
  ASSERT_EQ(from.strings, std::vector<std::string>{long_name});
  ASSERT_EQ(to.strings.size(), 1U);
  EXPECT_EQ(to.strings[0].size(), 63U);
  EXPECT_EQ(to.strings[0].substr(0, 54), long_name.substr(0, 54));
  EXPECT_NE(g->header().find_tensor(to.strings[0]), nullptr);
  EXPECT_NE(g->header().find_tensor("short"), nullptr);
}

TEST(CliConvertGguf, DtypesWithoutAGgufTypeAreRefused) {
  const auto dir = st_test::scratch_dir();
  const std::vector<std::byte> data(3);
  const safetensors::tensor_data t{"mask", safetensors::dtype::U8, {3}, data};
  ASSERT_OK(safetensors::write_file((dir / "u8.safetensors").string(), std::span(&t, 1)));
  const auto r = run_cli({"convert", (dir / "u8.safetensors").string(), (dir / "u8.gguf").string(), "-q"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("GGUF takes F32, F16, BF16, F64, I8, I16, I32, I64"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("U8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'mask'"), std::string::npos) << r.err;
}

TEST(CliInspectGguf, PrintsMetadataAndTensorTable) {
  const auto r = run_cli({"inspect", gguf_fixture("plain.gguf")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("GGUF v3, alignment 32, data starts at byte 1408"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test.u32 (UINT32): 4000000000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokenizer.ggml.scores (ARRAY[FLOAT32]): [0,0.25,0.5,0.75,1,1.25,1.5,1.75, ... (92 more)]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("blk.0.f32   F32          [2, 3, 4]                         96  1,408"), std::string::npos)
      << r.out;
}

TEST(CliInspectGguf, JsonListsTypedMetadataAndTensors) {
  const auto r = run_cli({"inspect", "--json", gguf_fixture("plain.gguf")});
  ASSERT_EQ(r.status, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(doc["version"].get_uint64().value(), 3U);
  EXPECT_EQ(doc["metadata"]["test.i64"]["value"].get_int64().value(), INT64_MIN);
  EXPECT_EQ(doc["metadata"]["tokenizer.ggml.scores"]["count"].get_uint64().value(), 100U);
  EXPECT_EQ(doc["metadata"]["tokenizer.ggml.scores"]["value"].get_array().size(), 8U);
  EXPECT_EQ(doc["tensors"].get_array().size(), 8U);
  EXPECT_EQ(std::string_view(doc["tensors"].at(0)["type"].get_string().value()), "F32");
  EXPECT_EQ(doc["tensors"].at(0)["shape"].get_array().size(), 3U);
}

}  // namespace
