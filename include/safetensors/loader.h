// SPDX-License-Identifier: Apache-2.0
/// \file loader.h
/// Fast bulk loading: many tensors (whole or sliced), from one file or a checkpoint,
/// read by a pool of threads in large pieces into caller or library memory.
///
/// Reads go through `file::read_range`: a copy from the mapping on the mmap backend, a
/// pread(2) through the system-call seam on the pread backend. Only the pread backend
/// is safe against files truncated or failing underneath (network filesystems): it
/// reports IoError where a mapping would raise SIGBUS.
///
/// Memory in flight: each worker has at most one read outstanding, of at most
/// `chunk_bytes`; the chunk is lowered so that threads x chunk <= max_in_flight_bytes.
/// Destinations are the caller's, or allocated once per tensor by `load_checkpoint`;
/// no other buffers are used except slice windows (see read_slice).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "safetensors/checkpoint.h"
#include "safetensors/error.h"
#include "safetensors/file.h"
#include "safetensors/slice.h"

namespace safetensors {

/// Bytes of one file into one destination: a whole tensor, or a slice plan.
struct load_request {
  const file* source = nullptr;
  const tensor_info* tensor = nullptr;  ///< whole tensor ...
  const slice_plan* slice = nullptr;    ///< ... or a plan (then `tensor` is only used to name errors)
  std::span<std::byte> destination;     ///< exactly the tensor's or plan's byte size
};

struct load_progress {
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
};

struct load_options {
  unsigned threads = 0;                                ///< 0: hardware threads, at most 8
  std::uint64_t chunk_bytes = std::uint64_t{8} << 20;  ///< largest single read
  std::uint64_t max_in_flight_bytes = std::uint64_t{256} << 20;
  /// Called after each piece, never concurrently (from any worker thread). Returning
  /// false cancels the load (IoError, os_errno ECANCELED).
  std::function<bool(const load_progress&)> progress;
};

/// Loads every request; on error the first one is returned and the destinations hold
/// partial data. Errors: InvalidArgument (destination size, null source), IoError.
[[nodiscard]] status load(std::span<const load_request> requests, const load_options& options = {});

/// Memory the library allocates for a loaded tensor: from 4 MiB on, huge-page backed where
/// the kernel allows (detail::allocate_array), so a load into fresh memory faults in one
/// page per 2 MiB instead of one per 4 KiB.
using tensor_storage = std::unique_ptr<std::byte[], detail::array_deleter>;
/// `bytes` (at least 1) of uninitialised tensor_storage. Throws std::bad_alloc.
[[nodiscard]] tensor_storage allocate_tensor_storage(std::size_t bytes);

/// A tensor loaded into memory the library allocated.
struct loaded_tensor {
  std::string name;
  dtype type = dtype::U8;
  std::vector<std::uint64_t> shape;
  tensor_storage storage;
  std::size_t size = 0;
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {storage.get(), size}; }
};

/// Loads tensors of a checkpoint (all of them when `names` is empty), sorted by name.
/// Errors: TensorNotFound, plus load()'s.
[[nodiscard]] result<std::vector<loaded_tensor>> load_checkpoint(const checkpoint& c,
                                                                 std::span<const std::string> names = {},
                                                                 const load_options& options = {});

}  // namespace safetensors
