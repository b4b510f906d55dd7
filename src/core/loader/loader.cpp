// SPDX-License-Identifier: Apache-2.0
// The parallel loader: requests cut into pieces of at most one chunk, taken by a pool
// of workers in file order, first error wins.
#include "safetensors/loader.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "slice/read_ranges.h"

namespace safetensors {
namespace {

/// One read: consecutive ranges of one request, into consecutive destination bytes.
struct piece {
  const file* source;
  std::vector<byte_range> ranges;
  std::span<std::byte> destination;
  std::string_view tensor;
};

error request_error(const load_request& r, std::string message) {
  error e = make_error(error_code::invalid_argument, std::move(message));
  if (r.tensor != nullptr) e.tensor = std::string(r.tensor->name);
  if (r.source != nullptr) e.path = r.source->path();
  return e;
}

/// Cuts a request into pieces of at most `chunk` bytes (a range longer than that is split;
/// shorter consecutive ranges are grouped).
status cut(const load_request& r, std::uint64_t chunk, std::vector<piece>& out) {
  if (r.source == nullptr) return request_error(r, "load request without a source file");
  std::vector<byte_range> whole;
  std::span<const byte_range> ranges;
  std::uint64_t expected = 0;
  if (r.slice != nullptr) {
    ranges = r.slice->ranges;
    expected = r.slice->byte_size;
  } else if (r.tensor != nullptr) {
    whole.push_back({r.source->header().data_start() + r.tensor->begin, r.tensor->byte_size()});
    ranges = whole;
    expected = r.tensor->byte_size();
  } else {
    return request_error(r, "load request with neither a tensor nor a slice");
  }
  if (r.destination.size() != expected) {
    return request_error(r,
                         fmt::format("destination has {} bytes, the request needs {}", r.destination.size(), expected));
  }
  const std::string_view name = r.tensor != nullptr ? r.tensor->name : std::string_view{};
  std::size_t out_at = 0;
  piece current{r.source, {}, {}, name};
  std::uint64_t current_bytes = 0;
  auto flush = [&] {
    if (current.ranges.empty()) return;
    current.destination = r.destination.subspan(out_at, current_bytes);
    out_at += current_bytes;
    out.push_back(std::move(current));
    current = piece{r.source, {}, {}, name};
    current_bytes = 0;
  };
  for (byte_range range : ranges) {
    while (range.length > 0) {
      const std::uint64_t take = std::min(range.length, chunk - current_bytes);
      current.ranges.push_back({range.offset, take});
      current_bytes += take;
      range.offset += take;
      range.length -= take;
      if (current_bytes == chunk) flush();
    }
  }
  flush();
  return {};
}

}  // namespace

tensor_storage allocate_tensor_storage(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  return tensor_storage(static_cast<std::byte*>(detail::allocate_array(bytes)), detail::array_deleter{bytes});
}

status load(std::span<const load_request> requests, const load_options& options) {
  unsigned threads = options.threads;
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1U, 8U);
  const std::uint64_t budget = std::max<std::uint64_t>(options.max_in_flight_bytes, 1);
  const std::uint64_t chunk =
      std::max<std::uint64_t>(std::min(options.chunk_bytes, budget / threads), std::uint64_t{1} << 16);

  std::vector<piece> pieces;
  load_progress progress;
  for (const load_request& r : requests) {
    if (auto s = cut(r, chunk, pieces); !s) return s;
  }
  for (const piece& p : pieces) progress.bytes_total += p.destination.size();
  // File order within each file keeps reads sequential for the kernel's readahead.
  std::stable_sort(pieces.begin(), pieces.end(), [](const piece& a, const piece& b) {
    return a.source != b.source ? std::less<>{}(a.source, b.source) : a.ranges.front().offset < b.ranges.front().offset;
  });

  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards first_error and progress
  std::optional<error> first_error;
  auto fail = [&](error e) {
    std::lock_guard lock(mutex);
    if (!first_error) first_error = std::move(e);
    stop = true;
  };
  auto work = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= pieces.size()) return;
      const piece& p = pieces[i];
      if (auto s = detail::read_ranges(*p.source, p.ranges, p.destination); !s) {
        error e = std::move(s).err();
        if (!p.tensor.empty()) e.tensor = std::string(p.tensor);
        fail(std::move(e));
        return;
      }
      if (options.progress) {
        std::lock_guard lock(mutex);
        progress.bytes_done += p.destination.size();
        if (!stop && !options.progress(progress)) {
          error e = make_error(error_code::io, "load cancelled by the progress callback");
          e.os_errno = ECANCELED;
          if (!first_error) first_error = std::move(e);
          stop = true;
        }
      }
    }
  };
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, pieces.size()));
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
  }  // jthreads join here
  if (first_error) return std::move(*first_error);
  return {};
}

result<std::vector<loaded_tensor>> load_checkpoint(const checkpoint& c, std::span<const std::string> names,
                                                   const load_options& options) {
  std::vector<const tensor_location*> wanted;
  if (names.empty()) {
    for (const tensor_location& t : c.tensors()) wanted.push_back(&t);
  } else {
    for (const std::string& name : names) {
      const tensor_location* t = c.find(name);
      if (t == nullptr) {
        return make_error(error_code::tensor_not_found, fmt::format("tensor '{}' not found in the checkpoint", name),
                          std::nullopt, name)
            .with_path(c.sharded() ? c.index_path() : c.shards().front().file.path());
      }
      wanted.push_back(t);
    }
    std::sort(wanted.begin(), wanted.end(),
              [](const tensor_location* a, const tensor_location* b) { return a->name < b->name; });
  }
  std::vector<loaded_tensor> out;
  std::vector<load_request> requests;
  out.reserve(wanted.size());
  requests.reserve(wanted.size());
  for (const tensor_location* t : wanted) {
    loaded_tensor l;
    l.name = std::string(t->name);
    l.type = t->info->type;
    l.shape.assign(t->info->shape.begin(), t->info->shape.end());
    l.size = static_cast<std::size_t>(t->info->byte_size());
    l.storage = allocate_tensor_storage(l.size);
    requests.push_back({&c.file_of(*t), t->info, nullptr, {l.storage.get(), l.size}});
    out.push_back(std::move(l));
  }
  if (auto s = load(requests, options); !s) return std::move(s).err();
  return out;
}

}  // namespace safetensors
