// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
// When requests arrive (docs/methodology.md §Serving under load): open loop
// at a rate, the gaps Poisson or gamma-distributed for bursts, or a closed
// loop of clients that each send the next request when the last completes.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "gpuadvisor/serving/random.hpp"

namespace gpuadvisor {

struct ArrivalPattern {
  bool closed_loop = false;
  int clients = 0;                 // closed loop
  double requests_per_second = 0;  // open loop
  double gap_cv = 1;               // open loop: coefficient of variation of the gaps (1: Poisson)
};

// "poisson" is 1, "gamma:CV" is CV; empty when the text is neither.
std::optional<double> arrival_cv_from_string(std::string_view text);

// Open loop: the arrival times of `count` requests from time 0, s.
std::vector<double> open_loop_arrivals(const ArrivalPattern& p, int count, Random& random);

}  // namespace gpuadvisor
