// SPDX-License-Identifier: Apache-2.0
// Internal: one HTTP exchange with libcurl: a Range (or whole-body) GET written straight
// into the caller's buffer, redirects followed by hand so credentials stay with their
// origin, responses checked before a byte is accepted.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "remote/url.h"
#include "safetensors/error.h"
#include "safetensors/remote/remote.h"

namespace safetensors::remote::detail {

class range_receiver;

/// What one request asks for.
struct request {
  std::optional<std::uint64_t> begin;  ///< with `begin`: bytes [begin, begin + sink.size()); without: the whole body
  std::string if_range;                ///< validator sent as If-Range with a range
  std::span<std::byte> sink;           ///< the body lands here; a longer whole body is cut off (`truncated`)
  bool whole_allowed = false;          ///< a 200 to a range request is kept (the first request of a file)
  /// Instead of `sink`: the ranges it lists (`begin` is the first, for errors), a 206's
  /// body routed by it; the body of a 200 is not read.
  range_receiver* ranges = nullptr;
};

/// What came back.
struct response {
  long status = 0;
  std::uint64_t received = 0;  ///< body bytes written into the sink
  bool truncated = false;      ///< the body went on past the sink: reading stopped there
  std::string content_range;
  std::string content_type;
  std::string etag;
  std::string last_modified;
  std::optional<std::uint64_t> content_length;
  std::uint64_t expected = 0;  ///< body bytes a 206 promised
  std::string url;             ///< after redirects
  std::string location;        ///< a redirect's Location header, as sent (maybe relative)
};

/// `bytes first-last/total`, or `bytes */total` (unsatisfied).
struct content_range {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t total = 0;
  bool unsatisfied = false;
};
[[nodiscard]] std::optional<content_range> parse_content_range(std::string_view text);

/// How a failed attempt may be treated.
enum class failure : std::uint8_t { none, retryable, fatal };

/// A pool of libcurl handles sharing one configuration and one origin's credentials.
/// Thread-safe: each exchange takes a handle of its own.
class client {
 public:
  client(const options& opts, url_origin origin);
  client(const client&) = delete;
  client& operator=(const client&) = delete;
  ~client();

  /// One request with redirects followed (to `max_redirects`) and retries of dropped
  /// connections and 502/503/504 (to `max_retries`, backoff doubling from 100 ms). A
  /// retried range resumes after the bytes already received. Statuses other than 2xx
  /// are returned, not errors; transport failures are errors naming URL and range.
  [[nodiscard]] result<response> fetch(const std::string& url, const request& r);

  [[nodiscard]] const options& settings() const noexcept { return options_; }
  [[nodiscard]] transfer_stats stats() const noexcept {
    return {requests_.load(), bytes_.load(), request_cost_bytes()};
  }
  /// What one more request costs in bytes: `request_cost_bytes` when set, else the shortest
  /// round trip seen times the best bandwidth seen (a body of 256 KiB or more), within
  /// [16 KiB, 64 MiB]; 256 KiB until both are known.
  [[nodiscard]] std::uint64_t request_cost_bytes() const noexcept;

 private:
  /// Times of one finished request (libcurl's, in microseconds) for request_cost_bytes.
  void measure(void* handle) noexcept;
  struct attempt;
  void* acquire();
  void release(void* handle);
  [[nodiscard]] status perform_once(void* handle, const std::string& url, const request& r, response& out,
                                    failure& kind);

  options options_;
  url_origin origin_;
  std::mutex mutex_;
  std::vector<void*> idle_;
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> round_trip_us_{0};     // shortest wait for a first byte; 0: none yet
  std::atomic<std::uint64_t> bytes_per_second_{0};  // best rate of a large body; 0: none yet
};

/// "bytes 0-99" for errors ("the whole file" without a range).
[[nodiscard]] std::string range_text(const request& r);

/// An error about `url` (shown without credentials) at byte `offset`.
[[nodiscard]] error remote_error(const std::string& url, std::optional<std::uint64_t> offset, std::string message);

}  // namespace safetensors::remote::detail
