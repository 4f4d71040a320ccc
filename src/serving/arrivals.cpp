// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
#include "gpuadvisor/serving/arrivals.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

namespace gpuadvisor {

std::optional<double> arrival_cv_from_string(std::string_view text) {
  if (text == "poisson") return 1.0;
  constexpr std::string_view kGamma = "gamma:";
  if (text.substr(0, kGamma.size()) != kGamma) return std::nullopt;
  const std::string number(text.substr(kGamma.size()));
  try {
    size_t used = 0;
    const double cv = std::stod(number, &used);
    if (used != number.size() || !(cv > 0)) return std::nullopt;
    return cv;
  } catch (const std::exception&) {
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
