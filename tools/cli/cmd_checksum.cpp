// SPDX-License-Identifier: Apache-2.0
// `safetensors checksum FILE|DIR|-... [--per-tensor] [--json] [--quiet]`: SHA-256 of each
// whole file, exactly as sha256sum prints it (any readable file: a partial download, a
// pipe, stdin as `-`), and with --per-tensor of each tensor's bytes, in one pass.
// `--check LIST` verifies a list written by checksum (or by sha256sum).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <vector>

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
  auto at = resolve_input(path);
  if (!at) return std::move(at).err();
  if (at->is_local()) return safetensors::pipeline::checksum(at->path(), {.progress = bar.callback()});
  auto bytes = at->open_sequential();
  if (!bytes) return std::move(bytes).err();
  return safetensors::pipeline::checksum(*bytes->reader, {.progress = bar.callback()});
}

/// Whole-file and per-tensor digests of a SafeTensors path or URL, in one pass.
safetensors::result<file_digest> digest_tensors(const std::string& path, bool quiet) {
  auto f = open_input(path);
  if (!f) return std::move(f).err();
  pipeline_progress bar("checksum", quiet);
  return safetensors::pipeline::checksum(*f, {.per_tensor = true, .progress = bar.callback()});
}

/// Most a check list may hold (one line per file, or per tensor): far more than any real one.
constexpr std::uint64_t max_list_bytes = std::uint64_t{256} << 20;

/// All of a check list: a file, `-` (standard input) or a URL.
safetensors::result<std::string> read_list(std::string path) {
  std::string text;
  if (is_url(path)) {
    auto at = resolve_input(path);
    if (!at) return std::move(at).err();
    if (!at->is_local()) {
      auto bytes = at->open_sequential();
      if (!bytes) return std::move(bytes).err();
      const safetensors::range_reader& remote = *bytes->reader;
      if (remote.size() > max_list_bytes) {
        return safetensors::make_error(
            safetensors::error_code::limit_exceeded,
            fmt::format("a check list of {} bytes is over the {}-byte limit", remote.size(), max_list_bytes));
      }
      text.resize(static_cast<std::size_t>(remote.size()));
      if (auto s = remote.read(0, std::as_writable_bytes(std::span(text))); !s) return std::move(s).err();
      return text;
    }
    path = at->path();
  }
  std::ifstream file;
  if (path != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return safetensors::pipeline::os_failure("cannot read", EISDIR, path);
    file.open(path, std::ios::binary);
    if (!file) return safetensors::pipeline::os_failure("cannot open file", errno, path);
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::vector<char> chunk(std::size_t{1} << 16);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_list_bytes) {
      return safetensors::make_error(safetensors::error_code::limit_exceeded,
                                     fmt::format("a check list over the {}-byte limit", max_list_bytes));
    }
  }
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
  // Names escaped as everywhere (printable_text); `checksum -c` matches a listed name in that form.
  fmt::print("{}  {}\n", d.sha256, printable_text(path));
  for (const auto& t : d.tensors) fmt::print("tensor {}  {}\n", t.sha256, printable_text(t.name));
}

/// Hashes one file (or stdin) and prints its lines.
safetensors::status checksum_one(const std::string& path, const checksum_args& args) {
  if (args.per_tensor && path == "-") {
    return usage_error("--per-tensor needs a file: standard input cannot be read by offset");
  }
  if (!args.per_tensor) {
    auto d = digest_stream(path, args.quiet);
    if (!d) return safetensors::error(d.err()).with_path(path);
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
  return safetensors::error(d.err()).with_path(path);
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

const char* verdict_text(safetensors::pipeline::digest_match m) {
  switch (m) {
    case safetensors::pipeline::digest_match::ok: return "OK";
    case safetensors::pipeline::digest_match::mismatch: return "FAILED";
    case safetensors::pipeline::digest_match::missing: return "FAILED (no such tensor)";
  }
  return "FAILED";
}

run_result run_check(const checksum_args& args) {
  auto text = read_list(args.check);
  if (!text) return safetensors::error(text.err()).with_path(args.check);
  const auto list = safetensors::pipeline::parse_checksum_list(*text);
  if (list.malformed_lines > 0) {
    print_warning(fmt::format("{}: {} {} improperly formatted", args.check, count_of(list.malformed_lines, "line"),
                              list.malformed_lines == 1 ? "is" : "are"));
  }
  if (list.entries.empty()) {
    return usage_error("no properly formatted checksum lines found").with_path(args.check);
  }
  std::size_t failed = 0;
  std::size_t unreadable = 0;
  std::size_t checked = 0;
  for (const auto& entry : list.entries) {
    auto d = entry.tensors.empty() ? digest_stream(entry.path, args.quiet) : digest_tensors(entry.path, args.quiet);
    if (!d) {
      fmt::print("{}: FAILED open or read\n", printable_text(entry.path));
      print_error(d.err());
      ++unreadable;
      continue;
    }
    const auto verdict = safetensors::pipeline::check(entry, *d);
    checked += 1 + verdict.tensors.size();
    failed += verdict.failures();
    fmt::print("{}: {}\n", printable_text(entry.path), verdict_text(verdict.file));
    for (const auto& [name, match] : verdict.tensors) {
      fmt::print("{}: tensor '{}': {}\n", printable_text(entry.path), printable_text(name), verdict_text(match));
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
        report(safetensors::error(shards.err()).with_path(path));
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
