// SPDX-License-Identifier: Apache-2.0
// Every fault of a server is an error naming the URL and the byte range, never wrong bytes:
// tests/remote/fault_server.py misbehaves on purpose, one way per path prefix.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "remote/remote_fixtures.h"
#include "safetensors/remote/remote.h"
#include "support/status_matchers.h"

namespace {

using st_test::remote_servers;
namespace remote = safetensors::remote;

using st_test::has;

/// Serves "<name>": a small tensor, then "big" (3 MB) past the first response.
std::string serve(remote_servers& s, const std::string& name) {
  st_test::write_u8_file(s.root() / name, {{"a_small", 1000}, {"big", 3'000'000}});
  return name;
}

remote::options with_token() {
  remote::options o;
  o.bearer_token = remote_servers::token();
  return o;
}

/// Opens `url` and reads "big": the error, checked to name the URL, a byte range and no token.
safetensors::error read_big_fails(const std::string& url, const remote::options& o = with_token()) {
  auto f = remote::open(url, o);
  EXPECT_OK(f);
  if (!f) return f.err();
  auto big = f->load("big");
  EXPECT_FALSE(big.ok()) << "a faulty server gave a tensor";
  if (big) return {};
  const std::string text = big.err().to_string();
  EXPECT_EQ(big.err().path, url.substr(0, url.find('?')));
  EXPECT_TRUE(has(text, "bytes ")) << text;
  EXPECT_TRUE(big.err().offset.has_value()) << text;
  EXPECT_FALSE(has(text, remote_servers::token())) << text;
  return big.err();
}

TEST(RemoteFaults, ServerIgnoringRangeIsRefusedAfterTheHead) {
  ST_REMOTE_SERVERS(s);
  serve(*s, "norange.safetensors");
  const auto start = std::chrono::steady_clock::now();
  auto f = remote::open(s->faulty("norange/norange.safetensors"));
  ASSERT_ERROR(f, safetensors::error_code::io);
  EXPECT_TRUE(has(f.err().message, "ignores Range")) << f.err().to_string();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // A file that fits in the first response arrived whole: nothing more to fetch.
  st_test::write_u8_file(s->root() / "tiny.safetensors", {{"t", 100}});
  auto tiny = remote::open(s->faulty("norange/tiny.safetensors"));
  ASSERT_OK(tiny);
  EXPECT_EQ(*tiny->load("t"), st_test::u8_bytes(0, 100));
}

TEST(RemoteFaults, MismatchedContentRange) {
  ST_REMOTE_SERVERS(s);
  const auto e = read_big_fails(s->faulty("badrange/" + serve(*s, "badrange.safetensors")));
  EXPECT_TRUE(has(e.message, "does not match the request")) << e.to_string();
}

TEST(RemoteFaults, ShortBody) {
  ST_REMOTE_SERVERS(s);
  const auto e = read_big_fails(s->faulty("short/" + serve(*s, "short.safetensors")));
  EXPECT_TRUE(has(e.message, "short body")) << e.to_string();
}

TEST(RemoteFaults, ConnectionResetMidTensorIsRetriedAndResumed) {
  ST_REMOTE_SERVERS(s);
  const std::string name = serve(*s, "reset.safetensors");
  const auto mark = s->fault_mark();
  auto source = remote::http_source::open(s->faulty("reset/" + name));
  ASSERT_OK(source);
  auto f = safetensors::file::open_reader(*source);
  ASSERT_OK(f);
  auto big = f->load("big");
  ASSERT_OK(big);
  EXPECT_EQ(*big, st_test::u8_bytes(1, 3'000'000));
  const auto lines = s->fault_since(mark);
  ASSERT_EQ(lines.size(), 3U);  // head, the dropped range, the rest of it
  const safetensors::tensor_info* info = f->find("big");
  // The tensor starts inside the first response: only the rest is fetched.
  const std::uint64_t begin = std::max<std::uint64_t>(f->header().data_start() + info->begin, 100'000);
  const std::uint64_t end = f->header().data_start() + info->begin + 3'000'000 - 1;
  EXPECT_TRUE(has(lines[1], fmt::format("bytes={}-{}", begin, end))) << lines[1];
  // The server sent half of the body before dropping the connection.
  EXPECT_TRUE(has(lines[2], fmt::format("bytes={}-{}", begin + (end - begin + 1) / 2, end))) << lines[2];
}

TEST(RemoteFaults, ConnectionResetEveryTimeFailsAfterBoundedRetries) {
  ST_REMOTE_SERVERS(s);
  const auto mark = s->fault_mark();
  const auto e = read_big_fails(s->faulty("resetalways/" + serve(*s, "resetalways.safetensors")));
  EXPECT_TRUE(has(e.message, "received")) << e.to_string();
  EXPECT_EQ(s->fault_since(mark).size(), 1U + 1U + 3U);  // head, first try, three retries
}

TEST(RemoteFaults, FileChangedBetweenRequestsIsDetected) {
  ST_REMOTE_SERVERS(s);
  const auto e = read_big_fails(s->faulty("changing/" + serve(*s, "changing.safetensors")));
  EXPECT_TRUE(has(e.message, "changed since it was opened")) << e.to_string();
}

TEST(RemoteFaults, HttpErrorsNameStatusAndUrl) {
  ST_REMOTE_SERVERS(s);
  for (int status : {403, 404, 416, 500}) {
    const std::string url = s->faulty(fmt::format("status/{}", status));
    auto f = remote::open(url, with_token());
    ASSERT_ERROR(f, safetensors::error_code::io);
    const std::string text = f.err().to_string();
    EXPECT_TRUE(has(text, fmt::format("HTTP {}", status))) << text;
    EXPECT_TRUE(has(text, url)) << text;
    EXPECT_TRUE(has(text, "bytes 0-99999")) << text;
    EXPECT_FALSE(has(text, remote_servers::token())) << text;
  }
}

TEST(RemoteFaults, RedirectsAreFollowedWithTheTokenOnTheSameOriginOnly) {
  ST_REMOTE_SERVERS(s);
  const std::string name = serve(*s, "redirected.safetensors");
  auto mark = s->fault_mark();
  auto f = remote::open(s->faulty("redirect/" + name), with_token());
  ASSERT_OK(f);
  EXPECT_EQ(*f->load("big"), st_test::u8_bytes(1, 3'000'000));
  for (const auto& line : s->fault_since(mark)) EXPECT_TRUE(has(line, " bearer")) << line;

  // To another port (another origin): nginx's /private/ wants the token, which stays behind.
  serve(*s, "private/away.safetensors");
  const auto access = s->access_mark();
  auto away = remote::open(s->faulty("redirect-away/away.safetensors"), with_token());
  ASSERT_ERROR(away, safetensors::error_code::io);
  EXPECT_TRUE(has(away.err().message, "HTTP 401")) << away.err().to_string();
  const auto lines = s->access_since(access);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_TRUE(lines[0].ends_with(" -")) << lines[0];

  auto loop = remote::open(s->faulty("loop/0"));
  ASSERT_ERROR(loop, safetensors::error_code::io);
  EXPECT_TRUE(has(loop.err().message, "more than 5 redirects")) << loop.err().to_string();
}

TEST(RemoteFaults, StalledServerTimesOut) {
  ST_REMOTE_SERVERS(s);
  remote::options o = with_token();
  o.stall_timeout_ms = 1000;
  const auto e = read_big_fails(s->faulty("slow/" + serve(*s, "slow.safetensors")), o);
  EXPECT_TRUE(has(e.message, "timeout")) << e.to_string();
}

TEST(RemoteFaults, NothingListensThere) {
  ST_REMOTE_SERVERS(s);
  remote::options o;
  o.max_retries = 1;
  auto f = remote::open("http://127.0.0.1:1/x.safetensors", o);
  ASSERT_ERROR(f, safetensors::error_code::io);
  EXPECT_TRUE(has(f.err().to_string(), "http://127.0.0.1:1/x.safetensors")) << f.err().to_string();
}

}  // namespace
