// SPDX-License-Identifier: Apache-2.0
// `safetensors checksum FILE|DIR|-... [--per-tensor] [--json] [--quiet]`: SHA-256 of each
// whole file, exactly as sha256sum prints it (any readable file: a partial download, a
// pipe, stdin as `-`), and with --per-tensor of each tensor's bytes, in one pass.
// `--check LIST` verifies a list written by checksum (or by sha256sum).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "command.h"
#include "count_text.h"
#include "input.h"
#include "progress.h"
#include "remote_input.h"
#include "report.h"
#include "safetensors/checkpoint.h"
#include "safetensors/json_text.h"
#include "safetensors/pipeline/checksum.h"
#include "safetensors/pipeline/output_check.h"
#include "safetensors/sha256.h"

namespace st_cli {
namespace {

struct checksum_args {
  std::vector<std::string> files;
  bool per_tensor = false;
  bool json = false;
  bool quiet = false;
  std::string check;
};

using safetensors::pipeline::file_digest;

/// The whole-file digest of a path, `-` (standard input) or URL: any content.
safetensors::result<file_digest> digest_stream(const std::string& path, bool quiet) {
  pipeline_progress bar("checksum", quiet);
  if (!is_url(path)) return safetensors::pipeline::checksum(path, {.per_tensor = false, .progress = bar.callback()});
  const auto advance = bar.callback();
  std::uint64_t size = 0;
  auto hasher = safetensors::sha256_hasher::create();
  if (!hasher) return std::move(hasher).err();
  file_digest out;
  auto s = read_url_sequentially(
      path, [&](std::uint64_t total) { size = total; },
      [&](std::span<const std::byte> chunk) {
        hasher->update(chunk);
        out.bytes += chunk.size();
        advance(out.bytes, size);
      });
  if (!s) return std::move(s).err();
  out.sha256 = safetensors::to_hex(hasher->finish());
  return out;
}

/// Whole-file and per-tensor digests of a SafeTensors path or URL, in one pass.
safetensors::result<file_digest> digest_tensors(const std::string& path, bool quiet) {
  auto f = open_input(path);
  if (!f) return std::move(f).err();
  pipeline_progress bar("checksum", quiet);
  return safetensors::pipeline::checksum(*f, {.per_tensor = true, .progress = bar.callback()});
}

/// All of a check list: a file, `-` (standard input) or a URL.
safetensors::result<std::string> read_list(const std::string& path) {
  std::string text;
  if (is_url(path)) {
    auto s = read_url_sequentially(
        path, [](std::uint64_t) {},
        [&](std::span<const std::byte> chunk) {
          text.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
        });
    if (!s) return std::move(s).err();
    return text;
  }
  std::ifstream file;
  if (path != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return safetensors::pipeline::os_failure("cannot read", EISDIR, path);
    file.open(path, std::ios::binary);
    if (!file) return safetensors::pipeline::os_failure("cannot open file", errno, path);
  }
  std::istream& in = path == "-" ? std::cin : file;
  text.assign(std::istreambuf_iterator<char>(in), {});
  if (in.bad()) return safetensors::pipeline::os_failure("read failed", errno, path);
  return text;
}

void print_digest(const std::string& path, const file_digest& d, const checksum_args& args) {
  if (args.json) {
    std::string out =
        fmt::format(R"({{"file":{},"bytes":{},"sha256":"{}")", safetensors::json_quote(path), d.bytes, d.sha256);
    if (args.per_tensor) {
      std::vector<std::string> tensors;
      for (const auto& t : d.tensors) {
        tensors.push_back(fmt::format(R"({{"name":{},"bytes":{},"sha256":"{}"}})", safetensors::json_quote(t.name),
                                      t.bytes, t.sha256));
      }
      out += fmt::format(R"(,"tensors":[{}])", fmt::join(tensors, ","));
    }
    fmt::print("{}}}\n", out);
    return;
  }
  // The file line is sha256sum's; tensor lines start with a word, so `sha256sum -c` skips
  // them as unformatted instead of looking for a file named "model.safetensors:w".
  fmt::print("{}  {}\n", d.sha256, path);
  for (const auto& t : d.tensors) fmt::print("tensor {}  {}\n", t.sha256, t.name);
}

/// Hashes one file (or stdin) and prints its lines.
safetensors::status checksum_one(const std::string& path, const checksum_args& args) {
  if (args.per_tensor && path == "-") {
    return usage_error("--per-tensor needs a file: standard input cannot be read by offset");
  }
  if (!args.per_tensor) {
    auto d = digest_stream(path, args.quiet);
    if (!d) return with_path(d.err(), path);
    print_digest(path, *d, args);
    return {};
  }
  auto d = digest_tensors(path, args.quiet);
  if (d) {
    print_digest(path, *d, args);
    return {};
  }
  // Not a valid SafeTensors file: the whole-file digest still helps (a partial download).
  if (d.err().code != safetensors::error_code::io) {
    if (auto whole = digest_stream(path, args.quiet)) print_digest(path, *whole, args);
  }
  return with_path(d.err(), path);
}

/// The shard files of a checkpoint directory or index, in shard order.
safetensors::result<std::vector<std::string>> shard_paths(const std::string& path) {
  safetensors::checkpoint_options options;
  options.shard.backend = safetensors::io_backend::pread;
  auto c = open_checkpoint_at(path, options);
  if (!c) return std::move(c).err();
  std::vector<std::string> out;
  for (const auto& s : c->shards()) out.push_back(s.file.path());
  return out;
}

// --- --check ---------------------------------------------------------------------

struct check_entry {
  std::string path;
  std::string hex;
  std::map<std::string, std::string> tensors;  ///< name -> hex, from "tensor" lines
};

bool is_hex_digest(std::string_view s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Reads a list in sha256sum's format ("HEX  PATH", "HEX *PATH") plus our "tensor HEX  NAME"
/// lines, which belong to the file line above them.
safetensors::result<std::vector<check_entry>> read_check_list(const std::string& list, std::size_t& malformed) {
  auto read = read_list(list);
  if (!read) return std::move(read).err();
  const std::string& text = *read;
  std::vector<check_entry> entries;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const bool tensor_line = line.starts_with("tensor ");
    if (tensor_line) line.remove_prefix(7);
    if (line.size() < 67 || !is_hex_digest(line.substr(0, 64)) || line[64] != ' ' ||
        (line[65] != ' ' && line[65] != '*') || (tensor_line && entries.empty())) {
      ++malformed;
      continue;
    }
    const std::string hex = lower(line.substr(0, 64));
    const std::string name(line.substr(66));
    if (tensor_line) {
      entries.back().tensors[name] = hex;
    } else {
      entries.push_back({name, hex, {}});
    }
  }
  return entries;
}

run_result run_check(const checksum_args& args) {
  std::size_t malformed = 0;
  auto entries = read_check_list(args.check, malformed);
  if (!entries) return with_path(entries.err(), args.check);
  if (malformed > 0) {
    print_warning(fmt::format("{}: {} {} improperly formatted", args.check, count_of(malformed, "line"),
                              malformed == 1 ? "is" : "are"));
  }
  if (entries->empty()) {
    return with_path(usage_error("no properly formatted checksum lines found"), args.check);
  }
  std::size_t failed = 0;
  std::size_t unreadable = 0;
  std::size_t checked = 0;
  for (const auto& entry : *entries) {
    auto d = entry.tensors.empty() ? digest_stream(entry.path, args.quiet) : digest_tensors(entry.path, args.quiet);
    if (!d) {
      fmt::print("{}: FAILED open or read\n", entry.path);
      print_error(d.err());
      ++unreadable;
      continue;
    }
    ++checked;
    const bool ok = d->sha256 == entry.hex;
    if (!ok) ++failed;
    fmt::print("{}: {}\n", entry.path, ok ? "OK" : "FAILED");
    for (const auto& [name, hex] : entry.tensors) {
      ++checked;
      const auto it = std::find_if(d->tensors.begin(), d->tensors.end(), [&](const auto& t) { return t.name == name; });
      const char* verdict = it == d->tensors.end() ? "FAILED (no such tensor)" : it->sha256 == hex ? "OK" : "FAILED";
      if (it == d->tensors.end() || it->sha256 != hex) ++failed;
      fmt::print("{}: tensor '{}': {}\n", entry.path, name, verdict);
    }
  }
  if (unreadable > 0) {
    print_warning(fmt::format("{} could not be read", count_of(unreadable, "listed file")));
  }
  if (failed > 0) {
    print_warning(fmt::format("{} of {} did NOT match", with_commas(failed), count_of(checked, "computed checksum")));
  }
  if (unreadable > 0) return exit_usage;
  return failed > 0 ? exit_failed : exit_ok;
}

run_result run_checksum(const checksum_args& args) {
  if (!args.check.empty()) {
    if (!args.files.empty() || args.per_tensor || args.json) {
      return usage_error("--check takes only the list to verify (see 'safetensors checksum --help')");
    }
    return run_check(args);
  }
  if (args.files.empty()) {
    return usage_error("give files to hash, or --check LIST (see 'safetensors checksum --help')");
  }
  // A file that cannot be hashed is reported as it comes and the others are still hashed,
  // as sha256sum does; the exit status is the worst one.
  int status = exit_ok;
  const auto report = [&status](const safetensors::status& s) {
    if (s) return;
    print_error(s.err());
    status = std::max(status, exit_code_for(s.err()));
  };
  for (const auto& path : args.files) {
    std::error_code ec;
    if (path != "-" && std::filesystem::is_directory(path, ec)) {
      auto shards = shard_paths(path);
      if (!shards) {
        report(with_path(shards.err(), path));
        continue;
      }
      for (const auto& shard : *shards) report(checksum_one(shard, args));
      continue;
    }
    report(checksum_one(path, args));
  }
  return status;
}

const command_registrar checksum_registrar{
    "checksum",
    "SHA-256 of files (as sha256sum; any readable file, - for stdin), of each tensor with --per-tensor; --check LIST",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<checksum_args>();
      app.add_option("files", args->files, "Files (any content), checkpoint directories (each shard), or - (stdin)");
      app.add_flag("--per-tensor", args->per_tensor, "Also hash each tensor's data bytes (SafeTensors files only)");
      add_json(app, args->json, "One JSON object per line per file");
      add_quiet(app, args->quiet);
      app.add_option("-c,--check", args->check,
                     "Verify the checksums listed in LIST (checksum's or sha256sum's output; - for stdin)");
      return [args] { return run_checksum(*args); };
    }};

}  // namespace
}  // namespace st_cli
