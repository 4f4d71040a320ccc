// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
#include "gpuadvisor/serving/arrivals.hpp"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/quantity.hpp"

namespace gpuadvisor {

std::optional<double> arrival_cv_from_string(std::string_view text) {
  if (text == "poisson") return 1.0;
  constexpr std::string_view kGamma = "gamma:";
  if (text.substr(0, kGamma.size()) != kGamma) return std::nullopt;
  // The number grammar of every flag (docs/cli.md §Quantities): no hex, sign or leading zero.
  const std::string_view number = text.substr(kGamma.size());
  if (std::any_of(number.begin(), number.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) return std::nullopt;
  try {
    const double cv = parse_number(number, "--arrival", 0, std::numeric_limits<double>::max());
    if (!(cv > 0)) return std::nullopt;
    return cv;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

double replica_gap_cv(double stream_gap_cv, double replicas) {
  return std::sqrt(1 + (stream_gap_cv * stream_gap_cv - 1) / std::max(1.0, replicas));
}

// Gaps of mean 1/rate: exponential for CV 1, else gamma with shape 1/CV^2.
std::vector<double> open_loop_arrivals(const ArrivalPattern& p, int count, Random& random) {
  std::vector<double> out;
  out.reserve(count);
  const double mean_gap = 1 / p.requests_per_second;
  const double shape = 1 / (p.gap_cv * p.gap_cv);
  double t = 0;
  for (int i = 0; i < count; ++i) {
    t += p.gap_cv == 1 ? random.exponential(mean_gap) : random.gamma(shape, mean_gap / shape);
    out.push_back(t);
  }
  return out;
}

}  // namespace gpuadvisor
