// SPDX-License-Identifier: Apache-2.0
#include "remote/remote_servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace st_test {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
  return s;
}

namespace {

std::string& missing_reason() {
  static std::string why;
  return why;
}

std::string find_nginx() {
  for (const char* p : {"/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return {};
}

/// A port the kernel just had free on 127.0.0.1.
int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(s);
  return port;
}

bool accepts(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

bool wait_for(int port, int pid) {
  for (int i = 0; i < 200; ++i) {
    if (accepts(port)) return true;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;  // it died
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

int spawn(const std::vector<std::string>& args, const std::filesystem::path& output) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

void stop(int& pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  pid = -1;
}

std::uint64_t file_size_or_zero(const std::filesystem::path& p) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : n;
}

// The log's size once it has been still a while: servers log a request after answering it,
// and an abandoned one when they notice the closed connection. Taken before a mark too, so
// that an earlier test's late lines are not counted as the next one's.
std::uint64_t settled_size(const std::filesystem::path& p) {
  std::uint64_t seen = file_size_or_zero(p);
  for (int still = 0, i = 0; still < 3 && i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::uint64_t now = file_size_or_zero(p);
    still = now == seen ? still + 1 : 0;
    seen = now;
  }
  return seen;
}

std::vector<std::string> lines_from(const std::filesystem::path& p, std::uint64_t mark) {
  settled_size(p);
  std::ifstream in(p, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(mark));
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

remote_servers* remote_servers::get() {
  static std::unique_ptr<remote_servers> servers = [] {
    std::unique_ptr<remote_servers> s(new remote_servers);
    if (!s->start()) s.reset();
    return s;
  }();
  return servers.get();
}

std::string remote_servers::why_missing() { return missing_reason(); }

bool remote_servers::start() {
  const std::string nginx = find_nginx();
  if (nginx.empty()) {
    missing_reason() = "nginx is not installed (scripts/install-deps installs it): remote tests skipped";
    return false;
  }
  char tmpl[] = "/tmp/st-remote-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    missing_reason() = "cannot create a temporary directory";
    return false;
  }
  dir_ = tmpl;
  root_ = dir_ / "www";
  std::filesystem::create_directories(root_ / "private");
  std::filesystem::create_directories(dir_ / "nginx");
  cert_ = dir_ / "cert.pem";
  const auto key = dir_ / "key.pem";
  const std::string openssl = fmt::format(
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout '{}' -out '{}' -days 2 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 >'{}' 2>&1",
      key.string(), cert_.string(), (dir_ / "openssl.log").string());
  if (std::system(openssl.c_str()) != 0) {
    missing_reason() = "openssl could not make a self-signed certificate";
    return false;
  }
  http_port_ = free_port();
  tls_port_ = free_port();
  fault_port_ = free_port();
  std::ifstream in(std::filesystem::path(SAFETENSORS_SOURCE_DIR) / "tests/remote/nginx.conf.in");
  std::stringstream text;
  text << in.rdbuf();
  std::string conf = text.str();
  conf = replace_all(conf, "@PREFIX@", (dir_ / "nginx").string());
  conf = replace_all(conf, "@ROOT@", root_.string());
  conf = replace_all(conf, "@PORT@", std::to_string(http_port_));
  conf = replace_all(conf, "@TLS_PORT@", std::to_string(tls_port_));
  conf = replace_all(conf, "@CERT@", cert_.string());
  conf = replace_all(conf, "@KEY@", key.string());
  conf = replace_all(conf, "@TOKEN@", token());
  std::ofstream(dir_ / "nginx.conf") << conf;
  nginx_pid_ = spawn({nginx, "-p", (dir_ / "nginx").string(), "-e", (dir_ / "nginx/error.log").string(), "-c",
                      (dir_ / "nginx.conf").string()},
                     dir_ / "nginx.out");
  fault_pid_ = spawn({"/usr/bin/python3", std::string(SAFETENSORS_SOURCE_DIR) + "/tests/remote/fault_server.py",
                      "--port", std::to_string(fault_port_), "--root", root_.string(), "--log",
                      (dir_ / "fault.log").string(), "--away", http("private/")},
                     dir_ / "fault.out");
  if (nginx_pid_ < 0 || !wait_for(http_port_, nginx_pid_) || !wait_for(tls_port_, nginx_pid_)) {
    missing_reason() = fmt::format("nginx did not start (see {})", (dir_ / "nginx.out").string());
    return false;
  }
  if (fault_pid_ < 0 || !wait_for(fault_port_, fault_pid_)) {
    missing_reason() = fmt::format("the fault server did not start (see {})", (dir_ / "fault.out").string());
    return false;
  }
  return true;
}

remote_servers::~remote_servers() {
  stop(nginx_pid_);
  stop(fault_pid_);
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

std::string remote_servers::http(const std::string& path) const {
  return fmt::format("http://127.0.0.1:{}/{}", http_port_, path);
}
std::string remote_servers::https(const std::string& path) const {
  return fmt::format("https://127.0.0.1:{}/{}", tls_port_, path);
}
std::string remote_servers::faulty(const std::string& path) const {
  return fmt::format("http://127.0.0.1:{}/{}", fault_port_, path);
}

std::uint64_t remote_servers::access_mark() const { return settled_size(dir_ / "nginx/access.log"); }
std::vector<std::string> remote_servers::access_since(std::uint64_t mark) const {
  return lines_from(dir_ / "nginx/access.log", mark);
}
std::uint64_t remote_servers::fault_mark() const { return settled_size(dir_ / "fault.log"); }
std::vector<std::string> remote_servers::fault_since(std::uint64_t mark) const {
  return lines_from(dir_ / "fault.log", mark);
}

std::uint64_t bytes_sent(const std::vector<std::string>& access_lines) {
  std::uint64_t total = 0;
  for (const auto& line : access_lines) {
    // GET /uri STATUS "Range" BYTES auth
    const auto close = line.rfind('"');
    if (close == std::string::npos) continue;
    total += std::strtoull(line.c_str() + close + 1, nullptr, 10);
  }
  return total;
}

}  // namespace st_test
