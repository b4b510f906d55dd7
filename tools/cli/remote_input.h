// SPDX-License-Identifier: Apache-2.0
// URLs as inputs: every reading subcommand takes an http://, https:// or file:// URL where
// it takes a path. The options of remote reading (--token, --ca-file, --insecure,
// --timeout) are declared on every subcommand; the openers below dispatch on the input.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/file.h"
#include "safetensors/range_reader.h"

namespace CLI {
class App;
}  // namespace CLI

namespace st_cli {

/// Declares the remote reading options on a subcommand.
void add_remote_options(CLI::App& app);

/// True for http://, https:// and file:// (whether or not this build reads them).
[[nodiscard]] bool is_url(const std::string& input);

/// A SafeTensors file by URL, its bytes read on demand. Errors name the URL, never the token.
[[nodiscard]] safetensors::result<safetensors::file> open_url(const std::string& url,
                                                              const safetensors::parse_options& parse = {});

/// read_header of a URL (one request for most headers).
[[nodiscard]] safetensors::result<safetensors::header> read_url_header(const std::string& url,
                                                                       const safetensors::parse_options& parse);

/// checkpoint::open / verify_checkpoint of a path or URL.
[[nodiscard]] safetensors::result<safetensors::checkpoint> open_checkpoint_at(
    const std::string& path, const safetensors::checkpoint_options& options);
[[nodiscard]] safetensors::result<safetensors::verify_report> verify_checkpoint_at(
    const std::string& path, const safetensors::verify_options& options);

/// What a URL's bytes are read through: an http(s) URL by range requests (`remote`), a
/// file:// URL as its local path (`local_path`).
struct url_bytes {
  std::shared_ptr<const safetensors::range_reader> remote;
  std::string local_path;
};
[[nodiscard]] safetensors::result<url_bytes> open_url_bytes(const std::string& url);

}  // namespace st_cli
