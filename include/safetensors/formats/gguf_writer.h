// SPDX-License-Identifier: Apache-2.0
/// \file gguf_writer.h
/// Writing GGUF v3 files: a plan fixes the header bytes and every tensor's offset first,
/// then tensor bytes are streamed into a temporary file beside the target, which
/// appears at the target path only on commit() (as the SafeTensors writer does).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/formats/gguf.h"

namespace safetensors::gguf {

/// A tensor to be written, without its bytes.
struct tensor_spec {
  std::string name;
  ggml_type type = ggml_type::f32;
  std::vector<std::uint64_t> shape;  ///< row-major (written reversed, as ne)
};

/// The complete layout of a GGUF file.
class write_plan {
 public:
  /// Errors (invalid_argument, naming the tensor or key): a name of 64 bytes or more,
  /// duplicate names or keys, an empty key, more than 4 dimensions, a row that is not a
  /// whole number of blocks, sizes that overflow, an alignment that is not a power of two.
  /// `general.alignment` is set to `alignment` (UINT32), replacing any value present.
  /// When no tensor is quantized, a `general.file_type` present is set to match the
  /// tensors (ALL_F32 0, MOSTLY_F16 1, MOSTLY_BF16 32: the 16-bit float with the most
  /// elements) and `general.quantization_version` is dropped.
  [[nodiscard]] static result<write_plan> make(std::vector<metadata_entry> metadata, std::vector<tensor_spec> tensors,
                                               std::uint32_t alignment = 32);

  [[nodiscard]] std::span<const tensor_info> tensors() const noexcept { return tensors_; }
  /// Everything before the data section: header, metadata, tensor infos, padding.
  [[nodiscard]] std::span<const std::byte> header_bytes() const noexcept { return header_; }
  [[nodiscard]] std::uint64_t data_start() const noexcept { return header_.size(); }
  [[nodiscard]] std::uint64_t file_size() const noexcept { return header_.size() + data_size_; }

 private:
  std::vector<tensor_info> tensors_;
  std::vector<std::byte> header_;
  std::uint64_t data_size_ = 0;
};

/// Streams tensor bytes into a planned file. Tensors may arrive in any order; each
/// one's chunks arrive in order. Padding is zeros.
class stream_writer {
 public:
  [[nodiscard]] static result<stream_writer> create(const std::string& path, write_plan plan);

  stream_writer(stream_writer&&) noexcept;
  stream_writer& operator=(stream_writer&&) noexcept;
  stream_writer(const stream_writer&) = delete;
  stream_writer& operator=(const stream_writer&) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~stream_writer();

  /// Appends the next bytes of tensor `index` (in plan order). Error past its end.
  [[nodiscard]] status append(std::size_t index, std::span<const std::byte> chunk);
  /// Checks every tensor is complete, fsyncs, renames over the target.
  [[nodiscard]] status commit();
  /// Abandons the write: removes the temporary file. Safe to call twice.
  void abort() noexcept;

  [[nodiscard]] const write_plan& plan() const noexcept;

 private:
  struct state;
  explicit stream_writer(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
};

}  // namespace safetensors::gguf
