// Error types and the exit codes they map to (documented in docs/cli.md).
#pragma once
#include <stdexcept>
#include <string>

namespace gpuadvisor {

enum class ExitCode : int {
  ok = 0,
  internal_error = 1,  // a bug: please report it
  input_error = 2,     // bad flag, value, file or catalog
  nothing_fits = 3,    // the request is valid but no option satisfies it
};

// Bad input from the user: a flag value, a file, a catalog entry. Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A valid request that no instance can satisfy. Exit code 3.
class NothingFitsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input files (catalogs, overlays, config.json, price files) larger than this
// are refused with a clear error rather than read (the built-in catalog is ~100 KB).
inline constexpr unsigned long long kMaxInputFileBytes = 32'000'000;

}  // namespace gpuadvisor
