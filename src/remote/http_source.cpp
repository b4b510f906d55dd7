// SPDX-License-Identifier: Apache-2.0
// http_source: a remote file as a range_reader. The first request fetches a speculative
// head (header and more), later ones exactly the bytes asked for, each checked against the
// first response's size and validators so two versions of a file are never mixed.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "remote/client.h"
#include "remote/ranges.h"
#include "remote/url.h"
#include "safetensors/remote/remote.h"

namespace safetensors::remote {

struct http_source::state {
  state(const options& opts, detail::url_origin origin) : net(opts, std::move(origin)) {}

  detail::client net;
  std::string url;   // after the first request's redirects
  std::string name;  // shown in errors
  std::uint64_t size = 0;
  std::vector<std::byte> head;  // bytes [0, head.size()) from the first response
  std::string if_range;         // a strong ETag, else Last-Modified
  std::string etag;

  /// Set once the server answered a multi-range request with 200 or with fewer ranges:
  /// later reads send one range per request.
  std::atomic<bool> single_ranges{false};

  [[nodiscard]] status fetch_range(std::uint64_t offset, std::span<std::byte> destination);
  /// `ranges` (of `pieces`) in one request, or one per range when the server wants that.
  [[nodiscard]] status fetch_ranges(std::span<const detail::wanted_bytes> pieces,
                                    std::span<const detail::request_range> ranges);
  [[nodiscard]] error changed_error(std::uint64_t offset, const std::string& why, const std::string& where) const;
};

namespace {

/// Folders of servers ("scheme://host:port/dir") that answered a multi-range request with 200
/// or fewer ranges: every file there (the other shards of a checkpoint) is read one range per
/// request from the start. A folder rather than the whole origin: one origin may front
/// several servers by path.
struct single_range_folders {
  std::mutex mutex;
  std::vector<std::string> folders;

  [[nodiscard]] bool has(const std::string& folder) {
    std::lock_guard lock(mutex);
    return std::find(folders.begin(), folders.end(), folder) != folders.end();
  }
  void add(const std::string& folder) {
    std::lock_guard lock(mutex);
    if (std::find(folders.begin(), folders.end(), folder) != folders.end()) return;
    if (folders.size() >= 1024) folders.erase(folders.begin());  // bounded: the oldest is forgotten
    folders.push_back(folder);
  }
};

single_range_folders& single_range_servers() {
  static single_range_folders known;
  return known;
}

std::string server_folder(const std::string& url) {
  auto o = detail::origin_of(url);
  const std::string directory = detail::url_directory(url.substr(0, url.find_first_of("?#")));
  const auto path = directory.find('/', directory.find("://") + 3);
  return fmt::format("{}://{}:{}{}", o ? o->scheme : "", o ? o->host : "", o ? o->port : "",
                     path == std::string::npos ? "" : directory.substr(path));
}

/// `which` ranges (ascending) as spans for a server that takes one range per request: a
/// range joins the previous span while the bytes between them cost less than a request and
/// the span stays within `part`. The receiver drops the bytes between the pieces.
std::vector<detail::request_range> single_range_spans(std::span<const detail::request_range> ranges,
                                                      std::span<const std::size_t> which, std::uint64_t cost,
                                                      std::uint64_t part) {
  std::vector<detail::request_range> out;
  for (std::size_t i : which) {
    const detail::request_range& r = ranges[i];
    if (!out.empty() && r.begin >= out.back().end && r.begin - out.back().end <= cost &&
        r.end - out.back().begin <= part) {
      out.back().end = r.end;
      out.back().last = r.last;
      continue;
    }
    out.push_back(r);
  }
  return out;
}

std::string http_problem(long status) {
  switch (status) {
    case 401:
    case 403: return fmt::format("HTTP {} (access denied: a bearer token may be needed)", status);
    case 404: return "HTTP 404 (not found)";
    case 416: return "HTTP 416 (range not satisfiable)";
    default: return fmt::format("HTTP {}", status);
  }
}

/// Runs `task(0..count)` on up to `connections` threads; the first error wins and stops
/// the rest from starting.
status run_parallel(std::size_t count, int connections, const std::function<status(std::size_t)>& task) {
  const auto workers = std::min(count, static_cast<std::size_t>(std::clamp(connections, 1, 64)));
  if (workers <= 1) {
    for (std::size_t i = 0; i < count; ++i) {
      if (auto s = task(i); !s) return s;
    }
    return {};
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::optional<error> first_error;
  auto work = [&] {
    for (std::size_t i; !failed && (i = next++) < count;) {
      if (auto s = task(i); !s) {
        std::lock_guard lock(error_mutex);
        if (!first_error) first_error = std::move(s).err();
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (std::size_t t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (first_error) return std::move(*first_error);
  return {};
}

/// The longest Range header value sent: under the 8 KiB line limits of common servers.
constexpr std::size_t max_range_header = 6000;

}  // namespace

error http_source::state::changed_error(std::uint64_t offset, const std::string& why, const std::string& where) const {
  return detail::remote_error(
      url, offset,
      fmt::format("the file changed since it was opened ({} for {}); its parts would not belong together", why, where));
}

status http_source::state::fetch_ranges(std::span<const detail::wanted_bytes> pieces,
                                        std::span<const detail::request_range> ranges) {
  // One range per request, neighbours whose gap costs less than a request as one span.
  auto one_by_one = [&](std::span<const std::size_t> which) -> status {
    const options& o = net.settings();
    const auto spans =
        single_range_spans(ranges, which, net.request_cost_bytes(), std::max<std::uint64_t>(o.part_bytes, 1));
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (auto s = fetch_ranges(pieces, std::span(spans).subspan(i, 1)); !s) return s;
    }
    return {};
  };
  auto now_single = [&] {
    single_ranges = true;
    single_range_servers().add(server_folder(url));
  };
  if (ranges.size() > 1 && single_ranges) {
    std::vector<std::size_t> all(ranges.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return one_by_one(all);
  }
  detail::range_receiver receiver(pieces, ranges, size);
  detail::request r;
  r.begin = ranges.front().begin;
  r.if_range = if_range;
  r.ranges = &receiver;
  auto res = net.fetch(url, r);
  if (!res) return std::move(res).err();
  const std::string where = receiver.description();
  if (res->status == 200 && ranges.size() > 1) {
    // No multi-range support (RFC 9110 lets a server answer 200); its body was not read.
    now_single();
    std::vector<std::size_t> all(ranges.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return one_by_one(all);
  }
  if (res->status == 200) {
    return detail::remote_error(url, r.begin,
                                fmt::format("the server answered {} with the whole file (200): the file changed since "
                                            "it was opened, or the server stopped honouring Range; nothing was kept",
                                            where));
  }
  if (res->status != 206)
    return detail::remote_error(url, r.begin, fmt::format("{} for {}", http_problem(res->status), where));
  if (!etag.empty() && !res->etag.empty() && res->etag != etag) return changed_error(*r.begin, "another ETag", where);
  const auto missing = receiver.unfilled();
  if (missing.empty()) return {};
  if (ranges.size() == 1) return detail::remote_error(url, r.begin, fmt::format("no part answered {}", where));
  now_single();  // fewer ranges than asked: the rest one by one
  return one_by_one(missing);
}

status http_source::state::fetch_range(std::uint64_t offset, std::span<std::byte> destination) {
  detail::request r;
  r.begin = offset;
  r.if_range = if_range;
  r.sink = destination;
  auto res = net.fetch(url, r);
  if (!res) return std::move(res).err();
  const std::string where = detail::range_text(r);
  if (res->status == 200) {
    return detail::remote_error(url, offset,
                                fmt::format("the server answered {} with the whole file (200): the file changed since "
                                            "it was opened, or the server stopped honouring Range; nothing was kept",
                                            where));
  }
  if (res->status != 206)
    return detail::remote_error(url, offset, fmt::format("{} for {}", http_problem(res->status), where));
  const auto cr = detail::parse_content_range(res->content_range);
  const bool other_etag = !etag.empty() && !res->etag.empty() && res->etag != etag;
  if (!cr || cr->total != size || other_etag) {
    return detail::remote_error(
        url, offset,
        fmt::format("the file changed since it was opened ({}; {} for {}); its parts would "
                    "not belong together",
                    other_etag ? "another ETag" : "another size",
                    cr ? fmt::format("{} bytes now, {} before", cr->total, size) : "no size", where));
  }
  return {};
}

http_source::http_source(std::unique_ptr<state> p) : state_(std::move(p)) {}
http_source::~http_source() = default;

const std::string& http_source::name() const noexcept { return state_->name; }
std::uint64_t http_source::size() const noexcept { return state_->size; }
transfer_stats http_source::stats() const noexcept { return state_->net.stats(); }

result<std::shared_ptr<http_source>> http_source::open(const std::string& url, const options& opts) {
  auto origin = detail::origin_of(url);
  if (!origin) return std::move(origin).err();
  auto p = std::make_unique<state>(opts, std::move(origin).value());
  p->name = display_url(url);
  p->head.resize(static_cast<std::size_t>(std::max<std::uint64_t>(opts.speculative_header_bytes, 8)));
  detail::request r;
  r.begin = 0;
  r.sink = p->head;
  r.whole_allowed = true;
  auto res = p->net.fetch(url, r);
  if (!res) return std::move(res).err();
  p->url = res->url;
  switch (res->status) {
    case 206: {
      const auto cr = detail::parse_content_range(res->content_range);
      if (!cr) return detail::remote_error(url, 0, "the partial response (206) gives no file size in Content-Range");
      p->size = cr->total;
      p->head.resize(static_cast<std::size_t>(res->received));
      break;
    }
    case 200:
      // The server ignores Range. A file that fits in the head arrived whole; a larger one
      // would have to be downloaded whole for every read: refused after the head.
      if (res->truncated) {
        return detail::remote_error(
            url, 0,
            fmt::format("the server ignores Range requests (it answered 200 with the whole file{}); remote reading "
                        "needs Range support, so the transfer was stopped after {} bytes",
                        res->content_length ? fmt::format(" of {} bytes", *res->content_length) : "", res->received));
      }
      if (res->content_length && *res->content_length != res->received) {
        return detail::remote_error(
            url, 0, fmt::format("short body: {} of {} bytes received", res->received, *res->content_length));
      }
      p->size = res->received;
      p->head.resize(static_cast<std::size_t>(res->received));
      break;
    case 416: {
      // An empty file satisfies no range; its size still comes as "bytes */0".
      const auto cr = detail::parse_content_range(res->content_range);
      if (!cr || !cr->unsatisfied || cr->total != 0) {
        return detail::remote_error(url, 0, fmt::format("{} for {}", http_problem(416), detail::range_text(r)));
      }
      p->size = 0;
      p->head.clear();
      break;
    }
    default:
      return detail::remote_error(url, 0, fmt::format("{} for {}", http_problem(res->status), detail::range_text(r)));
  }
  p->head.shrink_to_fit();
  p->etag = res->etag.rfind("W/", 0) == 0 ? std::string() : res->etag;
  p->if_range = !p->etag.empty() ? p->etag : res->last_modified;
  p->single_ranges = single_range_servers().has(server_folder(p->url));
  return std::shared_ptr<http_source>(new http_source(std::move(p)));
}

status http_source::read(std::uint64_t offset, std::span<std::byte> destination) const {
  state& p = *state_;
  std::uint64_t end = 0;
  if (__builtin_add_overflow(offset, destination.size(), &end) || end > p.size) {
    return make_error(error_code::invalid_argument,
                      fmt::format("range of {} bytes at byte {} is outside the file of {} bytes", destination.size(),
                                  offset, p.size),
                      offset)
        .with_path(p.name);
  }
  if (offset < p.head.size()) {  // the first response already holds these bytes
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(p.head.size() - offset, destination.size()));
    std::memcpy(destination.data(), p.head.data() + offset, n);
    offset += n;
    destination = destination.subspan(n);
  }
  if (destination.empty()) return {};
  const std::uint64_t part = std::max<std::uint64_t>(p.net.settings().part_bytes, 1);
  const std::size_t parts = static_cast<std::size_t>((destination.size() + part - 1) / part);
  if (parts == 1) return p.fetch_range(offset, destination);
  // Parts of `part` bytes on up to `connections` connections, each written in place: the
  // bytes in flight never exceed connections x part, and nothing is buffered twice.
  return run_parallel(parts, p.net.settings().connections, [&](std::size_t i) {
    const std::uint64_t at = i * part;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(part, destination.size() - at));
    return p.fetch_range(offset + at, destination.subspan(static_cast<std::size_t>(at), n));
  });
}

status http_source::read_ranges(std::span<const byte_range> ranges, std::span<std::byte> destination) const {
  state& p = *state_;
  const options& o = p.net.settings();
  const std::uint64_t part = std::max<std::uint64_t>(o.part_bytes, 1);
  // The wanted bytes with their destinations, the first response's bytes copied, each piece
  // at most `part`.
  std::vector<detail::wanted_bytes> pieces;
  std::size_t at = 0;
  for (const byte_range& r : ranges) {
    std::uint64_t end = 0;
    if (__builtin_add_overflow(r.offset, r.length, &end) || end > p.size || r.length > destination.size() - at) {
      return make_error(error_code::invalid_argument,
                        end > p.size ? fmt::format("range of {} bytes at byte {} is outside the file of {} bytes",
                                                   r.length, r.offset, p.size)
                                     : fmt::format("the ranges hold more than the {} bytes of the destination",
                                                   destination.size()),
                        r.offset)
          .with_path(p.name);
    }
    std::uint64_t offset = r.offset;
    auto length = static_cast<std::size_t>(r.length);
    std::byte* to = destination.data() + at;
    at += length;
    if (offset < p.head.size()) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(p.head.size() - offset, length));
      std::memcpy(to, p.head.data() + offset, n);
      offset += n;
      to += n;
      length -= n;
    }
    for (std::size_t take; length > 0; offset += take, to += take, length -= take) {
      take = static_cast<std::size_t>(std::min<std::uint64_t>(length, part));
      pieces.push_back({offset, take, to});
    }
  }
  if (at != destination.size()) {
    return make_error(error_code::invalid_argument,
                      fmt::format("the ranges hold {} bytes, the destination {}", at, destination.size()))
        .with_path(p.name);
  }
  std::sort(pieces.begin(), pieces.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    if (pieces[i].offset < pieces[i - 1].offset + pieces[i - 1].length) {
      std::size_t out = 0;  // overlapping ranges (no slice has them): one by one
      for (const byte_range& r : ranges) {
        if (auto s = read(r.offset, destination.subspan(out, static_cast<std::size_t>(r.length))); !s) return s;
        out += static_cast<std::size_t>(r.length);
      }
      return {};
    }
  }
  // One range per request (the server's limit, or the caller's): gaps cheaper than a request
  // travel too, so a strided slice is one span rather than a request per run.
  const bool single = p.single_ranges || o.max_ranges_per_request <= 1;
  const auto merged = detail::merge_pieces(
      pieces, single ? std::max(o.merge_gap_bytes, p.net.request_cost_bytes()) : o.merge_gap_bytes, part);
  // Requests of at most max_ranges_per_request ranges, `part` bytes and max_range_header
  // characters of Range header.
  const auto max_count =
      single ? std::size_t{1} : static_cast<std::size_t>(std::clamp(o.max_ranges_per_request, 1, 100'000));
  std::vector<std::span<const detail::request_range>> requests;
  for (std::size_t i = 0; i < merged.size();) {
    std::size_t j = i;
    std::uint64_t bytes = 0;
    std::size_t chars = 0;
    for (; j < merged.size() && j - i < max_count; ++j) {
      const std::uint64_t n = merged[j].end - merged[j].begin;
      const std::size_t c = fmt::formatted_size("{}-{},", merged[j].begin, merged[j].end - 1);
      if (j > i && (bytes + n > part || chars + c > max_range_header)) break;
      bytes += n;
      chars += c;
    }
    requests.emplace_back(merged.data() + i, j - i);
    i = j;
  }
  return run_parallel(requests.size(), o.connections,
                      [&](std::size_t i) { return p.fetch_ranges(pieces, requests[i]); });
}

}  // namespace safetensors::remote
