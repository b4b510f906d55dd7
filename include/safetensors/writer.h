// SPDX-License-Identifier: Apache-2.0
/// \file writer.h
/// Writing SafeTensors files: deterministic bytes, aligned data, atomic replacement,
/// and a streaming writer for files larger than memory.
///
/// Layout decisions (identical to huggingface/safetensors where it is deterministic):
/// tensors sorted by dtype in descending enum order (widest first, so each tensor stays
/// naturally aligned), then by name bytes; contiguous offsets; compact JSON with
/// `__metadata__` first (keys sorted) and fields `dtype`, `shape`, `data_offsets`;
/// serde_json's string escaping; spaces pad the header so the data starts at a multiple
/// of `alignment`.
///
/// Writing is two-phase: a `write_plan` fixes every offset and the header bytes before
/// any data is seen; the data then goes into a temporary file next to the target, which
/// is fsynced and renamed over the target on `commit()`. On any failure, or if the writer
/// is destroyed before `commit()`, the temporary is removed and the target is untouched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/header.h"

namespace safetensors {

/// A tensor to be written, without its bytes.
struct tensor_spec {
  std::string name;
  dtype type = dtype::U8;
  std::vector<std::uint64_t> shape;
};

/// A tensor to be written, with its bytes (not copied).
struct tensor_data {
  std::string name;
  dtype type = dtype::U8;
  std::vector<std::uint64_t> shape;
  std::span<const std::byte> data;
};

struct write_options {
  /// The data buffer starts at a multiple of this (a power of two, at least 8).
  std::uint64_t alignment = 8;
  /// `__metadata__`; nullopt omits it, an empty map writes `"__metadata__":{}`.
  std::optional<metadata_map> metadata;
};

/// Where one tensor goes.
struct planned_tensor {
  std::string name;
  dtype type = dtype::U8;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;  ///< relative to the data buffer
  std::uint64_t end = 0;
  [[nodiscard]] std::uint64_t byte_size() const noexcept { return end - begin; }
};

/// The complete layout of a file: order, offsets and header bytes.
class write_plan {
 public:
  /// Errors (InvalidArgument unless noted): duplicate names, the name `__metadata__`,
  /// invalid UTF-8 in a name or metadata, a bad alignment; ValidationOverflow,
  /// MisalignedSlice for impossible sizes; HeaderTooLarge past 100,000,000 bytes.
  [[nodiscard]] static result<write_plan> make(std::vector<tensor_spec> tensors, const write_options& options = {});

  /// Tensors in file order.
  [[nodiscard]] std::span<const planned_tensor> tensors() const noexcept { return tensors_; }
  [[nodiscard]] const planned_tensor* find(std::string_view name) const noexcept;
  /// The 8-byte length prefix, the JSON and its padding: the file's first data_start() bytes.
  [[nodiscard]] std::span<const std::byte> header_bytes() const noexcept;
  [[nodiscard]] std::uint64_t data_start() const noexcept { return prefix_and_header_.size(); }
  [[nodiscard]] std::uint64_t data_size() const noexcept { return data_size_; }
  [[nodiscard]] std::uint64_t file_size() const noexcept { return data_start() + data_size_; }

 private:
  std::vector<planned_tensor> tensors_;
  std::vector<std::uint32_t> by_name_;
  std::string prefix_and_header_;
  std::uint64_t data_size_ = 0;
};

/// The whole file in memory.
[[nodiscard]] result<std::vector<std::byte>> serialize(std::span<const tensor_data> tensors,
                                                       const write_options& options = {});

/// Writes the file atomically. Data lengths are checked before anything is written.
[[nodiscard]] status write_file(const std::string& path, std::span<const tensor_data> tensors,
                                const write_options& options = {});

/// Writes a planned file whose tensors arrive in chunks, with bounded memory.
/// Tensors may arrive in any order; each one's chunks arrive in order.
class stream_writer {
 public:
  /// Creates the temporary file next to `path` and writes the header.
  [[nodiscard]] static result<stream_writer> create(const std::string& path, write_plan plan);

  stream_writer(stream_writer&&) noexcept;
  stream_writer& operator=(stream_writer&&) noexcept;
  stream_writer(const stream_writer&) = delete;
  stream_writer& operator=(const stream_writer&) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~stream_writer();

  /// Appends the next bytes of tensor `name`. Error if it would overflow the tensor.
  [[nodiscard]] status append(std::string_view name, std::span<const std::byte> chunk);
  /// Checks that every tensor is complete, fsyncs, and renames over the target.
  [[nodiscard]] status commit();
  /// Abandons the write: removes the temporary file. Safe to call twice.
  void abort() noexcept;

  [[nodiscard]] const write_plan& plan() const noexcept;

 private:
  struct state;
  explicit stream_writer(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
};

}  // namespace safetensors
