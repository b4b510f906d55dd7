// SPDX-License-Identifier: Apache-2.0
#include "progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace st_cli {

std::string human_bytes(std::uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, units[u]);
}

progress::progress(std::string label, std::uint64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      active_(enabled && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

progress::~progress() { finish(); }

void progress::advance(std::uint64_t bytes) {
  const bool first = done_ == 0;
  done_ += bytes;
  if (active_) draw(first);
}

void progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  // Redrawing ten times a second is enough for the eye and costs nothing measurable.
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done_) / seconds : 0;
  const double fraction = total_ > 0 ? static_cast<double>(done_) / static_cast<double>(total_) : 1;
  constexpr int width = 24;
  const int filled = static_cast<int>(fraction * width);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, '.');
  std::string eta = "--:--";
  if (rate > 0 && done_ < total_) {
    const auto left = static_cast<std::uint64_t>(static_cast<double>(total_ - done_) / rate);
    eta = fmt::format("{}:{:02}", left / 60, left % 60);
  }
  fmt::print(stderr, "\r{} [{}] {:3.0f}% {} / {}  {}/s  ETA {}\x1b[K", label_, bar, fraction * 100, human_bytes(done_),
             human_bytes(total_), human_bytes(static_cast<std::uint64_t>(rate)), eta);
  std::fflush(stderr);
}

void progress::finish() {
  if (!active_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  active_ = false;
}

std::function<bool(std::uint64_t, std::uint64_t)> pipeline_progress::callback() {
  return [this](std::uint64_t done, std::uint64_t total) {
    if (!bar_) bar_ = std::make_unique<progress>(label_, total, !quiet_);
    bar_->advance(done - drawn_);
    drawn_ = done;
    return true;
  };
}

void pipeline_progress::finish() {
  if (bar_) bar_->finish();
}

}  // namespace st_cli
