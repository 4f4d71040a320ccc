// Layer base: small utilities every layer may use (quantities, files, names, JSON input); includes nothing above base.
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
  gate_failed = 4,     // the output was written, and a --fail-if-over / --fail-if-increase threshold was crossed
  unavailable = 5,     // a remote source did not answer in time or in full after the retries: nothing was changed, try again later
};

// Bad input from the user: a flag value, a file, a catalog entry. Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A remote source (AWS's price list, EC2's Capacity Block offerings) that did
// not answer in time or in full after the retries, or a download directory
// another fetch held past the deadline: nothing was changed. Exit code 5, so a
// CI job can retry this and not a bad flag.
class UnavailableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A valid request that no instance can satisfy. Exit code 3. `details_json`
// (a serialized object, may be empty) goes into the JSON error document:
// e.g. `cannot_run`, or the memory a layout needs.
class NothingFitsError : public std::runtime_error {
 public:
  explicit NothingFitsError(const std::string& message, std::string details_json = {})
      : std::runtime_error(message), details_json_(std::move(details_json)) {}
  const std::string& details_json() const { return details_json_; }

 private:
  std::string details_json_;
};

// Input files (catalogs, overlays, config.json, price files) larger than this
// are refused with a clear error rather than read (the built-in catalog is ~100 KB).
inline constexpr unsigned long long kMaxInputFileBytes = 32'000'000;
// The longest wait for the next chunk of an input FIFO or pipe (a named FIFO
// that no process writes to gives none): then it is refused, never waited on.
inline constexpr int kInputStreamWaitMs = 30'000;

}  // namespace gpuadvisor
