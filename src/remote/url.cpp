// SPDX-License-Identifier: Apache-2.0
#include "remote/url.h"

#include <curl/curl.h>

#include <memory>

#include <fmt/format.h>

#include "safetensors/remote/remote.h"

namespace safetensors::remote {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

error bad_url(std::string_view url, std::string_view why) {
  return make_error(error_code::invalid_argument, fmt::format("not a usable URL: {}", why)).with_path(display_url(url));
}

}  // namespace

bool is_url(std::string_view text) noexcept {
  return starts_with(text, "http://") || starts_with(text, "https://") || starts_with(text, "file://");
}

std::string display_url(std::string_view url) {
  std::string out(url);
  const auto scheme_end = out.find("://");
  if (scheme_end != std::string::npos) {
    const auto authority = scheme_end + 3;
    const auto path = out.find_first_of("/?#", authority);
    const auto at = out.rfind('@', path == std::string::npos ? out.size() : path);
    if (at != std::string::npos && at >= authority) out.erase(authority, at + 1 - authority);
  }
  // Query strings carry signatures of pre-signed URLs: never shown.
  if (const auto q = out.find_first_of("?#"); q != std::string::npos) out = out.substr(0, q) + "?...";
  return out;
}

namespace detail {

result<url_origin> origin_of(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), &curl_url_cleanup);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return bad_url(url, "cannot parse it");
  url_origin o;
  auto part = [&](CURLUPart which, unsigned flags, std::string& out) {
    char* text = nullptr;
    if (curl_url_get(u.get(), which, &text, flags) != CURLUE_OK) return false;
    out = text;
    curl_free(text);
    return true;
  };
  if (!part(CURLUPART_SCHEME, 0, o.scheme) || !part(CURLUPART_HOST, 0, o.host) ||
      !part(CURLUPART_PORT, CURLU_DEFAULT_PORT, o.port)) {
    return bad_url(url, "no scheme, host or port");
  }
  if (o.scheme != "http" && o.scheme != "https") return bad_url(url, "only http and https are fetched");
  return o;
}

result<std::string> file_url_path(std::string_view url) {
  if (!starts_with(url, "file://")) return bad_url(url, "not a file:// URL");
  std::string_view rest = url.substr(7);
  if (starts_with(rest, "localhost/")) rest.remove_prefix(9);
  if (rest.empty() || rest.front() != '/') return bad_url(url, "a file:// URL names an absolute path on this host");
  int length = 0;
  char* decoded = curl_easy_unescape(nullptr, rest.data(), static_cast<int>(rest.size()), &length);
  if (decoded == nullptr) return bad_url(url, "cannot decode it");
  std::string path(decoded, static_cast<std::size_t>(length));
  curl_free(decoded);
  if (path.find('\0') != std::string::npos) return bad_url(url, "a NUL byte in the path");
  return path;
}

std::string join_url(std::string_view directory, std::string_view name) {
  std::string out(directory);
  out += '/';
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~' || c == '/') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

std::string resolve_reference(const std::string& base, const std::string& reference) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), &curl_url_cleanup);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK) return {};
  // Setting a URL on a handle that holds one resolves a relative reference against it.
  if (curl_url_set(u.get(), CURLUPART_URL, reference.c_str(), 0) != CURLUE_OK) return {};
  char* text = nullptr;
  if (curl_url_get(u.get(), CURLUPART_URL, &text, 0) != CURLUE_OK) return {};
  std::string out(text);
  curl_free(text);
  return out;
}

std::string url_directory(std::string_view url) {
  const auto q = url.find_first_of("?#");
  const std::string_view path = url.substr(0, q);
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(0, slash));
}

}  // namespace detail
}  // namespace safetensors::remote
