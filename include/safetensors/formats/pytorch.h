// SPDX-License-Identifier: Apache-2.0
/// \file pytorch.h
/// Reading PyTorch checkpoints (`torch.save` output) without running any of their code.
///
/// Two containers are read:
///   - zip (torch >= 1.6): `<dir>/data.pkl`, storages in `<dir>/data/<key>`, optional
///     `<dir>/byteorder` ("little" or "big"). Stored (uncompressed) storages are read
///     with pread in chunks; compressed ones are inflated with the zip reader's caps.
///   - legacy (torch < 1.6): magic, protocol and sys-info pickles, the object pickle,
///     the list of storage keys, then per storage a u64 element count and its bytes.
/// The object pickle (protocols 1-5 in both containers) runs through the restricted
/// machine of pickle.h. Nested dicts are flattened with '.' (`a.b.weight`); values that
/// are not tensors are listed in `skipped()` with the reason and a `skip_kind`:
/// plain data, an entry that is or holds an object outside the allowlist, or a tensor
/// SafeTensors cannot hold (quantized, sparse, complex128); `strict` refuses the last two.
/// Each tensor is checked against its storage (offset, sizes, strides in elements) when
/// the checkpoint opens; `read_tensor` then yields its bytes contiguous (views
/// materialised in C order) and little-endian.
///
/// Errors: CodeExecution (a pickle names a global on the code-execution list, anywhere:
/// pickle_verdict.h), InvalidFormat (malformed or truncated container, malformed pickle,
/// out-of-bounds view, no tensor at all), Unsupported (TorchScript archives; with `strict`,
/// an unconvertible tensor), UnsafeContent (see pickle.h; zip entries escaping the archive;
/// with `strict`, an object outside the allowlist), LimitExceeded (caps, zip bombs, out of
/// memory), Io; InvalidArgument for a `key` that is missing, names no dict, or whose dict
/// holds no tensor. `path` is always set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "safetensors/chunk_sink.h"
#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/formats/pickle.h"
#include "safetensors/lifetimebound.h"

namespace safetensors::torch {

enum class container_kind : std::uint8_t { zip, legacy };

struct open_options {
  /// Convert only this entry of the top-level dict ("state_dict"; a dotted path such
  /// as "model.state_dict" also works). Empty: the whole object.
  std::string key;
  pickle_limits limits;
  /// The object pickle may not be larger than this.
  std::uint64_t max_pickle_bytes = std::uint64_t{1} << 30;
  /// Refuse instead of skipping: a pickle naming any global outside the allowlist, anywhere
  /// in its stream and whatever `key` selects (UnsafeContent: what torch.load(weights_only=True)
  /// refuses), a tensor SafeTensors cannot hold (Unsupported). A global that runs code is
  /// refused in every mode (CodeExecution).
  bool strict = false;
};

/// One tensor: a strided view of one storage, in elements.
struct tensor {
  std::string name;  ///< flattened: nested dict keys joined with '.'
  dtype type = dtype::F32;
  std::vector<std::uint64_t> shape;
  std::vector<std::uint64_t> strides;
  std::uint64_t storage_offset = 0;
  std::size_t storage = 0;  ///< index into checkpoint::storages()
  /// True when the bytes are one run in the storage (C order, any offset).
  [[nodiscard]] bool contiguous() const noexcept;
};

/// Why a value is not converted.
enum class skip_kind : std::uint8_t {
  not_tensor,          ///< plain data: an int, a string, a list of numbers (epoch, lr, ...)
  opaque_object,       ///< is or holds an object outside the allowlist (argparse.Namespace, ...), never loaded
  unsupported_tensor,  ///< a tensor SafeTensors cannot hold: quantized, sparse, complex128, ...
};

/// A value that is not converted, and why ("not a tensor: int", ...).
struct skipped_value {
  std::string name;
  std::string reason;
  skip_kind kind = skip_kind::not_tensor;
};

struct storage_info {
  std::string key;
  std::uint64_t byte_size = 0;
};

struct checkpoint_audit;

/// An open checkpoint: its tensors, what was skipped, and the file mapping their bytes
/// come from. Move-only.
class checkpoint {
 public:
  [[nodiscard]] static result<checkpoint> open(const std::string& path, const open_options& options = {});

  checkpoint(checkpoint&&) noexcept;
  checkpoint& operator=(checkpoint&&) noexcept;
  ~checkpoint();

  [[nodiscard]] container_kind container() const noexcept;
  [[nodiscard]] bool big_endian() const noexcept;
  /// Tensors in the pickle's order.
  [[nodiscard]] std::span<const tensor> tensors() const& noexcept SAFETENSORS_LIFETIMEBOUND;
  std::span<const tensor> tensors() const&& = delete;
  [[nodiscard]] std::span<const skipped_value> skipped() const noexcept;
  [[nodiscard]] std::span<const storage_info> storages() const noexcept;
  [[nodiscard]] const std::string& path() const noexcept;
  /// What the pickles name outside the allowlist (pickle_verdict.h): never `runs_code`, as
  /// such a file does not open.
  [[nodiscard]] const pickle_verdict& verdict() const noexcept;
  /// Where tensor `index`'s first element lies in the file (its storage's start plus its
  /// storage offset, as the file has it: any byte order and strides); nullopt when its storage
  /// is a compressed zip member.
  [[nodiscard]] std::optional<std::uint64_t> file_offset(std::size_t index) const noexcept;

  /// Passes tensor `index`'s bytes, contiguous and little-endian, to `sink` in chunks of
  /// at most `chunk_bytes`. Storages are read from the file with pread, never mapped: a
  /// contiguous tensor needs one chunk of memory, a strided view the bytes it spans in its
  /// storage, a (rare) compressed storage its inflated size (64 MiB at most). One thread
  /// at a time: a compressed storage is inflated through the checkpoint's one zip reader.
  /// Allocation failure is LimitExceeded.
  [[nodiscard]] status read_tensor(std::size_t index, const chunk_sink& sink,
                                   std::size_t chunk_bytes = std::size_t{1} << 22) const;

 private:
  struct state;
  explicit checkpoint(std::unique_ptr<state> opened) noexcept;
  friend checkpoint_audit audit_checkpoint(const std::string& path, const open_options& options);
  [[nodiscard]] static result<checkpoint> open_checkpoint(const std::string& path, const open_options& options,
                                                          pickle_verdict& verdict);
  [[nodiscard]] status read_tensor_bytes(const tensor& t, const chunk_sink& sink, std::size_t chunk_bytes) const;
  std::unique_ptr<state> state_;
};

/// What `checkpoint::open` decides about a file, with the pickles' verdict also when it
/// refuses it: `inspect` shows a code-executing file's globals and calls this way.
struct checkpoint_audit {
  pickle_verdict verdict;        ///< as far as the pickles were read
  std::optional<error> refusal;  ///< why `checkpoint::open` refuses the file; nullopt when it opens
};

/// Reads `path` as `checkpoint::open(path, options)` does (nothing runs), keeping the verdict.
[[nodiscard]] checkpoint_audit audit_checkpoint(const std::string& path, const open_options& options = {});

/// A sharded checkpoint as transformers writes it: `pytorch_model.bin.index.json`
/// ({"metadata": ..., "weight_map": {tensor: shard file}}) beside its shard files.
struct shard_index {
  std::vector<std::string> shard_paths;                         ///< confined to the directory, in name order, unique
  std::vector<std::pair<std::string, std::string>> weight_map;  ///< (tensor, shard path), sorted
};

/// Reads the index in `directory` (or the index file itself). Errors: Io, InvalidIndex,
/// UnsafePath for a shard name leaving the directory.
[[nodiscard]] result<shard_index> read_shard_index(const std::string& directory_or_index);

/// Groups of tensors sharing one storage (tied weights, views), each group in name order;
/// tensors with a storage of their own are not listed.
[[nodiscard]] std::vector<std::vector<std::size_t>> shared_storage_groups(std::span<const tensor> tensors);

/// True when two tensors are the same view: same storage, offset, dtype, shape, strides.
[[nodiscard]] bool same_view(const tensor& a, const tensor& b) noexcept;

}  // namespace safetensors::torch
