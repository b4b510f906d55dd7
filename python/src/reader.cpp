// SPDX-License-Identifier: Apache-2.0
// `Reader`: an open file (path or bytes) or checkpoint, read into caller-provided buffers with
// the GIL released. `close()` drops the reader's reference; reads in flight on other threads
// keep the shared state alive until they finish.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "buffers.h"
#include "errors.h"
#include "mapping.h"
#include "remote_options.h"
#include "safetensors/checkpoint.h"
#include "safetensors/file.h"
#include "safetensors/location.h"
#include "safetensors/slice.h"

namespace py = pybind11;
namespace st = safetensors;

namespace st_python {
namespace {

struct source {
  std::vector<std::byte> bytes;              // from_bytes: a copy of the caller's data, which may change
  std::shared_ptr<private_mapping> mapping;  // mmap backend: the file, mapped copy-on-write
  std::string path;                          // what errors name (the mapped file's reader has none)
  std::optional<st::file> file;
  std::optional<st::checkpoint> checkpoint;
};

struct located {
  const st::file* file = nullptr;
  const st::tensor_info* info = nullptr;
};

const std::string& path_of(const source& s, const st::file& f) { return s.path.empty() ? f.path() : s.path; }

located locate(const source& s, const std::string& name) {
  if (s.file) {
    if (const auto* info = s.file->find(name)) return {&*s.file, info};
  } else if (const auto* loc = s.checkpoint->find(name)) {
    return {&s.checkpoint->file_of(*loc), loc->info};
  }
  st::error e =
      st::make_error(st::error_code::tensor_not_found, "File does not contain tensor " + name, std::nullopt, name);
  e.path = s.file ? path_of(s, *s.file) : s.checkpoint->directory();
  throw python_error(std::move(e), operation::lookup);
}

void check_size(std::span<std::byte> destination, std::uint64_t expected) {
  if (destination.size() != expected) {
    fail_argument(fmt::format("destination holds {} bytes, the tensor {}", destination.size(), expected));
  }
}

st::io_backend backend_from(const std::string& name) {
  if (name == "mmap") return st::io_backend::mmap;
  if (name == "pread") return st::io_backend::pread;
  fail_argument("backend " + name + " is invalid (valid: mmap, pread)");
}

/// A planned slice: the ranges to copy, and the reader state they point into.
struct slice_handle {
  std::shared_ptr<const source> keep;
  const st::file* file = nullptr;
  st::slice_plan plan;
};

class reader {
 public:
  explicit reader(std::shared_ptr<const source> s) : src_(std::move(s)) {}

  [[nodiscard]] std::shared_ptr<const source> state() const {
    if (!src_) fail_argument("the file is closed");
    return src_;
  }
  void close() noexcept { src_.reset(); }
  [[nodiscard]] bool closed() const noexcept { return src_ == nullptr; }

 private:
  std::shared_ptr<const source> src_;
};

reader open_file(const std::string& path, const std::string& backend, const std::string& policy) {
  st::open_options options;
  options.backend = backend_from(backend);
  options.parse = parse_options_for(policy);
  auto s = std::make_shared<source>();
  s->path = path;
  std::optional<st::result<st::file>> opened;
  {
    py::gil_scoped_release release;
    if (options.backend == st::io_backend::mmap) {
      // Our own private mapping, so that tensors can view it (see mapping.h); the core's
      // reader validates the header in place. Anything unmappable takes the core's path.
      s->mapping = private_mapping::map(path, 8);
      if (s->mapping) {
        auto parsed = st::file::from_buffer(s->mapping->bytes(), options.parse);
        if (!parsed) {
          st::error e = std::move(parsed).err();
          e.path = path;
          parsed = std::move(e);
        }
        opened.emplace(std::move(parsed));
      }
    }
    if (!opened) opened.emplace(st::file::open(path, options));
  }
  s->file.emplace(unwrap(std::move(*opened), operation::open));
  return reader(std::move(s));
}

reader open_bytes(const py::handle& data, const std::string& policy) {
  const auto options = parse_options_for(policy);
  auto s = std::make_shared<source>();
  {
    contiguous_buffer in(data, false);
    s->bytes.assign(in.bytes().begin(), in.bytes().end());
  }
  s->file.emplace(unwrap(st::file::from_buffer(s->bytes, options), operation::deserialize));
  return reader(std::move(s));
}

reader open_checkpoint(const std::string& path, const std::string& backend, const std::string& policy) {
  st::checkpoint_options options;
  options.shard.backend = backend_from(backend);
  options.shard.parse = parse_options_for(policy);
  auto s = std::make_shared<source>();
  s->checkpoint.emplace(unwrap(st::checkpoint::open(path, options)));
  return reader(std::move(s));
}

/// What `text` names (location.h), with the remote settings of a URL.
st::location resolve(const std::string& text, const py::dict& settings) {
  const auto o = remote_options(settings);
  std::optional<st::result<st::location>> at;
  {
    py::gil_scoped_release release;
    at.emplace(st::location::resolve(text, o));
  }
  return unwrap(std::move(*at));
}

reader open_located_checkpoint(const st::location& at, const std::string& backend, const std::string& policy);

/// A path or URL: a local file as `open` opens it (the mmap backend maps it), a URL through the
/// store that serves it. An index, a directory or a base URL (`location::names_checkpoint`) is
/// opened as one checkpoint, as `open_checkpoint` opens it: its length prefix would be JSON.
reader open_location(const std::string& text, const std::string& backend, const std::string& policy,
                     const py::dict& settings) {
  const st::location at = resolve(text, settings);
  if (at.names_checkpoint()) return open_located_checkpoint(at, backend, policy);
  if (at.is_local()) return open_file(at.path(), backend, policy);
  st::open_options options;
  options.parse = parse_options_for(policy);
  auto src = std::make_shared<source>();
  std::optional<st::result<st::file>> opened;
  {
    py::gil_scoped_release release;
    opened.emplace(at.open_file(options));
  }
  src->file.emplace(unwrap(std::move(*opened), operation::open));
  return reader(std::move(src));
}

/// A checkpoint (file, index, directory, or a URL of one, or a base URL).
reader open_checkpoint_location(const std::string& text, const std::string& backend, const std::string& policy,
                                const py::dict& settings) {
  return open_located_checkpoint(resolve(text, settings), backend, policy);
}

reader open_located_checkpoint(const st::location& at, const std::string& backend, const std::string& policy) {
  if (at.is_local()) return open_checkpoint(at.path(), backend, policy);
  st::checkpoint_options options;
  options.shard.parse = parse_options_for(policy);
  auto src = std::make_shared<source>();
  std::optional<st::result<st::checkpoint>> opened;
  {
    py::gil_scoped_release release;
    opened.emplace(at.open_checkpoint(options));
  }
  src->checkpoint.emplace(unwrap(std::move(*opened)));
  return reader(std::move(src));
}

py::list keys(const reader& r) {
  const auto s = r.state();
  py::list out;
  if (s->file) {
    std::vector<std::string_view> names;
    for (const auto& t : s->file->tensors()) names.push_back(t.name);
    std::sort(names.begin(), names.end());
    for (auto n : names) out.append(py::str(n.data(), n.size()));
  } else {
    for (const auto& t : s->checkpoint->tensors()) out.append(py::str(t.name.data(), t.name.size()));
  }
  return out;
}

py::list offset_keys(const reader& r) {
  const auto s = r.state();
  py::list out;
  auto add_file = [&](const st::file& f) {
    for (const auto& t : f.tensors()) out.append(py::str(t.name.data(), t.name.size()));
  };
  if (s->file)
    add_file(*s->file);
  else
    for (const auto& shard : s->checkpoint->shards()) add_file(shard.file);
  return out;
}

py::object metadata(const reader& r) {
  const auto s = r.state();
  if (s->file) return metadata_to_python(s->file->header().metadata());
  if (s->checkpoint->sharded()) return metadata_to_python(s->checkpoint->index_metadata());
  return metadata_to_python(s->checkpoint->shards().front().file.header().metadata());
}

py::tuple info(const reader& r, const std::string& name) {
  const auto s = r.state();
  const auto loc = locate(*s, name);
  py::list shape;
  for (auto d : loc.info->shape) shape.append(d);
  return py::make_tuple(std::string(st::dtype_name(loc.info->type)), shape, loc.info->byte_size());
}

void read_into(const reader& r, const std::string& name, const py::handle& out) {
  const auto s = r.state();
  const auto loc = locate(*s, name);
  contiguous_buffer destination(out, true);
  check_size(destination.bytes(), loc.info->byte_size());
  const auto bytes = destination.bytes();
  if (bytes.size() <= interrupt_chunk) {
    st::status status;
    {
      py::gil_scoped_release release;
      status = loc.file->read_into(*loc.info, bytes);
    }
    check(std::move(status));
    return;
  }
  const std::uint64_t start = loc.file->header().data_start() + loc.info->begin;
  for (std::size_t done = 0; done < bytes.size();) {
    const std::size_t n = std::min(interrupt_chunk, bytes.size() - done);
    st::status status;
    {
      py::gil_scoped_release release;
      status = loc.file->read_range(start + done, bytes.subspan(done, n));
    }
    if (!status) {
      st::error e = std::move(status).err();
      if (!e.tensor) e.tensor = name;
      throw python_error(std::move(e));
    }
    done += n;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

/// (dtype code, shape, byte size, offset of its first byte in the file).
py::tuple locate_tensor(const reader& r, const std::string& name) {
  const auto s = r.state();
  const auto loc = locate(*s, name);
  py::list shape;
  for (auto d : loc.info->shape) shape.append(d);
  return py::make_tuple(std::string(st::dtype_name(loc.info->type)), shape, loc.info->byte_size(),
                        loc.file->header().data_start() + loc.info->begin);
}

slice_handle plan(const reader& r, const std::string& name, const py::list& indexers) {
  auto s = r.state();
  const auto loc = locate(*s, name);
  const auto idx = indexers_from(indexers);
  auto p = st::plan_slice(*loc.info, loc.file->header().data_start(), idx);
  if (!p) {
    st::error e = std::move(p).err();
    e.path = s->file && loc.file == &*s->file ? path_of(*s, *loc.file) : loc.file->path();
    throw python_error(std::move(e));
  }
  return slice_handle{std::move(s), loc.file, std::move(p).value()};
}

void read_slice(const slice_handle& h, const py::handle& out) {
  contiguous_buffer destination(out, true);
  check_size(destination.bytes(), h.plan.byte_size);
  st::status status;
  {
    py::gil_scoped_release release;
    status = st::read_slice(*h.file, h.plan, destination.bytes());
  }
  check(std::move(status));
}

}  // namespace

void bind_reader(py::module_& m) {
  py::class_<slice_handle>(m, "SlicePlan", "A planned numpy-style slice of one tensor.")
      .def_property_readonly("shape", [](const slice_handle& h) { return h.plan.shape; })
      .def_property_readonly("dtype", [](const slice_handle& h) { return std::string(st::dtype_name(h.plan.type)); })
      .def_property_readonly("nbytes", [](const slice_handle& h) { return h.plan.byte_size; })
      .def_property_readonly(
          "offset",
          [](const slice_handle& h) -> py::object {
            if (h.plan.ranges.size() != 1) return py::none();
            return py::cast(h.plan.ranges.front().offset);
          },
          "File offset of the slice's bytes when they are one contiguous range, else None.")
      .def("read_into", &read_slice, py::arg("out"), "Copies the slice into `out` (exactly nbytes, writable).");

  py::class_<reader>(m, "Reader", "An open SafeTensors file or checkpoint.")
      .def_static("open", &open_file, py::arg("path"), py::arg("backend") = "mmap", py::arg("policy") = "reference")
      .def_static("from_bytes", &open_bytes, py::arg("data"), py::arg("policy") = "reference")
      .def_static("open_checkpoint", &open_checkpoint, py::arg("path"), py::arg("backend") = "mmap",
                  py::arg("policy") = "reference")
      .def_static("open_location", &open_location, py::arg("location"), py::arg("backend") = "mmap",
                  py::arg("policy") = "reference", py::arg("settings") = py::dict(),
                  "Opens a file by path or URL (http(s)://, file://); settings (URLs): token, ca_file, insecure, "
                  "timeout, connections.")
      .def_static("open_checkpoint_location", &open_checkpoint_location, py::arg("location"),
                  py::arg("backend") = "mmap", py::arg("policy") = "reference", py::arg("settings") = py::dict(),
                  "Opens a checkpoint (file, index, directory; a URL of one, or a base URL).")
      .def_property_readonly_static("remote_supported", [](const py::object&) { return SAFETENSORS_HAVE_REMOTE != 0; })
      .def("keys", &keys, "Tensor names, sorted.")
      .def("offset_keys", &offset_keys, "Tensor names in data order (shard by shard for a checkpoint).")
      .def("metadata", &metadata, "__metadata__ (the index's metadata for a sharded checkpoint), or None.")
      .def("info", &info, py::arg("name"), "(dtype code, shape, byte size) of a tensor.")
      .def("locate", &locate_tensor, py::arg("name"),
           "(dtype code, shape, byte size, file offset of its data) of a tensor.")
      .def(
          "mapping",
          [](const reader& r) -> py::object {
            const auto s = r.state();
            return s->mapping ? mapping_object(s->mapping) : py::none();
          },
          "The file's private copy-on-write mapping (a writable uint8 buffer), or None when the "
          "bytes are not mapped (pread backend, pipes, bytes, checkpoints).")
      .def("read_into", &read_into, py::arg("name"), py::arg("out"),
           "Copies a tensor's bytes into `out` (exactly its byte size, writable); releases the GIL.")
      .def("plan_slice", &plan, py::arg("name"), py::arg("indexers"),
           "Plans a slice; indexers are ('index', i), ('range', start, stop, step) or ('ellipsis',).")
      .def("close", &reader::close)
      .def_property_readonly("closed", &reader::closed)
      .def_property_readonly("backend",
                             [](const reader& r) {
                               const auto s = r.state();
                               if (s->mapping) return std::string("mmap");
                               const auto& f = s->file ? *s->file : s->checkpoint->shards().front().file;
                               return std::string(st::backend_name(f.backend()));
                             })
      .def("warnings", [](const reader& r) {
        const auto s = r.state();
        std::vector<std::string> out;
        auto add = [&](const st::file& f) {
          for (const auto& w : f.header().warnings()) out.push_back(w.message);
        };
        if (s->file)
          add(*s->file);
        else
          for (const auto& shard : s->checkpoint->shards()) add(shard.file);
        return out;
      });
}

}  // namespace st_python
