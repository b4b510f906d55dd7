// SPDX-License-Identifier: Apache-2.0
// Internal: the receiving side of a (multi-)range request. The bytes of each part go
// straight to the caller's buffers; every part's Content-Range is checked against the
// ranges asked for before a byte of it is accepted, so a part the server got wrong is an
// error, never bytes in the wrong place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace safetensors::remote::detail {

/// File bytes [offset, offset + length) go to `to`.
struct wanted_bytes {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::byte* to = nullptr;
};

/// One range of a request: file bytes [begin, end) holding wanted pieces [first, last);
/// bytes between the pieces (a merged gap) are received and dropped.
struct request_range {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::size_t first = 0;
  std::size_t last = 0;
};

/// Groups `pieces` (sorted by offset, not overlapping) into request ranges: a piece joins
/// the previous range when the gap is at most `merge_gap` bytes and the range stays within
/// `max_range_bytes`.
[[nodiscard]] std::vector<request_range> merge_pieces(std::span<const wanted_bytes> pieces, std::uint64_t merge_gap,
                                                      std::uint64_t max_range_bytes);

/// Receives the 206 answer to a request for `ranges` (sorted, disjoint) of a file of
/// `file_size` bytes: one part (Content-Range in the response headers) or a
/// multipart/byteranges body. A part must start where a requested range starts and end
/// where one ends (a server may coalesce neighbours, RFC 9110 14.6), in any order, each
/// range at most once. Not thread-safe; one per request.
class range_receiver {
 public:
  range_receiver(std::span<const wanted_bytes> pieces, std::span<const request_range> ranges, std::uint64_t file_size);

  /// The Range header's value after "bytes=": "a-b,c-d".
  [[nodiscard]] std::string header_value() const;
  /// "bytes a-b" or "N ranges in bytes a-b": what errors name.
  [[nodiscard]] std::string description() const;

  /// Forgets a previous attempt's progress (a retried request).
  void reset();
  /// At the end of a 206's headers. False: the response is refused (problem()).
  [[nodiscard]] bool begin(std::string_view content_type, std::string_view content_range);
  /// Body bytes. False: refused (problem()); nothing more may be fed.
  [[nodiscard]] bool feed(std::span<const std::byte> data);
  /// After the body: false when it ended early (problem()).
  [[nodiscard]] bool finish();
  /// Ranges no part has filled (a server that answered fewer ranges than asked).
  [[nodiscard]] std::vector<std::size_t> unfilled() const;
  [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

 private:
  enum class state : std::uint8_t { preamble, part_headers, data, after_data, boundary, epilogue };
  bool start_part(std::string_view content_range);
  bool on_line(std::string_view line);
  bool fail(std::string message);

  std::span<const wanted_bytes> pieces_;
  std::span<const request_range> ranges_;
  std::uint64_t file_size_ = 0;
  std::vector<bool> filled_;
  bool multipart_ = false;
  std::string boundary_;  // "--" + the boundary
  state state_ = state::preamble;
  std::string line_;
  std::string part_range_;       // the current part's Content-Range
  std::uint64_t overhead_ = 0;   // bytes outside parts' data, bounded
  std::uint64_t at_ = 0;         // file offset of the next data byte
  std::uint64_t remaining_ = 0;  // data bytes left in the current part
  std::size_t piece_ = 0;        // the wanted piece `at_` is in or before
  std::size_t piece_end_ = 0;
  std::string problem_;
};

}  // namespace safetensors::remote::detail
