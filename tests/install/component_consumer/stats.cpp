// A program that only sees the installed stats component: statistics of a few values.
#include <safetensors/stats.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>

int main() {
  const std::array<float, 5> values = {1.0F, 2.0F, 3.0F, 0.0F, std::numeric_limits<float>::quiet_NaN()};
  safetensors::stats_accumulator acc;
  acc.add(std::span(values));
  const safetensors::tensor_stats s = acc.result();
  if (s.count != 5 || s.nan != 1 || s.zeros != 1 || s.min != 0.0 || s.max != 3.0 || std::fabs(s.mean - 1.5) > 1e-12) {
    std::fputs("unexpected statistics\n", stderr);
    return 1;
  }
  std::printf("stats ok (mean %g)\n", s.mean);
  return 0;
}
