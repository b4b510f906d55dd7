// SPDX-License-Identifier: Apache-2.0
// The remote options of every Python entry point that takes a URL (safe_open, load_file,
// safetensors.cxx.open_checkpoint, load_sharded): one parser, one set of rules.
#pragma once

#include <pybind11/pybind11.h>

#include "safetensors/location.h"

namespace st_python {

/// Options from a dict of `token`, `ca_file`, `insecure`, `timeout` and `connections`
/// (missing or None: the default):
/// - token: a str; when missing or None, $SAFETENSORS_TOKEN, then $HF_TOKEN (as the CLI);
///   "" sends none (location.h's url_options). Sent to the URL's host only, never in a message.
/// - ca_file: a str, the PEM file of CAs to trust; insecure: truthiness, no TLS checks.
/// - timeout: seconds, > 0: the connect and stall timeouts.
/// - connections: an int >= 1, parallel connections of one large read.
/// Another key, a wrong type or value: SafetensorError (InvalidArgument), TypeError for a
/// token or ca_file that is not a str.
[[nodiscard]] safetensors::url_options remote_options(const pybind11::dict& given);

}  // namespace st_python
