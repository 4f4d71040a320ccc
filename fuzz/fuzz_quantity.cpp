// libFuzzer target: every quantity parser either returns a positive, finite
// value (a whole one from parse_whole_count and parse_positive_integer) or
// throws InputError; parse_decimal_integer returns any integer, which reads back
// the same. Anything else (a crash, another exception, a NaN, a fraction) is a bug.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/quantity.hpp"

using namespace gpuadvisor;

namespace {
// A value must be positive and finite (whole when `whole`); an InputError is the only other outcome.
template <typename F>
void check(F parse, bool whole = false) {
  try {
    const double v = static_cast<double>(parse());
    if (!(v > 0) || !std::isfinite(v)) std::abort();
    if (whole && v != std::floor(v)) std::abort();
  } catch (const InputError&) {
  }
}

// An integer flag's parser: any integer, and text back that reads the same.
void check_integer(const std::string& s) {
  try {
    const long long v = parse_decimal_integer(s, "--count");
    if (parse_decimal_integer(std::to_string(v), "--count") != v) std::abort();
  } catch (const InputError&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  check([&] { return parse_count(s, "--params"); });
  check([&] { return parse_whole_count(s, "--steps"); }, true);
  check([&] { return parse_positive_integer(s, "--seq-len"); }, true);
  check_integer(s);
  check([&] { return parse_duration_hours(s, "--deadline"); });
  check([&] { return parse_latency_s(s, "--max-tpot"); });
  check([&] { return parse_usd(s, "--budget"); });
  check([&] { return parse_memory_gb(s, "--min-accelerator-memory"); });
  check([&] { return parse_number(s, "--epochs", 1e-6, 1e6); });
  return 0;
}
