// libFuzzer target: every quantity parser either returns a positive, finite
// value or throws InputError. Anything else (a crash, another exception, a
// NaN) is a bug.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gpuadvisor/errors.hpp"
#include "gpuadvisor/quantity.hpp"

using namespace gpuadvisor;

namespace {
template <typename F>
void check(F parse) {
  try {
    const double v = static_cast<double>(parse());
    if (!(v > 0) || !std::isfinite(v)) std::abort();
  } catch (const InputError&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  check([&] { return parse_count(s, "--params"); });
  check([&] { return parse_positive_integer(s, "--seq-len"); });
  check([&] { return parse_duration_hours(s, "--deadline"); });
  check([&] { return parse_latency_s(s, "--max-tpot"); });
  check([&] { return parse_usd(s, "--budget"); });
  check([&] { return parse_memory_gb(s, "--min-accelerator-memory"); });
  check([&] { return parse_number(s, "--epochs", 1e-6, 1e6); });
  return 0;
}
