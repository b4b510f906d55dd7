// SPDX-License-Identifier: Apache-2.0
// Many ranges at once (the runs of a row-parallel part): multi-range requests answered with
// multipart/byteranges by nginx, close runs merged, and servers without multi-range support
// (200, a single part) still read exactly; a part the server got wrong is an error naming
// the URL and the range, never a wrong tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "remote/remote_fixtures.h"
#include "safetensors/remote/remote.h"
#include "safetensors/slice.h"
#include "safetensors/writer.h"
#include "support/status_matchers.h"

namespace {

using st_test::remote_servers;
namespace remote = safetensors::remote;

using st_test::has;

constexpr std::uint64_t rows = 400;
constexpr std::uint64_t cols = 1'000;

/// "grid.safetensors": padding past the first response, then "w", U8 [400, 1000].
void write_grid(remote_servers& s) {
  std::vector<std::byte> w = st_test::u8_bytes(1, rows * cols);
  std::vector<std::byte> pad(200'000, std::byte{7});
  std::vector<safetensors::tensor_data> data = {
      {"a_pad", safetensors::dtype::U8, {pad.size()}, pad},
      {"w", safetensors::dtype::U8, {rows, cols}, w},
  };
  ASSERT_OK(safetensors::write_file((s.root() / "grid.safetensors").string(), data));
}

struct slice_read {
  std::vector<std::byte> bytes;
  std::uint64_t requests = 0;  // by the library, after opening
  std::uint64_t body_bytes = 0;
};

/// Rank 1 of 4's row-parallel part of "w" (a run of 250 bytes per row) read from `url`.
safetensors::result<slice_read> read_part(const std::string& url, const remote::options& o, std::uint64_t rank = 1) {
  auto source = remote::http_source::open(url, o);
  if (!source) return std::move(source).err();
  auto f = safetensors::file::open_reader(*source);
  if (!f) return std::move(f).err();
  auto plan = safetensors::plan_tensor_parallel(*f->find("w"), f->header().data_start(), 1, rank, 4);
  if (!plan) return std::move(plan).err();
  EXPECT_EQ(plan->ranges.size(), rows);
  const auto before = (*source)->stats();
  slice_read out;
  out.bytes.resize(plan->byte_size);
  if (auto s = safetensors::read_slice(*f, *plan, out.bytes); !s) return std::move(s).err();
  out.requests = (*source)->stats().requests - before.requests;
  out.body_bytes = (*source)->stats().bytes - before.bytes;
  return out;
}

/// What rank `rank`'s part holds: columns [250 rank, 250 (rank + 1)) of every row.
std::vector<std::byte> expected_part(std::uint64_t rank = 1) {
  const auto w = st_test::u8_bytes(1, rows * cols);
  std::vector<std::byte> out;
  for (std::uint64_t r = 0; r < rows; ++r) {
    const auto* row = w.data() + r * cols + rank * cols / 4;
    out.insert(out.end(), row, row + cols / 4);
  }
  return out;
}

/// nginx's log lines since `mark`, once the log has stopped growing (it writes a line after
/// the response is sent).
std::vector<std::string> settled_access(remote_servers& s, std::uint64_t mark, std::size_t at_least) {
  auto lines = s.access_since(mark);
  for (int wait = 0; wait < 250 && lines.size() < at_least; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    lines = s.access_since(mark);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return s.access_since(mark);
}

/// A mark taken once the log has stopped growing: no earlier request's line comes after it.
std::uint64_t settled_mark(remote_servers& s) {
  auto mark = s.access_mark();
  for (int wait = 0; wait < 50; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    const auto now = s.access_mark();
    if (now == mark) break;
    mark = now;
  }
  return mark;
}

remote::options quiet_head() {
  remote::options o;
  o.speculative_header_bytes = 8;  // the head holds no tensor bytes
  return o;
}

TEST(RemoteMultiRange, RowPartTravelsInTwoMultipartRequests) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  auto part = read_part(s->http("grid.safetensors"), quiet_head());
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  EXPECT_EQ(part->requests, 2U);  // 400 runs, 200 ranges per request
  // The runs' bytes and the multipart framing (about 120 bytes a part), nothing of the gaps.
  EXPECT_GT(part->body_bytes, rows * cols / 4);
  EXPECT_LT(part->body_bytes, rows * cols / 4 + rows * 160);
  for (std::uint64_t rank : {0U, 3U}) {
    auto other = read_part(s->http("grid.safetensors"), quiet_head(), rank);
    ASSERT_OK(other);
    EXPECT_EQ(other->bytes, expected_part(rank)) << "rank " << rank;
  }
}

TEST(RemoteMultiRange, NginxLogShowsTheRequestsAndBytes) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  remote::options o = quiet_head();
  o.max_ranges_per_request = 100;
  auto source = remote::http_source::open(s->http("grid.safetensors"), o);
  ASSERT_OK(source);
  auto f = safetensors::file::open_reader(*source);
  ASSERT_OK(f);
  auto plan = safetensors::plan_tensor_parallel(*f->find("w"), f->header().data_start(), 1, 2, 4);
  ASSERT_OK(plan);
  const auto mark = settled_mark(*s);
  std::vector<std::byte> got(plan->byte_size);
  ASSERT_OK(safetensors::read_slice(*f, *plan, got));
  EXPECT_EQ(got, expected_part(2));
  const auto lines = settled_access(*s, mark, 4);
  ASSERT_EQ(lines.size(), 4U) << ::testing::PrintToString(lines);
  for (const auto& line : lines) EXPECT_TRUE(has(line, " 206 \"bytes=")) << line;
  const auto sent = st_test::bytes_sent(lines);
  EXPECT_GT(sent, rows * cols / 4);
  EXPECT_LT(sent, rows * cols / 4 + rows * 160);
}

TEST(RemoteMultiRange, OneRangePerRequestWhenAsked) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  remote::options o = quiet_head();
  o.max_ranges_per_request = 1;
  o.request_cost_bytes = 1;  // a request costs a byte: one per run, no gap fetched
  auto part = read_part(s->http("grid.safetensors"), o);
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  EXPECT_EQ(part->requests, rows);
  EXPECT_EQ(part->body_bytes, rows * cols / 4);
}

// With one range per request, the 750-byte gaps between runs cost less than a request
// (request_cost_bytes): the whole span travels as one range, not 400 requests.
TEST(RemoteMultiRange, OneRangePerRequestTakesTheSpanWhenGapsCostLessThanRequests) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  remote::options o = quiet_head();
  o.max_ranges_per_request = 1;
  auto part = read_part(s->http("grid.safetensors"), o);
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  EXPECT_EQ(part->requests, 1U);
  EXPECT_EQ(part->body_bytes, (rows - 1) * cols + cols / 4);
  // Gaps dearer than a request (749 < 750 bytes): one request per run again.
  o.request_cost_bytes = 749;
  auto apart = read_part(s->http("grid.safetensors"), o);
  ASSERT_OK(apart);
  EXPECT_EQ(apart->requests, rows);
  // A span is at most part_bytes: 100 rows' span each.
  o.request_cost_bytes = 1000;
  o.part_bytes = 100 * cols;
  auto split = read_part(s->http("grid.safetensors"), o);
  ASSERT_OK(split);
  EXPECT_EQ(split->bytes, expected_part());
  EXPECT_EQ(split->requests, 4U);
}

TEST(RemoteMultiRange, CloseRunsMergeIntoOneRange) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  remote::options o = quiet_head();
  o.merge_gap_bytes = 750;  // the gap between two rows' runs
  auto part = read_part(s->http("grid.safetensors"), o);
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  EXPECT_EQ(part->requests, 1U);
  EXPECT_EQ(part->body_bytes, (rows - 1) * cols + cols / 4);  // one plain range, gaps included
  o.merge_gap_bytes = 749;
  auto apart = read_part(s->http("grid.safetensors"), o);
  ASSERT_OK(apart);
  EXPECT_EQ(apart->requests, 2U);
}

TEST(RemoteMultiRange, SmallPartBytesSplitRequests) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  remote::options o = quiet_head();
  o.part_bytes = 10'000;  // 40 runs of 250 bytes per request
  auto part = read_part(s->http("grid.safetensors"), o);
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  EXPECT_EQ(part->requests, 10U);
}

// By default a request's cost is measured: the shortest wait for a first byte times the best
// rate of a large body (256 KiB until a large body was read); a set cost is used as it is.
TEST(RemoteMultiRange, RequestCostIsMeasuredUnlessSet) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  auto source = remote::http_source::open(s->http("grid.safetensors"), quiet_head());
  ASSERT_OK(source);
  EXPECT_EQ((*source)->stats().request_cost_bytes, std::uint64_t{256} << 10);  // no large body yet
  std::vector<std::byte> w(rows * cols);
  ASSERT_OK((*source)->read(200'100, w));  // one 400 kB body: the rate is known
  const std::uint64_t measured = (*source)->stats().request_cost_bytes;
  EXPECT_NE(measured, std::uint64_t{256} << 10);
  EXPECT_GE(measured, std::uint64_t{16} << 10);
  EXPECT_LE(measured, std::uint64_t{64} << 20);
  remote::options o = quiet_head();
  o.request_cost_bytes = 5000;
  auto set = remote::http_source::open(s->http("grid.safetensors"), o);
  ASSERT_OK(set);
  ASSERT_OK((*set)->read(200'100, w));
  EXPECT_EQ((*set)->stats().request_cost_bytes, 5000U);
}

TEST(RemoteMultiRange, ServerAnsweringWholeFileFallsBackToSingleRanges) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  remote::options o = quiet_head();
  o.connections = 1;
  const auto mark = s->fault_mark();
  auto part = read_part(s->faulty("nomulti/grid.safetensors"), o);
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  // One multi-range request (200, its body not read), then each group's span of runs as one
  // range (its gaps cost less than a request each): 400 runs are two groups of 200.
  EXPECT_EQ(part->requests, 3U);
  // The server's folder is remembered: another file there (another open) sends no
  // multi-range request at all; with requests free, one request per run.
  std::filesystem::copy_file(s->root() / "grid.safetensors", s->root() / "grid2.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  o.request_cost_bytes = 1;
  auto again = read_part(s->faulty("nomulti/grid2.safetensors"), o);
  ASSERT_OK(again);
  EXPECT_EQ(again->bytes, expected_part());
  EXPECT_EQ(again->requests, rows);
  const auto lines = s->fault_since(mark);
  const auto multi = std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return has(l, ","); });
  EXPECT_EQ(multi, 1) << "a second multi-range request after the server refused the first";
}

TEST(RemoteMultiRange, ServerAnsweringOneRangeFallsBackForTheRest) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  remote::options o = quiet_head();
  o.connections = 1;
  o.request_cost_bytes = 1;
  auto part = read_part(s->faulty("firstonly/grid.safetensors"), o);
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  EXPECT_EQ(part->requests, 1U + (rows - 1));
}

TEST(RemoteMultiRange, PartsInAnyOrderLandInPlace) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  auto part = read_part(s->faulty("reverse/grid.safetensors"), quiet_head());
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  EXPECT_EQ(part->requests, 2U);
}

TEST(RemoteMultiRange, PartOfOtherBytesIsAnErrorNamingUrlAndRange) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  const std::string url = s->faulty("badpart/grid.safetensors");
  auto part = read_part(url, quiet_head());
  ASSERT_ERROR(part, safetensors::error_code::io);
  const std::string text = part.err().to_string();
  EXPECT_EQ(part.err().path, url);
  EXPECT_TRUE(has(text, "does not match a range asked for")) << text;
  EXPECT_TRUE(has(text, "ranges in bytes ")) << text;
}

TEST(RemoteMultiRange, MultipartWithoutClosingBoundaryIsAnError) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  auto part = read_part(s->faulty("truncmulti/grid.safetensors"), quiet_head());
  ASSERT_ERROR(part, safetensors::error_code::io);
  EXPECT_TRUE(has(part.err().message, "closing boundary")) << part.err().to_string();
}

TEST(RemoteMultiRange, FileChangingBetweenRequestsIsAnError) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  auto part = read_part(s->faulty("changing/grid.safetensors"), quiet_head());
  ASSERT_ERROR(part, safetensors::error_code::io);
  EXPECT_TRUE(has(part.err().message, "changed")) << part.err().to_string();
}

TEST(RemoteMultiRange, DroppedConnectionIsRetriedWhole) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  // The default head holds the header: the first request the server drops is a multi-range one.
  auto part = read_part(s->faulty("reset/grid.safetensors"), {});
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  EXPECT_EQ(part->requests, 3U);  // two requests, one of them dropped half-way and sent again
  auto never = read_part(s->faulty("resetalways/grid.safetensors"), {});
  ASSERT_ERROR(never, safetensors::error_code::io);
  EXPECT_TRUE(has(never.err().to_string(), "ranges in bytes ")) << never.err().to_string();
}

TEST(RemoteMultiRange, TokenGoesWithMultiRangeRequests) {
  ST_REMOTE_SERVERS(s);
  std::filesystem::create_directories(s->root() / "private");
  write_grid(*s);
  std::filesystem::copy_file(s->root() / "grid.safetensors", s->root() / "private" / "grid.safetensors",
                             std::filesystem::copy_options::overwrite_existing);
  remote::options o = quiet_head();
  o.bearer_token = remote_servers::token();
  auto part = read_part(s->http("private/grid.safetensors"), o);
  ASSERT_OK(part);
  EXPECT_EQ(part->bytes, expected_part());
  EXPECT_EQ(part->requests, 2U);
}

TEST(RemoteMultiRange, DescendingRangesAreReadInPlace) {
  ST_REMOTE_SERVERS(s);
  write_grid(*s);
  auto source = remote::http_source::open(s->http("grid.safetensors"), quiet_head());
  ASSERT_OK(source);
  auto f = safetensors::file::open_reader(*source);
  ASSERT_OK(f);
  // Rows in reverse, every other column: one range per element, in descending order.
  auto spec = safetensors::parse_slice_spec("::-1, 0:8");
  ASSERT_OK(spec);
  auto plan = safetensors::plan_slice(*f->find("w"), f->header().data_start(), *spec);
  ASSERT_OK(plan);
  std::vector<std::byte> got(plan->byte_size);
  ASSERT_OK(safetensors::read_slice(*f, *plan, got));
  const auto w = st_test::u8_bytes(1, rows * cols);
  std::vector<std::byte> want;
  for (std::uint64_t r = rows; r-- > 0;) want.insert(want.end(), w.data() + r * cols, w.data() + r * cols + 8);
  EXPECT_EQ(got, want);
}

}  // namespace
