// SPDX-License-Identifier: Apache-2.0
#include "mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace py = pybind11;

namespace st_python {
namespace {

/// What Python holds: a share of the mapping, exported as a buffer.
struct mapping_holder {
  std::shared_ptr<private_mapping> mapping;
};

}  // namespace

std::shared_ptr<private_mapping> private_mapping::map(const std::string& path, std::size_t min_size) {
  // open(2) would stop at a NUL byte and map another file: the core's open refuses such a path.
  if (path.find('\0') != std::string::npos) return nullptr;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  void* address = MAP_FAILED;
  std::size_t length = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      static_cast<std::size_t>(st.st_size) >= min_size) {
    length = static_cast<std::size_t>(st.st_size);
    // PROT_WRITE on a private mapping: tensors are writable, and writes copy the page.
    address = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  }
  ::close(fd);
  if (address == MAP_FAILED) return nullptr;
  return std::make_shared<private_mapping>(address, length);
}

private_mapping::~private_mapping() { (void)::munmap(address_, length_); }

py::object mapping_object(std::shared_ptr<private_mapping> mapping) {
  return py::cast(mapping_holder{std::move(mapping)});
}

void bind_mapping(py::module_& m) {
  py::class_<mapping_holder>(m, "Mapping", py::buffer_protocol(),
                             "A private copy-on-write mapping of a file: writes never reach the file.")
      .def_buffer([](const mapping_holder& h) {
        const auto bytes = h.mapping->bytes();
        return py::buffer_info(bytes.data(), 1, py::format_descriptor<std::uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(bytes.size())}, {py::ssize_t{1}}, false);
      })
      .def("__len__", [](const mapping_holder& h) { return h.mapping->bytes().size(); });
}

}  // namespace st_python
