// SPDX-License-Identifier: Apache-2.0
// Text from a file never drives the terminal: tensor names, metadata keys and values reach
// stdout and stderr escaped (printable_text: `\x1b`, `\u202e`) in every human command, in
// warnings and in errors, and JSON-escaped in --json output. An OSC sequence in a name
// retitled the terminal, CSI cleared the screen, and "\r\e[2K\e[1A" erased the line above.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "support/cli_run.h"
#include "support/paths.h"

namespace {

namespace fs = std::filesystem;

// Each hostile text, and how the CLI shows it.
const std::string osc = "\x1b]0;pwned\x07";         // retitles the window
const std::string csi = "\x1b[2J\x1b[H";            // clears the screen
const std::string erase_line = "\r\x1b[2K\x1b[1A";  // erases the line, moves up
const std::string bidi =
    "\u202e"
    "cod.exe\u2066\u2069";  // right-to-left override, isolates
const std::string c1 =
    "\u009b"
    "31m\x7f";  // C1 CSI, DEL
const std::string osc_shown = "\\x1b]0;pwned\\x07";
const std::string csi_shown = "\\x1b[2J\\x1b[H";
const std::string erase_shown = "\\r\\x1b[2K\\x1b[1A";
const std::string bidi_shown = "\\u202ecod.exe\\u2066\\u2069";
const std::string c1_shown = "\\u009b31m\\x7f";

const std::string name_osc = "a" + osc + ".w";
const std::string name_csi = "b" + csi + ".w";
const std::string name_erase = "c" + erase_line + ".w";
const std::string name_bidi = "d" + bidi;
const std::string name_c1 = "e" + c1;

/// The first raw control in `text` (C0 other than '\n', DEL, C1 or a bidi control), as an
/// index; npos when there is none.
std::size_t first_raw_control(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7F) return i;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      return i;
    }
    if (c == 0xE2 && i + 2 < text.size()) {
      const auto b1 = static_cast<unsigned char>(text[i + 1]);
      const auto b2 = static_cast<unsigned char>(text[i + 2]);
      if ((b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) || (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9)) return i;
    }
  }
  return std::string::npos;
}

std::string visible(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    out += (b < 0x20 && c != '\n') || b >= 0x7F ? fmt::format("<{:02x}>", b) : std::string(1, c);
  }
  return out;
}

/// Runs `args`; asserts that neither stream carries a raw control and returns the result.
st_test::cli_result run_clean(const std::vector<std::string>& args) {
  const auto r = st_test::run_cli(args);
  const std::string what = args.front() + (args.size() > 1 && args[1].starts_with("--") ? " " + args[1] : "");
  EXPECT_EQ(first_raw_control(r.out), std::string::npos) << what << " stdout: " << visible(r.out);
  EXPECT_EQ(first_raw_control(r.err), std::string::npos) << what << " stderr: " << visible(r.err);
  return r;
}

fs::path hostile_file(const fs::path& dir) {
  const fs::path path = dir / "hostile.safetensors";
  st_test::make_f32_file(path,
                         {{name_osc, {2}, {1, 2}},
                          {name_csi, {2}, {3, 4}},
                          {name_erase, {1}, {5}},
                          {name_bidi, {1}, {6}},
                          {name_c1, {1}, {7}}},
                         safetensors::metadata_map{{"k" + osc, "v" + csi}, {"bidi" + bidi, c1 + erase_line}});
  return path;
}

void expect_shown(const std::string& text, const std::vector<std::string>& shown, const std::string& what) {
  for (const auto& s : shown) EXPECT_NE(text.find(s), std::string::npos) << what << " lacks " << s << ": " << text;
}

TEST(CliTerminalEscape, HumanOutputShowsNamesEscaped) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path f = hostile_file(dir);
  const std::string p = f.string();
  const std::vector<std::string> names_shown{"a" + osc_shown + ".w", "b" + csi_shown + ".w", "c" + erase_shown + ".w",
                                             "d" + bidi_shown, "e" + c1_shown};
  const std::vector<std::string> meta_shown{"k" + osc_shown + ": v" + csi_shown,
                                            "bidi" + bidi_shown + ": " + c1_shown + erase_shown};
  const fs::path other = dir / "other.safetensors";
  st_test::make_f32_file(other, {{"z", {1}, {0}}});

  expect_shown(run_clean({"ls", p}).out, names_shown, "ls");
  auto inspect = run_clean({"inspect", p}).out;
  expect_shown(inspect, names_shown, "inspect");
  expect_shown(inspect, meta_shown, "inspect");
  // The tree splits at dots: the labels are the escaped components.
  expect_shown(run_clean({"inspect", "--tree", p}).out, {"a" + osc_shown, "b" + csi_shown, "c" + erase_shown},
               "inspect --tree");
  expect_shown(run_clean({"meta", p}).out, meta_shown, "meta");
  EXPECT_EQ(run_clean({"meta", p, "k" + osc}).out, "v" + csi_shown + "\n");
  expect_shown(run_clean({"stats", p}).out, names_shown, "stats");
  expect_shown(run_clean({"checksum", "--per-tensor", p}).out, names_shown, "checksum");
  expect_shown(run_clean({"diff", p, other.string()}).out, names_shown, "diff");
  for (const auto& [name, shown] :
       std::vector<std::pair<std::string, std::string>>{{name_osc, names_shown[0]}, {name_bidi, names_shown[3]}}) {
    const auto dump = run_clean({"dump", p, name});
    EXPECT_EQ(dump.status, 0) << dump.err;
    EXPECT_TRUE(dump.out.starts_with(shown + ": F32 [")) << visible(dump.out);
  }
}

TEST(CliTerminalEscape, ChecksumListsRoundTripEscapedNames) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path f = hostile_file(dir);
  const auto list = run_clean({"checksum", "--per-tensor", f.string()});
  ASSERT_EQ(list.status, 0) << list.err;
  const fs::path sums = dir / "sums.txt";
  std::ofstream(sums) << list.out;
  const auto check = run_clean({"checksum", "-c", sums.string()});
  EXPECT_EQ(check.status, 0) << check.out << check.err;
  EXPECT_EQ(check.out.find("MISSING"), std::string::npos) << visible(check.out);
}

TEST(CliTerminalEscape, JsonOutputEscapesControls) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path f = hostile_file(dir);
  const std::string p = f.string();
  const fs::path other = dir / "other.safetensors";
  st_test::make_f32_file(other, {{"z", {1}, {0}}});
  for (const auto& args : std::vector<std::vector<std::string>>{{"ls", "--json", p},
                                                                {"inspect", "--json", p},
                                                                {"inspect", "--tree", "--json", p},
                                                                {"meta", "--json", p},
                                                                {"stats", "--json", p},
                                                                {"checksum", "--per-tensor", "--json", p},
                                                                {"diff", "--json", p, other.string()},
                                                                {"dump", "--json", p, name_bidi}}) {
    const auto r = run_clean(args);
    // JSON's own escapes: \u001b for ESC, \u202e for the override; meta --json has the metadata.
    const bool meta = args.front() == "meta";
    if (args.front() != "dump") {
      EXPECT_NE(r.out.find(meta ? "k\\u001b]0;pwned\\u0007" : "a\\u001b]0;pwned\\u0007"), std::string::npos) << r.out;
    }
    EXPECT_NE(r.out.find(meta ? "bidi\\u202ecod.exe\\u2066\\u2069" : "d\\u202ecod.exe\\u2066\\u2069"),
              std::string::npos)
        << args[0] << ": " << r.out;
  }
}

TEST(CliTerminalEscape, WarningsAndErrorsAreEscaped) {
  const fs::path dir = st_test::scratch_dir();
  // A warning naming a metadata key: two shards disagree on it, so it is dropped.
  const fs::path ckpt = dir / "ckpt";
  fs::create_directories(ckpt);
  st_test::make_f32_file(ckpt / "s1.safetensors", {{"x", {1}, {1}}},
                         safetensors::metadata_map{{"k" + erase_line, "1"}});
  st_test::make_f32_file(ckpt / "s2.safetensors", {{"y", {1}, {2}}},
                         safetensors::metadata_map{{"k" + erase_line, "2"}});
  std::ofstream(ckpt / "model.safetensors.index.json")
      << R"({"weight_map":{"x":"s1.safetensors","y":"s2.safetensors"}})";
  const auto warned = run_clean({"meta", ckpt.string()});
  EXPECT_EQ(warned.status, 0) << warned.err;
  EXPECT_NE(warned.err.find("safetensors: warning: "), std::string::npos) << visible(warned.err);
  EXPECT_NE(warned.err.find("k" + erase_shown), std::string::npos) << visible(warned.err);

  // An error quoting a tensor name: its dtype is unknown.
  const std::string header = R"({"bad\u001b]0;pwned\u0007\u202e":{"dtype":"X9","shape":[1],"data_offsets":[0,4]}})";
  std::string bytes(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFFU);
  bytes += header + std::string(4, '\0');
  const fs::path bad = dir / "bad.safetensors";
  std::ofstream(bad, std::ios::binary) << bytes;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"inspect", bad.string()}, {"ls", bad.string()}, {"dump", bad.string(), "x"}, {"validate", bad.string()}}) {
    const auto r = run_clean(args);
    EXPECT_NE(r.status, 0);
    EXPECT_NE((r.out + r.err).find("bad" + osc_shown + "\\u202e"), std::string::npos)
        << args[0] << ": " << visible(r.out + r.err);
  }
  // A usage error quoting what was typed is escaped as well.
  const auto typed = run_clean({"dump", bad.string() + osc});
  EXPECT_EQ(typed.status, 2);
}

/// GGUF strings are bytes: the name here is not even UTF-8 (0xff), and is shown as `\xff`.
TEST(CliTerminalEscape, GgufStringsAndInvalidUtf8AreEscaped) {
  std::string g = "GGUF";
  const auto u32 = [&g](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) g.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
  };
  const auto u64 = [&g](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) g.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
  };
  const auto str = [&](const std::string& s) {
    u64(s.size());
    g += s;
  };
  u32(3);  // version
  u64(1);  // tensors
  u64(2);  // metadata entries
  str("general.name" + osc);
  u32(8);  // string
  str("v" + csi + "\xc3(");
  str("tokenizer.ggml.tokens");
  u32(9);  // array
  u32(8);  // of strings
  u64(2);
  str(erase_line);
  str("ok");
  str("t" + csi + "\xff.w");
  u32(1);  // dimensions
  u64(2);
  u32(0);  // F32
  u64(0);  // offset
  g.resize((g.size() + 31) / 32 * 32, '\0');
  g += std::string(8, '\0');
  const fs::path f = st_test::scratch_dir() / "hostile.gguf";
  std::ofstream(f, std::ios::binary) << g;
  const auto r = run_clean({"inspect", f.string()});
  EXPECT_EQ(r.status, 0) << visible(r.err);
  expect_shown(
      r.out,
      {"general.name" + osc_shown, "v" + csi_shown + "\\xc3(", "\"" + erase_shown + "\"", "t" + csi_shown + "\\xff.w"},
      "inspect .gguf");
  const auto tree = run_clean({"inspect", "--tree", f.string()});
  EXPECT_NE(tree.out.find("t" + csi_shown + "\\xff"), std::string::npos) << visible(tree.out);
  run_clean({"inspect", "--json", f.string()});
}

/// A stored zip archive of `members` (name, bytes), as PyTorch writes one (CRC-32 computed bit by bit).
std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& members) {
  const auto crc32 = [](const std::string& data) {
    std::uint32_t crc = 0xFFFFFFFFU;
    for (const char c : data) {
      crc ^= static_cast<unsigned char>(c);
      for (int k = 0; k < 8; ++k) crc = (crc >> 1U) ^ (0xEDB88320U & (0U - (crc & 1U)));
    }
    return ~crc;
  };
  std::string out;
  std::string directory;
  const auto le = [](std::string& s, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
  };
  for (const auto& [name, data] : members) {
    const std::size_t offset = out.size();
    const std::uint32_t crc = crc32(data);
    le(out, 0x04034b50, 4);
    le(out, 20, 2);  // version needed
    le(out, 0, 2);   // flags
    le(out, 0, 2);   // stored
    le(out, 0, 4);   // time, date
    le(out, crc, 4);
    le(out, data.size(), 4);
    le(out, data.size(), 4);
    le(out, name.size(), 2);
    le(out, 0, 2);
    out += name + data;
    le(directory, 0x02014b50, 4);
    le(directory, 20, 2);  // made by
    le(directory, 20, 2);  // needed
    le(directory, 0, 2);
    le(directory, 0, 2);
    le(directory, 0, 4);
    le(directory, crc, 4);
    le(directory, data.size(), 4);
    le(directory, data.size(), 4);
    le(directory, name.size(), 2);
    le(directory, 0, 2);  // extra
    le(directory, 0, 2);  // comment
    le(directory, 0, 2);  // disk
    le(directory, 0, 2);  // internal attributes
    le(directory, 0, 4);  // external attributes
    le(directory, offset, 4);
    directory += name;
  }
  const std::size_t directory_offset = out.size();
  out += directory;
  le(out, 0x06054b50, 4);
  le(out, 0, 4);  // disks
  le(out, members.size(), 2);
  le(out, members.size(), 2);
  le(out, directory.size(), 4);
  le(out, directory_offset, 4);
  le(out, 0, 2);
  return out;
}

/// A pickle's global names are text from the file too: a PyTorch checkpoint with one F32 tensor
/// and an entry built by an unknown global whose module and name hold "\r\e[2K\e[1A" (which erased
/// the "skipped" warning it caused) and an OSC title.
TEST(CliTerminalEscape, PickleGlobalNamesAreEscaped) {
  const auto text = [](const std::string& s) {  // BINUNICODE
    std::string out = "X";
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((s.size() >> (8 * i)) & 0xFFU));
    return out + s;
  };
  std::string pickle = "\x80\x02}";
  pickle += text("w") + "ctorch._utils\n_rebuild_tensor_v2\n((" + text("storage") + "ctorch\nFloatStorage\n" +
            text("0") + text("cpu") + std::string("K\x01tQ", 4);
  pickle += std::string("K\x00K\x01\x85K\x01\x85\x89", 9) + "ccollections\nOrderedDict\n)RtRs";
  pickle += text("evil") + "cargparse" + erase_line + "\nNamespace" + osc + "\n)Rs.";
  const fs::path dir = st_test::scratch_dir();
  const fs::path pt = dir / "hostile.pt";
  std::ofstream(pt, std::ios::binary) << stored_zip({{"archive/data.pkl", pickle},
                                                     {"archive/byteorder", "little"},
                                                     {"archive/data/0", std::string("\x00\x00\x80\x3f", 4)}});
  const std::string shown = "argparse" + erase_shown + ".Namespace" + osc_shown;
  const auto inspect = run_clean({"inspect", pt.string()});
  EXPECT_EQ(inspect.status, 0) << visible(inspect.err);
  EXPECT_NE(inspect.out.find(shown), std::string::npos) << visible(inspect.out);
  const auto convert = run_clean({"convert", pt.string(), (dir / "out.safetensors").string()});
  EXPECT_NE((convert.out + convert.err).find(shown), std::string::npos) << visible(convert.err);
  const auto strict = run_clean({"convert", "--strict", pt.string(), (dir / "strict.safetensors").string()});
  EXPECT_NE(strict.status, 0);
  EXPECT_NE(strict.err.find(shown), std::string::npos) << visible(strict.err);
  run_clean({"inspect", "--json", pt.string()});
}

}  // namespace
