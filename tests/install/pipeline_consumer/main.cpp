// A program that only sees the installed pipeline component: writes a .npy with the NumPy
// writer (component formats, which pipeline brings), converts it to SafeTensors with the
// pipeline, and reads the result back.
#include <safetensors/formats/npy.h>
#include <safetensors/pipeline/convert.h>
#include <safetensors/safetensors.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: pipeline_consumer SCRATCH_DIR\n", stderr);
    return 2;
  }
  const std::string dir = argv[1];
  const float values[3] = {1.0F, -2.5F, 3.0F};
  const std::uint64_t shape[1] = {3};
  if (auto written = safetensors::numpy::write_npy(dir + "/bias.npy", safetensors::dtype::F32, shape,
                                                   std::as_bytes(std::span(values)));
      !written) {
    std::fprintf(stderr, "write_npy: %s\n", written.err().to_string().c_str());
    return 1;
  }
  auto summary = safetensors::pipeline::convert(dir + "/bias.npy", dir + "/bias.safetensors");
  if (!summary) {
    std::fprintf(stderr, "convert: %s\n", summary.err().to_string().c_str());
    return 1;
  }
  auto f = safetensors::file::open(dir + "/bias.safetensors");
  if (!f) return 1;
  auto bytes = f->load("bias");  // a .npy's tensor is named after the file's stem
  if (!bytes || bytes->size() != sizeof values || std::memcmp(bytes->data(), values, sizeof values) != 0) {
    std::fputs("converted tensor differs\n", stderr);
    return 1;
  }
  std::printf("convert ok (%zu tensor from %s)\n", summary->tensors, summary->input_format.c_str());
  return 0;
}
