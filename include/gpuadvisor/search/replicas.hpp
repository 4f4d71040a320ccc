// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
// Replicas sized by simulation (docs/methodology.md §Replicas sized by
// simulation): with a load and latency targets, a service gets the fewest
// replicas whose simulated latencies, at the percentile the user promises
// (--slo-percentile), meet the targets, instead of a guessed utilisation.
#pragma once
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/serving/metrics.hpp"
#include "gpuadvisor/serving/simulate.hpp"

namespace gpuadvisor {

struct ServingRow;

// Replicas spread over more than one instance that meet the targets only
// with fewer requests than this in flight on average, idle time included,
// are refused: nearly idle (a judgement: docs/methodology.md §Replicas sized
// by simulation).
inline constexpr double kLeastSequencesInFlight = 1.0;
// ... and only where the typical request (the simulated p50) already takes at
// least this share of a latency target: a short request that meets its
// targets with room to spare leaves few in flight without idling the
// hardware (a prompt-bound service of 3-token answers is busy prefilling).
inline constexpr double kUnloadedShareOfTarget = 0.5;

// Fewer requests than this per replica from a trace are said to be too few
// for stable percentiles (and are replayed to that many: replica_trace).
inline constexpr size_t kFewTraceRequests = kLeastReplayedTraceRequests;
// Fewer than this per replica form no queue to simulate: a rate "served" by
// two requests is their gap, not the replica's (estimate then shows the
// analytic point at the load).
inline constexpr size_t kLeastSimulatedTraceRequests = 10;

// Most replicas the sizing tries where no instance limit is given (estimate, cost).
inline constexpr int kMaxSimulatedReplicas = 4096;

// Whether a service with this workload is sized by simulation: online, with
// a load and a latency target, one sample per request (best-of-N and
// verifiers are not simulated).
bool sized_by_simulation(const InferenceWorkload& w);

// Whether one replica's simulated users saw the targets met at the
// workload's percentile: nothing turned away, the queue not growing.
bool meets_targets(const ServiceMetrics& s, const InferenceWorkload& w);

// The targets one replica's simulated users missed at the workload's
// percentile, each as "the simulated p90 time to first token is 8.5 s
// (target 450 ms)"; empty where every target is met.
std::vector<std::string> simulated_target_misses(const ServiceMetrics& s, const InferenceWorkload& w);
// Those, then "the queue keeps growing" (saturated) and "N requests do not
// fit the KV cache": every reason meets_targets is false for a whole run.
std::vector<std::string> simulated_service_misses(const ServiceMetrics& s, const InferenceWorkload& w);

// One simulation per (accelerator, layout, load per replica): instance types
// that differ only in vCPUs and memory share the same replica, so they share
// its runs (the network only matters once a replica spans instances).
class ReplicaSimulations {
 public:
  // Stops at a certain miss (simulate_service's stop_at_miss): enough to size by.
  const ServiceMetrics& at(const ModelSpec& m, const InferenceWorkload& w, const ServingRow& row, int replicas);
  // The whole run, for a figure shown.
  ServiceMetrics whole(const ModelSpec& m, const InferenceWorkload& w, const ServingRow& row, int replicas);
  int runs() const { return runs_; }
  // Takes in another search's runs (a thread's, over other instance types):
  // the same key gives the same figures, whoever ran it.
  void absorb(ReplicaSimulations&& other);

 private:
  std::map<std::tuple<const void*, int, int, int, int, const void*, double>, ServiceMetrics> done_;
  int runs_ = 0;
};

// Sizes `row` (estimated, analytically sized, at most `max_instances`): the
// fewest replicas meeting the targets, rounded up to whole instances, with
// every replica slot of them deployed; row.simulated holds what the deployed
// replicas' users see. Returns why no count up to `max_instances` meets them
// (row unchanged), or "".
std::string size_by_simulation(ServingRow& row, const ModelSpec& m, const InferenceWorkload& w, int max_instances, ReplicaSimulations& sims);

// The pick's sizing in words: the fewest replicas meeting the targets at the
// percentile, and what one instance fewer would show (its simulated figure
// at the percentile, or that it would carry more than a replica's capacity).
// "" for a row not sized by simulation.
std::string sizing_note(const ServingRow& row, const ModelSpec& m, const InferenceWorkload& w, ReplicaSimulations& sims);

}  // namespace gpuadvisor
