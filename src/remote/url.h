// SPDX-License-Identifier: Apache-2.0
// Internal: the parts of URLs remote reading needs (libcurl's URL parser underneath).
#pragma once

#include <string>
#include <string_view>

#include "safetensors/error.h"

namespace safetensors::remote::detail {

/// Scheme, host and port (the default port made explicit): two URLs with equal origins
/// may share credentials.
struct url_origin {
  std::string scheme;
  std::string host;
  std::string port;
  bool operator==(const url_origin&) const = default;
};

/// Errors: InvalidArgument (not an absolute http(s) URL).
[[nodiscard]] result<url_origin> origin_of(const std::string& url);

/// The local path of a `file://` URL (percent-decoded). Errors: InvalidArgument.
[[nodiscard]] result<std::string> file_url_path(std::string_view url);

/// `directory/name` with every byte of `name` outside [A-Za-z0-9-._~/] percent-encoded,
/// so a shard name can only name a path under `directory` on the same server.
[[nodiscard]] std::string join_url(std::string_view directory, std::string_view name);

/// `reference` (a Location header: absolute, or relative to `base`) as an absolute URL;
/// empty when it cannot be resolved.
[[nodiscard]] std::string resolve_reference(const std::string& base, const std::string& reference);

/// The URL up to (not including) its last '/' of the path.
[[nodiscard]] std::string url_directory(std::string_view url);

}  // namespace safetensors::remote::detail
