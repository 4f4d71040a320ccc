#include "gpuadvisor/files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpuadvisor/errors.hpp"

namespace gpuadvisor {

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw InputError(fmt::format("{}: is a directory", path));
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) throw InputError(fmt::format("{}: the directory {} does not exist", path, dir.string()));
  const fs::path tmp = dir / fmt::format(".{}.tmp-{}", target.filename().string(), ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("{}: cannot write in {}", path, dir.string()));
    out << text;
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      throw InputError(fmt::format("{}: writing failed (disk full?)", path));
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(fmt::format("{}: cannot replace the file", path));
  }
}

std::string checked_input_path(const std::string& path, const char* what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(fmt::format("{}: is a directory, not {}", path, what));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open {} (missing or unreadable)", path, what));
  return path;
}

std::string read_input_file(const std::string& path, const char* what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(fmt::format("{}: is a directory, not {}", path, what));
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputFileBytes)
    throw InputError(fmt::format("{}: {} bytes is larger than the {} MB {} may be", path, size, kMaxInputFileBytes / 1000000, what));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open {} (missing or unreadable)", path, what));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("{}: error while reading {}", path, what));
  return ss.str();
}

}  // namespace gpuadvisor
