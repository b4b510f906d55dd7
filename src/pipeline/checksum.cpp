// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/checksum.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <string>
#include <string_view>
#include <unordered_map>

#include "safetensors/pipeline/output_check.h"
#include "safetensors/printable_text.h"
#include "safetensors/sha256.h"
#include "streaming_open.h"

namespace safetensors::pipeline {
namespace {

error cancelled() { return make_error(error_code::cancelled, "cancelled"); }

/// Feeds the hashers and reports progress.
class hashing {
 public:
  hashing(sha256_hasher whole, const progress_callback& progress, std::uint64_t total)
      : whole_(std::move(whole)), progress_(progress), total_(total) {}

  status add(std::span<const std::byte> chunk, sha256_hasher* tensor = nullptr) {
    whole_.update(chunk);
    if (tensor != nullptr) tensor->update(chunk);
    done_ += chunk.size();
    if (progress_ && !progress_(done_, total_)) return cancelled();
    return {};
  }

  /// Hashes [offset, end) of `f` in chunks.
  status add_range(const file& f, std::uint64_t offset, std::uint64_t end) {
    while (offset < end) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(end - offset, chunk_bytes));
      buffer_.resize(n);
      if (auto s = f.read_range(offset, buffer_); !s) return s;
      if (auto s = add(buffer_); !s) return s;
      offset += n;
    }
    return {};
  }

  std::vector<std::byte>& buffer() { return buffer_; }
  std::uint64_t done() const { return done_; }
  std::string finish() { return to_hex(whole_.finish()); }

 private:
  sha256_hasher whole_;
  const progress_callback& progress_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  std::vector<std::byte> buffer_;
};

/// The whole-file digest by plain sequential reads of `path` ("-": standard input).
result<file_digest> checksum_stream(const std::string& path, const checksum_options& options) {
  auto hasher = sha256_hasher::create();
  if (!hasher) return std::move(hasher).err();
  const bool stdin_input = path == "-";
  if (path.find('\0') != std::string::npos) {  // open(2) would read the file named by what precedes it
    return make_error(error_code::invalid_argument, "a path with a NUL byte names no file").with_path(path);
  }
  const int fd = stdin_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return os_failure("cannot open file", errno, path);
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
  if (known && S_ISDIR(st.st_mode)) return os_failure("cannot read", EISDIR, path);
  hashing hash(std::move(hasher).value(), options.progress,
               known && S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0);
  auto& buffer = hash.buffer();
  buffer.resize(chunk_bytes);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_failure("read failed", errno, path);
    if (n == 0) break;
    if (auto s = hash.add(std::span(buffer.data(), static_cast<std::size_t>(n))); !s) return std::move(s).err();
  }
  file_digest out;
  out.bytes = hash.done();
  out.sha256 = hash.finish();
  return out;
}

}  // namespace

result<file_digest> checksum(const file& f, const checksum_options& options) {
  auto whole = sha256_hasher::create();
  if (!whole) return std::move(whole).err();
  hashing hash(std::move(whole).value(), options.progress, f.file_size());
  const auto& h = f.header();
  auto per = sha256_hasher::create();  // reset by each finish()
  if (!per) return std::move(per).err();
  sha256_hasher* per_tensor = options.per_tensor ? &per.value() : nullptr;
  file_digest out;
  if (auto s = hash.add_range(f, 0, h.data_start()); !s) return std::move(s).err().with_path(f.path());
  for (const auto& t : f.tensors()) {
    auto s = read_tensor_chunks(f, t, hash.buffer(),
                                [&](std::span<const std::byte> chunk) { return hash.add(chunk, per_tensor); });
    if (!s) return std::move(s).err().with_path(f.path());
    if (per_tensor != nullptr) out.tensors.push_back({std::string(t.name), t.byte_size(), to_hex(per->finish())});
  }
  if (auto s = hash.add_range(f, h.data_start() + h.data_size(), f.file_size()); !s) {
    return std::move(s).err().with_path(f.path());
  }
  out.sha256 = hash.finish();
  out.bytes = f.file_size();
  return out;
}

result<file_digest> checksum(const std::string& path, const checksum_options& options) {
  if (!options.per_tensor) return checksum_stream(path, options);
  if (path == "-") {
    return make_error(error_code::invalid_argument,
                      "hashing each tensor needs a file: standard input cannot be read by offset");
  }
  auto f = open_streaming_file(path);
  if (!f) return std::move(f).err();
  return checksum(*f, options);
}

result<file_digest> checksum(const range_reader& bytes, const checksum_options& options) {
  auto whole = sha256_hasher::create();
  if (!whole) return std::move(whole).err();
  hashing hash(std::move(whole).value(), options.progress, bytes.size());
  auto& buffer = hash.buffer();
  for (std::uint64_t at = 0; at < bytes.size();) {
    buffer.resize(static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size() - at, chunk_bytes)));
    if (auto s = bytes.read(at, buffer); !s) return std::move(s).err();
    if (auto s = hash.add(buffer); !s) return std::move(s).err();
    at += buffer.size();
  }
  file_digest out;
  out.bytes = hash.done();
  out.sha256 = hash.finish();
  return out;
}

namespace {

bool is_hex_digest(std::string_view s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

checksum_list parse_checksum_list(std::string_view text) {
  checksum_list list;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const bool tensor_line = line.starts_with("tensor ");
    if (tensor_line) line.remove_prefix(7);
    // "HEX" + two characters ("  " or " *") + a name of at least one byte.
    if (line.size() < 67 || !is_hex_digest(line.substr(0, 64)) || line[64] != ' ' ||
        (line[65] != ' ' && line[65] != '*') || (tensor_line && list.entries.empty())) {
      ++list.malformed_lines;
      continue;
    }
    const std::string hex = lowercase(line.substr(0, 64));
    std::string name(line.substr(66));
    if (tensor_line) {
      list.entries.back().tensors[std::move(name)] = hex;
    } else {
      list.entries.push_back({std::move(name), hex, {}});
    }
  }
  return list;
}

std::size_t checksum_verdict::failures() const noexcept {
  return static_cast<std::size_t>(file != digest_match::ok) +
         static_cast<std::size_t>(
             std::count_if(tensors.begin(), tensors.end(), [](const auto& t) { return t.second != digest_match::ok; }));
}

checksum_verdict check(const checksum_entry& expected, const file_digest& computed) {
  checksum_verdict verdict;
  verdict.file = computed.sha256 == expected.sha256 ? digest_match::ok : digest_match::mismatch;
  // `checksum` lists names as printed (printable_text); a list written before that has them raw.
  // Each name is looked up once in each form (the first in file order wins), not compared with
  // every tensor: a list of 100,000 names was 10^10 comparisons.
  std::unordered_map<std::string, const tensor_digest*> by_printed;
  std::unordered_map<std::string_view, const tensor_digest*> by_name;
  for (const auto& t : computed.tensors) {
    by_printed.emplace(printable_text(t.name), &t);
    by_name.emplace(t.name, &t);
  }
  for (const auto& listed : expected.tensors) {
    auto found = by_printed.find(listed.first);
    const tensor_digest* t = found != by_printed.end() ? found->second : nullptr;
    if (t == nullptr) {
      const auto raw = by_name.find(listed.first);
      if (raw != by_name.end()) t = raw->second;
    }
    const digest_match m = t == nullptr                 ? digest_match::missing
                           : t->sha256 == listed.second ? digest_match::ok
                                                        : digest_match::mismatch;
    verdict.tensors.emplace_back(listed.first, m);
  }
  return verdict;
}

}  // namespace safetensors::pipeline
