// SPDX-License-Identifier: Apache-2.0
// `convert` options: --dtype applies to every conversion, options that do not apply are
// refused (exit 2, naming them); one summary line on stderr for every conversion; the
// GGUF file type follows the tensors written; `inspect` gives every format the same
// table and tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/convert.h"
#include "safetensors/file.h"
#include "safetensors/formats/gguf.h"
#include "safetensors/formats/gguf_writer.h"
#include "safetensors/sniff.h"
#include "support/cli_run.h"
#include "support/gguf_fixtures.h"
#include "support/numpy_fixtures.h"
#include "support/paths.h"
#include "support/pytorch_fixtures.h"
#include "support/status_matchers.h"
#include "support/tensor_values.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
namespace gguf = safetensors::gguf;
using st::dtype;
using st_test::floats_of;
using st_test::gguf_fixture;

std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::size_t n = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    if (text.compare(at, prefix.size(), prefix) == 0) ++n;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return n;
}

TEST(CliConvertOptions, DtypeCastsFloatingTensorsOfEveryConversion) {
  const auto dir = st_test::scratch_dir();
  const auto reference = dir / "ref.safetensors";
  ASSERT_EQ(
      st_test::run_cli({"convert", st_test::pytorch_fixture("basic.pt").string(), reference.string(), "-q"}).status, 0);
  auto ref = st::file::open(reference.string());
  ASSERT_OK(ref);
  // PyTorch to SafeTensors and to .npz; NumPy, GGUF and SafeTensors inputs too.
  for (const std::string ext : {"safetensors", "npz"}) {
    SCOPED_TRACE(ext);
    const auto out = dir / ("f16." + ext);
    auto r = st_test::run_cli(
        {"convert", st_test::pytorch_fixture("basic.pt").string(), out.string(), "--dtype", "F16", "-q"});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto back = dir / ("f16." + ext + ".safetensors");
    ASSERT_EQ(st_test::run_cli({"convert", out.string(), back.string(), "-q"}).status, 0);
    auto f = st::file::open(back.string());
    ASSERT_OK(f);
    for (const auto& t : ref->tensors()) {
      const auto* got = f->find(t.name);
      ASSERT_NE(got, nullptr) << t.name;
      if (!st::dtype_is_float(t.type)) {
        EXPECT_EQ(got->type, t.type) << t.name << ": integers keep their type";
        continue;
      }
      EXPECT_EQ(got->type, dtype::F16) << t.name;
      const auto want = floats_of(*ref, t.name);
      const auto have = floats_of(*f, t.name);
      ASSERT_EQ(want.size(), have.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(st::f32_to_f16(have[i]), st::f32_to_f16(want[i])) << t.name << "[" << i << "]";
      }
    }
  }
  for (const auto& [in, type] :
       std::vector<std::pair<std::string, std::string>>{{st_test::numpy_fixture("dtype_f4.npy").string(), "BF16"},
                                                        {gguf_fixture("quantized.gguf"), "F16"},
                                                        {reference.string(), "BF16"}}) {
    SCOPED_TRACE(in);
    const auto out = dir / "cast.safetensors";
    auto r = st_test::run_cli({"convert", in, out.string(), "--dtype", type});
    ASSERT_EQ(r.status, 0) << r.err;
    auto f = st::file::open(out.string());
    ASSERT_OK(f);
    for (const auto& t : f->tensors()) {
      if (st::dtype_is_float(t.type)) {
        EXPECT_EQ(st::dtype_name(t.type), type) << t.name;
      }
    }
    EXPECT_NE(r.err.find("to " + type), std::string::npos) << r.err;
  }
}

TEST(CliConvertOptions, OptionsThatDoNotApplyAreRefusedNamingThem) {
  const auto dir = st_test::scratch_dir();
  const auto st_in = dir / "in.safetensors";
  st_test::make_f32_file(st_in, {{"w", {2}, {1.0F, 2.0F}}});
  const std::string npz = st_test::numpy_fixture("stored.npz").string();
  const std::string pt = st_test::pytorch_fixture("nested.pt").string();
  const std::string gg = gguf_fixture("plain.gguf");
  struct refusal {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<refusal> cases{
      {{npz, "o.safetensors", "--key", "state_dict"}, "--key applies to PyTorch input only (the input is NumPy .npz)"},
      {{gg, "o.safetensors", "--key", "x"}, "--key applies to PyTorch input only (the input is GGUF)"},
      {{st_in.string(), "o.npz", "--shared", "dedup"}, "--shared applies to PyTorch input only"},
      {{pt, "o.safetensors", "--compress"}, "--compress applies to .npz output only (the output is SafeTensors)"},
      {{st_in.string(), "o.npy", "--compress"}, "--compress applies to .npz output only (the output is NumPy .npy)"},
      {{pt, "o.npz", "--rename-long", "hash"}, "--rename-long applies to GGUF output only (the output is NumPy .npz)"},
      {{gg, "o.safetensors", "--rename-long", "hash"}, "--rename-long applies to GGUF output only"},
      {{npz, "o.safetensors", "--strict"}, "--strict applies to PyTorch input only (the input is NumPy .npz)"},
      {{st_in.string(), "o.npz", "--strict"}, "--strict applies to PyTorch input only (the input is SafeTensors)"},
      {{pt, "o.safetensors", "--max-ratio", "10"}, "--max-ratio applies to .npz input only (the input is PyTorch"},
      {{st_in.string(), "o.npz", "--max-expanded-size", "1GiB"},
       "--max-expanded-size applies to .npz input only (the input is SafeTensors)"},
      {{gg, "o.safetensors", "--max-expanded-size", "1GiB"}, "--max-expanded-size applies to .npz input only"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"convert", c.args[0], (dir / c.args[1]).string()};
    args.insert(args.end(), c.args.begin() + 2, c.args.end());
    auto r = st_test::run_cli(args);
    EXPECT_EQ(r.status, 2) << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / c.args[1])) << c.message;
  }
  // The options where they apply are accepted.
  EXPECT_EQ(
      st_test::run_cli({"convert", pt, (dir / "k.npz").string(), "--key", "state_dict", "--compress", "-q"}).status, 0);
  EXPECT_EQ(st_test::run_cli({"convert", pt, (dir / "k.gguf").string(), "--rename-long", "hash", "-q"}).status, 0);
  EXPECT_EQ(st_test::run_cli({"convert", pt, (dir / "s.safetensors").string(), "--strict", "-q"}).status, 0);
  EXPECT_EQ(st_test::run_cli({"convert", npz, (dir / "n.safetensors").string(), "--max-ratio", "10",
                              "--max-expanded-size", "1GiB", "-q"})
                .status,
            0);
  auto r = st_test::run_cli({"inspect", st_in.string(), "--depth", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--depth applies to --tree only"), std::string::npos) << r.err;
  EXPECT_EQ(st_test::run_cli({"inspect", st_in.string(), "--tree", "--depth", "1"}).status, 0);
}

// The library checks the flags (set through set_option, as Python's keywords and the C API's
// keys are) and names them as typed: a flag given at its default value is still a choice, a
// bad value names its flag, and every command's output check is the library's.
TEST(CliConvertOptions, TheLibraryChecksEveryFlagAndNamesItAsTyped) {
  const auto dir = st_test::scratch_dir();
  const auto st_in = dir / "in.safetensors";
  st_test::make_f32_file(st_in, {{"w", {2}, {1.0F, 2.0F}}});
  const std::string in = st_in.string();
  const std::string out = (dir / "o.safetensors").string();
  struct misuse {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<misuse> cases{
      {{"convert", in, out, "--shared", "keep"}, "--shared applies to PyTorch input only (the input is SafeTensors)"},
      {{"convert", in, out, "--max-ratio", "200"}, "--max-ratio applies to .npz input only (the input is SafeTensors)"},
      {{"convert", in, out, "--max-output-size", "0"},
       "--max-output-size: invalid size '0': must be at least one byte"},
      {{"convert", in, out, "--max-expanded-size", "lots"}, "--max-expanded-size: "},
      {{"extract", in, out, "--set-meta", "k"}, "--set-meta 'k': expected KEY=VALUE"},
      {{"cast", in, out, "--dtype", "F17"}, "--dtype: unknown dtype 'F17': expected a floating-point dtype (F64, "},
      {{"shard", in, (dir / "shards").string(), "--max-shard-size", "5XB"}, "--max-shard-size: "},
      {{"merge", in, dir.string()}, "cannot write the output: Is a directory"},
  };
  for (const auto& c : cases) {
    auto r = st_test::run_cli(c.args);
    EXPECT_EQ(r.status, 2) << c.message << ": " << r.err;
    EXPECT_EQ(r.err.rfind("safetensors: error: ", 0), 0U) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.message;
    EXPECT_FALSE(fs::exists(dir / "shards")) << c.message;
  }
  auto r = st_test::run_cli({"convert", in, out, "--max-output-size", "4"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("(as --max-output-size sets it)"), std::string::npos) << r.err;
}

TEST(CliConvertOptions, EveryConversionPrintsOneSummaryLineOnStderrAndQuietSilencesIt) {
  const auto dir = st_test::scratch_dir();
  const auto st_in = dir / "in.safetensors";
  st_test::make_f32_file(st_in, {{"a", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"b", {2}, {7, 8}}});
  struct conversion {
    std::string in;
    std::string out;
    std::string line;
  };
  const std::vector<conversion> cases{
      {st_test::pytorch_fixture("nested.pt").string(), "p.safetensors",
       "converted 3 tensors (10 params, 40 B) from PyTorch to SafeTensors: "},
      {st_test::numpy_fixture("dtype_f4.npy").string(), "n.gguf",
       "converted 1 tensor (6 params, 24 B) from NumPy .npy to GGUF: "},
      {gguf_fixture("quantized.gguf"), "g.npz", "converted 3 tensors (352 params, 1.4 KiB) from GGUF to NumPy .npz: "},
      {st_in.string(), "s.npz", "converted 2 tensors (8 params, 32 B) from SafeTensors to NumPy .npz: "},
  };
  for (const auto& c : cases) {
    const auto out = dir / c.out;
    auto r = st_test::run_cli({"convert", c.in, out.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "") << "conversions print nothing on stdout";
    EXPECT_EQ(count_lines_starting(r.err, "converted "), 1U) << r.err;
    EXPECT_NE(r.err.find(c.line + out.string() + "\n"), std::string::npos) << r.err;
    r = st_test::run_cli({"convert", c.in, out.string(), "-q"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    // -q silences the summary and its notes; warnings about lossy output stay.
    EXPECT_EQ(r.err.find("converted "), std::string::npos) << r.err;
    EXPECT_EQ(count_lines_starting(r.err, "safetensors: warning: "), count_lines_starting(r.err, "")) << r.err;
  }
}

TEST(CliConvertOptions, PickleErrorsGiveTheirPositionOnce) {
  const auto out = st_test::scratch_dir() / "o.safetensors";
  auto r = st_test::run_cli({"convert", st_test::pytorch_fixture("evil_persid.pt").string(), out.string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("at pickle byte"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(at byte"), std::string::npos) << r.err;
  // A code-execution refusal says "at byte N of <pickle>" once too.
  r = st_test::run_cli({"convert", st_test::pytorch_fixture("evil_obj.pt").string(), out.string()});
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("at byte 3 of archive/data.pkl"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(at byte"), std::string::npos) << r.err;
}

// A Q8_0 model as llama.cpp writes one: general.file_type 7 (MOSTLY_Q8_0) and a quantization version.
void write_q8_model(const fs::path& path) {
  std::vector<gguf::metadata_entry> metadata;
  metadata.push_back({"general.architecture", gguf::value(std::string("test"))});
  metadata.push_back({"general.file_type", gguf::value(std::in_place_type<std::uint32_t>, 7U)});
  metadata.push_back({"general.quantization_version", gguf::value(std::in_place_type<std::uint32_t>, 2U)});
  std::vector<gguf::tensor_spec> specs{{"blk.0.w", gguf::ggml_type::q8_0, {2, 32}},
                                       {"blk.0.norm", gguf::ggml_type::f32, {4}}};
  auto plan = gguf::write_plan::make(metadata, specs);
  ASSERT_OK(plan);
  auto out = gguf::stream_writer::create(path.string(), std::move(plan).value());
  ASSERT_OK(out);
  std::vector<std::byte> q8;
  for (int block = 0; block < 2; ++block) {
    q8.push_back(std::byte{0x00});  // scale 1.0 as F16 (0x3C00), little-endian
    q8.push_back(std::byte{0x3C});
    for (int i = 0; i < 32; ++i) q8.push_back(static_cast<std::byte>(i - 16));
  }
  ASSERT_OK(out->append(0, q8));
  std::vector<float> norm{1, 2, 3, 4};
  ASSERT_OK(out->append(1, std::as_bytes(std::span(norm))));
  ASSERT_OK(out->commit());
}

TEST(CliConvertOptions, DequantizedGgufWrittenBackHasTheFileTypeOfItsTensors) {
  const auto dir = st_test::scratch_dir();
  const auto q8 = dir / "q8.gguf";
  write_q8_model(q8);
  for (const auto& [type, file_type] :
       std::vector<std::pair<std::string, std::uint32_t>>{{"keep", 0U}, {"F16", 1U}, {"BF16", 32U}}) {
    SCOPED_TRACE(type);
    const auto mid = dir / ("mid-" + type + ".safetensors");
    auto r = st_test::run_cli({"convert", q8.string(), mid.string(), "--dtype", type, "-q"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const auto& [in, name] : std::vector<std::pair<fs::path, std::string>>{{mid, "back-" + type + ".gguf"},
                                                                                {q8, "direct-" + type + ".gguf"}}) {
      const auto back = dir / name;
      r = st_test::run_cli({"convert", in.string(), back.string(), "--dtype", type, "-q"});
      ASSERT_EQ(r.status, 0) << r.err;
      auto g = gguf::reader::open(back.string());
      ASSERT_OK(g);
      const gguf::value* ft = g->header().find("general.file_type");
      ASSERT_NE(ft, nullptr);
      ASSERT_TRUE(std::holds_alternative<std::uint32_t>(*ft));
      EXPECT_EQ(std::get<std::uint32_t>(*ft), file_type) << name;
      EXPECT_EQ(g->header().find("general.quantization_version"), nullptr) << name;
      EXPECT_NE(g->header().find("general.architecture"), nullptr) << name;
    }
  }
}

TEST(CliInspectFormats, EveryFormatGetsTheSameTableAndTree) {
  const auto dir = st_test::scratch_dir();
  const auto st_file = dir / "same.safetensors";
  ASSERT_EQ(
      st_test::run_cli({"convert", st_test::pytorch_fixture("nested.pt").string(), st_file.string(), "-q"}).status, 0);
  const std::string header = "name                  dtype        shape                          bytes";
  const std::string row = "state_dict.head       F32          [2, 2]                            16";
  auto st_tree = st_test::run_cli({"inspect", "--tree", st_file.string()});
  ASSERT_EQ(st_tree.status, 0) << st_tree.err;
  for (const std::string& path : {st_test::pytorch_fixture("nested.pt").string(), st_file.string()}) {
    auto r = st_test::run_cli({"inspect", path});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(header), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(row), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  F32               3 tensors             10 params          40 B"), std::string::npos)
        << r.out;
    auto tree = st_test::run_cli({"inspect", "--tree", path});
    ASSERT_EQ(tree.status, 0) << tree.err;
    EXPECT_EQ(tree.out, st_tree.out) << "the same tree code for every format";
  }
  for (const std::string& path : {st_test::numpy_fixture("stored.npz").string(), gguf_fixture("quantized.gguf"),
                                  st_test::pytorch_fixture("views.pt").string()}) {
    SCOPED_TRACE(path);
    auto r = st_test::run_cli({"inspect", path});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("name "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("dtype        shape                          bytes"), std::string::npos) << r.out;
    r = st_test::run_cli({"inspect", "--tree", "--depth", "1", path});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("(all)", 0), 0U) << r.out;
    r = st_test::run_cli({"inspect", "--tree", "--json", path});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind(R"({"name":"")", 0), 0U) << r.out;
  }
}

TEST(CliInspectFormats, GgufStringsWithNewlinesStayOnOneLine) {
  const auto path = st_test::scratch_dir() / "chat.gguf";
  std::vector<gguf::metadata_entry> metadata;
  std::string tmpl = "{% for m in messages %}\n<|{{ m.role }}|>\n{{ m.content }}\t{% endfor %}\n";
  for (int i = 0; i < 5; ++i) tmpl += tmpl;
  metadata.push_back({"tokenizer.chat_template", gguf::value(tmpl)});
  auto plan = gguf::write_plan::make(metadata, {{"w", gguf::ggml_type::f32, {1}}});
  ASSERT_OK(plan);
  auto out = gguf::stream_writer::create(path.string(), std::move(plan).value());
  ASSERT_OK(out);
  const float one = 1;
  ASSERT_OK(out->append(0, std::as_bytes(std::span(&one, 1))));
  ASSERT_OK(out->commit());
  auto r = st_test::run_cli({"inspect", path.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto at = r.out.find("tokenizer.chat_template (STRING): {% for m in messages %}\\n<|{{ m.role }}|>\\n");
  ASSERT_NE(at, std::string::npos) << r.out;
  const auto line_end = r.out.find('\n', at);
  const std::string line = r.out.substr(at, line_end - at);
  EXPECT_NE(line.find("... (" + std::to_string(tmpl.size()) + " bytes)"), std::string::npos) << line;
  EXPECT_NE(line.find("\\t"), std::string::npos) << line;
}

}  // namespace
