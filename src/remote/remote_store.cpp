// SPDX-License-Identifier: Apache-2.0
// Checkpoints on a server: the checkpoint_store behind remote::open_checkpoint and
// remote::verify_checkpoint. Shard URLs are built from checked, percent-encoded names, so
// they stay under the index's directory on the same server.
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "remote/client.h"
#include "remote/url.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_index.h"
#include "safetensors/checkpoint_store.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/location.h"
#include "safetensors/remote/remote.h"

namespace safetensors::remote {
namespace detail {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class remote_store final : public safetensors::checkpoint_store {
 public:
  explicit remote_store(const options& opts) : options_(opts) {}

  result<safetensors::checkpoint_target> resolve(const std::string& url) const override {
    safetensors::checkpoint_target t;
    const std::string path_part = url.substr(0, url.find_first_of("?#"));
    if (ends_with(path_part, "/")) {
      // A base URL: servers list no directories, so the conventional names are tried.
      t.directory = url_directory(path_part);
      const std::string index = t.directory + "/model.safetensors.index.json";
      auto probe = fetch_whole(index, default_max_index_bytes);
      if (probe) {
        t.index_path = index;
        return t;
      }
      if (probe.err().message.find("HTTP 404") == std::string::npos) return std::move(probe).err();
      t.single_file = t.directory + "/model.safetensors";
      return t;
    }
    t.directory = url_directory(url);
    (ends_with(path_part, ".json") ? t.index_path : t.single_file) = url;
    return t;
  }

  result<safetensors::checkpoint_index> read_index(const std::string& url, std::uint64_t max_bytes) const override {
    auto bytes = fetch_whole(url, max_bytes);
    if (!bytes) return std::move(bytes).err();
    auto parsed = safetensors::parse_checkpoint_index(*bytes);
    if (!parsed) {
      return std::move(parsed).err().with_path(display_url(url));
    }
    return parsed;
  }

  result<std::string> shard_path(const std::string& directory, std::string_view name) const override {
    if (auto s = safetensors::check_shard_name(name); !s) return std::move(s).err();
    for (std::size_t begin = 0; begin <= name.size();) {  // "." and empty segments too: one spelling per shard
      std::size_t end = name.find('/', begin);
      if (end == std::string_view::npos) end = name.size();
      const auto segment = name.substr(begin, end - begin);
      if (segment.empty() || segment == ".") {
        return make_error(error_code::unsafe_path, fmt::format("unsafe shard name '{}': empty or '.' component", name));
      }
      begin = end + 1;
    }
    std::string url = join_url(directory, name);
    auto a = origin_of(directory + "/");
    auto b = origin_of(url);
    if (!a || !b || !(*a == *b)) {
      return make_error(error_code::unsafe_path, fmt::format("unsafe shard name '{}': names another server", name));
    }
    return url;
  }

  std::vector<result<file>> open_files(std::span<const std::string> urls, const open_options& opts) const override {
    std::vector<std::optional<result<file>>> slots(urls.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t i; (i = next++) < urls.size();) slots[i].emplace(remote::open(urls[i], options_, opts.parse));
    };
    const std::size_t count =
        std::min<std::size_t>(urls.size(), static_cast<std::size_t>(std::clamp(options_.connections, 1, 64)));
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < count; ++t) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
    std::vector<result<file>> out;
    out.reserve(urls.size());
    for (auto& s : slots) out.push_back(std::move(*s));
    return out;
  }

  /// Pieces of four parts (at most 64 MiB), so each piece is fetched in parallel.
  result<safetensors::sequential_file> open_sequential(const std::string& url) const override {
    auto source = http_source::open(url, options_);
    if (!source) return std::move(source).err();
    const auto piece = static_cast<std::size_t>(
        std::min<std::uint64_t>(std::max<std::uint64_t>(options_.part_bytes, 1) * 4, std::uint64_t{64} << 20));
    return safetensors::sequential_file{std::move(source).value(), piece};
  }

 private:
  /// A whole small file (an index), cut off and refused past `max_bytes`.
  result<std::vector<std::byte>> fetch_whole(const std::string& url, std::uint64_t max_bytes) const {
    auto origin = origin_of(url);
    if (!origin) return std::move(origin).err();
    {
      std::lock_guard lock(mutex_);
      if (auto it = cache_.find(url); it != cache_.end()) return it->second;
    }
    client net(options_, std::move(origin).value());
    // A first guess that holds most indexes; a longer one is fetched again at its size.
    const std::uint64_t cap = std::min<std::uint64_t>(max_bytes, std::uint64_t{1} << 30) + 1;
    std::vector<std::byte> body(static_cast<std::size_t>(std::min<std::uint64_t>(cap, 256 << 10)));
    auto too_large = [&] {
      return remote_error(url, std::nullopt, fmt::format("the index is larger than the {} bytes allowed", max_bytes));
    };
    for (;;) {
      request r;
      r.sink = body;
      auto res = net.fetch(url, r);
      if (!res) return std::move(res).err();
      if (res->status != 200) {
        return remote_error(url, std::nullopt, fmt::format("HTTP {} for the whole file", res->status));
      }
      if (res->received > max_bytes || (res->content_length && *res->content_length > max_bytes)) return too_large();
      if (!res->truncated) {
        body.resize(static_cast<std::size_t>(res->received));
        break;
      }
      const std::uint64_t next =
          std::min<std::uint64_t>(cap, res->content_length ? *res->content_length + 1 : body.size() * 2);
      if (next <= body.size()) return too_large();
      body.resize(static_cast<std::size_t>(next));
    }
    std::lock_guard lock(mutex_);
    cache_[url] = body;
    return body;
  }

  options options_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::vector<std::byte>> cache_;
};

/// http and https URLs for location::resolve: a remote_store with the caller's options.
class http_provider final : public safetensors::store_provider {
 public:
  result<std::shared_ptr<const safetensors::checkpoint_store>> store(const url_options& given) const override {
    return std::shared_ptr<const safetensors::checkpoint_store>(
        std::make_shared<const remote_store>(options_from(given)));
  }
};

}  // namespace
}  // namespace detail

options options_from(const url_options& given) {
  options o;
  o.bearer_token = bearer_token_of(given);
  o.ca_file = given.ca_file;
  o.insecure = given.insecure;
  if (given.timeout_s > 0) {
    o.connect_timeout_ms = o.stall_timeout_ms = std::max(1L, static_cast<long>(given.timeout_s * 1000));
  }
  if (given.connections > 0) o.connections = given.connections;
  return o;
}

std::shared_ptr<const store_provider> make_store_provider() { return std::make_shared<const detail::http_provider>(); }

status register_url_schemes() {
  const auto provider = make_store_provider();
  for (const char* scheme : {"http", "https"}) {
    if (auto s = safetensors::register_store_provider(scheme, provider); !s) return s;
  }
  return {};
}

result<file> open(const std::string& url, const options& opts, const parse_options& parse) {
  open_options o;
  o.parse = parse;
  if (url.rfind("file://", 0) == 0) {
    auto path = detail::file_url_path(url);
    if (!path) return std::move(path).err();
    o.backend = io_backend::pread;
    return file::open(*path, o);
  }
  auto source = http_source::open(url, opts);
  if (!source) return std::move(source).err();
  return file::open_reader(std::move(source).value(), o);
}

result<header> read_header(const std::string& url, const options& opts, const parse_options& parse) {
  if (url.rfind("file://", 0) == 0) {
    auto path = detail::file_url_path(url);
    if (!path) return std::move(path).err();
    return safetensors::read_header(*path, parse);
  }
  auto source = http_source::open(url, opts);
  if (!source) return std::move(source).err();
  return safetensors::read_header(std::move(source).value(), parse);
}

result<std::string> local_path(std::string_view file_url) { return detail::file_url_path(file_url); }

result<checkpoint> open_checkpoint(const std::string& url, const options& opts, const checkpoint_options& checkpoint) {
  checkpoint_options c = checkpoint;
  c.shard.backend = io_backend::pread;
  if (url.rfind("file://", 0) == 0) {
    auto path = detail::file_url_path(url);
    if (!path) return std::move(path).err();
    return safetensors::checkpoint::open(*path, c);
  }
  const detail::remote_store store(opts);
  return safetensors::checkpoint::open(url, c, store);
}

result<verify_report> verify_checkpoint(const std::string& url, const options& opts, const verify_options& verify) {
  verify_options v = verify;
  v.open.shard.backend = io_backend::pread;
  if (url.rfind("file://", 0) == 0) {
    auto path = detail::file_url_path(url);
    if (!path) return std::move(path).err();
    return safetensors::verify_checkpoint(*path, v);
  }
  const detail::remote_store store(opts);
  return safetensors::verify_checkpoint(url, v, store);
}

}  // namespace safetensors::remote
