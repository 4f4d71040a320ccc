// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
// One replica under a load, simulated step by step (docs/methodology.md
// §Serving under load): the requests the load draws, the engine's scheduler
// over the replica's KV blocks, every step timed by the roofline of its
// composition, and what the users saw. Deterministic: a fixed seed.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>

#include "gpuadvisor/serving/lengths.hpp"
#include "gpuadvisor/serving/metrics.hpp"

namespace gpuadvisor {

// Requests simulated when the workload does not say (--simulated-requests):
// enough for stable p99s (10 above the p99 of 1,000), and 8 rounds of a
// closed loop's clients.
inline constexpr int kDefaultSimulatedRequests = 1000;
inline constexpr int kClosedLoopRounds = 8;
inline constexpr uint64_t kSimulationSeed = 20261202;
// A trace's requests one replica simulates, unless --simulated-requests says.
inline constexpr int kMaxTraceReplicaRequests = 10000;

struct ServingLoad {
  ArrivalPattern arrivals;
  LengthDistribution prompt, output;  // output: every generated token (visible and reasoning)
  int requests = kDefaultSimulatedRequests;
  uint64_t seed = kSimulationSeed;
  // A recorded trace instead of drawn arrivals and lengths: this replica
  // takes the requests a round-robin share `trace_share` (1/replicas) gives
  // it, at most `requests` of them, with their recorded times and lengths.
  std::shared_ptr<const RequestTrace> trace;
  double trace_share = 1;
  double extra_output_tokens = 0;  // hidden reasoning tokens added to each recorded output
};

// The requests of a trace one replica takes at share s (0 < s <= 1): request
// i when floor((i + 1) s) > floor(i s), every 1/s-th for s = 1/replicas.
std::vector<TraceRequest> trace_share_of(const RequestTrace& t, double share, int most);
// A replica's share (trace_share_of) of fewer than this many requests is
// replayed until it holds them: the trace taken as one period of a steady
// load, since a window that ends before a queue builds says nothing of one.
inline constexpr size_t kLeastReplayedTraceRequests = 500;
// The requests one replica simulates from a trace: its share, replayed whole
// (each replay shifted by the share's span and one mean gap) up to at least
// kLeastReplayedTraceRequests, at most `most`; a share of one request, or
// of requests all at one instant, is not replayed.
std::vector<TraceRequest> replica_trace(const RequestTrace& t, double share, int most);

// An open loop's window spans this many request latencies (Little's law's
// sequences in flight build up within about one; the rest is steady state).
inline constexpr double kSteadyStateLatencies = 4;
// Open-loop requests for a window of kSteadyStateLatencies request latencies
// at the rate: at least kDefaultSimulatedRequests, at most kMaxTraceReplicaRequests.
int steady_state_requests(double requests_per_second, double request_latency_s);

// The load the workload describes on one replica: its clients (closed loop),
// or `requests_per_second_per_replica` (open loop); empty with neither. With
// the replica's analytic request latency, an open loop without
// --simulated-requests runs steady_state_requests.
std::optional<ServingLoad> serving_load(const InferenceWorkload& w, std::optional<double> requests_per_second_per_replica,
                                        std::optional<double> request_latency_s = std::nullopt);

// The engine's limits on this replica: its sequence limit (or --concurrency,
// or a Neuron graph's compiled batch), its token budget per step, and the KV
// blocks left after the weights, workspace and reserve.
EngineLimits engine_limits(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e);

struct SimulatedService {
  EngineLimits limits;
  ServingLoad load;
  ServiceMetrics metrics;
};

// `e` is an estimate of this layout that fits (estimate_inference): its
// memory and precision. Best-of-N samples and verifiers are not simulated.
// `stop_at_miss`: stop once the workload's targets are certainly missed at
// its --slo-percentile (EarlyStop); such a run's metrics hold only
// `stopped_early` and the requests: sizing asks no more of it.
SimulatedService simulate_service(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e,
                                  const ServingLoad& load, bool stop_at_miss = false);

}  // namespace gpuadvisor
