// A program that only reads and writes NumPy files: it links the installed formats component
// and the core, and neither MLX nor OpenSSL (run.cmake checks what it needs).
#include <safetensors/formats/npy.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: formats_consumer SCRATCH_DIR\n", stderr);
    return 2;
  }
  const std::string path = std::string(argv[1]) + "/weights.npy";
  const float values[3] = {1.0F, -2.5F, 3.0F};
  const std::uint64_t shape[1] = {3};
  if (auto written =
          safetensors::numpy::write_npy(path, safetensors::dtype::F32, shape, std::as_bytes(std::span(values)));
      !written) {
    std::fprintf(stderr, "write_npy: %s\n", written.err().to_string().c_str());
    return 1;
  }
  auto npy = safetensors::numpy::npy_file::open(path);
  if (!npy) {
    std::fprintf(stderr, "npy_file::open: %s\n", npy.err().to_string().c_str());
    return 1;
  }
  float back[3] = {};
  if (auto read = npy->read(std::as_writable_bytes(std::span(back)));
      !read || std::memcmp(back, values, sizeof values) != 0) {
    std::fputs("the array read back differs\n", stderr);
    return 1;
  }
  std::printf("npy ok (%zu values)\n", sizeof values / sizeof values[0]);
  return 0;
}
