// SPDX-License-Identifier: Apache-2.0
#include "remote/ranges.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <fmt/format.h>

#include "remote/client.h"

namespace safetensors::remote::detail {
namespace {

/// Longest line accepted outside parts' data (a part header, a boundary).
constexpr std::size_t max_line = 1024;
/// Bytes accepted before the first boundary, after the last, and per part's headers.
constexpr std::uint64_t max_framing = 4096;

bool iequals_prefix(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// The boundary parameter of `multipart/byteranges; boundary=...` (quoted or not); empty
/// when the type is another.
std::string multipart_boundary(std::string_view content_type) {
  if (!iequals_prefix(content_type, "multipart/byteranges")) return {};
  std::string_view rest = content_type.substr(std::strlen("multipart/byteranges"));
  while (!rest.empty()) {
    const auto semi = rest.find(';');
    std::string_view param = trim(rest.substr(0, semi));
    rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
    if (!iequals_prefix(param, "boundary=")) continue;
    param.remove_prefix(std::strlen("boundary="));
    if (param.size() >= 2 && param.front() == '"' && param.back() == '"') param = param.substr(1, param.size() - 2);
    return std::string(param);
  }
  return {};
}

}  // namespace

std::vector<request_range> merge_pieces(std::span<const wanted_bytes> pieces, std::uint64_t merge_gap,
                                        std::uint64_t max_range_bytes) {
  std::vector<request_range> out;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const wanted_bytes& p = pieces[i];
    const std::uint64_t end = p.offset + p.length;
    if (!out.empty() && p.offset - out.back().end <= merge_gap && end - out.back().begin <= max_range_bytes) {
      out.back().end = end;
      out.back().last = i + 1;
      continue;
    }
    out.push_back({p.offset, end, i, i + 1});
  }
  return out;
}

range_receiver::range_receiver(std::span<const wanted_bytes> pieces, std::span<const request_range> ranges,
                               std::uint64_t file_size)
    : pieces_(pieces), ranges_(ranges), file_size_(file_size), filled_(ranges.size(), false) {}

std::string range_receiver::header_value() const {
  std::string out;
  for (const request_range& r : ranges_) {
    if (!out.empty()) out += ',';
    fmt::format_to(std::back_inserter(out), "{}-{}", r.begin, r.end - 1);
  }
  return out;
}

std::string range_receiver::description() const {
  if (ranges_.size() == 1) return fmt::format("bytes {}-{}", ranges_.front().begin, ranges_.front().end - 1);
  return fmt::format("{} ranges in bytes {}-{}", ranges_.size(), ranges_.front().begin, ranges_.back().end - 1);
}

void range_receiver::reset() {
  std::fill(filled_.begin(), filled_.end(), false);
  multipart_ = false;
  boundary_.clear();
  state_ = state::preamble;
  line_.clear();
  part_range_.clear();
  overhead_ = 0;
  at_ = remaining_ = 0;
  piece_ = piece_end_ = 0;
  problem_.clear();
}

bool range_receiver::fail(std::string message) {
  if (problem_.empty()) problem_ = std::move(message);
  return false;
}

bool range_receiver::begin(std::string_view content_type, std::string_view content_range) {
  const std::string boundary = multipart_boundary(content_type);
  if (boundary.empty()) return start_part(content_range);  // one part, described by the headers
  multipart_ = true;
  boundary_ = "--" + boundary;
  state_ = state::preamble;
  return true;
}

bool range_receiver::start_part(std::string_view content_range) {
  const auto cr = parse_content_range(content_range);
  if (!cr || cr->unsatisfied) {
    return fail(content_range.empty()
                    ? std::string("a partial response without a Content-Range")
                    : fmt::format("Content-Range '{}' is not a byte range", content_range.substr(0, 80)));
  }
  if (cr->total != file_size_) {
    return fail(
        fmt::format("the file changed since it was opened ({} bytes now, {} before): its parts would "
                    "not belong together",
                    cr->total, file_size_));
  }
  // The part must start where a requested range starts and end where one ends.
  const auto first = std::lower_bound(ranges_.begin(), ranges_.end(), cr->first,
                                      [](const request_range& r, std::uint64_t at) { return r.begin < at; });
  const auto last = std::lower_bound(ranges_.begin(), ranges_.end(), cr->last + 1,
                                     [](const request_range& r, std::uint64_t end) { return r.end < end; });
  if (first == ranges_.end() || first->begin != cr->first || last == ranges_.end() || last->end != cr->last + 1 ||
      last < first) {
    return fail(fmt::format("Content-Range '{}' does not match a range asked for", content_range.substr(0, 80)));
  }
  const auto k = static_cast<std::size_t>(first - ranges_.begin());
  const auto m = static_cast<std::size_t>(last - ranges_.begin());
  for (std::size_t i = k; i <= m; ++i) {
    if (filled_[i]) {
      return fail(fmt::format("Content-Range '{}' repeats bytes already received", content_range.substr(0, 80)));
    }
    filled_[i] = true;
  }
  at_ = cr->first;
  remaining_ = cr->last - cr->first + 1;
  piece_ = ranges_[k].first;
  piece_end_ = ranges_[m].last;
  state_ = state::data;
  return true;
}

bool range_receiver::feed(std::span<const std::byte> data) {
  while (!data.empty()) {
    if (state_ == state::data) {
      if (remaining_ == 0) {
        if (!multipart_) return fail("the server sent more than the bytes asked for");
        state_ = state::after_data;
        continue;
      }
      auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, data.size()));
      // Route [at_, at_ + n) to the wanted pieces; bytes of merged gaps are dropped.
      for (std::size_t done = 0; done < n;) {
        while (piece_ < piece_end_ && pieces_[piece_].offset + pieces_[piece_].length <= at_) ++piece_;
        std::size_t step = n - done;
        if (piece_ < piece_end_) {
          const wanted_bytes& p = pieces_[piece_];
          if (at_ < p.offset) {
            step = static_cast<std::size_t>(std::min<std::uint64_t>(step, p.offset - at_));
          } else {
            step = static_cast<std::size_t>(std::min<std::uint64_t>(step, p.offset + p.length - at_));
            std::memcpy(p.to + (at_ - p.offset), data.data() + done, step);
          }
        }
        done += step;
        at_ += step;
      }
      remaining_ -= n;
      data = data.subspan(n);
      if (remaining_ == 0 && multipart_) state_ = state::after_data;
      continue;
    }
    if (!multipart_) return fail("the server sent more than the bytes asked for");
    if (state_ == state::epilogue) {
      overhead_ += data.size();
      if (overhead_ > max_framing) return fail("the multipart response goes on after its closing boundary");
      return true;
    }
    // Framing: lines up to "\n".
    const auto* nl = static_cast<const std::byte*>(std::memchr(data.data(), '\n', data.size()));
    const std::size_t take = nl != nullptr ? static_cast<std::size_t>(nl - data.data()) + 1 : data.size();
    line_.append(reinterpret_cast<const char*>(data.data()), take);
    data = data.subspan(take);
    overhead_ += take;
    if (line_.size() > max_line) return fail(fmt::format("a multipart line longer than {} bytes", max_line));
    if (nl == nullptr) continue;
    std::string_view line(line_);
    line.remove_suffix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool ok = on_line(line);
    line_.clear();
    if (!ok) return false;
  }
  return true;
}

bool range_receiver::on_line(std::string_view line) {
  switch (state_) {
    case state::preamble:
      if (line == boundary_) {
        state_ = state::part_headers;
        overhead_ = 0;
      } else if (overhead_ > max_framing) {
        return fail("no multipart boundary at the start of the response");
      }
      return true;
    case state::part_headers:
      if (line.empty()) {
        if (!start_part(part_range_)) return false;
        part_range_.clear();
        return true;
      }
      if (overhead_ > max_framing) return fail("a multipart part's headers are too long");
      if (iequals_prefix(line, "content-range:")) part_range_ = std::string(trim(line.substr(14)));
      return true;
    case state::after_data:
      if (!line.empty()) return fail("a multipart part is longer than its Content-Range");
      state_ = state::boundary;
      return true;
    case state::boundary:
      if (line == boundary_) {
        state_ = state::part_headers;
        overhead_ = 0;
        return true;
      }
      if (line.size() == boundary_.size() + 2 && line.substr(0, boundary_.size()) == boundary_ &&
          line.substr(boundary_.size()) == "--") {
        state_ = state::epilogue;
        overhead_ = 0;
        return true;
      }
      return fail("a multipart part is not followed by a boundary");
    case state::data:
    case state::epilogue: break;
  }
  return true;
}

bool range_receiver::finish() {
  if (!problem_.empty()) return false;
  if (multipart_ && state_ != state::epilogue) {
    return fail(std::string("the multipart response ended before its closing boundary"));
  }
  if (!multipart_ && (state_ != state::data || remaining_ != 0)) {
    return fail(fmt::format("short body: {} bytes missing", remaining_));
  }
  return true;
}

std::vector<std::size_t> range_receiver::unfilled() const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < filled_.size(); ++i) {
    if (!filled_[i]) out.push_back(i);
  }
  return out;
}

}  // namespace safetensors::remote::detail
