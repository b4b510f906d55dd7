// SPDX-License-Identifier: Apache-2.0
// `safetensors checksum FILE|DIR|-... [--per-tensor] [--json] [--quiet]`: SHA-256 of each
// whole file, exactly as sha256sum prints it (any readable file: a partial download, a
// pipe, stdin as `-`), and with --per-tensor of each tensor's bytes, in one pass.
// `--check LIST` verifies a list written by checksum (or by sha256sum).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
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

struct tensor_digest {
  std::string name;
  std::uint64_t bytes = 0;
  std::string hex;
};

struct file_digest {
  std::string hex;
  std::uint64_t bytes = 0;
  std::vector<tensor_digest> tensors;  ///< with --per-tensor, in file order
};

safetensors::error io_error(const std::string& what, int err, const std::string& path) {
  safetensors::error e =
      safetensors::make_error(safetensors::error_code::io, fmt::format("{}: {}", what, std::strerror(err)));
  e.os_errno = err;
  e.path = path;
  return e;
}

safetensors::result<safetensors::sha256_hasher> new_hasher() { return safetensors::sha256_hasher::create(); }

/// Reads all of `path` (`-`: standard input) in order: `start(size)` once (the size of a
/// regular file, else 0), then `consume(chunk)` for each chunk. A directory is EISDIR.
safetensors::status read_sequentially(const std::string& path, const std::function<void(std::uint64_t)>& start,
                                      const std::function<void(std::span<const std::byte>)>& consume) {
  if (is_url(path)) return read_url_sequentially(path, start, consume);
  const bool stdin_input = path == "-";
  const int fd = stdin_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open file", errno, path);
  struct closer {
    int descriptor;
    bool owned;
    ~closer() {
      if (owned) ::close(descriptor);
    }
  };
  const closer guard{fd, !stdin_input};
  struct stat st {};
  const bool known = ::fstat(fd, &st) == 0;
  if (known && S_ISDIR(st.st_mode)) return io_error("cannot read", EISDIR, path);
  start(known && S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0);
  std::vector<std::byte> buffer(chunk_bytes);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("read failed", errno, path);
    if (n == 0) return {};
    consume(std::span(buffer.data(), static_cast<std::size_t>(n)));
  }
}

/// The whole-file digest by plain sequential reads: works on anything readable, whatever
/// its content, and on `-` (standard input).
safetensors::result<file_digest> digest_stream(const std::string& path, bool quiet) {
  auto hasher = new_hasher();
  if (!hasher) return std::move(hasher).err();
  std::optional<progress> bar;
  file_digest out;
  auto s = read_sequentially(
      path, [&](std::uint64_t size) { bar.emplace("checksum", size, !quiet); },
      [&](std::span<const std::byte> chunk) {
        hasher->update(chunk);
        out.bytes += chunk.size();
        bar->advance(chunk.size());
      });
  if (!s) return std::move(s).err();
  out.hex = safetensors::to_hex(hasher->finish());
  return out;
}

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

/// Whole-file and per-tensor digests of a valid SafeTensors file, in one pass: header,
/// then every tensor (they tile the data in file order), then any trailing bytes.
safetensors::result<file_digest> digest_tensors(const std::string& path, bool quiet) {
  auto f = open_input(path);
  if (!f) return std::move(f).err();
  auto whole = new_hasher();
  auto per = new_hasher();
  if (!whole || !per) return whole ? per.err() : whole.err();
  progress bar("checksum", f->file_size(), !quiet);
  std::vector<std::byte> buffer;
  const auto& h = f->meta();
  file_digest out;
  auto s = hash_range(*f, 0, h.data_start(), buffer, *whole, bar);
  for (const auto& t : f->tensors()) {
    if (!s) break;
    s = read_tensor_chunks(*f, t, buffer, [&](std::span<const std::byte> chunk) -> safetensors::status {
      whole->update(chunk);
      per->update(chunk);
      bar.advance(chunk.size());
      return {};
    });
    out.tensors.push_back({std::string(t.name), t.byte_size(), safetensors::to_hex(per->finish())});
  }
  if (s) s = hash_range(*f, h.data_start() + h.data_size(), f->file_size(), buffer, *whole, bar);
  if (!s) return std::move(s).err();
  out.hex = safetensors::to_hex(whole->finish());
  out.bytes = f->file_size();
  return out;
}

void print_digest(const std::string& path, const file_digest& d, const checksum_args& args) {
  if (args.json) {
    std::string out =
        fmt::format(R"({{"file":{},"bytes":{},"sha256":"{}")", safetensors::json_quote(path), d.bytes, d.hex);
    if (args.per_tensor) {
      std::vector<std::string> tensors;
      for (const auto& t : d.tensors) {
        tensors.push_back(
            fmt::format(R"({{"name":{},"bytes":{},"sha256":"{}"}})", safetensors::json_quote(t.name), t.bytes, t.hex));
      }
      out += fmt::format(R"(,"tensors":[{}])", fmt::join(tensors, ","));
    }
    fmt::print("{}}}\n", out);
    return;
  }
  // The file line is sha256sum's; tensor lines start with a word, so `sha256sum -c` skips
  // them as unformatted instead of looking for a file named "model.safetensors:w".
  fmt::print("{}  {}\n", d.hex, path);
  for (const auto& t : d.tensors) fmt::print("tensor {}  {}\n", t.hex, t.name);
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
  std::string text;
  auto s = read_sequentially(
      list, [](std::uint64_t) {},
      [&](std::span<const std::byte> chunk) {
        text.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
      });
  if (!s) return std::move(s).err();
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
    const bool ok = d->hex == entry.hex;
    if (!ok) ++failed;
    fmt::print("{}: {}\n", entry.path, ok ? "OK" : "FAILED");
    for (const auto& [name, hex] : entry.tensors) {
      ++checked;
      const auto it = std::find_if(d->tensors.begin(), d->tensors.end(), [&](const auto& t) { return t.name == name; });
      const char* verdict = it == d->tensors.end() ? "FAILED (no such tensor)" : it->hex == hex ? "OK" : "FAILED";
      if (it == d->tensors.end() || it->hex != hex) ++failed;
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

const command_registrar registrar{
    "checksum",
    "SHA-256 of files (as sha256sum; any readable file, - for stdin), of each tensor with --per-tensor; --check LIST",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<checksum_args>();
      app.add_option("files", args->files, "Files (any content), checkpoint directories (each shard), or - (stdin)");
      app.add_flag("--per-tensor", args->per_tensor, "Also hash each tensor's data bytes (SafeTensors files only)");
      app.add_flag("--json", args->json, "One JSON object per line per file");
      app.add_flag("-q,--quiet", args->quiet, "No progress bar");
      app.add_option("-c,--check", args->check,
                     "Verify the checksums listed in LIST (checksum's or sha256sum's output; - for stdin)");
      return [args] { return run_checksum(*args); };
    }};

}  // namespace
}  // namespace st_cli
