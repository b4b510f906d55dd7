// SPDX-License-Identifier: Apache-2.0
// Tensor-parallel loading of a checkpoint served by nginx: each rank's parts equal the local
// ones, and nginx's access log shows a few requests per tensor (a row part's 400 runs travel
// in two multi-range requests) carrying the part's bytes and multipart framing, nothing else
// of the split tensors.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "remote/remote_fixtures.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/distributed/tensor_parallel.h"
#include "safetensors/remote/remote.h"
#include "support/status_matchers.h"

namespace {

using st_test::remote_servers;

TEST(RemoteTensorParallel, EachRankFetchesItsRunsInFewRequests) {
  ST_REMOTE_SERVERS(s);
  const auto dir = s->root() / "tp";
  std::filesystem::create_directories(dir);
  std::vector<std::vector<std::byte>> bytes;
  for (std::size_t i = 0; i < 3; ++i) bytes.push_back(st_test::u8_bytes(i, 400 * 1'000));
  bytes.push_back(st_test::u8_bytes(3, 1'000));
  std::vector<safetensors::tensor_data> data = {
      {"layer.0.col", safetensors::dtype::U8, {400, 1'000}, bytes[0]},
      {"layer.0.row", safetensors::dtype::U8, {400, 1'000}, bytes[1]},
      {"layer.1.col", safetensors::dtype::U8, {400, 1'000}, bytes[2]},
      {"norm", safetensors::dtype::U8, {1'000}, bytes[3]},
  };
  safetensors::shard_write_options w;
  w.max_shard_bytes = 800'000;
  ASSERT_OK(safetensors::write_checkpoint(dir.string(), data, w));
  auto plan = safetensors::parse_tp_plan(R"({"*.col": "column", "*.row": "row"})");
  ASSERT_OK(plan);
  auto local = safetensors::checkpoint::open(dir.string());
  ASSERT_OK(local);

  safetensors::remote::options o;
  o.speculative_header_bytes = 8;  // the first response holds no tensor bytes: every part is fetched
  for (std::uint64_t rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(fmt::format("rank {}", rank));
    auto c = safetensors::remote::open_checkpoint(s->http("tp/model.safetensors.index.json"), o);
    ASSERT_OK(c);
    ASSERT_EQ(c->shards().size(), 2U);
    auto mine = safetensors::plan_tp_rank(*c, *plan, rank, 4);
    ASSERT_OK(mine);
    std::uint64_t runs = 0;
    for (const auto& t : mine->tensors) runs += t.part.ranges.size();
    EXPECT_EQ(runs, 1U + 400U + 1U + 1U);  // column parts are one run, a row part one per row
    // The opening's requests (index, shard headers) are logged once their responses are sent: wait
    // until the log stops growing, so that none of them lands after the mark.
    auto mark = s->access_mark();
    for (int wait = 0; wait < 50; ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      const auto now = s->access_mark();
      if (now == mark) break;
      mark = now;
    }
    auto parts = safetensors::load_tp_rank(*mine);
    ASSERT_OK(parts);
    // nginx writes a request's log line after the response is sent: the last lines may trail the load.
    auto lines = s->access_since(mark);
    // Two column parts and the norm: one range each; the row part: 400 runs, 200 per request.
    const std::size_t requests = 2 + 1 + 2;
    for (int wait = 0; wait < 250 && lines.size() < requests; ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      lines = s->access_since(mark);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    lines = s->access_since(mark);
    EXPECT_EQ(lines.size(), requests) << ::testing::PrintToString(lines);
    // The parts' bytes, plus about 120 bytes of multipart framing per run of the row part.
    EXPECT_EQ(mine->bytes, 3 * 100'000U + 1'000U);
    EXPECT_GT(st_test::bytes_sent(lines), mine->bytes);
    EXPECT_LT(st_test::bytes_sent(lines), mine->bytes + 400 * 160);

    auto expected = safetensors::load_tp_rank(safetensors::plan_tp_rank(*local, *plan, rank, 4).value());
    ASSERT_OK(expected);
    ASSERT_EQ(parts->size(), expected->size());
    for (std::size_t i = 0; i < parts->size(); ++i) {
      EXPECT_EQ((*parts)[i].name, (*expected)[i].name);
      EXPECT_EQ((*parts)[i].shape, (*expected)[i].shape);
      EXPECT_TRUE(std::ranges::equal((*parts)[i].bytes(), (*expected)[i].bytes())) << (*parts)[i].name;
    }
  }
}

}  // namespace
