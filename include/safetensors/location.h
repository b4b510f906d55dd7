// SPDX-License-Identifier: Apache-2.0
/// \file location.h
/// The one door to an input named by text: a local path (a file, a directory, an index) or a
/// URL. `location::resolve` decides which, once, for every front end (the CLI, Python, C, the
/// pipelines); the location then opens a file, reads a header, opens or verifies a checkpoint
/// or hands out a whole file read in order, each through the checkpoint_store that serves it.
///
/// Paths and `file://` URLs are served by the local store. Other schemes by the store provider
/// registered for them (`register_store_provider`): the remote library registers `http` and
/// `https` (safetensors::remote::register_store_provider), which the core never links; the CLI
/// registers a provider that loads the remote library only when a URL is used.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_store.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/error.h"
#include "safetensors/file.h"

namespace safetensors {

/// How to reach a URL: what every provider of a network store is given. Defaults: the provider's.
struct url_options {
  /// Sent as a bearer token to the URL's host only. Unset: $SAFETENSORS_TOKEN, then $HF_TOKEN;
  /// "": none.
  std::optional<std::string> bearer_token;
  std::string ca_file;    ///< PEM file of CAs to trust; empty: the system's
  bool insecure = false;  ///< skip TLS certificate and host checks
  double timeout_s = 0;   ///< seconds to connect, and without a byte, before failing; 0: the provider's
  int connections = 0;    ///< parallel connections of one large read; 0: the provider's
};

/// The bearer token `options` asks for: its own, else $SAFETENSORS_TOKEN, then $HF_TOKEN.
[[nodiscard]] std::string bearer_token_of(const url_options& options);

/// Makes the checkpoint_store of one URL scheme. Thread-safe.
class store_provider {
 public:
  store_provider() = default;
  store_provider(const store_provider&) = delete;
  store_provider& operator=(const store_provider&) = delete;
  virtual ~store_provider() = default;
  /// A store that reads URLs with `options` (errors: the provider cannot be used, e.g. a library
  /// it loads is missing).
  [[nodiscard]] virtual result<std::shared_ptr<const checkpoint_store>> store(const url_options& options) const = 0;
};

/// Serves URLs of `scheme` ("https", lower case, without "://") with `provider`, replacing the
/// one registered before; nullptr unregisters. `file` is the core's own and cannot be replaced.
/// Errors: InvalidArgument.
[[nodiscard]] status register_store_provider(std::string_view scheme, std::shared_ptr<const store_provider> provider);

/// What a location names.
enum class location_kind {
  file,       ///< a local file (or a path that does not exist)
  directory,  ///< a local directory: a checkpoint
  index,      ///< a local `.json` index
  url,        ///< a URL served by a provider: a file, an index (`.json`) or a base URL (`.../`)
};

/// An input named by a path or a URL, with the store that serves it.
class location {
 public:
  /// Decides what `text` names: a URL (`scheme://`) or a local path; a `file://` URL is its
  /// local path. Errors: InvalidArgument (a malformed file:// URL), Unsupported (no provider
  /// of the scheme, or one that cannot be used: the message says why).
  [[nodiscard]] static result<location> resolve(const std::string& text, const url_options& options = {});

  [[nodiscard]] location_kind kind() const noexcept { return kind_; }
  /// The text as given.
  [[nodiscard]] const std::string& text() const noexcept { return text_; }
  /// A local path (a file:// URL decoded), or the URL. A hub repository URL,
  /// `BASE/ORG/REPO/resolve/REV` or `BASE/ORG/REPO/tree/REV`, is its base URL
  /// `BASE/ORG/REPO/resolve/REV/`, where model.safetensors.index.json or model.safetensors is
  /// looked for, as hub tools do.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] bool is_local() const noexcept { return kind_ != location_kind::url; }
  /// A directory, an index, or a URL of an index or a base URL ending in `/`: what is read as
  /// a checkpoint rather than one file.
  [[nodiscard]] bool names_checkpoint() const noexcept;
  [[nodiscard]] const checkpoint_store& store() const noexcept { return *store_; }

  /// One SafeTensors file (a URL's backend is the store's own). A local file that is another
  /// format says so ("this is a GGUF file, not SafeTensors").
  [[nodiscard]] result<file> open_file(const open_options& options = {}) const;
  /// Only the header of one file (one request for most headers of a URL).
  [[nodiscard]] result<header> read_header(const parse_options& options = {}) const;
  /// checkpoint::open over the store.
  [[nodiscard]] result<checkpoint> open_checkpoint(const checkpoint_options& options = {}) const;
  /// verify_checkpoint over the store.
  [[nodiscard]] result<verify_report> verify_checkpoint(const verify_options& options = {}) const;
  /// The whole file read in order (a digest of its bytes).
  [[nodiscard]] result<sequential_file> open_sequential() const;

 private:
  location(location_kind kind, std::string text, std::string path, std::shared_ptr<const checkpoint_store> store)
      : kind_(kind), text_(std::move(text)), path_(std::move(path)), store_(std::move(store)) {}
  location_kind kind_;
  std::string text_;
  std::string path_;
  std::shared_ptr<const checkpoint_store> store_;
};

/// True for text that starts with a URL scheme and `://` (`https://`, `file://`, `s3://`).
[[nodiscard]] bool is_url(std::string_view text) noexcept;

}  // namespace safetensors
