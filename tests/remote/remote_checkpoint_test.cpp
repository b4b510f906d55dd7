// SPDX-License-Identifier: Apache-2.0
// Sharded checkpoints over HTTP: an index URL or a base URL opens as one namespace, shard
// names stay under the index's directory on the same server, verify works remotely.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "remote/remote_fixtures.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/remote/remote.h"
#include "safetensors/sha256.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using st_test::remote_servers;
namespace remote = safetensors::remote;

/// Writes a checkpoint of 6 tensors in 3 shards under root/dir.
void write_sharded(remote_servers& s, const std::string& dir) {
  std::filesystem::create_directories(s.root() / dir);
  std::vector<std::vector<std::byte>> bytes;
  for (std::size_t i = 0; i < 6; ++i) bytes.push_back(st_test::u8_bytes(i, 40'000));
  std::vector<safetensors::tensor_data> data;
  for (std::size_t i = 0; i < 6; ++i) {
    data.push_back({fmt::format("layer.{}.weight", i), safetensors::dtype::U8, {40'000}, bytes[i]});
  }
  safetensors::shard_write_options o;
  o.max_shard_bytes = 80'000;
  ASSERT_OK(safetensors::write_checkpoint((s.root() / dir).string(), data, o));
}

TEST(RemoteCheckpoint, IndexUrlAndBaseUrlOpenAsOneNamespace) {
  ST_REMOTE_SERVERS(s);
  write_sharded(*s, "sharded");
  for (const std::string& url : {s->http("sharded/model.safetensors.index.json"), s->http("sharded/")}) {
    auto c = remote::open_checkpoint(url);
    ASSERT_OK(c);
    EXPECT_TRUE(c->sharded());
    EXPECT_EQ(c->shards().size(), 3U);
    ASSERT_EQ(c->tensors().size(), 6U);
    for (std::size_t i = 0; i < 6; ++i) {
      std::vector<std::byte> out(40'000);
      ASSERT_OK(c->read_into(fmt::format("layer.{}.weight", i), out));
      EXPECT_EQ(out, st_test::u8_bytes(i, 40'000));
    }
  }
}

TEST(RemoteCheckpoint, IndexLargerThanTheFirstGuessIsReadWhole) {
  ST_REMOTE_SERVERS(s);
  write_sharded(*s, "longindex");
  std::string index = st_test::read_text(s->root() / "longindex/model.safetensors.index.json");
  const auto at = index.find("\"metadata\": {") + 13;
  ASSERT_NE(at, std::string::npos + 13) << index;
  index.insert(at, R"("note": ")" + std::string(600'000, 'x') + "\",");
  std::ofstream(s->root() / "longindex/long.safetensors.index.json") << index;
  auto c = remote::open_checkpoint(s->http("longindex/long.safetensors.index.json"));
  ASSERT_OK(c);
  EXPECT_EQ(c->index_metadata().at("note").size(), 600'000U);
  EXPECT_EQ(c->tensors().size(), 6U);
}

TEST(RemoteCheckpoint, BaseUrlOfASingleFile) {
  ST_REMOTE_SERVERS(s);
  st_test::write_u8_file(s->root() / "single/model.safetensors", {{"a", 10}});
  auto c = remote::open_checkpoint(s->http("single/"));
  ASSERT_OK(c);
  EXPECT_FALSE(c->sharded());
  EXPECT_EQ(c->tensors().size(), 1U);
}

TEST(RemoteCheckpoint, VerifyWithChecksumsMatchesTheLocalReport) {
  ST_REMOTE_SERVERS(s);
  write_sharded(*s, "verified");
  safetensors::verify_options v;
  v.digest = safetensors::make_sha256_hasher;
  auto local = safetensors::verify_checkpoint((s->root() / "verified").string(), v);
  auto far = remote::verify_checkpoint(s->http("verified/model.safetensors.index.json"), {}, v);
  ASSERT_OK(local);
  ASSERT_OK(far);
  EXPECT_TRUE(far->ok());
  ASSERT_EQ(far->shards.size(), local->shards.size());
  for (std::size_t i = 0; i < local->shards.size(); ++i) EXPECT_EQ(far->shards[i].digest, local->shards[i].digest);
}

TEST(RemoteCheckpoint, ShardNamesStayUnderTheIndexDirectory) {
  ST_REMOTE_SERVERS(s);
  st_test::write_u8_file(s->root() / "outside.safetensors", {{"t", 10}});
  std::filesystem::create_directories(s->root() / "evil");
  for (const char* shard : {"../outside.safetensors", "a/../../outside.safetensors", "/outside.safetensors",
                            "./x.safetensors", "http://example.invalid/x.safetensors"}) {
    std::ofstream(s->root() / "evil/model.safetensors.index.json")
        << fmt::format(R"({{"metadata":{{}},"weight_map":{{"t":"{}"}}}})", shard);
    auto c = remote::open_checkpoint(s->http("evil/model.safetensors.index.json"));
    EXPECT_ERROR(c, safetensors::error_code::unsafe_path) << shard;
  }
  // A host spelled as a name is only a (missing) path on this server.
  const auto mark = s->access_mark();
  std::ofstream(s->root() / "evil/model.safetensors.index.json")
      << R"({"metadata":{},"weight_map":{"t":"example.invalid:80/x.safetensors"}})";
  auto c = remote::open_checkpoint(s->http("evil/model.safetensors.index.json"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.err().path, s->http("evil/example.invalid%3A80/x.safetensors")) << c.err().to_string();
  EXPECT_EQ(s->access_since(mark).size(), 2U);  // the index, then the shard on this server
}

TEST(RemoteCheckpoint, OversizedIndexIsRefused) {
  ST_REMOTE_SERVERS(s);
  write_sharded(*s, "bigindex");
  safetensors::checkpoint_options o;
  o.max_index_bytes = 50;
  auto c = remote::open_checkpoint(s->http("bigindex/model.safetensors.index.json"), {}, o);
  ASSERT_ERROR(c, safetensors::error_code::io);
  EXPECT_NE(c.err().message.find("larger than the 50 bytes"), std::string::npos) << c.err().to_string();
}

}  // namespace
