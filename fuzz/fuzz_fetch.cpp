// libFuzzer target: the fetch state machine against a scripted server on
// 127.0.0.1. The input is a script of raw HTTP responses, separated by a line
// "=====\n"; the server answers the n-th connection with the n-th response
// (then closes), and "$PORT" in a response stands for its own port, so the
// fuzzer can write redirects that stay on the host. Contract: the fetch either
// returns or throws InputError or UnavailableError, within its deadline (plus a margin), and leaves
// no temporary file behind; anything else aborts.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/catalog/price_fetch.hpp"
#include "../tests/loopback.hpp"

using namespace gpuadvisor;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_script(const std::string& input, int port) {
  std::vector<std::string> out;
  const std::string sep = "=====\n";
  size_t start = 0;
  while (out.size() < 16) {
    const size_t end = input.find(sep, start);
    std::string r = input.substr(start, end == std::string::npos ? std::string::npos : end - start);
    for (size_t p = r.find("$PORT"); p != std::string::npos; p = r.find("$PORT", p)) r.replace(p, 5, std::to_string(port));
    out.push_back(r);
    if (end == std::string::npos) break;
    start = end + sep.size();
  }
  return out;
}

// One listening socket on an ephemeral loopback port, serving the script.
class ScriptedServer {
 public:
  ScriptedServer() {
    fd_ = test_http::listen_on_loopback(port_);
  }
  ~ScriptedServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  void serve(std::vector<std::string> responses) {
    responses_ = std::move(responses);
    thread_ = std::thread([this] { loop(); });
  }

 private:
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::string> responses_;

  void loop() {
    size_t next = 0;
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      char buf[4096];
      pollfd q{c, POLLIN, 0};
      if (poll(&q, 1, 200) > 0) (void)!read(c, buf, sizeof buf);  // the request; its content does not matter
      const std::string& r = responses_.empty() ? std::string() : responses_[std::min(next++, responses_.size() - 1)];
      (void)!send(c, r.data(), r.size(), MSG_NOSIGNAL);
      close(c);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), std::min<size_t>(size, 65536));
  ScriptedServer server;
  server.serve(split_script(input, server.port()));
  static const fs::path dir = fs::temp_directory_path() / ("gpuadvisor_fuzz_fetch_" + std::to_string(getpid()));
  FetchOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(server.port());
  o.spot_advisor_url = o.base_url + "/spot-advisor-data.json";
  o.regions = {"us-east-1"};
  o.download_dir = dir.string();
  o.timeout_s = 1;
  o.deadline_s = 2;
  o.attempts = 1;  // a retry only waits out its backoff: one attempt per file keeps the executions per second up
  const auto start = std::chrono::steady_clock::now();
  try {
    fetch_price_files(o);
  } catch (const InputError&) {
  } catch (const UnavailableError&) {
  }
  if (std::chrono::steady_clock::now() - start > std::chrono::seconds(6)) std::abort();  // past the deadline
  // A download's temporary is ".<name>.XXXXXX"; the lock file ".lock" stays by design.
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name != ".lock" && name.front() == '.') std::abort();  // a temporary left behind
  }
  return 0;
}
