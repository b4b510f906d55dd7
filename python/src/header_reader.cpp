// SPDX-License-Identifier: Apache-2.0
// `HeaderReader`: a validated header without the file's bytes, for files Python reads itself
// (file objects without a descriptor: fsspec, BytesIO). It answers what a tensor is and where
// its bytes lie; the caller reads exactly those bytes.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.h"
#include "buffers.h"
#include "errors.h"
#include "safetensors/header.h"
#include "safetensors/slice.h"

namespace py = pybind11;
namespace st = safetensors;

namespace st_python {
namespace {

std::span<const std::byte> bytes_of(const py::bytes& b) {
  const std::string_view v = b;
  return {reinterpret_cast<const std::byte*>(v.data()), v.size()};  // NOLINT: bytes as bytes
}

class header_reader {
 public:
  explicit header_reader(st::header h) : header_(std::move(h)) {}

  const st::header& live() const {
    if (closed_) fail_argument("the file is closed");
    return header_;
  }
  const st::tensor_info& find(const std::string& name) const {
    const auto* info = live().find(name);
    if (info == nullptr) {
      throw python_error(
          st::make_error(st::error_code::tensor_not_found, "File does not contain tensor " + name, std::nullopt, name),
          operation::lookup);
    }
    return *info;
  }
  void close() noexcept { closed_ = true; }
  [[nodiscard]] bool closed() const noexcept { return closed_; }

 private:
  st::header header_;
  bool closed_ = false;
};

py::list shape_list(const st::tensor_info& info) {
  py::list shape;
  for (auto d : info.shape) shape.append(d);
  return shape;
}

}  // namespace

void bind_header_reader(py::module_& m) {
  py::class_<header_reader>(m, "HeaderReader", "A validated header; the tensors' bytes are read by the caller.")
      .def_static(
          "header_length",
          [](const py::bytes& prefix, std::uint64_t file_size, const std::string& policy) {
            return unwrap(st::read_header_length(bytes_of(prefix), file_size, parse_options_for(policy)),
                          operation::open);
          },
          py::arg("prefix"), py::arg("file_size"), py::arg("policy") = "reference",
          "N from a file's first 8 bytes (fewer for a tiny file), checked against the file size.")
      .def_static(
          "parse",
          [](const py::bytes& json, std::uint64_t file_size, const std::string& policy) {
            return header_reader(
                unwrap(st::parse_header(bytes_of(json), file_size, parse_options_for(policy)), operation::open));
          },
          py::arg("json"), py::arg("file_size"), py::arg("policy") = "reference",
          "Validates the header's N bytes of JSON for a file of `file_size` bytes.")
      .def("keys",
           [](const header_reader& r) {
             std::vector<std::string> names;
             for (const auto& t : r.live().tensors()) names.emplace_back(t.name);
             std::sort(names.begin(), names.end());
             return names;
           })
      .def("offset_keys",
           [](const header_reader& r) {
             std::vector<std::string> names;
             for (const auto& t : r.live().tensors()) names.emplace_back(t.name);
             return names;
           })
      .def("metadata", [](const header_reader& r) { return metadata_to_python(r.live().metadata()); })
      .def("info",
           [](const header_reader& r, const std::string& name) {
             const auto& info = r.find(name);
             return py::make_tuple(std::string(st::dtype_name(info.type)), shape_list(info), info.byte_size());
           })
      .def("locate",
           [](const header_reader& r, const std::string& name) {
             const auto& info = r.find(name);
             return py::make_tuple(std::string(st::dtype_name(info.type)), shape_list(info), info.byte_size(),
                                   r.live().data_start() + info.begin);
           })
      .def(
          "plan_slice",
          [](const header_reader& r, const std::string& name, const py::list& indexers) {
            const auto& info = r.find(name);
            const auto idx = indexers_from(indexers);
            auto plan = unwrap(st::plan_slice(info, r.live().data_start(), idx));
            std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
            ranges.reserve(plan.ranges.size());
            for (const auto& range : plan.ranges) ranges.emplace_back(range.offset, range.length);
            return py::make_tuple(std::string(st::dtype_name(plan.type)), plan.shape, plan.byte_size, ranges);
          },
          "(dtype code, output shape, byte size, [(file offset, length), ...]) of a slice.")
      .def("close", &header_reader::close)
      .def_property_readonly("closed", &header_reader::closed);
}

}  // namespace st_python
