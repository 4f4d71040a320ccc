// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
// What a simulated replica's users saw (docs/methodology.md §Serving under
// load): per-request latencies and their percentiles, throughput, goodput
// under the targets, and how full the batch and the KV cache ran.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "gpuadvisor/serving/scheduler.hpp"

namespace gpuadvisor {

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;
  // The percentile a target binds at: 50, 90, 99, or 0 for the mean.
  double at(int percentile) const;
};
Percentiles percentiles_of(std::vector<double> v);

struct ServiceMetrics {
  int requests = 0, completed = 0, rejected = 0;
  int unfinished = 0;  // not finished when a run was cut short: left out, and the run saturated
  Percentiles ttft_s;   // arrival to first token
  Percentiles tpot_s;   // per request: (last token - first token) / (tokens - 1)
  Percentiles e2e_s;    // arrival to last token
  Percentiles queue_s;  // arrival to first scheduled
  // Reasoning services only: arrival to the first visible token, after the
  // hidden ones: TTFT + hidden tokens x the request's own time per token.
  std::optional<Percentiles> first_visible_s;
  double duration_s = 0;              // first arrival to last completion
  double requests_per_second = 0;     // completed / duration
  double output_tokens_per_second = 0;
  double goodput_requests_per_second = 0;  // completed within both targets, per second
  double mean_sequences = 0;          // in flight, over busy time
  double kv_utilisation = 0;          // blocks in use / blocks, over busy time
  double busy_share = 0;              // busy time / duration
  int preemptions = 0;
  int64_t steps = 0;
  // Open loop: the queue still growing at the end (the last quarter of
  // arrivals waits longer than the median request takes to serve once
  // admitted, and over a second): the load is above
  // what the replica sustains.
  bool saturated = false;
  // The run stopped once the targets were certainly missed (sizing's
  // EarlyStop): nothing but `requests` is filled in.
  bool stopped_early = false;
};

ServiceMetrics service_metrics(const std::vector<SimRequest>& requests, const SchedulerTotals& totals, const EngineLimits& limits,
                               bool open_loop, std::optional<double> max_ttft_s, std::optional<double> max_tpot_s,
                               double hidden_tokens = 0);

}  // namespace gpuadvisor
