// Layer base: small utilities every layer may use (quantities, files, names, JSON input); includes nothing above base.
// Reading inputs and writing output files safely (docs/reliability.md §Files
// read and written): the one bounded reader and the one safe writer every
// command uses.
#pragma once
#include "gpuadvisor/base/errors.hpp"
#include <string>
#include <utility>
#include <vector>

namespace gpuadvisor {

// Writes `text` to `path` without ever damaging what is there:
// - a missing path or a regular file: written to a fresh temporary beside it
//   (mkstemp: O_CREAT|O_EXCL, never following a planted link) and renamed over
//   it, so readers never see a half-written file;
// - a symbolic link the user named: replaced as a link (its target untouched);
// - a character device (/dev/null, /dev/stdout) or a FIFO: written into, never
//   replaced (a FIFO without a reader is refused rather than waited on);
// - a directory, block device or socket: refused.
// InputError naming the path on any failure (missing directory, no
// permission, disk full); nothing is left behind.
void write_file_atomically(const std::string& path, const std::string& text);

// Writes a set of files (launch files) all or nothing: each target is checked
// first, every file is written to a temporary beside its target, and only
// when all are written are they renamed into place. On a failure before the
// renames, no target changes.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

// Reads a whole input file, at most kMaxInputFileBytes of it, whatever it is
// (a pipe or a device is bounded as a file is: the cap applies to what is
// read, not to what stat says; a FIFO or pipe is opened without blocking and
// refused after kInputStreamWaitMs without data). InputError naming the path
// if it is missing, unreadable, a directory, too large or a silent FIFO.
std::string read_input_file(const std::string& path, const char* what);

// The same with a smaller cap, in bytes (e.g. a price index).
// `stream_wait_ms`: the longest wait for a FIFO's next chunk.
std::string read_input_file_capped(const std::string& path, const char* what, unsigned long long max_bytes,
                                   int stream_wait_ms = kInputStreamWaitMs);

// Checks that a file to be streamed (no size limit) exists, is not a
// directory and can be opened; returns the path. InputError otherwise.
std::string checked_input_path(const std::string& path, const char* what);

}  // namespace gpuadvisor
