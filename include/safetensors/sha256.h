// SPDX-License-Identifier: Apache-2.0
/// \file sha256.h
/// Incremental SHA-256 (OpenSSL's libcrypto underneath), for checksums of whole files
/// and of single tensors computed in one streaming pass. Component sha256
/// (safetensors::sha256, safetensors_sha256.pc): the one part of the library that links libcrypto.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "safetensors/error.h"
#include "safetensors/hasher.h"

namespace safetensors {

using sha256_digest = std::array<std::uint8_t, 32>;

/// Feeds bytes in any number of pieces; `finish()` gives the digest of all of them.
/// Move-only.
class sha256_hasher final : public hasher {
 public:
  /// Errors: InvalidArgument if libcrypto cannot provide SHA-256 (e.g. a FIPS policy).
  [[nodiscard]] static result<sha256_hasher> create();

  sha256_hasher(sha256_hasher&&) noexcept;
  sha256_hasher& operator=(sha256_hasher&&) noexcept;
  sha256_hasher(const sha256_hasher&) = delete;
  sha256_hasher& operator=(const sha256_hasher&) = delete;
  ~sha256_hasher() override;

  void update(std::span<const std::byte> bytes) noexcept override;
  /// The digest; the hasher is then reset for a new message.
  [[nodiscard]] sha256_digest finish() noexcept;
  /// `to_hex(finish())`.
  [[nodiscard]] std::string finish_hex() override;

 private:
  struct state;
  explicit sha256_hasher(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
};

/// Lower-case hex, 64 characters, as sha256sum prints it.
[[nodiscard]] std::string to_hex(const sha256_digest& digest);

/// A new SHA-256 hasher: a `hasher_factory`, e.g. `verify_options::digest` for the SHA-256 of
/// every shard. Errors: as `sha256_hasher::create()`.
[[nodiscard]] result<std::unique_ptr<hasher>> make_sha256_hasher();

}  // namespace safetensors
