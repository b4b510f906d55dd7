// SPDX-License-Identifier: Apache-2.0
// Files the remote tests serve: U8 tensors of patterned bytes, written under the servers'
// root, and a sparse file of any size with a small header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "remote/remote_servers.h"

namespace st_test {

/// Byte i of a pattern seeded by `seed`.
inline std::byte pattern_byte(std::size_t i, unsigned seed) {
  return static_cast<std::byte>((i * 7 + seed * 13) & 0xff);
}

/// Writes U8 tensors (name, byte count) with patterned bytes to `root/relative`.
void write_u8_file(const std::filesystem::path& path, const std::vector<std::pair<std::string, std::size_t>>& tensors);

/// The bytes write_u8_file gave tensor number `index`.
std::vector<std::byte> u8_bytes(std::size_t index, std::size_t size);

/// A file of `data_bytes` zero bytes (sparse) in one U8 tensor "w", after a real header.
void write_sparse_file(const std::filesystem::path& path, std::uint64_t data_bytes);

}  // namespace st_test

/// Skips the test when the servers cannot run (nginx missing), saying why.
#define ST_REMOTE_SERVERS(var)                                       \
  ::st_test::remote_servers* var = ::st_test::remote_servers::get(); \
  if ((var) == nullptr) GTEST_SKIP() << ::st_test::remote_servers::why_missing()
