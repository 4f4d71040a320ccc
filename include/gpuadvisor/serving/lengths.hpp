// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
// Request lengths (docs/methodology.md §Serving under load): fixed at the
// mean, uniform over mean x (1 +- spread) as benchmark clients' range ratio
// draws them, or lognormal through a mean and a p95.
#pragma once
#include "gpuadvisor/serving/random.hpp"

namespace gpuadvisor {

enum class LengthShape { fixed, uniform, lognormal };

struct LengthDistribution {
  LengthShape shape = LengthShape::fixed;
  double mean = 1;
  double spread = 0;       // uniform: half-width as a share of the mean
  double log_mu = 0, log_sigma = 0;  // lognormal
  double cap = 0;                    // lognormal: longest drawn, 3 x the p95 (a benchmark set's longest)
  // One length, at least 1 token.
  int draw(Random& random) const;
};

// Lognormal where p95 > mean, else uniform where spread > 0, else fixed.
LengthDistribution length_distribution(double mean, double p95, double spread);

}  // namespace gpuadvisor
