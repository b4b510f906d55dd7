// SPDX-License-Identifier: Apache-2.0
// `safetensors checksum FILE... [--per-tensor] [--json] [--quiet]`: SHA-256 of each whole
// file (what sha256sum prints) and, optionally, of each tensor's bytes, in one pass.
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "input.h"
#include "progress.h"
#include "report.h"
#include "safetensors/json_text.h"
#include "safetensors/sha256.h"

namespace st_cli {
namespace {

struct checksum_args {
  std::vector<std::string> files;
  bool per_tensor = false;
  bool json = false;
  bool quiet = false;
};

struct tensor_digest {
  std::string_view name;
  std::uint64_t bytes = 0;
  std::string hex;
};

/// Hashes [offset, end) of the file into `hasher` in chunks.
safetensors::status hash_range(const safetensors::file& f, std::uint64_t offset, std::uint64_t end,
                               std::vector<std::byte>& buffer, safetensors::sha256_hasher& hasher, progress& bar) {
  while (offset < end) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(end - offset, chunk_bytes));
    buffer.resize(n);
    if (auto s = f.read_range(offset, buffer); !s) return s;
    hasher.update(buffer);
    bar.advance(n);
    offset += n;
  }
  return {};
}

int checksum_one(const std::string& path, const checksum_args& args) {
  auto f = open_input(path);
  if (!f) {
    print_error(f.err());
    return exit_code_for(f.err());
  }
  auto whole = safetensors::sha256_hasher::create();
  auto per = safetensors::sha256_hasher::create();
  if (!whole || !per) {
    print_error(whole ? per.err() : whole.err());
    return exit_usage;
  }
  progress bar("checksum", f->file_size(), !args.quiet);
  std::vector<std::byte> buffer;
  const auto& h = f->meta();
  std::vector<tensor_digest> digests;
  // Header, then every tensor (they tile the data in file order), then any trailing bytes.
  auto s = hash_range(*f, 0, h.data_start(), buffer, *whole, bar);
  for (const auto& t : f->tensors()) {
    if (!s) break;
    s = for_each_chunk(*f, t, buffer, [&](std::span<const std::byte> chunk) -> safetensors::status {
      whole->update(chunk);
      if (args.per_tensor) per->update(chunk);
      bar.advance(chunk.size());
      return {};
    });
    if (args.per_tensor) digests.push_back({t.name, t.byte_size(), safetensors::to_hex(per->finish())});
  }
  if (s) s = hash_range(*f, h.data_start() + h.data_size(), f->file_size(), buffer, *whole, bar);
  bar.finish();
  if (!s) {
    print_error(s.err());
    return exit_code_for(s.err());
  }
  const std::string hex = safetensors::to_hex(whole->finish());
  if (args.json) {
    std::string out = fmt::format(R"({{"file":{},"bytes":{},"sha256":"{}")", safetensors::json_quote(path),
                                  f->file_size(), hex);
    if (args.per_tensor) {
      out += R"(,"tensors":[)";
      for (std::size_t i = 0; i < digests.size(); ++i) {
        if (i > 0) out += ',';
        out += fmt::format(R"({{"name":{},"bytes":{},"sha256":"{}"}})", safetensors::json_quote(digests[i].name),
                           digests[i].bytes, digests[i].hex);
      }
      out += "]";
    }
    fmt::print("{}}}\n", out);
  } else {
    fmt::print("{}  {}\n", hex, path);
    for (const auto& d : digests) fmt::print("{}  {}:{}\n", d.hex, path, d.name);
  }
  return exit_ok;
}

int run_checksum(const checksum_args& args) {
  int status = exit_ok;
  for (const auto& path : args.files) status = std::max(status, checksum_one(path, args));
  return status;
}

const command_registrar registrar{
    "checksum", "SHA-256 of whole files (as sha256sum) and, with --per-tensor, of each tensor's bytes",
    [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<checksum_args>();
      app.add_option("files", args->files, "SafeTensors files")->required();
      app.add_flag("--per-tensor", args->per_tensor, "Also hash each tensor's data bytes");
      app.add_flag("--json", args->json, "One JSON object per line per file");
      app.add_flag("-q,--quiet", args->quiet, "No progress bar");
      return [args] { return run_checksum(*args); };
    }};

}  // namespace
}  // namespace st_cli
