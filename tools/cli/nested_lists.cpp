// SPDX-License-Identifier: Apache-2.0
#include "nested_lists.h"

#include <algorithm>
#include <vector>

namespace st_cli {

bool nested_lists::print(const callbacks& io) const { return walk(&io); }

bool nested_lists::cuts() const { return walk(nullptr); }

bool nested_lists::walk(const callbacks* io) const {
  const std::size_t rank = shape_.size();
  const auto append = [io](std::string_view text) {
    if (io != nullptr) io->out(text);
  };
  const auto stopped = [io] { return io != nullptr && io->stop && io->stop(); };
  if (rank == 0) {
    if (io != nullptr) io->out(io->value());
    return false;
  }
  std::uint64_t items = 0;  // values and empty lists printed
  std::uint64_t lists = 0;  // lists opened
  bool cut = false;
  const auto open_list = [&] {
    append("[");
    ++lists;
  };
  // Writes the separator before element `i` of the list at `dim`; false when the limit is
  // reached (after "..." in text mode).
  const auto next_item = [&](std::size_t dim, std::uint64_t i) {
    const bool full = limit_ != 0 && (items >= limit_ || lists >= rank + limit_ * lists_per_value);
    if (full && json_) {
      cut = true;
      return false;
    }
    if (i > 0) {
      if (json_) {
        append(",");
      } else if (dim + 1 == rank) {
        append(", ");
      } else {
        append(",\n" + std::string(std::min(dim + 1, max_indent), ' '));
      }
    }
    if (full) {
      append("...");
      cut = true;
      return false;
    }
    return true;
  };
  // position[d]: the next element of the list open at dimension d; lists 0..dim are open.
  std::vector<std::uint64_t> position(rank, 0);
  std::size_t dim = 0;
  open_list();
  for (;;) {
    if (!cut && !stopped() && position[dim] < shape_[dim] && next_item(dim, position[dim])) {
      ++position[dim];
      if (dim + 1 == rank) {
        if (io != nullptr) io->out(io->value());
        ++items;
      } else {
        ++dim;
        position[dim] = 0;
        open_list();
      }
      continue;
    }
    if (shape_[dim] == 0) ++items;  // an empty list is an item
    append("]");
    if (dim == 0) return cut;
    --dim;
  }
}

}  // namespace st_cli
