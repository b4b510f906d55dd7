// SPDX-License-Identifier: Apache-2.0
#include "safetensors/sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "safetensors/checkpoint_verify.h"
#include "safetensors/writer.h"
#include "support/byte_views.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using st_test::bytes_of;

TEST(Sha256, KnownVectors) {
  auto h = safetensors::sha256_hasher::create();
  ASSERT_OK(h);
  EXPECT_EQ(safetensors::to_hex(h->finish()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  h->update(bytes_of("abc"));
  EXPECT_EQ(safetensors::to_hex(h->finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, PiecesEqualWhole) {
  auto h = safetensors::sha256_hasher::create();
  ASSERT_OK(h);
  const std::string text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (std::size_t i = 0; i < text.size(); i += 5) h->update(bytes_of(text.substr(i, 5)));
  EXPECT_EQ(safetensors::to_hex(h->finish()), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// The core's verify_checkpoint hashes with the hasher this component makes: sha256sum's digest.
TEST(Sha256, VerifyCheckpointWithMakeSha256Hasher) {
  const auto path = (st_test::scratch_dir() / "hashed.safetensors").string();
  const std::string text = "some tensor bytes";
  const safetensors::tensor_data t{"w", safetensors::dtype::U8, {text.size()}, bytes_of(text)};
  ASSERT_OK(safetensors::write_file(path, std::span(&t, 1)));
  safetensors::verify_options options;
  options.digest = safetensors::make_sha256_hasher;
  auto report = safetensors::verify_checkpoint(path, options);
  ASSERT_OK(report);
  ASSERT_EQ(report->shards.size(), 1U);
  auto h = safetensors::sha256_hasher::create();
  ASSERT_OK(h);
  h->update(st_test::read_bytes(path));
  EXPECT_EQ(report->shards[0].digest, safetensors::to_hex(h->finish()));
}

}  // namespace
