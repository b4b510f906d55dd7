// SPDX-License-Identifier: Apache-2.0
// Inputs that are not SafeTensors, are cut short, or are not files at all get the same
// clear message from every command; messages say each thing once; warnings go to stderr.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "safetensors/checkpoint.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
using st_test::run_cli;

fs::path write_raw(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

/// Every command that reads a SafeTensors input, run on `path`: stdout + stderr of each.
std::vector<std::pair<std::string, st_test::cli_result>> every_reader(const fs::path& path) {
  std::vector<std::pair<std::string, st_test::cli_result>> results;
  for (const auto& args : st_test::reading_commands(path, true)) results.emplace_back(args.front(), run_cli(args));
  return results;
}

TEST(CliInputErrors, EveryCommandNamesAForeignFormat) {
  const auto dir = st_test::scratch_dir();
  const auto gguf = write_raw(dir / "model.gguf", std::string("GGUF\x03\0\0\0\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24));
  for (const auto& [command, r] : every_reader(gguf)) {
    EXPECT_NE(r.status, 0) << command;
    const std::string said = r.out + r.err;
    EXPECT_NE(said.find(gguf.string()), std::string::npos) << command << ": " << said;
    if (command == "inspect") {
      // inspect --tree reads GGUF itself, as plain inspect does: the error is the GGUF parser's.
      EXPECT_NE(said.find("tensor count 2 cannot fit"), std::string::npos) << said;
      continue;
    }
    EXPECT_NE(said.find(": this is a GGUF file, not SafeTensors"), std::string::npos) << command << ": " << said;
    EXPECT_EQ((r.out + r.err).find("header too large"), std::string::npos) << command;
  }
  EXPECT_FALSE(fs::exists(dir / "out.safetensors"));
}

TEST(CliInputErrors, UnknownBytesAreNotSafeTensorsBesideTheLengthRead) {
  const auto dir = st_test::scratch_dir();
  const auto text = write_raw(dir / "notes.txt", "hello world, this is plain text\n");
  // "hello wo" read as a little-endian u64.
  const std::string length = "8031924123371070824";  // python: struct.unpack("<Q", b"hello wo")
  for (const auto& [command, r] : every_reader(text)) {
    EXPECT_NE(r.status, 0) << command;
    EXPECT_NE((r.out + r.err)
                  .find("not a SafeTensors file: its first 8 bytes read as a header length of " + length + " bytes"),
              std::string::npos)
        << command << ": " << r.out << r.err;
  }
}

TEST(CliInputErrors, EmptyFilesDevicesAndPipesAreNamed) {
  const auto dir = st_test::scratch_dir();
  const auto empty = write_raw(dir / "empty.safetensors", "");
  auto e = run_cli({"inspect", empty.string()});
  EXPECT_EQ(e.status, 1);
  EXPECT_EQ(e.err, "safetensors: error: " + empty.string() + ": empty file (0 bytes), not a SafeTensors file\n");
  auto null = run_cli({"ls", "/dev/null"});
  EXPECT_EQ(null.status, 1);
  EXPECT_EQ(null.err, "safetensors: error: /dev/null: not a SafeTensors file: this is a character device\n");
  const std::string model = (st_test::conformance_dir() / "format" / "001-minimal-bf16.safetensors").string();
  auto piped = st_test::run_command("cat " + st_test::shell_quote(model) + " | " + st_test::cli_shell() +
                                    " inspect /dev/stdin 2>&1");
  EXPECT_EQ(piped.status, 2);
  EXPECT_NE(piped.out.find("a pipe cannot be read as SafeTensors"), std::string::npos) << piped.out;
}

// A named pipe nobody writes to: refused at once (reads by offset cannot use it), not waited on,
// as a file and as a checkpoint's shard, and by the commands that sniff the format first.
TEST(CliInputErrors, NamedPipesAreRefusedWithoutWaitingForAWriter) {
  const auto dir = st_test::scratch_dir();
  const auto fifo = dir / "model.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto npz = dir / "arrays.npz";
  ASSERT_EQ(::mkfifo(npz.c_str(), 0600), 0);
  std::filesystem::create_directories(dir / "ckpt");
  write_raw(dir / "ckpt" / "model.safetensors.index.json", R"({"weight_map":{"w":"shard.safetensors"}})");
  ASSERT_EQ(::mkfifo((dir / "ckpt" / "shard.safetensors").c_str(), 0600), 0);
  const std::string f = st_test::shell_quote(fifo.string());
  const std::string out = st_test::shell_quote((dir / "out.safetensors").string());
  for (const std::string& args :
       {"ls " + f, "validate " + f, "inspect " + f, "stats " + f, "checksum --per-tensor " + f,
        "convert " + f + " " + st_test::shell_quote((dir / "out.npz").string()),
        "convert " + st_test::shell_quote(npz.string()) + " " + out,
        "verify " + st_test::shell_quote((dir / "ckpt").string()),
        "merge " + st_test::shell_quote((dir / "ckpt").string()) + " " + out}) {
    auto r = st_test::run_command("timeout 20 " + st_test::cli_shell() + " " + args + " 2>&1");
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;  // 124 would be the timeout: a hang
    EXPECT_NE(r.out.find("a pipe cannot be read"), std::string::npos) << args << ": " << r.out;
    EXPECT_NE(r.out.find("save it to a file first"), std::string::npos) << args << ": " << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out.safetensors"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out.npz"));
}

TEST(CliInputErrors, CutShortFilesSayTruncated) {
  const auto dir = st_test::scratch_dir();
  auto bytes = st_test::read_bytes(st_test::conformance_dir() / "format" / "002-weights-bf16.safetensors");
  auto in_data = bytes;
  in_data.resize(bytes.size() - 3);
  st_test::write_bytes(dir / "data.safetensors", in_data);
  auto r = run_cli({"inspect", (dir / "data.safetensors").string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(": file is truncated: tensors end at byte " + std::to_string(bytes.size()) +
                       " but the file has " + std::to_string(in_data.size()) + " bytes"),
            std::string::npos)
      << r.err;
  auto in_header = bytes;
  in_header.resize(40);
  st_test::write_bytes(dir / "header.safetensors", in_header);
  auto h = run_cli({"validate", (dir / "header.safetensors").string()});
  EXPECT_EQ(h.status, 1);
  EXPECT_NE(h.out.find("file is truncated: the header needs"), std::string::npos) << h.out;
}

TEST(CliInputErrors, EachThingIsSaidOnce) {
  const auto dir = st_test::scratch_dir();
  const std::string missing = (dir / "absent.safetensors").string();
  auto v = run_cli({"validate", missing});
  EXPECT_EQ(v.status, 2);
  EXPECT_EQ(v.out, missing + ": IoError: cannot open file: No such file or directory\n");
  st_test::make_f32_file(dir / "m.safetensors", {{"w", {1}, {1}}});
  auto d = run_cli({"dump", (dir / "m.safetensors").string(), "nope"});
  EXPECT_EQ(d.status, 2);
  EXPECT_EQ(d.err, "safetensors: error: " + (dir / "m.safetensors").string() + ": tensor 'nope' not found\n");
  auto ok = run_cli({"validate", (dir / "m.safetensors").string()});
  EXPECT_EQ(ok.out, (dir / "m.safetensors").string() + ": ok (1 tensor)\n");
}

TEST(CliInputErrors, WarningsGoToStderr) {
  const std::string trailing =
      (st_test::conformance_dir() / "format" / "064-trailing-polyglot-bytes.safetensors").string();
  auto r = run_cli({"validate", "--policy", "lenient", trailing});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, trailing + ": ok (2 tensors)\n");
  EXPECT_NE(r.err.find("safetensors: warning: " + trailing + ": "), std::string::npos) << r.err;
  // dequantize of a file with nothing quantized: a copy, and a warning saying so.
  const auto dir = st_test::scratch_dir();
  st_test::make_f32_file(dir / "plain.safetensors", {{"w", {2}, {1, 2}}});
  auto dq = run_cli({"dequantize", (dir / "plain.safetensors").string(), (dir / "out.safetensors").string()});
  EXPECT_EQ(dq.status, 0) << dq.err;
  EXPECT_NE(dq.err.find("safetensors: warning: " + (dir / "plain.safetensors").string() + ": no quantized layers"),
            std::string::npos)
      << dq.err;
}

TEST(CliInputErrors, ValidateJsonOfACheckpointListsEveryProblem) {
  const auto dir = st_test::scratch_dir();
  st_test::make_f32_file(dir / "a.safetensors", {{"x", {1}, {1}}, {"y", {1}, {2}}});
  st_test::make_f32_file(dir / "b.safetensors", {{"z", {1}, {3}}});
  std::ofstream(dir / "model.safetensors.index.json")
      << R"({"metadata":{"total_size":99},"weight_map":{"x":"a.safetensors","z":"b.safetensors","w":"b.safetensors"}})";
  auto text = run_cli({"validate", dir.string()});
  EXPECT_EQ(text.status, 1);
  const auto lines = static_cast<std::size_t>(std::count(text.out.begin(), text.out.end(), '\n'));
  ASSERT_GE(lines, 2U) << text.out;
  auto json = run_cli({"validate", "--json", dir.string()});
  EXPECT_EQ(json.status, 1);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  EXPECT_FALSE(doc["ok"].get_bool().value());
  EXPECT_EQ(doc["problems"].get_array().size(), lines) << json.out << "\n" << text.out;
  for (auto p : doc["problems"].get_array()) {
    EXPECT_TRUE(p["code"].is_string());
    EXPECT_TRUE(p["message"].is_string());
  }
}

}  // namespace
