// SPDX-License-Identifier: Apache-2.0
#include "remote/client.h"

#include "remote/ranges.h"
#include "remote/url.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

namespace safetensors::remote::detail {
namespace {

// libcurl's receive buffer: each fill is a recv and a poll. At the default 16 KiB a 1 GiB load
// made 65,000 of each, and where system calls are dear (this project's paravirtualized 2-vCPU
// guest) they cost more CPU than the copies themselves: 256 KiB took 0.5-1.0 CPU-s off every
// GiB loaded (docs/remote.md). curl's own tool reads 100 KiB at a time.
constexpr long receive_buffer_bytes = 256L << 10;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

bool is_retryable_status(long status) { return status == 502 || status == 503 || status == 504; }

bool is_retryable(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
  }
}

bool is_tls_trust(CURLcode rc) {
  return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_ISSUER_ERROR;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

struct curl_slist_deleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

/// The state of one attempt, shared with libcurl's callbacks.
struct client::attempt {
  client* self = nullptr;
  CURL* handle = nullptr;
  const request* req = nullptr;
  response* out = nullptr;
  long status = 0;
  bool headers_done = false;
  bool stopped = false;  // reading stopped on purpose: not a transport failure
  std::string problem;   // a response refused before its body was accepted

  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto& a = *static_cast<attempt*>(user);
    const std::string_view line(data, size * count);
    if (line.substr(0, 5) == "HTTP/") {  // a new response (after 100 Continue, say): start over
      *a.out = response{};
      a.headers_done = false;
      return line.size();
    }
    if (line == "\r\n" || line == "\n") {
      a.headers_done = true;
      curl_easy_getinfo(a.handle, CURLINFO_RESPONSE_CODE, &a.status);
      if (a.status == 206 && a.req->ranges != nullptr) {
        if (!a.req->ranges->begin(a.out->content_type, a.out->content_range)) {
          a.problem = a.req->ranges->problem();
          return 0;
        }
      } else if (a.status == 206 && !a.check_content_range()) {
        return 0;
      }
      return line.size();
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return line.size();
    const std::string name = lower(line.substr(0, colon));
    std::string value = trimmed(line.substr(colon + 1));
    if (name == "content-range") a.out->content_range = std::move(value);
    if (name == "content-type") a.out->content_type = value;
    if (name == "etag") a.out->etag = std::move(value);
    if (name == "last-modified") a.out->last_modified = std::move(value);
    if (name == "location") a.out->location = value;
    if (name == "content-length") {
      std::uint64_t n = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec == std::errc() && p == value.data() + value.size()) a.out->content_length = n;
    }
    return line.size();
  }

  /// A 206 must carry exactly the range asked for; the first request of a file may get
  /// less when the file is shorter than the range.
  bool check_content_range() {
    if (!req->begin) {
      problem = "the server answered a request for the whole file with a partial response (206)";
      return false;
    }
    const std::uint64_t first = *req->begin;
    const std::uint64_t last = first + req->sink.size() - 1;
    const std::string& got = out->content_range;
    out->expected = req->sink.size();
    if (req->whole_allowed) {
      const auto r = parse_content_range(got);
      if (r && r->first == first && r->last <= last && (r->last == last || r->last + 1 == r->total)) {
        out->expected = r->last - first + 1;
        return true;
      }
    }
    const std::string expected = fmt::format("bytes {}-{}/", first, last);
    if (got.compare(0, expected.size(), expected) != 0) {
      problem = got.empty()
                    ? fmt::format("the partial response (206) has no Content-Range; asked for bytes {}-{}", first, last)
                    : fmt::format("Content-Range '{}' does not match the request for bytes {}-{}", got.substr(0, 80),
                                  first, last);
      return false;
    }
    return true;
  }

  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto& a = *static_cast<attempt*>(user);
    const std::size_t n = size * count;
    if (a.req->ranges != nullptr) {  // a 200 (whole file) is left to the caller, unread
      if (a.status != 206) {
        a.stopped = true;
        return 0;
      }
      a.self->bytes_ += n;
      a.out->received += n;
      if (!a.req->ranges->feed(std::span(reinterpret_cast<const std::byte*>(data), n))) {
        a.problem = a.req->ranges->problem();
        return 0;
      }
      return n;
    }
    const bool keep = a.status == 206 || (a.status == 200 && (!a.req->begin || a.req->whole_allowed));
    if (!keep) {  // an error page, a redirect's body, or a whole file nobody asked for
      a.stopped = true;
      return 0;
    }
    const std::size_t room = a.req->sink.size() - a.out->received;
    if (n > room) {
      if (a.status == 206) {
        a.problem = fmt::format("the server sent more than the {} bytes asked for", a.req->sink.size());
        return 0;
      }
      std::memcpy(a.req->sink.data() + a.out->received, data, room);
      a.out->received += room;
      a.self->bytes_ += room;
      a.out->truncated = true;
      a.stopped = true;
      return 0;
    }
    std::memcpy(a.req->sink.data() + a.out->received, data, n);
    a.out->received += n;
    a.self->bytes_ += n;
    return n;
  }
};

std::optional<content_range> parse_content_range(std::string_view text) {
  auto number = [&](std::string_view& s, char stop) -> std::optional<std::uint64_t> {
    std::uint64_t n = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || p == s.data()) return std::nullopt;
    s.remove_prefix(static_cast<std::size_t>(p - s.data()));
    if (stop != '\0') {
      if (s.empty() || s.front() != stop) return std::nullopt;
      s.remove_prefix(1);
    } else if (!s.empty()) {
      return std::nullopt;
    }
    return n;
  };
  if (text.substr(0, 6) != "bytes ") return std::nullopt;
  text.remove_prefix(6);
  content_range r;
  if (text.substr(0, 2) == "*/") {
    text.remove_prefix(2);
    auto total = number(text, '\0');
    if (!total) return std::nullopt;
    r.total = *total;
    r.unsatisfied = true;
    return r;
  }
  auto first = number(text, '-');
  auto last = first ? number(text, '/') : std::nullopt;
  auto total = last ? number(text, '\0') : std::nullopt;
  if (!total || *last < *first || *last >= *total) return std::nullopt;
  r.first = *first;
  r.last = *last;
  r.total = *total;
  return r;
}

std::string range_text(const request& r) {
  if (r.ranges != nullptr) return r.ranges->description();
  if (!r.begin) return "the whole file";
  if (r.sink.empty()) return fmt::format("bytes {}-", *r.begin);
  return fmt::format("bytes {}-{}", *r.begin, *r.begin + r.sink.size() - 1);
}

error remote_error(const std::string& url, std::optional<std::uint64_t> offset, std::string message) {
  return make_error(error_code::io, std::move(message), offset).with_path(display_url(url));
}

client::client(const options& opts, url_origin origin) : options_(opts), origin_(std::move(origin)) { global_init(); }

client::~client() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* client::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void client::release(void* handle) {
  std::lock_guard lock(mutex_);
  idle_.push_back(handle);
}

void client::measure(void* handle) noexcept {
  CURL* h = handle;
  curl_off_t pretransfer = 0;
  curl_off_t first_byte = 0;
  curl_off_t total = 0;
  curl_off_t body = 0;
  if (curl_easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &pretransfer) != CURLE_OK ||
      curl_easy_getinfo(h, CURLINFO_STARTTRANSFER_TIME_T, &first_byte) != CURLE_OK ||
      curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &total) != CURLE_OK ||
      curl_easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &body) != CURLE_OK) {
    return;
  }
  if (first_byte > pretransfer) {
    const auto wait = static_cast<std::uint64_t>(first_byte - pretransfer);
    auto seen = round_trip_us_.load();
    while ((seen == 0 || wait < seen) && !round_trip_us_.compare_exchange_weak(seen, wait)) {
    }
  }
  constexpr curl_off_t large_body = 256 << 10;  // smaller bodies time the round trip more than the wire
  if (body >= large_body && total > first_byte) {
    const auto rate = static_cast<std::uint64_t>(body) * 1'000'000 / static_cast<std::uint64_t>(total - first_byte);
    auto seen = bytes_per_second_.load();
    while (rate > seen && !bytes_per_second_.compare_exchange_weak(seen, rate)) {
    }
  }
}

std::uint64_t client::request_cost_bytes() const noexcept {
  if (options_.request_cost_bytes != 0) return options_.request_cost_bytes;
  const std::uint64_t round_trip = round_trip_us_.load();
  const std::uint64_t rate = bytes_per_second_.load();
  if (round_trip == 0 || rate == 0) return std::uint64_t{256} << 10;
  const long double cost = static_cast<long double>(round_trip) * static_cast<long double>(rate) / 1e6L;
  return static_cast<std::uint64_t>(std::clamp(cost, 16.0L * 1024, 64.0L * 1024 * 1024));
}

status client::perform_once(void* raw, const std::string& url, const request& r, response& out, failure& kind) {
  CURL* h = static_cast<CURL*>(raw);
  curl_easy_reset(h);  // keeps the connection cache: the next request reuses the connection
  out = response{};
  attempt a;
  a.self = this;
  a.handle = h;
  a.req = &r;
  a.out = &out;
  char message[CURL_ERROR_SIZE] = {};
  std::unique_ptr<curl_slist, curl_slist_deleter> headers;
  auto add_header = [&](const std::string& line) { headers.reset(curl_slist_append(headers.release(), line.c_str())); };
  // Credentials go to the origin only: a redirect to another host or port gets none.
  const auto target = origin_of(url);
  if (!target) return target.err();
  if (!options_.bearer_token.empty() && *target == origin_) {
    add_header("Authorization: Bearer " + options_.bearer_token);
  }
  if (r.begin && !r.if_range.empty()) add_header("If-Range: " + r.if_range);
  if (r.ranges != nullptr) r.ranges->reset();  // a retry or a redirect starts over
  const std::string range = r.ranges != nullptr ? r.ranges->header_value()
                            : r.begin           ? fmt::format("{}-{}", *r.begin, *r.begin + r.sink.size() - 1)
                                                : std::string();

  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, message);
  curl_easy_setopt(h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, receive_buffer_bytes);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms);
  if (options_.stall_timeout_ms > 0) {
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, std::max(1L, (options_.stall_timeout_ms + 999) / 1000));
  }
  if (options_.request_timeout_ms > 0) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, options_.request_timeout_ms);
  if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (options_.insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!range.empty()) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  if (headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &attempt::on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &a);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &attempt::on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
  ++requests_;
  const CURLcode rc = curl_easy_perform(h);
  if (rc == CURLE_OK) measure(h);
  if (!a.status) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
  out.status = a.status;
  const std::string where = range_text(r);
  if (!a.problem.empty()) {
    kind = failure::fatal;
    return remote_error(url, r.begin, fmt::format("{} ({})", a.problem, where));
  }
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && a.stopped)) {
    kind = is_retryable(rc) ? failure::retryable : failure::fatal;
    std::string why = message[0] != '\0' ? trimmed(message) : std::string(curl_easy_strerror(rc));
    if (rc == CURLE_OPERATION_TIMEDOUT) why += " (see the connect, stall and request timeouts)";
    if (is_tls_trust(rc))
      why += " (a self-signed server needs its certificate as the CA file; --insecure skips the check)";
    return remote_error(url, r.begin, fmt::format("{} reading {} ({} of them received)", why, where, out.received));
  }
  if (is_redirect(out.status)) {
    char* location = nullptr;
    curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &location);
    out.url = location != nullptr ? location : "";
    // libcurl resolves Location only for a transfer that ran to its end; a redirect's body
    // (hubs send one) is not read, so the header is resolved here.
    if (out.url.empty() && !out.location.empty()) out.url = resolve_reference(url, out.location);
    return {};
  }
  if (out.status == 206 && r.ranges != nullptr && !r.ranges->finish()) {
    kind = failure::fatal;
    return remote_error(url, r.begin, fmt::format("{} ({})", r.ranges->problem(), where));
  }
  if (out.status == 206 && out.received < out.expected) {
    kind = failure::fatal;
    return remote_error(url, r.begin,
                        fmt::format("short body: {} of {} bytes received ({})", out.received, out.expected, where));
  }
  out.url = url;
  return {};
}

result<response> client::fetch(const std::string& url, const request& r) {
  void* handle = acquire();
  if (handle == nullptr) return remote_error(url, r.begin, "cannot create a libcurl handle");
  struct releaser {
    client* c;
    void* h;
    ~releaser() { c->release(h); }
  } guard{this, handle};

  std::string current = url;
  request now = r;
  std::uint64_t done = 0;  // bytes of a range received by earlier, dropped attempts
  int hops = 0;
  int retries = 0;
  for (;;) {
    failure kind = failure::none;
    response res;
    auto s = perform_once(handle, current, now, res, kind);
    if (s && is_redirect(res.status)) {
      if (++hops > options_.max_redirects) {
        return remote_error(url, r.begin,
                            fmt::format("more than {} redirects ({})", options_.max_redirects, range_text(r)));
      }
      if (res.url.empty()) return remote_error(current, r.begin, "a redirect without a Location");
      current = res.url;
      continue;
    }
    const bool retry_status = s && is_retryable_status(res.status);
    if (!s || retry_status) {
      if ((retry_status || kind == failure::retryable) && retries < options_.max_retries) {
        ++retries;
        std::this_thread::sleep_for(std::chrono::milliseconds(100) * (1 << (retries - 1)));
        if (now.begin && !retry_status &&
            r.ranges == nullptr) {  // resume after what arrived; If-Range keeps it one version
          done += res.received;
          now.begin = *r.begin + done;
          now.sink = r.sink.subspan(done);
        }
        continue;
      }
      if (!s) return std::move(s).err();
      return res;
    }
    res.received += done;
    res.url = current;
    return res;
  }
}

}  // namespace safetensors::remote::detail
