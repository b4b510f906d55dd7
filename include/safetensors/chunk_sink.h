// SPDX-License-Identifier: Apache-2.0
/// \file chunk_sink.h
/// The one callback through which every reader hands over bytes in pieces (a tensor of a
/// PyTorch checkpoint, an array of an .npz, a pipeline source) and every streamed writer
/// takes them, so that bytes flow from any source to any sink without an adapter.
#pragma once

#include <cstddef>
#include <functional>
#include <span>

#include "safetensors/error.h"

namespace safetensors {

/// Receives the next chunk of a byte stream, in order; an error stops the stream and is
/// returned by whoever drives it.
using chunk_sink = std::function<status(std::span<const std::byte>)>;

}  // namespace safetensors
