// SPDX-License-Identifier: Apache-2.0
// Writing from Python: whole files (`serialize`, `serialize_file`) and the streaming writer,
// with the GIL released while bytes are copied or written.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "buffers.h"
#include "errors.h"
#include "safetensors/writer.h"

namespace py = pybind11;
namespace st = safetensors;

namespace st_python {
namespace {

/// Tensors to write, with their bytes pinned for the duration of the call.
struct pinned_tensors {
  std::vector<st::tensor_data> tensors;
  std::vector<contiguous_buffer> buffers;
};

/// `entries`: (name, dtype code, shape, data) where data is a buffer or (address, length):
/// an address is trusted to stay valid for the call, as the reference's TensorSpec.data_ptr.
pinned_tensors pin(const py::list& entries) {
  pinned_tensors out;
  out.tensors.reserve(entries.size());
  out.buffers.reserve(entries.size());
  for (const py::handle entry : entries) {
    const auto t = py::cast<py::tuple>(entry);
    st::tensor_data d;
    d.name = t[0].cast<std::string>();
    d.type = dtype_from_code(t[1].cast<std::string>());
    d.shape = shape_from(t[2]);
    const py::handle data = t[3];
    if (py::isinstance<py::tuple>(data)) {
      const auto pointer = py::cast<py::tuple>(data);
      const auto address = pointer[0].cast<std::uintptr_t>();
      const auto length = pointer[1].cast<std::size_t>();
      if (address == 0 && length != 0) fail_argument("tensor '" + d.name + "': null data pointer");
      d.data = {reinterpret_cast<const std::byte*>(address), length};  // NOLINT: the caller's address
    } else {
      out.buffers.emplace_back(data, false);
      d.data = out.buffers.back().bytes();
    }
    out.tensors.push_back(std::move(d));
  }
  return out;
}

st::write_options options_for(const py::handle& metadata, std::uint64_t alignment) {
  st::write_options options;
  options.metadata = metadata_from(metadata);
  options.alignment = alignment;
  return options;
}

py::bytes serialize(const py::list& entries, const py::object& metadata, std::uint64_t alignment) {
  const auto pinned = pin(entries);
  const auto options = options_for(metadata, alignment);
  std::optional<st::result<std::vector<std::byte>>> bytes;
  {
    py::gil_scoped_release release;
    bytes.emplace(st::serialize(pinned.tensors, options));
  }
  const auto out = unwrap(std::move(*bytes), operation::serialize);
  return {reinterpret_cast<const char*>(out.data()), out.size()};  // NOLINT: bytes as chars
}

/// Plans the file and checks every data length before anything is written.
st::write_plan plan_for(const std::vector<st::tensor_data>& tensors, const st::write_options& options,
                        const std::string& path) {
  std::vector<st::tensor_spec> specs;
  specs.reserve(tensors.size());
  for (const auto& t : tensors) specs.push_back({t.name, t.type, t.shape});
  auto plan = st::write_plan::make(std::move(specs), options);
  if (!plan) {
    st::error e = std::move(plan).err();
    e.path = path;
    throw python_error(std::move(e), operation::serialize);
  }
  for (const auto& t : tensors) {
    const auto* p = plan->find(t.name);
    if (t.data.size() != p->byte_size()) {
      throw python_error(st::make_error(st::error_code::invalid_argument,
                                        fmt::format("tensor '{}' has {} bytes of data, its dtype and shape need {}",
                                                    t.name, t.data.size(), p->byte_size()),
                                        std::nullopt, t.name),
                         operation::serialize);
    }
  }
  return std::move(plan).value();
}

/// As st::write_file (a temporary beside the target, fsync, rename), in file order and in
/// pieces, so Ctrl-C interrupts a long write: KeyboardInterrupt, and the temporary is removed
/// when the writer is destroyed uncommitted.
void serialize_file(const py::list& entries, const std::string& path, const py::object& metadata,
                    std::uint64_t alignment) {
  const auto pinned = pin(entries);
  auto plan = plan_for(pinned.tensors, options_for(metadata, alignment), path);
  std::unordered_map<std::string_view, std::span<const std::byte>> data_of;
  for (const auto& t : pinned.tensors) data_of.emplace(t.name, t.data);
  std::optional<st::result<st::stream_writer>> created;
  {
    py::gil_scoped_release release;
    created.emplace(st::stream_writer::create(path, std::move(plan)));
  }
  auto writer = unwrap(std::move(*created), operation::serialize);
  for (const auto& planned : writer.plan().tensors()) {
    const auto data = data_of.at(planned.name);
    std::size_t done = 0;
    do {
      const std::size_t n = std::min(interrupt_chunk, data.size() - done);
      st::status status;
      {
        py::gil_scoped_release release;
        status = writer.append(planned.name, data.subspan(done, n));
      }
      check(std::move(status), operation::serialize);
      done += n;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    } while (done < data.size());
  }
  st::status status;
  {
    py::gil_scoped_release release;
    status = writer.commit();
  }
  check(std::move(status), operation::serialize);
}

/// The streaming writer; `abort()` or destruction without `commit()` leaves the target untouched.
class py_stream_writer {
 public:
  py_stream_writer(const std::string& path, const py::list& specs, const py::object& metadata,
                   std::uint64_t alignment) {
    std::vector<st::tensor_spec> tensors;
    for (const py::handle item : specs) {
      const auto t = py::cast<py::tuple>(item);
      tensors.push_back({t[0].cast<std::string>(), dtype_from_code(t[1].cast<std::string>()), shape_from(t[2])});
    }
    auto plan = unwrap(st::write_plan::make(std::move(tensors), options_for(metadata, alignment)));
    writer_ = std::make_unique<st::stream_writer>(unwrap(st::stream_writer::create(path, std::move(plan))));
  }

  void append(const std::string& name, const py::handle& chunk) {
    auto& w = live();
    contiguous_buffer bytes(chunk, false);
    st::status status;
    {
      py::gil_scoped_release release;
      status = w.append(name, bytes.bytes());
    }
    check(std::move(status));
  }

  void commit() {
    auto& w = live();
    st::status status;
    {
      py::gil_scoped_release release;
      status = w.commit();
    }
    writer_.reset();
    check(std::move(status));
  }

  void abort() noexcept {
    if (writer_) writer_->abort();
    writer_.reset();
  }

  [[nodiscard]] py::list tensors() {
    py::list out;
    for (const auto& t : live().plan().tensors()) {
      out.append(py::make_tuple(t.name, std::string(st::dtype_name(t.type)), t.shape, t.byte_size()));
    }
    return out;
  }

 private:
  st::stream_writer& live() {
    if (!writer_) fail_argument("the writer is closed (committed or aborted)");
    return *writer_;
  }
  std::unique_ptr<st::stream_writer> writer_;
};

}  // namespace

void bind_writer(py::module_& m) {
  m.def("serialize", &serialize, py::arg("entries"), py::arg("metadata") = py::none(), py::arg("alignment") = 8,
        "A whole file as bytes; entries are (name, dtype code, shape, buffer or (address, length)).");
  m.def("serialize_file", &serialize_file, py::arg("entries"), py::arg("path"), py::arg("metadata") = py::none(),
        py::arg("alignment") = 8, "Writes a file atomically (temporary file, fsync, rename).");
  py::class_<py_stream_writer>(m, "StreamWriter", "Writes a planned file whose tensors arrive in chunks.")
      .def(py::init<const std::string&, const py::list&, const py::object&, std::uint64_t>(), py::arg("path"),
           py::arg("specs"), py::arg("metadata") = py::none(), py::arg("alignment") = 8)
      .def("append", &py_stream_writer::append, py::arg("name"), py::arg("chunk"))
      .def("commit", &py_stream_writer::commit)
      .def("abort", &py_stream_writer::abort)
      .def("tensors", &py_stream_writer::tensors, "(name, dtype, shape, byte size) in file order.");
}

}  // namespace st_python
