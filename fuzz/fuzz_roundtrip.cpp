// SPDX-License-Identifier: Apache-2.0
// The writer round trip on every accepted file. Properties: write(parse(x)) parses back
// to the same tensors and metadata; writing that again gives the same bytes; the
// streaming writer (chunked appends) and serialize produce identical files.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  auto input = file::from_buffer(st_fuzz::as_bytes(data, size));
  if (!input) return 0;
  write_options options;
  options.metadata = input->meta().metadata();
  auto tensors = st_fuzz::tensors_of(*input);
  auto written = serialize(tensors, options);
  ST_FUZZ_CHECK(written.ok());
  auto reread = file::from_buffer(*written);
  ST_FUZZ_CHECK(reread.ok() && st_fuzz::same_content(*input, *reread));
  auto again = serialize(st_fuzz::tensors_of(*reread), options);
  ST_FUZZ_CHECK(again.ok() && *again == *written);

  std::vector<tensor_spec> specs;
  for (const auto& t : tensors) specs.push_back({t.name, t.type, t.shape});
  auto plan = write_plan::make(std::move(specs), options);
  ST_FUZZ_CHECK(plan.ok());
  const std::string& path = st_fuzz::scratch_path("roundtrip");
  auto stream = stream_writer::create(path, std::move(plan).value());
  ST_FUZZ_CHECK(stream.ok());
  for (auto it = tensors.rbegin(); it != tensors.rend(); ++it) {  // any tensor order is allowed
    const std::size_t half = it->data.size() / 2;
    ST_FUZZ_CHECK(stream->append(it->name, it->data.first(half)).ok());
    ST_FUZZ_CHECK(stream->append(it->name, it->data.subspan(half)).ok());
  }
  ST_FUZZ_CHECK(stream->commit().ok());
  ST_FUZZ_CHECK(st_fuzz::read_whole(path) == *written);
  return 0;
}
