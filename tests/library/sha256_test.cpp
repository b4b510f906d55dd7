// SPDX-License-Identifier: Apache-2.0
#include "safetensors/sha256.h"
#include "support/status_matchers.h"

#include <gtest/gtest.h>

#include <string>

namespace {

std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

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

}  // namespace
