// SPDX-License-Identifier: Apache-2.0
/// \file policy.h
/// How strictly a header is validated, and the resource caps that apply.
///
/// - `reference` (default): the verdict of huggingface/safetensors on every file, except
///   that any duplicate JSON key is `DuplicateKey` and serde's array-form tensor entries
///   and object-form dtypes are rejected.
/// - `strict` (upload validation): reference, plus unknown tensor fields are rejected and
///   the caps of `limits::strict_defaults()` apply.
/// - `lenient`: reference, but bytes after the last tensor are accepted with a warning.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace safetensors {

enum class validation_policy : std::uint8_t { reference, strict, lenient };

/// "reference", "strict" or "lenient".
[[nodiscard]] std::string_view policy_name(validation_policy p) noexcept;
[[nodiscard]] std::optional<validation_policy> parse_policy(std::string_view name) noexcept;

/// Resource caps. Exceeding the header cap is `HeaderTooLarge`; the others are `LimitExceeded`.
struct limits {
  /// The reference's MAX_HEADER_SIZE: N over this is HeaderTooLarge.
  static constexpr std::uint64_t reference_max_header_bytes = 100'000'000;

  std::uint64_t max_header_bytes = reference_max_header_bytes;
  std::uint64_t max_tensors = UINT64_MAX;
  std::uint64_t max_rank = UINT64_MAX;
  std::uint64_t max_name_bytes = UINT64_MAX;
  std::uint64_t max_metadata_bytes = UINT64_MAX;  ///< sum of metadata key and value bytes

  /// The reference's only cap: a 100,000,000-byte header.
  [[nodiscard]] static limits reference_defaults() noexcept { return {}; }

  /// Upload-validation caps: 25 MB header (as huggingface_hub), 1,000,000 tensors,
  /// rank 8, 1024-byte names, 1 MiB of metadata.
  [[nodiscard]] static limits strict_defaults() noexcept {
    limits l;
    l.max_header_bytes = 25'000'000;
    l.max_tensors = 1'000'000;
    l.max_rank = 8;
    l.max_name_bytes = 1024;
    l.max_metadata_bytes = 1 << 20;
    return l;
  }

  [[nodiscard]] static limits defaults_for(validation_policy p) noexcept {
    return p == validation_policy::strict ? strict_defaults() : reference_defaults();
  }
};

/// Options for parsing a header.
struct parse_options {
  validation_policy policy = validation_policy::reference;
  std::optional<limits> caps;  ///< nullopt: limits::defaults_for(policy)

  [[nodiscard]] limits effective_limits() const noexcept { return caps ? *caps : limits::defaults_for(policy); }
};

}  // namespace safetensors
