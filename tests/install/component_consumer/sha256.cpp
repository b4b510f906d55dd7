// A program that only sees the installed sha256 component: a known SHA-256 vector, then the
// core's verify_checkpoint hashing a file with the hasher this component provides.
#include <safetensors/checkpoint_verify.h>
#include <safetensors/sha256.h>
#include <safetensors/writer.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: component_consumer SCRATCH_DIR\n", stderr);
    return 2;
  }
  auto h = safetensors::sha256_hasher::create();
  if (!h) return 1;
  h->update(std::as_bytes(std::span("abc", 3)));
  if (h->finish_hex() != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
    std::fputs("SHA-256 of 'abc' is wrong\n", stderr);
    return 1;
  }
  const std::string path = std::string(argv[1]) + "/hashed.safetensors";
  const float values[2] = {1.0F, 2.0F};
  const safetensors::tensor_data tensor{"w", safetensors::dtype::F32, {2}, std::as_bytes(std::span(values))};
  if (auto s = safetensors::write_file(path, std::span(&tensor, 1)); !s) {
    std::fprintf(stderr, "write_file: %s\n", s.err().to_string().c_str());
    return 1;
  }
  safetensors::verify_options options;
  options.digest = safetensors::make_sha256_hasher;
  auto report = safetensors::verify_checkpoint(path, options);
  if (!report || !report->ok() || report->shards.size() != 1 || report->shards[0].digest.size() != 64) {
    std::fputs("verify_checkpoint gave no SHA-256\n", stderr);
    return 1;
  }
  std::printf("sha256 ok (%s)\n", report->shards[0].digest.c_str());
  return 0;
}
