// SPDX-License-Identifier: Apache-2.0
/// \file header.h
/// The parsed and validated header of a SafeTensors file, and the I/O-free functions
/// that produce it from bytes.
///
/// On-disk layout:
///
///     [0, 8)        N: u64 little-endian, header length in bytes (padding included)
///     [8, 8+N)      UTF-8 JSON object, optionally surrounded by JSON whitespace:
///                   {"__metadata__": {"k": "v", ...},            (optional)
///                    "<name>": {"dtype": "F32", "shape": [2, 3],
///                               "data_offsets": [begin, end]}, ...}
///     [8+N, EOF)    data buffer: the tensors' bytes, tiling it exactly;
///                   data_offsets are relative to its start
///
/// Checks run in the reference's order (see docs/format-policy.md), so the first error
/// reported is the one huggingface/safetensors reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/lifetimebound.h"
#include "safetensors/policy.h"

namespace safetensors {

namespace detail {
struct header_builder;  // the parsers fill a header through it

/// Memory for a header's arrays. From `large_array_bytes` on (headers of about 70k tensors
/// and more), an anonymous mapping of whole 2 MiB units that the kernel may back with
/// transparent huge pages (madvise MADV_HUGEPAGE, which THP's default "madvise" mode
/// honours): a fresh 1M-tensor result then faults in some 50 pages instead of 13,700 (measured: 46).
/// Smaller arrays come from operator new. Throws std::bad_alloc.
inline constexpr std::size_t large_array_bytes = std::size_t{4} << 20;
[[nodiscard]] void* allocate_array(std::size_t bytes);
void deallocate_array(void* p, std::size_t bytes) noexcept;

template <class T>
struct array_allocator {
  using value_type = T;
  array_allocator() noexcept = default;
  template <class U>
  array_allocator(const array_allocator<U>& /*unused*/) noexcept {}  // NOLINT(google-explicit-constructor)
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_array(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { deallocate_array(p, n * sizeof(T)); }
  friend bool operator==(array_allocator /*unused*/, array_allocator /*unused*/) noexcept { return true; }
};
template <class T>
using array = std::vector<T, array_allocator<T>>;

/// Frees what allocate_array(bytes) returned.
struct array_deleter {
  std::size_t bytes = 0;
  template <class T>
  void operator()(T* p) const noexcept {
    deallocate_array(p, bytes);
  }
};
}  // namespace detail

/// String-to-string metadata, ordered by key.
using metadata_map = std::map<std::string, std::string, std::less<>>;

/// One tensor's entry. `name` and `shape` point into the owning `header`.
struct tensor_info {
  std::string_view name;
  dtype type = dtype::U8;
  std::span<const std::uint64_t> shape;
  std::uint64_t begin = 0;  ///< data_offsets[0], relative to the data buffer
  std::uint64_t end = 0;    ///< data_offsets[1]

  [[nodiscard]] std::uint64_t byte_size() const noexcept { return end - begin; }
  /// Product of the shape (validated not to overflow).
  [[nodiscard]] std::uint64_t element_count() const noexcept;
};

/// A non-fatal finding (lenient mode's trailing bytes).
struct warning {
  std::string message;
  std::optional<std::uint64_t> offset;
};

/// A validated header. Move-only: tensor names and shapes live in arenas it owns.
class header {
 public:
  header() = default;
  header(header&&) noexcept = default;
  header& operator=(header&&) noexcept = default;
  header(const header&) = delete;
  header& operator=(const header&) = delete;

  /// Tensors in data order (sorted by data_offsets), which is file order.
  [[nodiscard]] std::span<const tensor_info> tensors() const& noexcept SAFETENSORS_LIFETIMEBOUND { return tensors_; }
  std::span<const tensor_info> tensors() const&& = delete;
  /// Lookup by exact name; nullptr when absent. O(log n).
  [[nodiscard]] const tensor_info* find(std::string_view name) const& noexcept SAFETENSORS_LIFETIMEBOUND;
  const tensor_info* find(std::string_view name) const&& = delete;
  /// `__metadata__`; nullopt when absent or null.
  [[nodiscard]] const std::optional<metadata_map>& metadata() const& noexcept SAFETENSORS_LIFETIMEBOUND {
    return metadata_;
  }
  const std::optional<metadata_map>& metadata() const&& = delete;
  /// N, the header length from the prefix (padding included).
  [[nodiscard]] std::uint64_t header_length() const noexcept { return header_length_; }
  /// File offset of the data buffer: 8 + N.
  [[nodiscard]] std::uint64_t data_start() const noexcept { return 8 + header_length_; }
  /// Bytes covered by tensors (end of the last tensor).
  [[nodiscard]] std::uint64_t data_size() const noexcept { return data_size_; }
  /// Findings that did not make the file invalid (lenient mode).
  [[nodiscard]] std::span<const warning> warnings() const noexcept { return warnings_; }

 private:
  friend struct detail::header_builder;
  detail::array<tensor_info> tensors_;
  detail::array<std::uint32_t> by_name_;                  // indices into tensors_, sorted by name
  std::unique_ptr<char[], detail::array_deleter> names_;  // arena for tensor names
  std::size_t names_capacity_ = 0;
  detail::array<std::uint64_t> dims_;  // arena for shapes
  std::optional<metadata_map> metadata_;
  std::uint64_t header_length_ = 0;
  std::uint64_t data_size_ = 0;
  std::vector<warning> warnings_;
};

/// Stages 1-3: reads N from the first bytes of a file of `file_size` bytes. Errors:
/// HeaderTooSmall, HeaderTooLarge, InvalidHeaderLength, in explain_framing_error's words
/// (sniff.h) when `prefix` holds the first sniff_prefix_bytes (or the whole file): "file is
/// truncated: ...", "this is a GGUF file, not SafeTensors", ... (8 bytes give the code alone).
[[nodiscard]] result<std::uint64_t> read_header_length(std::span<const std::byte> prefix, std::uint64_t file_size,
                                                       const parse_options& options = {});

/// Stages 4-7: validates the N header bytes of a file of `file_size` bytes.
/// Errors: InvalidHeader, InvalidHeaderDeserialization, DuplicateKey, LimitExceeded,
/// UnknownField (strict), InvalidOffset, ValidationOverflow, MisalignedSlice,
/// TensorInvalidInfo, MetadataIncompleteBuffer.
[[nodiscard]] result<header> parse_header(std::span<const std::byte> header_json, std::uint64_t file_size,
                                          const parse_options& options = {});

/// Stages 1-7 on a whole file held in memory. No I/O.
[[nodiscard]] result<header> parse_file_bytes(std::span<const std::byte> file, const parse_options& options = {});

class header_parser;

namespace detail {
/// parse_header_padded (header/header_builder.h) with `parser`'s buffers and recycled arrays.
[[nodiscard]] result<header> parse_header_padded(header_parser& parser, std::span<const std::byte> header_json,
                                                 std::uint64_t file_size, const parse_options& options);
}  // namespace detail

/// The functions above with a parser of your own: it keeps its JSON buffers (a few times
/// the header's size) between calls whatever the header size, so a program parsing many
/// large headers touches no fresh memory but the results'. The free
/// functions share a per-thread parser that keeps its buffers only for headers up to
/// 16 MiB of JSON, so one huge header does not pin memory for a thread's lifetime.
/// Not thread-safe: use one per thread.
class header_parser {
 public:
  header_parser();
  ~header_parser();
  header_parser(header_parser&&) noexcept;
  header_parser& operator=(header_parser&&) noexcept;
  header_parser(const header_parser&) = delete;
  header_parser& operator=(const header_parser&) = delete;

  /// As `parse_header`.
  [[nodiscard]] result<header> parse(std::span<const std::byte> header_json, std::uint64_t file_size,
                                     const parse_options& options = {});
  /// As the free `parse_file_bytes`.
  [[nodiscard]] result<header> parse_file_bytes(std::span<const std::byte> file, const parse_options& options = {});
  /// Takes back a header the program is done with, so that the next parse fills its arrays
  /// instead of fresh memory: a program checking large headers one after another then
  /// faults in no page for the results either. Optional; only the last one is kept.
  void recycle(header&& spent) noexcept;

 private:
  friend result<header> detail::parse_header_padded(header_parser& parser, std::span<const std::byte> header_json,
                                                    std::uint64_t file_size, const parse_options& options);
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace safetensors
