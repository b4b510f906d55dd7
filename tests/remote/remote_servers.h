// SPDX-License-Identifier: Apache-2.0
// The servers of the remote-reading tests, started once per test process on 127.0.0.1
// (never another address) and stopped at exit: nginx (plain HTTP and TLS with a self-signed
// certificate made by the openssl CLI) from tests/remote/nginx.conf.in, and the
// fault-injecting tests/remote/fault_server.py.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace st_test {

/// Whether `text` contains `part`.
inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
/// `s` with every `from` replaced by `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to);

class remote_servers {
 public:
  /// The running servers, started on first use; null (with the reason in `why_missing`)
  /// when nginx is not installed.
  static remote_servers* get();
  static std::string why_missing();

  /// Files under this folder are served by both servers.
  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  /// "http://127.0.0.1:PORT/" + path (nginx).
  [[nodiscard]] std::string http(const std::string& path) const;
  /// "https://127.0.0.1:PORT/" + path (nginx, self-signed).
  [[nodiscard]] std::string https(const std::string& path) const;
  /// "http://127.0.0.1:PORT/" + path (the fault server).
  [[nodiscard]] std::string faulty(const std::string& path) const;
  /// The self-signed certificate (PEM), to trust as a CA file.
  [[nodiscard]] const std::filesystem::path& certificate() const { return cert_; }
  /// The token files under /private/ need.
  [[nodiscard]] static std::string token() { return "st-test-token-3f9c2a"; }

  /// Lines nginx's access log gained since `mark` (from access_mark()):
  /// `GET /uri STATUS "Range" BYTES auth`.
  [[nodiscard]] std::uint64_t access_mark() const;
  [[nodiscard]] std::vector<std::string> access_since(std::uint64_t mark) const;
  /// The same for the fault server's log: `GET /path "Range" auth`.
  [[nodiscard]] std::uint64_t fault_mark() const;
  [[nodiscard]] std::vector<std::string> fault_since(std::uint64_t mark) const;

  remote_servers(const remote_servers&) = delete;
  remote_servers& operator=(const remote_servers&) = delete;
  ~remote_servers();

 private:
  remote_servers() = default;
  bool start();

  std::filesystem::path dir_;
  std::filesystem::path root_;
  std::filesystem::path cert_;
  int http_port_ = 0;
  int tls_port_ = 0;
  int fault_port_ = 0;
  int nginx_pid_ = -1;
  int fault_pid_ = -1;
};

/// Bytes sent in access-log lines (the fifth field).
[[nodiscard]] std::uint64_t bytes_sent(const std::vector<std::string>& access_lines);

}  // namespace st_test
