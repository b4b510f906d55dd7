// SPDX-License-Identifier: Apache-2.0
// `TensorParallelLoad`: one rank's parts of a checkpoint (a path, or a URL when the module is
// built with safetensors::remote), planned by a tensor-parallel plan and read into
// caller-provided buffers with the GIL released. safetensors.cxx.load_sharded wraps it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.h"
#include "buffers.h"
#include "errors.h"
#include "remote_options.h"
#include "safetensors/checkpoint.h"
#include "safetensors/distributed/tensor_parallel.h"
#include "safetensors/location.h"
#if SAFETENSORS_HAVE_REMOTE
#include "safetensors/remote/remote.h"
#endif

namespace py = pybind11;
namespace st = safetensors;

namespace st_python {
namespace {

/// Remote reads run on more threads than local ones (they wait on the network, not the CPU).
/// Pieces of 8 MiB, as local ones: a 32 MiB tensor still spreads over four connections, and a
/// 1 GiB load makes 130 requests instead of 1,000 (1 MiB pieces: 1.25 s and 2.1 CPU-s against
/// 1.07 s and 1.85 CPU-s, docs/remote.md).
constexpr unsigned remote_threads = 8;
constexpr std::uint64_t remote_chunk_bytes = std::uint64_t{8} << 20;
/// How often a load checks for Ctrl-C.
constexpr auto signal_poll = std::chrono::milliseconds(50);

class rank_load {
 public:
  rank_load(const std::string& path, std::uint64_t rank, std::uint64_t world_size, const std::string& plan_json,
            const std::string& backend, const py::dict& remote) {
    auto plan = st::parse_tp_plan(plan_json);
    plan_ = unwrap(std::move(plan));
    st::checkpoint_options options;
    if (backend == "pread") {
      options.shard.backend = st::io_backend::pread;
    } else if (backend != "mmap") {
      fail_argument("backend " + backend + " is invalid (valid: mmap, pread)");
    }
    if (!remote.empty() && !st::is_url(path)) fail_argument("remote options are for URLs only");
    const auto o = remote_options(remote);
    std::optional<st::result<st::checkpoint>> opened;
    {
      py::gil_scoped_release release;
      auto at = st::location::resolve(path, o);
      if (at) {
        remote_ = !at->is_local();
        opened.emplace(at->open_checkpoint(options));
      } else {
        opened.emplace(std::move(at).err());
      }
    }
    checkpoint_.emplace(unwrap(std::move(*opened)));
    plan_rank_ = unwrap(st::plan_tp_rank(*checkpoint_, plan_, rank, world_size));
  }

  /// (name, dtype code, shape, byte size, split, dim or None) per tensor, sorted by name.
  [[nodiscard]] py::list tensors() const {
    py::list out;
    for (const auto& t : plan_rank_.tensors) {
      const bool split = t.placement.split != st::tp_split::replicate;
      out.append(py::make_tuple(std::string(t.location->name), std::string(st::dtype_name(t.part.type)),
                                py::cast(t.part.shape), t.part.byte_size,
                                std::string(st::tp_split_name(t.placement.split)),
                                split ? py::cast(t.placement.dim) : py::none()));
    }
    return out;
  }

  void load_into(const py::list& buffers) {
    std::vector<contiguous_buffer> held;
    std::vector<std::span<std::byte>> destinations;
    held.reserve(buffers.size());
    for (const auto& b : buffers) {
      held.emplace_back(b, true);
      destinations.push_back(held.back().bytes());
    }
    st::load_options o;
    if (remote_) {
      o.threads = remote_threads;
      o.chunk_bytes = remote_chunk_bytes;
    }
    // The load runs on its own thread while this one checks for Ctrl-C: a signal cancels it
    // after the pieces in flight (at most chunk_bytes per loader thread).
    std::atomic<bool> cancel{false};
    o.progress = [&cancel](const st::load_progress&) { return !cancel.load(); };
    st::status s;
    bool interrupted = false;
    {
      py::gil_scoped_release release;
      std::mutex mutex;
      std::condition_variable finished;
      bool done = false;
      std::thread loader([&] {
        st::status result = st::load_tp_rank(plan_rank_, destinations, o);
        std::lock_guard lock(mutex);
        s = std::move(result);
        done = true;
        finished.notify_one();
      });
      std::unique_lock lock(mutex);
      while (!finished.wait_for(lock, signal_poll, [&] { return done; })) {
        if (interrupted) continue;
        lock.unlock();
        {
          py::gil_scoped_acquire acquire;
          interrupted = PyErr_CheckSignals() != 0;  // leaves the exception set on this thread
        }
        if (interrupted) cancel = true;
        lock.lock();
      }
      lock.unlock();
      loader.join();
    }
    if (interrupted) throw py::error_already_set();
    check(std::move(s));
  }

  /// What the plan reads, and for a remote checkpoint what went over the network so far.
  [[nodiscard]] py::dict stats() const {
    py::dict out;
    out["bytes"] = plan_rank_.bytes;
    out["split_bytes"] = plan_rank_.split_bytes;
    out["split_full_bytes"] = plan_rank_.split_full_bytes;
    out["checkpoint_bytes"] = checkpoint_->data_size();
#if SAFETENSORS_HAVE_REMOTE
    if (remote_) {
      std::uint64_t requests = 0;
      std::uint64_t bytes = 0;
      for (const auto& shard : checkpoint_->shards()) {
        if (const auto* http = dynamic_cast<const st::remote::http_source*>(shard.file.reader().get())) {
          const auto t = http->stats();
          requests += t.requests;
          bytes += t.bytes;
        }
      }
      out["http_requests"] = requests;
      out["http_bytes"] = bytes;
    }
#endif
    return out;
  }

 private:
  st::tp_plan plan_;
  std::optional<st::checkpoint> checkpoint_;
  st::tp_rank_plan plan_rank_;
  bool remote_ = false;
};

}  // namespace

void bind_tp_load(py::module_& m) {
#if SAFETENSORS_HAVE_REMOTE
  m.attr("tp_load_reads_urls") = true;
#else
  m.attr("tp_load_reads_urls") = false;
#endif
  py::class_<rank_load>(m, "TensorParallelLoad", "One rank's parts of a checkpoint under a tensor-parallel plan.")
      .def(py::init<const std::string&, std::uint64_t, std::uint64_t, const std::string&, const std::string&,
                    const py::dict&>(),
           py::arg("path"), py::arg("rank"), py::arg("world_size"), py::arg("plan"), py::arg("backend") = "pread",
           py::arg("remote") = py::dict())
      .def("tensors", &rank_load::tensors, "(name, dtype, shape, nbytes, split, dim) of each part, sorted by name.")
      .def("load_into", &rank_load::load_into, py::arg("buffers"),
           "Reads every part into its buffer (one per tensor, exactly nbytes, writable).")
      .def("stats", &rank_load::stats, "Bytes planned and, for a URL, HTTP requests and body bytes so far.");
}

}  // namespace st_python
