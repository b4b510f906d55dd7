// SPDX-License-Identifier: Apache-2.0
/// \file file.h
/// Opening a SafeTensors file for reading: validated header plus access to tensor bytes.
///
/// Backends:
/// - `mmap` (default): the file is mapped read-only; `view()` returns zero-copy spans
///   into the mapping. If the file is truncated while mapped, touching the lost pages
///   raises SIGBUS: that is the kernel's contract for mappings. Use `pread` for files
///   that others may modify, and on network filesystems.
/// - `pread`: nothing is mapped; tensor bytes are read on request with pread(2) by
///   `read_into` / `load`. A file that shrinks gives a clean `IoError`.
/// - `memory` (`file::from_buffer`): a caller's buffer, not copied.
/// - `reader` (`file::open_reader`): bytes fetched by range through a `range_reader`
///   (remote.h: HTTP(S) Range requests); like `pread`, no in-memory views.
///
/// Lifetime: a `tensor_view` points into its `file`; it must not outlive it. Accessors
/// are lifetime-bound, and calling `view()` on a temporary `file` does not compile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/header.h"
#include "safetensors/lifetimebound.h"
#include "safetensors/range_reader.h"

namespace safetensors {

enum class io_backend : std::uint8_t { mmap, pread, memory, reader };

/// "mmap", "pread", "memory" or "reader".
[[nodiscard]] std::string_view backend_name(io_backend b) noexcept;

struct open_options {
  io_backend backend = io_backend::mmap;
  parse_options parse;
  /// Parses the header with this parser instead of the calling thread's: a program opening
  /// many files keeps the parser's JSON buffers whatever the header size, and, handing each
  /// file's header back when done (`parser.recycle(std::move(f).take_header())`), the
  /// results' arrays too, so it faults in no fresh memory per file. Not owned; as
  /// header_parser, not thread-safe: one per thread.
  header_parser* parser = nullptr;
};

/// A tensor's entry and its bytes. Non-owning: valid while its `file` lives.
struct tensor_view {
  const tensor_info* info = nullptr;
  std::span<const std::byte> data;

  [[nodiscard]] std::string_view name() const noexcept { return info->name; }
  [[nodiscard]] dtype type() const noexcept { return info->type; }
  [[nodiscard]] std::span<const std::uint64_t> shape() const noexcept { return info->shape; }
};

/// An open, validated SafeTensors file. Move-only.
class file {
 public:
  /// Opens and validates `path` (stages 1-7). Errors carry `path`.
  [[nodiscard]] static result<file> open(const std::string& path, const open_options& options = {});
  /// Validates a whole file held in the caller's memory; the buffer must outlive the result.
  [[nodiscard]] static result<file> from_buffer(std::span<const std::byte> bytes SAFETENSORS_LIFETIMEBOUND,
                                                const parse_options& options = {});
  /// Validates the file `source` reads (8 + N header bytes, read as two ranges) with the
  /// same parser and policy as a local file; `options.backend` is ignored. Errors carry
  /// `source->name()`.
  [[nodiscard]] static result<file> open_reader(std::shared_ptr<const range_reader> source,
                                                const open_options& options = {});

  file(file&& other) noexcept;
  file& operator=(file&& other) noexcept;
  file(const file&) = delete;
  file& operator=(const file&) = delete;
  ~file();

  [[nodiscard]] const safetensors::header& header() const& noexcept SAFETENSORS_LIFETIMEBOUND { return header_; }
  const safetensors::header& header() const&& = delete;
  [[nodiscard]] std::span<const tensor_info> tensors() const& noexcept SAFETENSORS_LIFETIMEBOUND {
    return header_.tensors();
  }
  std::span<const tensor_info> tensors() const&& = delete;
  [[nodiscard]] const tensor_info* find(std::string_view name) const& noexcept SAFETENSORS_LIFETIMEBOUND {
    return header_.find(name);
  }

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] io_backend backend() const noexcept { return backend_; }
  [[nodiscard]] std::uint64_t file_size() const noexcept { return size_; }
  /// True when the bytes are in memory (mmap or memory backends): `view()` works.
  [[nodiscard]] bool resident() const noexcept {
    return backend_ == io_backend::mmap || backend_ == io_backend::memory;
  }
  /// The range reader of the `reader` backend; null otherwise.
  [[nodiscard]] const std::shared_ptr<const range_reader>& reader() const noexcept { return reader_; }

  /// Zero-copy view of a tensor. Errors: TensorNotFound; InvalidArgument on the pread backend.
  [[nodiscard]] result<tensor_view> view(std::string_view name) const& SAFETENSORS_LIFETIMEBOUND;
  result<tensor_view> view(std::string_view name) const&& = delete;
  /// View of an entry of this file's header (resident backends only; empty data otherwise).
  [[nodiscard]] tensor_view view(const tensor_info& info) const& noexcept SAFETENSORS_LIFETIMEBOUND;
  tensor_view view(const tensor_info& info) const&& = delete;

  /// Copies (or preads) a tensor's bytes into `destination`, whose size must equal the
  /// tensor's byte size. Thread-safe.
  [[nodiscard]] status read_into(std::string_view name, std::span<std::byte> destination) const;
  [[nodiscard]] status read_into(const tensor_info& info, std::span<std::byte> destination) const;
  /// Copies bytes `[offset, offset + destination.size())` of the file. Thread-safe.
  [[nodiscard]] status read_range(std::uint64_t offset, std::span<std::byte> destination) const;
  /// A tensor's bytes in a new buffer.
  [[nodiscard]] result<std::vector<std::byte>> load(std::string_view name) const;

  /// Closes the file and hands over its header, e.g. to `header_parser::recycle`.
  [[nodiscard]] safetensors::header take_header() && noexcept;

 private:
  file() = default;
  void release() noexcept;
  [[nodiscard]] error with_path(error e) const;
  friend result<safetensors::header> read_header(const std::string& path, const parse_options& options);
  friend result<safetensors::header> read_header(std::shared_ptr<const range_reader> source,
                                                 const parse_options& options);

  std::string path_;
  safetensors::header header_;
  io_backend backend_ = io_backend::mmap;
  int fd_ = -1;
  void* mapping_ = nullptr;
  std::size_t mapping_length_ = 0;
  std::vector<std::byte> owned_;      // non-regular files read as a stream
  std::span<const std::byte> bytes_;  // the whole file when resident
  std::shared_ptr<const range_reader> reader_;
  std::uint64_t size_ = 0;
};

/// Reads and validates only the header: 8 + N bytes, never the data. Stage 7 uses the
/// file's size from fstat.
[[nodiscard]] result<header> read_header(const std::string& path, const parse_options& options = {});
/// The same through a range reader: two reads, the length prefix and the header.
[[nodiscard]] result<header> read_header(std::shared_ptr<const range_reader> source, const parse_options& options = {});

}  // namespace safetensors
