// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
#include "gpuadvisor/serving/metrics.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "gpuadvisor/base/statistics.hpp"

namespace gpuadvisor {

double Percentiles::at(int percentile) const {
  switch (percentile) {
    case 50: return p50;
    case 90: return p90;
    case 99: return p99;
    default: return mean;
  }
}

Percentiles percentiles_of(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  p.mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  const std::vector<double> q = percentiles_by_selection(v, {0.5, 0.9, 0.99});
  p.p50 = q[0];
  p.p90 = q[1];
  p.p99 = q[2];
  return p;
}

namespace {

double mean_of(const std::vector<double>& v) { return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }

// The mean wait of the arrivals in [from, to) of the list (arrival order).
double mean_wait(const std::vector<SimRequest>& requests, size_t from, size_t to) {
  std::vector<double> waits;
  for (size_t i = from; i < to; ++i)
    if (!requests[i].rejected) waits.push_back(requests[i].scheduled_s - requests[i].arrival_s);
  return mean_of(waits);
}

// A queue that grows: the last quarter of arrivals waits longer than the median
// request takes once admitted (and over a second), and longer than the second
// quarter waited by kGrowingWaitRatio. A queue growing steadily from empty
// gives 0.875 / 0.375 = 2.3; a stable one about 1 whatever its length, so a
// stable single-server queue at 70% load (waits of 1.2 service times) is not
// called saturated, as the first rule alone called it.
constexpr double kGrowingWaitRatio = 1.5;
bool queue_growing(const std::vector<SimRequest>& requests, double median_service_s) {
  const size_t n = requests.size();
  const double tail = mean_wait(requests, n * 3 / 4, n);
  return tail > std::max(1.0, median_service_s) && tail > kGrowingWaitRatio * mean_wait(requests, n / 4, n / 2);
}

}  // namespace

ServiceMetrics service_metrics(const std::vector<SimRequest>& requests, const SchedulerTotals& totals, const EngineLimits& limits,
                               bool open_loop, std::optional<double> max_ttft_s, std::optional<double> max_tpot_s, double hidden_tokens) {
  ServiceMetrics out;
  out.requests = static_cast<int>(requests.size());
  std::vector<double> ttft, tpot, e2e, queue, service, first_visible;
  double first = 1e300, last = 0, tokens = 0;
  int good = 0;
  for (const SimRequest& r : requests) {
    if (r.rejected) {
      ++out.rejected;
      continue;
    }
    if (r.finish_s < 0) {
      ++out.unfinished;  // a run cut short (kMaxSchedulerRounds)
      continue;
    }
    ++out.completed;
    first = std::min(first, r.arrival_s);
    last = std::max(last, r.finish_s);
    tokens += r.output_tokens;
    ttft.push_back(r.first_token_s - r.arrival_s);
    e2e.push_back(r.finish_s - r.arrival_s);
    queue.push_back(r.scheduled_s - r.arrival_s);
    service.push_back(r.finish_s - r.scheduled_s);
    const double per_token = r.output_tokens > 1 ? (r.finish_s - r.first_token_s) / (r.output_tokens - 1) : 0;
    if (r.output_tokens > 1) tpot.push_back(per_token);
    if (hidden_tokens > 0) first_visible.push_back(ttft.back() + std::min<double>(hidden_tokens, r.output_tokens - 1) * per_token);
    if ((!max_ttft_s || ttft.back() <= *max_ttft_s) && (!max_tpot_s || per_token <= *max_tpot_s)) ++good;
  }
  out.ttft_s = percentiles_of(std::move(ttft));
  out.tpot_s = percentiles_of(std::move(tpot));
  out.e2e_s = percentiles_of(std::move(e2e));
  out.queue_s = percentiles_of(std::move(queue));
  if (hidden_tokens > 0) out.first_visible_s = percentiles_of(std::move(first_visible));
  out.duration_s = out.completed ? last - first : 0;
  if (out.duration_s > 0) {
    out.requests_per_second = out.completed / out.duration_s;
    out.output_tokens_per_second = tokens / out.duration_s;
    out.goodput_requests_per_second = good / out.duration_s;
    out.busy_share = totals.busy_s / out.duration_s;
  }
  if (totals.busy_s > 0) {
    out.mean_sequences = totals.sequence_seconds / totals.busy_s;
    out.kv_utilisation = limits.kv_blocks > 0 ? totals.block_seconds / totals.busy_s / limits.kv_blocks : 0;
  }
  out.preemptions = totals.preemptions;
  out.steps = totals.steps;
  out.saturated = out.unfinished > 0 || (open_loop && out.completed > 0 && queue_growing(requests, percentiles_by_selection(service, {0.5})[0]));
  return out;
}

}  // namespace gpuadvisor
