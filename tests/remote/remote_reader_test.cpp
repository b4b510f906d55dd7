// SPDX-License-Identifier: Apache-2.0
// remote::http_source and remote::open against nginx: one request for a typical header,
// exact ranges for tensors, parallel parts, TLS and credentials.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "remote/remote_fixtures.h"
#include "safetensors/remote/remote.h"
#include "support/status_matchers.h"

namespace {

using st_test::remote_servers;
namespace remote = safetensors::remote;

using st_test::has;

/// A small tensor, padding, and a 3 MB one beyond the speculative head.
void write_two_tensor_file(remote_servers& s, const std::string& name) {
  st_test::write_u8_file(s.root() / name, {{"a_small", 1000}, {"b_pad", 200'000}, {"big", 3'000'000}});
}

TEST(RemoteReader, TypicalHeaderIsOneRequestAndTensorsAreExactRanges) {
  ST_REMOTE_SERVERS(s);
  write_two_tensor_file(*s, "two.safetensors");
  const auto mark = s->access_mark();
  auto source = remote::http_source::open(s->http("two.safetensors"));
  ASSERT_OK(source);
  auto f = safetensors::file::open_reader(*source);
  ASSERT_OK(f);
  EXPECT_EQ((*source)->stats().requests, 1U);
  EXPECT_EQ(f->backend(), safetensors::io_backend::reader);
  EXPECT_EQ(f->file_size(), std::filesystem::file_size(s->root() / "two.safetensors"));
  auto big = f->load("big");
  ASSERT_OK(big);
  EXPECT_EQ(*big, st_test::u8_bytes(2, 3'000'000));
  auto small = f->load("a_small");  // inside the first response: no request
  ASSERT_OK(small);
  EXPECT_EQ(*small, st_test::u8_bytes(0, 1000));
  EXPECT_EQ((*source)->stats().requests, 2U);
  const auto lines = s->access_since(mark);
  ASSERT_EQ(lines.size(), 2U) << ::testing::PrintToString(lines);
  EXPECT_TRUE(has(lines[0], "\"bytes=0-99999\"")) << lines[0];
  const safetensors::tensor_info* info = f->find("big");
  const std::uint64_t begin = f->header().data_start() + info->begin;
  EXPECT_TRUE(has(lines[1], fmt::format("206 \"bytes={}-{}\" 3000000", begin, begin + 3'000'000 - 1))) << lines[1];
}

TEST(RemoteReader, LargeHeaderTakesTwoRequests) {
  ST_REMOTE_SERVERS(s);
  std::vector<std::pair<std::string, std::size_t>> tensors;
  for (int i = 0; i < 3000; ++i) tensors.emplace_back(fmt::format("model.layers.{}.self_attn.q_proj.weight", i), 4);
  st_test::write_u8_file(s->root() / "wide.safetensors", tensors);
  auto source = remote::http_source::open(s->http("wide.safetensors"));
  ASSERT_OK(source);
  auto f = safetensors::file::open_reader(*source);
  ASSERT_OK(f);
  EXPECT_GT(f->header().data_start(), remote::default_speculative_header_bytes);
  EXPECT_EQ(f->tensors().size(), 3000U);
  EXPECT_EQ((*source)->stats().requests, 2U);
}

TEST(RemoteReader, LargeReadsSplitOverParallelConnections) {
  ST_REMOTE_SERVERS(s);
  write_two_tensor_file(*s, "parts.safetensors");
  remote::options o;
  o.part_bytes = 256 << 10;
  o.connections = 4;
  auto source = remote::http_source::open(s->http("parts.safetensors"), o);
  ASSERT_OK(source);
  auto f = safetensors::file::open_reader(*source);
  ASSERT_OK(f);
  auto big = f->load("big");
  ASSERT_OK(big);
  EXPECT_EQ(*big, st_test::u8_bytes(2, 3'000'000));
  EXPECT_EQ((*source)->stats().requests, 1U + (3'000'000 + o.part_bytes - 1) / o.part_bytes);
}

TEST(RemoteReader, ValidatesWithTheSamePolicyAsLocalFiles) {
  ST_REMOTE_SERVERS(s);
  std::filesystem::create_directories(s->root() / "bad");
  {
    std::ofstream out(s->root() / "bad/short.safetensors", std::ios::binary);
    out << "abc";
  }
  std::ofstream(s->root() / "bad/empty.safetensors", std::ios::binary).flush();
  EXPECT_ERROR(remote::open(s->http("bad/short.safetensors")), safetensors::error_code::header_too_small);
  EXPECT_ERROR(remote::open(s->http("bad/empty.safetensors")), safetensors::error_code::header_too_small);
  auto missing = remote::open(s->http("bad/none.safetensors"));
  ASSERT_ERROR(missing, safetensors::error_code::io);
  EXPECT_TRUE(has(missing.err().to_string(), "HTTP 404")) << missing.err().to_string();
  EXPECT_EQ(missing.err().path, s->http("bad/none.safetensors"));
}

TEST(RemoteReader, FileUrlsOpenLocalFiles) {
  ST_REMOTE_SERVERS(s);
  write_two_tensor_file(*s, "local.safetensors");
  auto f = remote::open("file://" + (s->root() / "local.safetensors").string());
  ASSERT_OK(f);
  EXPECT_EQ(f->backend(), safetensors::io_backend::pread);
  EXPECT_EQ(*f->load("big"), st_test::u8_bytes(2, 3'000'000));
}

TEST(RemoteReader, SelfSignedCertificateNeedsItsCaFileOrInsecure) {
  ST_REMOTE_SERVERS(s);
  write_two_tensor_file(*s, "tls.safetensors");
  auto refused = remote::open(s->https("tls.safetensors"));
  ASSERT_ERROR(refused, safetensors::error_code::io);
  EXPECT_TRUE(has(refused.err().message, "CA file")) << refused.err().to_string();
  remote::options trusted;
  trusted.ca_file = s->certificate().string();
  auto f = remote::open(s->https("tls.safetensors"), trusted);
  ASSERT_OK(f);
  EXPECT_EQ(*f->load("big"), st_test::u8_bytes(2, 3'000'000));
  remote::options insecure;
  insecure.insecure = true;
  EXPECT_OK(remote::open(s->https("tls.safetensors"), insecure));
}

TEST(RemoteReader, BearerTokenOpensPrivateFilesAndIsNeverShown) {
  ST_REMOTE_SERVERS(s);
  write_two_tensor_file(*s, "private/p.safetensors");
  auto denied = remote::open(s->http("private/p.safetensors"));
  ASSERT_ERROR(denied, safetensors::error_code::io);
  EXPECT_TRUE(has(denied.err().message, "HTTP 401")) << denied.err().to_string();
  remote::options o;
  o.bearer_token = remote_servers::token();
  auto f = remote::open(s->http("private/p.safetensors"), o);
  ASSERT_OK(f);
  EXPECT_EQ(*f->load("big"), st_test::u8_bytes(2, 3'000'000));
  auto missing = remote::open(s->http("private/none.safetensors"), o);
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(has(missing.err().to_string(), remote_servers::token()));
  // Credentials in the URL itself are not shown either.
  auto userinfo = remote::open(fmt::format("http://user:hunter2@{}", s->http("none").substr(7)));
  ASSERT_FALSE(userinfo.ok());
  EXPECT_FALSE(has(userinfo.err().to_string(), "hunter2")) << userinfo.err().to_string();
}

TEST(RemoteReader, UrlsAreRecognisedAndShownWithoutSecrets) {
  EXPECT_TRUE(remote::is_url("https://host/x"));
  EXPECT_TRUE(remote::is_url("file:///x"));
  EXPECT_FALSE(remote::is_url("ftp://host/x"));
  EXPECT_FALSE(remote::is_url("model.safetensors"));
  EXPECT_EQ(remote::display_url("https://u:p@host/a/b.safetensors?sig=abc"), "https://host/a/b.safetensors?...");
  EXPECT_ERROR(remote::open("ftp://127.0.0.1/x"), safetensors::error_code::invalid_argument);
}

}  // namespace
