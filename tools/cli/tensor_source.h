// SPDX-License-Identifier: Apache-2.0
// What `convert` reads: every input format (SafeTensors, PyTorch, NumPy, GGUF) behind one
// small interface, so conversion is N readers + M writers (tensor_sink.h), not N x M paths.
// A source lists its tensors (name, dtype, shape), its metadata as `__metadata__` text and
// notes for the user, and streams each tensor's bytes (C order, little-endian) in bounded
// chunks. Decorators cast floating tensors (--dtype) and count progress on the way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/formats/npz.h"
#include "safetensors/header.h"

namespace st_cli {

class progress;

/// One tensor as its source yields it.
struct source_tensor {
  std::string name;
  safetensors::dtype type = safetensors::dtype::F32;
  std::vector<std::uint64_t> shape;

  [[nodiscard]] std::uint64_t byte_size() const;
  [[nodiscard]] std::uint64_t element_count() const;
};

using chunk_consumer = std::function<safetensors::status(std::span<const std::byte>)>;

class tensor_source {
 public:
  virtual ~tensor_source() = default;

  /// The format's name for messages and the summary: "SafeTensors", "PyTorch", "GGUF", ...
  [[nodiscard]] const std::string& format() const noexcept { return format_; }
  /// The file or directory read.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Tensors in the order they are read (the input's order).
  [[nodiscard]] const std::vector<source_tensor>& tensors() const noexcept { return tensors_; }
  /// `__metadata__` text: SafeTensors' own, GGUF's with its types recorded (gguf_metadata.h),
  /// PyTorch's {"format": "pt"} and --shared dedup aliases; nullopt when there is none.
  [[nodiscard]] const std::optional<safetensors::metadata_map>& metadata() const noexcept { return metadata_; }
  /// What the user should know: skipped entries, shared storages, dequantized tensors.
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }
  /// A sharded input: the size of its largest shard, so a sharded output mirrors it; 0 otherwise.
  [[nodiscard]] std::uint64_t shard_bytes() const noexcept { return shard_bytes_; }

  /// Passes tensor `index`'s bytes to `consume`, in order, in chunks of at most a few MiB.
  /// Chunks need not end on element boundaries. Stops at the first error.
  [[nodiscard]] virtual safetensors::status read(std::size_t index, const chunk_consumer& consume) const = 0;

 protected:
  std::string format_;
  std::string path_;
  std::vector<source_tensor> tensors_;
  std::optional<safetensors::metadata_map> metadata_;
  std::vector<std::string> notes_;
  std::uint64_t shard_bytes_ = 0;
};

using source_ptr = std::unique_ptr<tensor_source>;

/// The options of `convert` that shape what is read.
struct source_options {
  std::string key;               ///< PyTorch: the nested dict holding the tensors ("state_dict")
  std::string shared = "keep";   ///< PyTorch: tensors sharing storage: "keep" (copy each) or "dedup"
  bool strict = false;           ///< PyTorch: refuse skipped objects and tensors instead of warning
  safetensors::npz_options npz;  ///< .npz: zip-bomb limits (--max-expanded-size, --max-ratio)
};

/// Opens `path` as the source its bytes say it is (a directory: a sharded PyTorch checkpoint).
[[nodiscard]] safetensors::result<source_ptr> open_tensor_source(const std::string& path,
                                                                 const source_options& options);
/// The readers open_tensor_source chooses from (source_<format>.cpp, convert_<format>.cpp).
[[nodiscard]] safetensors::result<source_ptr> open_safetensors_source(const std::string& path);
[[nodiscard]] safetensors::result<source_ptr> open_pytorch_source(const std::string& path,
                                                                  const source_options& options);
[[nodiscard]] safetensors::result<source_ptr> open_numpy_source(const std::string& path,
                                                                const safetensors::npz_options& npz);
[[nodiscard]] safetensors::result<source_ptr> open_gguf_source(const std::string& path);

/// `inner` with every floating tensor (complex excepted) cast to `to`, chunk by chunk;
/// integer and boolean tensors pass unchanged.
[[nodiscard]] source_ptr cast_source(source_ptr inner, safetensors::dtype to);

/// `inner`, advancing `bar` by each chunk's size as it is read.
[[nodiscard]] source_ptr progress_source(source_ptr inner, progress& bar);

/// Bytes of all tensors of `source`.
[[nodiscard]] std::uint64_t total_bytes(const tensor_source& source);

}  // namespace st_cli
