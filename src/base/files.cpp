// Layer base: small utilities every layer may use (quantities, files, names, JSON input); includes nothing above base.
#include "gpuadvisor/base/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpuadvisor/base/errors.hpp"

namespace gpuadvisor {

namespace {

namespace fs = std::filesystem;

// What a path is now, without following a link at the path itself.
enum class PathKind { missing, regular, symlink, stream, directory, other };

PathKind kind_of(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return PathKind::missing;
  if (S_ISREG(st.st_mode)) return PathKind::regular;
  if (S_ISDIR(st.st_mode)) return PathKind::directory;
  if (S_ISLNK(st.st_mode)) {
    // A link to a device or FIFO (/dev/stdout, /dev/fd/N of a process substitution) is written into, not replaced.
    struct stat target{};
    if (::stat(path.c_str(), &target) == 0 && (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode))) return PathKind::stream;
    return PathKind::symlink;
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return PathKind::stream;
  return PathKind::other;
}

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// A device or FIFO: opened as it is (no creation, no truncation), written, closed.
void write_into_stream(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw InputError(errno == ENXIO ? fmt::format("{}: a FIFO that no process reads from; nothing written", path)
                                    : fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const bool ok = write_all(fd, text);
  const int saved = errno;
  if (::close(fd) != 0 || !ok) throw InputError(fmt::format("{}: writing failed: {}", path, std::strerror(ok ? errno : saved)));
}

// Refuses a target that must not be replaced; returns its kind otherwise.
PathKind check_target(const std::string& path) {
  const PathKind k = kind_of(path);
  if (k == PathKind::directory) throw InputError(fmt::format("{}: is a directory", path));
  if (k == PathKind::other)
    throw InputError(fmt::format("{}: is not a regular file (a block device or socket); gpuadvisor replaces only regular files", path));
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (k != PathKind::stream && !fs::is_directory(dir, ec))
    throw InputError(fmt::format("{}: the directory {} does not exist", path, dir.string()));
  return k;
}

// The mode a new file gets: 0666 less the umask (mkstemp makes 0600), or the mode of the file replaced.
mode_t new_file_mode(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

// Writes `text` to a fresh, unpredictable temporary beside `path`; returns its name.
std::string write_temporary(const std::string& path, const std::string& text) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp = (dir / fmt::format(".{}.tmp-XXXXXX", target.filename().string())).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw InputError(fmt::format("{}: cannot write in {}: {}", path, dir.string(), std::strerror(errno)));
  ::fchmod(fd, new_file_mode(path));
  const bool ok = write_all(fd, text) && ::fsync(fd) == 0;
  const int saved = errno;
  if (::close(fd) != 0 || !ok) {
    ::unlink(tmp.c_str());
    throw InputError(fmt::format("{}: writing failed: {}", path, std::strerror(ok ? errno : saved)));
  }
  return tmp;
}

void rename_into_place(const std::string& tmp, const std::string& path) {
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw InputError(fmt::format("{}: cannot replace the file: {}", path, std::strerror(saved)));
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  if (path.empty()) throw InputError("an output path is empty");
  if (check_target(path) == PathKind::stream) return write_into_stream(path, text);
  rename_into_place(write_temporary(path, text), path);
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [path, text] : files)
    if (check_target(path) == PathKind::stream) throw InputError(fmt::format("{}: a device or FIFO cannot hold one of a set of files", path));
  std::vector<std::string> temporaries;
  try {
    for (const auto& [path, text] : files) temporaries.push_back(write_temporary(path, text));
  } catch (...) {
    for (const auto& t : temporaries) ::unlink(t.c_str());
    throw;
  }
  for (size_t i = 0; i < files.size(); ++i) rename_into_place(temporaries[i], files[i].first);
}

std::string checked_input_path(const std::string& path, const char* what) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(fmt::format("{}: is a directory, not {}", path, what));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open {} (missing or unreadable)", path, what));
  return path;
}

namespace {

std::string too_large_text(const std::string& path, const char* what, unsigned long long max_bytes) {
  return fmt::format("{}: larger than the {} {} may be; nothing was used", path,
                     max_bytes >= 1000000 ? fmt::format("{} MB", max_bytes / 1000000) : fmt::format("{} bytes", max_bytes), what);
}

// A FIFO or pipe: opened without blocking (a named FIFO that no process
// writes to would block the open itself), then read as data comes, waiting
// at most kInputStreamWaitMs for each chunk; the end is the writer's close.
std::string read_stream_capped(const std::string& path, const char* what, unsigned long long max_bytes, int wait_ms) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("{}: cannot open {} ({})", path, what, std::strerror(errno)));
  std::string text;
  char buffer[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      ::close(fd);
      throw InputError(fmt::format("{}: a FIFO or pipe that gave no data for {:g} s (no process writes to it?); nothing was used", path,
                                   wait_ms / 1000.0));
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      ::close(fd);
      if (n < 0) throw InputError(fmt::format("{}: error while reading {}", path, what));
      return text;  // the writer closed it
    }
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      throw InputError(too_large_text(path, what, max_bytes));
    }
  }
}

}  // namespace

std::string read_input_file_capped(const std::string& path, const char* what, unsigned long long max_bytes, int stream_wait_ms) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(fmt::format("{}: is a directory, not {}", path, what));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) return read_stream_capped(path, what, max_bytes, stream_wait_ms);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open {} (missing or unreadable)", path, what));
  std::string text;
  char buffer[65536];
  while (in) {
    in.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) throw InputError(too_large_text(path, what, max_bytes));
  }
  if (in.bad()) throw InputError(fmt::format("{}: error while reading {}", path, what));
  return text;
}

std::string read_input_file(const std::string& path, const char* what) {
  return read_input_file_capped(path, what, kMaxInputFileBytes);
}

}  // namespace gpuadvisor
