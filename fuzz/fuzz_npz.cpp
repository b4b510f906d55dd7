// SPDX-License-Identifier: Apache-2.0
// The .npz reader: zip directory, member names, limits, each member's .npy header, and
// inflating. The input goes to an in-memory file (memfd), since the zip reader opens
// paths. Properties: every accepted array reads without error when its data is small
// enough to allocate here, and a zero-copy view, when offered, equals what read() gives.
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fuzz_support.h"
#include "safetensors/formats/npz.h"

namespace {

const std::string& input_path() {
  static const std::string path = [] {
    const int fd = memfd_create("fuzz_npz", 0);
    if (fd < 0) std::abort();
    return "/proc/self/fd/" + std::to_string(fd);
  }();
  return path;
}

int input_fd() { return std::stoi(input_path().substr(std::string("/proc/self/fd/").size())); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = input_fd();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  auto archive = safetensors::numpy::npz_archive::open(input_path());
  if (!archive) return 0;
  for (const auto& array : archive->arrays()) {
    if (array.header.data_bytes > (std::size_t{1} << 22)) continue;
    std::vector<std::byte> out(array.header.data_bytes);
    const auto read = archive->read(array, out);
    // Members were all checked at open; a read can still meet corrupt deflate data or a bad CRC.
    if (!read) {
      ST_FUZZ_CHECK(read.err().code == safetensors::error_code::invalid_format);
      continue;
    }
    if (auto view = archive->view(array)) ST_FUZZ_CHECK(std::equal(view->begin(), view->end(), out.begin(), out.end()));
  }
  return 0;
}
