// SPDX-License-Identifier: Apache-2.0
// Every reading subcommand takes a URL and prints what it prints for the local file;
// `inspect URL` of a 10 GB file is one request of under 110 kB; a slice fetches only its
// runs; the token never appears in any output.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "remote/remote_fixtures.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/writer.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using st_test::remote_servers;
using st_test::run_cli;

using st_test::has;

using st_test::replace_all;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RemoteCli, InspectOfATenGigabyteFileIsOneSmallRequest) {
  ST_REMOTE_SERVERS(s);
  st_test::write_sparse_file(s->root() / "big10g.safetensors", 10'000'000'000);
  const auto mark = s->access_mark();
  const auto r = run_cli({"inspect", s->http("big10g.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "10,000,000,000")) << r.out;
  const auto lines = s->access_since(mark);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_LT(st_test::bytes_sent(lines), 110'000U) << lines[0];
}

TEST(RemoteCli, EveryReadingCommandTakesAUrl) {
  ST_REMOTE_SERVERS(s);
  st_test::write_u8_file(s->root() / "cli/m.safetensors", {{"a", 64}, {"w", 300'000}});
  const std::string local = (s->root() / "cli/m.safetensors").string();
  const std::string url = s->http("cli/m.safetensors");
  const auto out = st_test::scratch_dir();
  const std::vector<std::vector<std::string>> commands = {
      {"inspect", "@"},
      {"inspect", "--json", "@"},
      {"ls", "@"},
      {"meta", "@"},
      {"dump", "@", "a"},
      {"stats", "@"},
      {"diff", "@", local},
      {"checksum", "@"},
      {"checksum", "--per-tensor", "@"},
      {"validate", "@"},
      {"verify", "@"},
  };
  for (const auto& command : commands) {
    std::vector<std::string> on_url;
    std::vector<std::string> on_file;
    for (const auto& a : command) {
      on_url.push_back(a == "@" ? url : a);
      on_file.push_back(a == "@" ? local : a);
    }
    const auto remote_run = run_cli(on_url);
    const auto local_run = run_cli(on_file);
    EXPECT_EQ(remote_run.status, local_run.status) << command[0] << ": " << remote_run.err;
    EXPECT_EQ(replace_all(remote_run.out, url, "@"), replace_all(local_run.out, local, "@")) << command[0];
  }
  // Writing commands read the URL and write locally: the same bytes as from the file.
  for (const auto& [from, name] : {std::pair{url, "u"}, std::pair{local, "l"}}) {
    const auto r = run_cli({"extract", from, (out / fmt::format("{}.safetensors", name)).string()});
    EXPECT_EQ(r.status, 0) << r.err;
    const auto c = run_cli({"convert", from, (out / fmt::format("{}.npz", name)).string()});
    EXPECT_EQ(c.status, 0) << c.err;
  }
  EXPECT_EQ(slurp(out / "u.safetensors"), slurp(out / "l.safetensors"));
  EXPECT_EQ(slurp(out / "u.npz"), slurp(out / "l.npz"));
}

TEST(RemoteCli, FramingErrorsReadAsTheyDoLocally) {
  ST_REMOTE_SERVERS(s);
  // Length-prefix verdicts, words included: empty, 1 byte, a header one past the file (equal to
  // the file's size, and one more), a length of 100,000,000, and a GGUF file.
  const auto prefixed = [](std::uint64_t n, std::size_t body) {
    std::string bytes(8, '\0');
    for (std::size_t i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    return bytes + "{" + std::string(body - 1, ' ');
  };
  const std::vector<std::pair<std::string, std::string>> files = {
      {"empty", ""},
      {"one-byte", "x"},
      {"header-equal", prefixed(72, 64)},
      {"header-past", prefixed(73, 64)},
      {"header-huge", prefixed(100'000'000, 64)},
      {"gguf", std::string("GGUF\3\0\0\0", 8) + std::string(64, '\0')},
  };
  for (const auto& [name, bytes] : files) {
    const auto local = s->root() / "framing" / (name + ".safetensors");
    std::filesystem::create_directories(local.parent_path());
    std::ofstream(local, std::ios::binary) << bytes;
    const std::string url = s->http("framing/" + name + ".safetensors");
    const auto on_file = run_cli({"validate", "--json", local.string()});
    const auto on_url = run_cli({"validate", "--json", url});
    EXPECT_EQ(on_file.status, 1) << name << ": " << on_file.out;
    EXPECT_EQ(on_url.status, on_file.status) << name;
    EXPECT_EQ(replace_all(on_url.out, url, "@"), replace_all(on_file.out, local.string(), "@")) << name;
  }
}

TEST(RemoteCli, ShardedCheckpointByIndexUrl) {
  ST_REMOTE_SERVERS(s);
  std::filesystem::create_directories(s->root() / "clisharded");
  std::vector<std::vector<std::byte>> bytes;
  for (std::size_t i = 0; i < 4; ++i) bytes.push_back(st_test::u8_bytes(i, 1000));
  std::vector<safetensors::tensor_data> data;
  for (std::size_t i = 0; i < 4; ++i) data.push_back({fmt::format("t{}", i), safetensors::dtype::U8, {1000}, bytes[i]});
  safetensors::shard_write_options o;
  o.max_shard_bytes = 2000;
  ASSERT_OK(safetensors::write_checkpoint((s->root() / "clisharded").string(), data, o));
  const std::string index = s->http("clisharded/model.safetensors.index.json");
  for (const std::vector<std::string>& command : {std::vector<std::string>{"ls", index},
                                                  {"inspect", index},
                                                  {"validate", index},
                                                  {"verify", "--checksums", index},
                                                  {"stats", index},
                                                  {"ls", s->http("clisharded/")}}) {
    const auto r = run_cli(command);
    EXPECT_EQ(r.status, 0) << command[0] << ": " << r.err;
    if (command[0] == "ls") {
      EXPECT_EQ(r.out, "t0\nt1\nt2\nt3\n");
    }
  }
}

// The hub layout BASE/ORG/REPO/resolve/REV/: the repository's resolve or tree URL finds the
// index (or model.safetensors), as hub tools do (issue 38 item 6).
TEST(RemoteCli, HubRepositoryUrlsFindTheCheckpoint) {
  ST_REMOTE_SERVERS(s);
  const auto sharded = s->root() / "hub/org/sharded/resolve/main";
  const auto single = s->root() / "hub/org/single/resolve/v1";
  std::filesystem::create_directories(sharded);
  std::filesystem::create_directories(single);
  std::vector<std::vector<std::byte>> bytes;
  for (std::size_t i = 0; i < 2; ++i) bytes.push_back(st_test::u8_bytes(i, 1000));
  std::vector<safetensors::tensor_data> data;
  for (std::size_t i = 0; i < 2; ++i) data.push_back({fmt::format("t{}", i), safetensors::dtype::U8, {1000}, bytes[i]});
  safetensors::shard_write_options o;
  o.max_shard_bytes = 1000;
  ASSERT_OK(safetensors::write_checkpoint(sharded.string(), data, o));
  ASSERT_OK(safetensors::write_file((single / "model.safetensors").string(), std::span(data).subspan(0, 1)));
  for (const auto& [url, listed] : {std::pair{s->http("hub/org/sharded/resolve/main"), "t0\nt1\n"},
                                    std::pair{s->http("hub/org/sharded/tree/main/"), "t0\nt1\n"},
                                    std::pair{s->http("hub/org/single/tree/v1"), "t0\n"}}) {
    const auto r = run_cli({"ls", url});
    EXPECT_EQ(r.status, 0) << url << ": " << r.err;
    EXPECT_EQ(r.out, listed) << url;
  }
}

TEST(RemoteCli, SliceFetchesOnlyItsRuns) {
  ST_REMOTE_SERVERS(s);
  // A 1000 x 1000 U8 matrix past the speculative head (after "a_pad"); rows 0:2 are one 2000-byte run.
  std::vector<std::byte> m = st_test::u8_bytes(0, 1'000'000);
  std::vector<safetensors::tensor_data> data = {{"m", safetensors::dtype::U8, {1000, 1000}, m}};
  std::vector<std::byte> pad(200'000);
  data.insert(data.begin(), {"a_pad", safetensors::dtype::U8, {200'000}, pad});
  ASSERT_OK(safetensors::write_file((s->root() / "matrix.safetensors").string(), data));
  const auto mark = s->access_mark();
  // --limit 0: every value of the slice (dump reads no more than it prints).
  const auto r = run_cli({"dump", s->http("matrix.safetensors"), "m", "--slice", "0:2", "--limit", "0", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = s->access_since(mark);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_TRUE(has(lines[1], "\" 2000 ")) << lines[1];
}

TEST(RemoteCli, TlsNeedsTheCaFileAndInsecureSaysSo) {
  ST_REMOTE_SERVERS(s);
  st_test::write_u8_file(s->root() / "clitls.safetensors", {{"a", 8}});
  const std::string url = s->https("clitls.safetensors");
  const auto refused = run_cli({"ls", url});
  EXPECT_EQ(refused.status, 2);
  EXPECT_TRUE(has(refused.err, "--insecure")) << refused.err;
  const auto trusted = run_cli({"ls", url, "--ca-file", s->certificate().string()});
  EXPECT_EQ(trusted.status, 0) << trusted.err;
  EXPECT_EQ(trusted.out, "a\n");
  const auto insecure = run_cli({"ls", "--insecure", url});
  EXPECT_EQ(insecure.status, 0) << insecure.err;
  EXPECT_TRUE(has(insecure.err, "warning: --insecure")) << insecure.err;
}

TEST(RemoteCli, TokenIsSentButNeverPrinted) {
  ST_REMOTE_SERVERS(s);
  st_test::write_u8_file(s->root() / "private/clitoken.safetensors", {{"a", 8}, {"b", 200'000}});
  const std::string token = remote_servers::token();
  const std::string url = s->http("private/clitoken.safetensors");
  const std::vector<std::string> urls = {url, s->http("private/missing.safetensors"),
                                         s->faulty("redirect-away/clitoken.safetensors"), s->faulty("status/403"),
                                         s->faulty("changing/private/clitoken.safetensors")};
  std::vector<st_test::cli_result> runs;
  for (const auto& u : urls) {
    for (const std::vector<std::string>& command : {std::vector<std::string>{"inspect", "--json", u},
                                                    {"validate", "--json", u},
                                                    {"dump", u, "b", "--json"},
                                                    {"verify", "--json", u},
                                                    {"checksum", "--json", u},
                                                    {"stats", "--json", u}}) {
      auto with_option = command;
      with_option.push_back("--token");
      with_option.push_back(token);
      runs.push_back(run_cli(with_option));
      ::setenv("SAFETENSORS_TOKEN", token.c_str(), 1);
      runs.push_back(run_cli(command));
      ::unsetenv("SAFETENSORS_TOKEN");
    }
  }
  EXPECT_EQ(runs[0].status, 0) << runs[0].err;  // the token opened the private file
  EXPECT_EQ(runs[1].status, 0) << runs[1].err;
  for (const auto& r : runs) {
    EXPECT_FALSE(has(r.out, token)) << r.out;
    EXPECT_FALSE(has(r.err, token)) << r.err;
  }
  const auto denied = run_cli({"ls", url});
  EXPECT_EQ(denied.status, 2);
  EXPECT_TRUE(has(denied.err, "HTTP 401")) << denied.err;
}

}  // namespace
