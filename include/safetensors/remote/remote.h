// SPDX-License-Identifier: Apache-2.0
/// \file remote.h
/// Remote checkpoints: SafeTensors files and sharded checkpoints read over HTTP(S) with
/// Range requests (libcurl), and `file://` URLs. A separate library, `safetensors::remote`
/// (CMake option SAFETENSORS_BUILD_REMOTE, on when libcurl is found).
///
/// Opening a file costs one request for a header under `speculative_header_bytes` (100 kB:
/// most real headers are smaller) and at most two for any header; the header is validated
/// by the same parser and policy as a local file, with the size from `Content-Range`.
/// Tensor reads are Range requests of exactly the bytes asked for, large reads split over
/// parallel connections; many small ranges (a slice's runs) travel together in multi-range
/// requests. Every fault is an error naming the URL and the byte range, never
/// wrong bytes: see docs/remote.md.
///
/// Credentials: `bearer_token` is sent as `Authorization: Bearer` to the origin host only
/// (never across a redirect to another host or port) and never appears in errors or names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/error.h"
#include "safetensors/file.h"
#include "safetensors/location.h"
#include "safetensors/multi_range_reader.h"

namespace safetensors::remote {

/// What the first request of a file asks for.
inline constexpr std::uint64_t default_speculative_header_bytes = 100'000;

struct options {
  std::string bearer_token;  ///< empty: no Authorization header
  std::string ca_file;       ///< PEM file of trusted CAs (e.g. a self-signed server's); empty: the system's
  bool insecure = false;     ///< skip TLS certificate and host checks (say so to the user)
  long connect_timeout_ms = 10'000;
  long stall_timeout_ms = 30'000;  ///< a response sending no byte for this long fails
  long request_timeout_ms = 0;     ///< whole-request limit; 0: none
  int max_redirects = 5;
  int max_retries = 3;  ///< per request, on a dropped connection or 502/503/504; backoff doubles from 100 ms
  int connections = 8;  ///< parallel connections of one large read (and of opening shards)
  std::uint64_t part_bytes = std::uint64_t{8} << 20;  ///< one request's size in a split read
  std::uint64_t speculative_header_bytes = default_speculative_header_bytes;
  /// Many ranges at once (a slice plan's runs): runs closer than this travel as one range,
  /// the gap received and dropped; below about two multipart part headers it costs less
  /// than a part of its own.
  std::uint64_t merge_gap_bytes = 256;
  /// Ranges per multi-range request (`Range: bytes=a-b,c-d,...`, answered with
  /// multipart/byteranges): Apache's MaxRanges default, which also keeps the header under
  /// the 8 KiB line limit of nginx and Apache. 1: one request per range. A server that
  /// answers a multi-range request with 200 or fewer ranges gets one range per request,
  /// remembered for its origin for the rest of the process.
  int max_ranges_per_request = 200;
  /// What one more request costs, in bytes the wire carries meanwhile (round trip x
  /// bandwidth). With one range per request (a server that takes no more, or
  /// max_ranges_per_request 1), runs closer than this travel as one range, the gaps received
  /// and dropped: `get_slice(...)[..., 2]` of a 4 MiB tensor is one request, not one per row.
  /// 0: measured, the file's shortest wait for a first byte times its best rate on a body of
  /// 256 KiB or more, within [16 KiB, 64 MiB]; 256 KiB until both are known.
  std::uint64_t request_cost_bytes = 0;
};

/// `given` (location.h's url_options: the options every front end takes) as options; unset
/// fields keep their defaults, an unset token is $SAFETENSORS_TOKEN, then $HF_TOKEN.
[[nodiscard]] options options_from(const url_options& given);

/// The store provider of http:// and https:// URLs (location.h): remote_store with the options
/// each location::resolve is given.
[[nodiscard]] std::shared_ptr<const store_provider> make_store_provider();

/// Registers make_store_provider() for `http` and `https`, so that location::resolve reads them.
[[nodiscard]] status register_url_schemes();

/// What a source has fetched so far.
struct transfer_stats {
  std::uint64_t requests = 0;            ///< HTTP requests sent, redirects and retries included
  std::uint64_t bytes = 0;               ///< body bytes received
  std::uint64_t request_cost_bytes = 0;  ///< what one more request costs now (options::request_cost_bytes)
};

/// True for `http://`, `https://` and `file://` URLs.
[[nodiscard]] bool is_url(std::string_view text) noexcept;

/// `url` without user name, password or query string: what errors and names show.
[[nodiscard]] std::string display_url(std::string_view url);

/// One remote file read by Range requests. Thread-safe.
class http_source final : public multi_range_reader {
 public:
  /// Sends the first request (the speculative header range) and learns the size and the
  /// validators (ETag, Last-Modified) that every later request is checked against.
  [[nodiscard]] static result<std::shared_ptr<http_source>> open(const std::string& url, const options& opts = {});
  ~http_source() override;

  [[nodiscard]] const std::string& name() const noexcept override;
  [[nodiscard]] std::uint64_t size() const noexcept override;
  [[nodiscard]] status read(std::uint64_t offset, std::span<std::byte> destination) const override;
  /// Sorted ranges travel `max_ranges_per_request` per request (merged when close), on up to
  /// `connections` connections, each request at most `part_bytes`; bytes land in place.
  [[nodiscard]] status read_ranges(std::span<const byte_range> ranges, std::span<std::byte> destination) const override;
  [[nodiscard]] transfer_stats stats() const noexcept;

  struct state;

 private:
  explicit http_source(std::unique_ptr<state> p);
  std::unique_ptr<state> state_;
};

/// Opens a SafeTensors file by URL (`file://` opens the local file with the pread backend).
[[nodiscard]] result<file> open(const std::string& url, const options& opts = {}, const parse_options& parse = {});

/// Reads and validates only the header of the file at `url` (one request for most headers).
[[nodiscard]] result<header> read_header(const std::string& url, const options& opts = {},
                                         const parse_options& parse = {});

/// The local path a `file://` URL names (percent-decoded). Errors: InvalidArgument.
[[nodiscard]] result<std::string> local_path(std::string_view file_url);

/// Opens a checkpoint by URL: a `.safetensors` file, an index (`.json`), or a base URL
/// ending in `/` (its `model.safetensors.index.json`, failing that `model.safetensors`).
/// Shard headers are fetched in parallel; shard names must stay under the index's
/// directory on the same server (UnsafePath). `options.shard.backend` is ignored.
[[nodiscard]] result<checkpoint> open_checkpoint(const std::string& url, const options& opts = {},
                                                 const checkpoint_options& checkpoint = {});

/// verify_checkpoint for a URL; a digest (verify_options::digest) reads every shard whole.
[[nodiscard]] result<verify_report> verify_checkpoint(const std::string& url, const options& opts = {},
                                                      const verify_options& verify = {});

}  // namespace safetensors::remote
