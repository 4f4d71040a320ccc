// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
#include "gpuadvisor/serving/simulate.hpp"

#include <algorithm>
#include <cmath>

#include "gpuadvisor/serving/kv_blocks.hpp"

namespace gpuadvisor {

int steady_state_requests(double requests_per_second, double request_latency_s) {
  const double needed = std::ceil(requests_per_second * kSteadyStateLatencies * request_latency_s);
  return static_cast<int>(std::clamp<double>(needed, kDefaultSimulatedRequests, kMaxTraceReplicaRequests));
}

std::optional<ServingLoad> serving_load(const InferenceWorkload& w, std::optional<double> requests_per_second_per_replica,
                                        std::optional<double> request_latency_s) {
  ServingLoad load;
  if (w.clients) {
    load.arrivals.closed_loop = true;
    load.arrivals.clients = *w.clients;
    load.requests = std::max(kDefaultSimulatedRequests, kClosedLoopRounds * *w.clients);
  } else if (requests_per_second_per_replica) {
    load.arrivals.requests_per_second = *requests_per_second_per_replica;
    load.arrivals.gap_cv = replica_gap_cv(w.arrival_cv, w.requests_per_second ? *w.requests_per_second / *requests_per_second_per_replica : 1);
    if (request_latency_s) load.requests = steady_state_requests(*requests_per_second_per_replica, *request_latency_s);
  } else {
    return std::nullopt;
  }
  if (w.simulated_requests > 0) load.requests = w.simulated_requests;
  if (w.trace) {
    load.trace = w.trace;
    load.trace_share = std::clamp(*requests_per_second_per_replica / *w.requests_per_second, 1e-9, 1.0);
    load.extra_output_tokens = w.reasoning_tokens;
    load.requests = static_cast<int>(replica_trace(*w.trace, load.trace_share, w.simulated_requests > 0 ? w.simulated_requests : kMaxTraceReplicaRequests).size());
  }
  load.prompt = length_distribution(w.prompt_tokens, w.prompt_tokens_p95, w.length_spread);
  // A one-token service (no TPOT to bind, one_token_outputs) keeps one-token
  // outputs under a spread: rounded, 1 x (1 +- S) would make some two.
  load.output = length_distribution(w.generated_tokens_per_sequence(), w.output_tokens_p95 + w.reasoning_tokens,
                                    w.one_token_outputs() ? 0.0 : w.length_spread);
  return load;
}

EngineLimits engine_limits(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e) {
  const Accelerator& acc = *c.accelerator;
  const EngineProfile& engine = *e.engine;
  EngineLimits l;
  l.max_sequences = replica_sequence_cap(engine, acc, w, e.layout);
  l.token_budget = replica_step_tokens(engine, acc, w, e.layout);
  l.chunked = engine.prefill == PrefillScheduling::chunked;
  l.prefill_pauses_decode = l.chunked && engine.prefill_pauses_decode;
  l.continuous = engine.continuous_batching;
  l.reserves_full_kv = engine.reserves_full_kv;
  l.shared_prefix_tokens = w.prefix_tokens();
  l.tokens_per_decode_step = w.tokens_per_decode_step();
  l.decode_lookahead = w.decode_queries_per_sequence();
  l.receive_every_steps = w.scheduler_recv_interval;
  if (w.attention_dp_balance_iters && e.layout.attention_dp > 1) {
    l.receive_every_steps = *w.attention_dp_balance_iters;
    l.release_when_waiting = e.layout.attention_dp;
  }
  // TGI's router holds prompts while a batch decodes (its max_waiting_tokens
  // and waiting_served_ratio); engines that chunk their prefills have none.
  if (!l.chunked && l.continuous && router_hold_steps(engine, w) > 0) {
    l.join_ratio = engine.waiting_served_ratio;
    l.join_after_steps = router_hold_steps(engine, w);
  }
  const auto& mem = e.memory;
  const double free_gb = std::max(0.0, mem.capacity_gb - mem.weights_gb - mem.workspace_gb - mem.reserve_gb - mem.resident_gb);
  const double gb_per_token = kv_gb_per_token_averaged(m, e.precision.kv_cache, e.layout);
  l.kv_blocks = static_cast<int64_t>(std::floor(free_gb / gb_per_token / kKvBlockTokens));
  return l;
}

namespace {

std::vector<SimRequest> trace_requests(const ServingLoad& load) {
  const std::vector<TraceRequest> taken = replica_trace(*load.trace, load.trace_share, load.requests);
  std::vector<SimRequest> out(taken.size());
  for (size_t i = 0; i < taken.size(); ++i) {
    out[i].arrival_s = taken[i].arrival_s - taken.front().arrival_s;
    out[i].prompt_tokens = taken[i].prompt_tokens;
    out[i].output_tokens = static_cast<int>(std::min(1e7, taken[i].output_tokens + load.extra_output_tokens));
  }
  return out;
}

std::vector<SimRequest> draw_requests(const ServingLoad& load) {
  if (load.trace) return trace_requests(load);
  Random random(load.seed);
  std::vector<SimRequest> out(load.requests);
  for (SimRequest& r : out) {
    r.prompt_tokens = load.prompt.draw(random);
    r.output_tokens = load.output.draw(random);
  }
  if (!load.arrivals.closed_loop) {
    const std::vector<double> at = open_loop_arrivals(load.arrivals, load.requests, random);
    for (size_t i = 0; i < out.size(); ++i) out[i].arrival_s = at[i];
  }
  return out;
}

}  // namespace

std::vector<TraceRequest> trace_share_of(const RequestTrace& t, double share, int most) {
  std::vector<TraceRequest> out;
  for (size_t i = 0; i < t.requests.size() && static_cast<int>(out.size()) < most; ++i)
    if (std::floor((i + 1) * share + 1e-9) > std::floor(i * share + 1e-9)) out.push_back(t.requests[i]);
  return out;
}

std::vector<TraceRequest> replica_trace(const RequestTrace& t, double share, int most) {
  const std::vector<TraceRequest> once = trace_share_of(t, share, most);
  const double span = once.size() > 1 ? once.back().arrival_s - once.front().arrival_s : 0;
  if (once.size() >= kLeastReplayedTraceRequests || span <= 0) return once;
  const double period = span + span / (once.size() - 1);
  std::vector<TraceRequest> out;
  for (int replay = 0; out.size() < kLeastReplayedTraceRequests && static_cast<int>(out.size()) < most; ++replay)
    for (size_t i = 0; i < once.size() && static_cast<int>(out.size()) < most; ++i) {
      out.push_back(once[i]);
      out.back().arrival_s += replay * period;
    }
  return out;
}

SimulatedService simulate_service(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e,
                                  const ServingLoad& load, bool stop_at_miss) {
  SimulatedService s;
  s.load = load;
  s.limits = engine_limits(m, w, c, e);
  std::vector<SimRequest> requests = draw_requests(load);
  StepTimer timer(m, w, c, e);
  const EarlyStop stop = stop_at_miss ? early_stop_for(w.max_ttft_s, w.max_tpot_s, w.slo_percentile, load.requests) : EarlyStop{};
  const SchedulerTotals totals = run_engine(requests, load.arrivals, s.limits, timer, m, *e.engine, stop);
  if (totals.stopped_early) {
    s.metrics.requests = load.requests;
    s.metrics.stopped_early = true;
    return s;
  }
  s.metrics = service_metrics(requests, totals, s.limits, !load.arrivals.closed_loop, w.max_ttft_s, w.max_tpot_s, w.reasoning_tokens);
  return s;
}

}  // namespace gpuadvisor
