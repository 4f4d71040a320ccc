// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
#include "gpuadvisor/serving/lengths.hpp"

#include <algorithm>
#include <cmath>

#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

int LengthDistribution::draw(Random& random) const {
  double v = mean;
  if (shape == LengthShape::uniform) v = mean * (1 - spread + 2 * spread * random.uniform());
  if (shape == LengthShape::lognormal) v = std::min(cap, std::exp(log_mu + log_sigma * random.normal()));
  return std::max(1, static_cast<int>(std::lround(v)));
}

// Lognormal with mean m and p95 q: m = exp(mu + s^2/2), q = exp(mu + z s), so
// s^2/2 - z s + ln(q/m) = 0, the smaller root (capped at z where q/m is too
// wide for any lognormal).
LengthDistribution length_distribution(double mean, double p95, double spread) {
  LengthDistribution d;
  d.mean = mean;
  if (p95 > mean) {
    d.shape = LengthShape::lognormal;
    const double gap = std::log(p95 / mean);
    const double disc = kStandardNormalP95 * kStandardNormalP95 - 2 * gap;
    d.log_sigma = disc > 0 ? kStandardNormalP95 - std::sqrt(disc) : kStandardNormalP95;
    d.log_mu = std::log(mean) - d.log_sigma * d.log_sigma / 2;
    d.cap = 3 * p95;
  } else if (spread > 0) {
    d.shape = LengthShape::uniform;
    d.spread = spread;
  }
  return d;
}

}  // namespace gpuadvisor
