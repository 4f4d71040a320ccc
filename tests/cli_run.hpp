// Test helper: runs the gpuadvisor binary with arguments and environment and
// returns its exit code, stdout and stderr. Every run uses an empty price
// cache (XDG_CACHE_HOME points to a directory that does not exist) unless the
// caller's environment sets one, so a developer's fetched prices never leak in.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace cli_test {

struct Run {
  int code;
  std::string out, err;
};

inline Run run(const std::string& args, const std::string& env = "GPUADVISOR_TODAY=2026-12-01") {
  static int n = 0;
  std::string errfile = "gpuadvisor_test_stderr_" + std::to_string(getpid()) + "_" + std::to_string(n++) + ".txt";
  const std::string cache = env.find("XDG_CACHE_HOME=") == std::string::npos ? "XDG_CACHE_HOME=/nonexistent-gpuadvisor-cache " : "";
  std::string cmd = cache + env + " " + GPUADVISOR_BINARY + " " + args + " 2>" + errfile;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  std::array<char, 4096> buf{};
  size_t got;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), got);
  int status = pclose(p);
  std::ifstream e(errfile);
  std::stringstream ss;
  ss << e.rdbuf();
  std::remove(errfile.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, ss.str()};
}

inline std::string data(const std::string& name) { return std::string(GPUADVISOR_TEST_DATA) + "/" + name; }

}  // namespace cli_test
