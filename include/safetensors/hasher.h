// SPDX-License-Identifier: Apache-2.0
/// \file hasher.h
/// A hash function fed in pieces, chosen by the caller: what verify_checkpoint hashes shard
/// files with. The core declares it and implements none, so it links no hash library;
/// sha256.h (component sha256, OpenSSL's libcrypto) provides SHA-256.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "safetensors/error.h"

namespace safetensors {

/// One message hashed in any number of pieces.
class hasher {
 public:
  virtual ~hasher() = default;

  virtual void update(std::span<const std::byte> bytes) noexcept = 0;
  /// The digest of every byte fed, lower-case hex; the hasher is then reset for a new message.
  [[nodiscard]] virtual std::string finish_hex() = 0;

 protected:
  hasher() = default;
  hasher(const hasher&) = default;
  hasher(hasher&&) = default;
  hasher& operator=(const hasher&) = default;
  hasher& operator=(hasher&&) = default;
};

/// Makes a fresh hasher for each message (each shard file), so hashing can run concurrently.
/// Fails as the hash library does (e.g. an algorithm a FIPS policy forbids).
///
/// **Example**
/// ```cpp
/// safetensors::verify_options options;
/// options.digest = safetensors::make_sha256_hasher;  // sha256.h, safetensors::sha256
/// ```
using hasher_factory = std::function<result<std::unique_ptr<hasher>>()>;

}  // namespace safetensors
