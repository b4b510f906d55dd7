// SPDX-License-Identifier: Apache-2.0
/// \file error.h
/// The one failure type of the library: an error code mirroring the reference
/// implementation's variants, a message, and where it happened (file path, byte
/// offset in the file, tensor name), plus `result<T>`, the must-check value-or-error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace safetensors {

/// Error categories. The first ten mirror `SafeTensorError` of huggingface/safetensors
/// in the order the reference checks them; the rest are ours.
enum class error_code : std::uint8_t {
  header_too_small,                ///< file shorter than 8 bytes
  header_too_large,                ///< length prefix N over the header cap
  invalid_header_length,           ///< 8 + N past the end of the file
  invalid_header,                  ///< header bytes are not UTF-8
  invalid_header_deserialization,  ///< JSON syntax, schema, dtype or metadata type
  duplicate_key,                   ///< a JSON object repeats a key (our deviation)
  invalid_offset,                  ///< tensors do not tile the data buffer
  validation_overflow,             ///< shape product or byte size overflows
  misaligned_slice,                ///< sub-byte tensor or slice not ending on a byte
  tensor_invalid_info,             ///< byte extent differs from shape x dtype size
  metadata_incomplete_buffer,      ///< data buffer does not end at the end of file
  limit_exceeded,                  ///< a strict-mode cap (tensor count, rank, ...) is exceeded
  unknown_field,                   ///< strict mode: unknown field in a tensor entry
  tensor_not_found,                ///< lookup by a name the file does not have
  invalid_argument,                ///< caller passed something unusable (writer input, slice, ...)
  io,                              ///< the operating system reported an error
  invalid_slice,                   ///< slice spec unparsable, too many indices, index out of bounds
  invalid_index,                   ///< checkpoint index JSON malformed (syntax or schema)
  unsafe_path,                     ///< a shard name would leave the checkpoint's directory
  shard_mismatch,                  ///< index and shards disagree (missing, duplicated, unmapped, total_size)
  invalid_format,                  ///< a foreign input (PyTorch, pickle, npy/npz, GGUF, zip) is malformed
  unsupported,                     ///< a well-formed input uses something we cannot represent (type, feature)
  unsafe_content,                  ///< an input asks for something refused for safety (pickle global, zip bomb)
  cancelled,                       ///< the caller's progress callback asked to stop
  code_execution,                  ///< a pickle names a global that runs code (os.system, eval, ...): an attack
};

/// The reference's variant name ("InvalidOffset", ...) or ours ("DuplicateKey", ...).
[[nodiscard]] std::string_view error_code_name(error_code code) noexcept;

/// A failure with everything needed to report it: what, and where.
struct error {
  error_code code = error_code::io;
  std::string message;                  ///< human-readable, without the location
  std::optional<std::uint64_t> offset;  ///< byte offset in the file, when one applies
  std::optional<std::string> tensor;    ///< tensor name, when one applies
  std::string path;                     ///< file path, empty for in-memory input
  int os_errno = 0;                     ///< errno for `io` errors, else 0

  /// One line: "<path>: <message> (at byte N, tensor 'T')".
  [[nodiscard]] std::string to_string() const;

  /// This error, naming `file` when it names no file yet: the innermost location wins (a
  /// shard's path is kept when the checkpoint directory is added on the way out).
  [[nodiscard]] error with_path(std::string_view file) &&;
};

/// Builds an error; a short helper so call sites stay one line.
[[nodiscard]] error make_error(error_code code, std::string message, std::optional<std::uint64_t> offset = std::nullopt,
                               std::optional<std::string> tensor = std::nullopt);

namespace detail {
/// Prints "safetensors: value() of a failed result: <error>" to stderr and aborts.
[[noreturn]] void value_of_failed_result(const error& e) noexcept;
/// Prints "safetensors: err() of a successful result" to stderr and aborts.
[[noreturn]] void err_of_successful_result() noexcept;
}  // namespace detail

/// A value or an error. `value()` (and `*`, `->`) on an error is a programming error: the
/// process stops with the error's text on stderr (the API promises no exceptions, so none is
/// thrown); `value_or` and `ok()` are the checked ways. `err()` on a value is the same mistake.
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  result(error err) : state_(std::in_place_index<1>, std::move(err)) {}  // NOLINT: implicit by design

  [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  [[nodiscard]] T& value() & {
    check();
    return *std::get_if<0>(&state_);
  }
  [[nodiscard]] const T& value() const& {
    check();
    return *std::get_if<0>(&state_);
  }
  [[nodiscard]] T&& value() && {
    check();
    return std::move(*std::get_if<0>(&state_));
  }
  /// The value, or `fallback` when this is an error.
  template <class U>
  [[nodiscard]] T value_or(U&& fallback) const& {
    return ok() ? *std::get_if<0>(&state_) : static_cast<T>(std::forward<U>(fallback));
  }
  template <class U>
  [[nodiscard]] T value_or(U&& fallback) && {
    return ok() ? std::move(*std::get_if<0>(&state_)) : static_cast<T>(std::forward<U>(fallback));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  [[nodiscard]] const error& err() const& {
    const error* e = std::get_if<1>(&state_);
    if (e == nullptr) detail::err_of_successful_result();
    return *e;
  }
  [[nodiscard]] error&& err() && {
    error* e = std::get_if<1>(&state_);
    if (e == nullptr) detail::err_of_successful_result();
    return std::move(*e);
  }

 private:
  void check() const noexcept {
    if (!ok()) detail::value_of_failed_result(*std::get_if<1>(&state_));
  }
  std::variant<T, error> state_;
};

/// result<void>: success or an error.
template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(error err) : err_(std::move(err)) {}  // NOLINT: implicit by design

  [[nodiscard]] bool ok() const noexcept { return !err_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] const error& err() const& {
    if (!err_) detail::err_of_successful_result();
    return *err_;
  }
  [[nodiscard]] error&& err() && {
    if (!err_) detail::err_of_successful_result();
    return std::move(*err_);
  }

 private:
  std::optional<error> err_;
};

using status = result<void>;

}  // namespace safetensors
