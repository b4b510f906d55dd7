// A program that only sees the installed package: write a file in memory, read it back.
#include <safetensors/safetensors.h>

#include <cstdio>

int main() {
  const float values[2] = {1.0F, 2.0F};
  safetensors::tensor_data t{"w", safetensors::dtype::F32, {2}, std::as_bytes(std::span(values))};
  auto bytes = safetensors::serialize(std::span(&t, 1));
  if (!bytes) return 1;
  auto f = safetensors::file::from_buffer(*bytes);
  if (!f || f->find("w") == nullptr) return 1;
  std::puts("round trip ok");
  return 0;
}
