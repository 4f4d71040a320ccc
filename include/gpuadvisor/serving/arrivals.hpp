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

// The gaps' CV at one of N replicas that a balancer sends each request to at
// random (Kubernetes Services' default): a replica's gap is a geometric number
// (mean N) of the stream's gaps, so CV^2 = 1 + (CV_stream^2 - 1) / N. Poisson
// stays Poisson; bursts thin toward it as N grows (a replica sees a burst's
// requests one in N). The replica's gaps are then drawn as gamma with that CV
// (two moments matched). A round-robin balancer smooths more (CV / sqrt(N));
// this is the conservative choice. N below 1 leaves the CV as it is.
double replica_gap_cv(double stream_gap_cv, double replicas);

// Open loop: the arrival times of `count` requests from time 0, s.
std::vector<double> open_loop_arrivals(const ArrivalPattern& p, int count, Random& random);

}  // namespace gpuadvisor
