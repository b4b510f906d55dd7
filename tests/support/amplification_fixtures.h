// SPDX-License-Identifier: Apache-2.0
// Small inputs that would write huge outputs (issue 34, item 4): a zip whose directory points
// many entries at one member (an overlap bomb), and PyTorch checkpoints whose tensors all view
// one storage. Built here, in a few KiB, so tests need no generated files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace st_test {

/// `zip` (an archive's bytes, no archive comment, fewer than 65535 entries in all) with the
/// central-directory record of `member` copied `copies` times, the copies named `name_of(i)`
/// (i = 1..copies; each as long as `member`'s name): every copy points at the same local
/// header and data.
std::vector<std::byte> overlap_bomb(const std::vector<std::byte>& zip, const std::string& member, std::size_t copies,
                                    std::string (*name_of)(std::size_t));

/// An .npz holding one stored F32 array "a0000" of `elements` elements, then made an overlap
/// bomb of `copies` more entries "a0001".."aNNNN" pointing at it.
void write_npz_overlap_bomb(const std::filesystem::path& path, std::uint64_t elements, std::size_t copies);

/// A torch.save zip checkpoint of one F32 storage of `elements` elements and `tensors`
/// tensors "t0", "t1", ... viewing it: each the whole storage (`partial` false: tied aliases),
/// or each a different half of it (`partial` true: views that --shared dedup keeps).
void write_aliasing_checkpoint(const std::filesystem::path& path, std::uint64_t elements, std::size_t tensors,
                               bool partial);

}  // namespace st_test
