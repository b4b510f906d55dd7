// SPDX-License-Identifier: Apache-2.0
// sha256_hasher over OpenSSL's EVP interface.
#include "safetensors/sha256.h"

#include <openssl/evp.h>

namespace safetensors {

struct sha256_hasher::state {
  EVP_MD_CTX* ctx = nullptr;
  ~state() { EVP_MD_CTX_free(ctx); }
};

sha256_hasher::sha256_hasher(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
sha256_hasher::sha256_hasher(sha256_hasher&&) noexcept = default;
sha256_hasher& sha256_hasher::operator=(sha256_hasher&&) noexcept = default;
sha256_hasher::~sha256_hasher() = default;

result<sha256_hasher> sha256_hasher::create() {
  auto s = std::make_unique<state>();
  s->ctx = EVP_MD_CTX_new();
  if (s->ctx == nullptr || EVP_DigestInit_ex(s->ctx, EVP_sha256(), nullptr) != 1) {
    return make_error(error_code::invalid_argument, "libcrypto cannot provide SHA-256");
  }
  return sha256_hasher(std::move(s));
}

void sha256_hasher::update(std::span<const std::byte> bytes) noexcept {
  // EVP_DigestUpdate cannot fail for an initialised SHA-256 context.
  if (!bytes.empty()) (void)EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size());
}

sha256_digest sha256_hasher::finish() noexcept {
  sha256_digest out{};
  unsigned int len = 0;
  (void)EVP_DigestFinal_ex(state_->ctx, out.data(), &len);
  (void)EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr);
  return out;
}

std::string sha256_hasher::finish_hex() { return to_hex(finish()); }

std::string to_hex(const sha256_digest& digest) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (std::uint8_t b : digest) {
    out += digits[b >> 4];
    out += digits[b & 0xF];
  }
  return out;
}

result<std::unique_ptr<hasher>> make_sha256_hasher() {
  auto h = sha256_hasher::create();
  if (!h) return std::move(h).err();
  return std::unique_ptr<hasher>(std::make_unique<sha256_hasher>(std::move(h).value()));
}

}  // namespace safetensors
