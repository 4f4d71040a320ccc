// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
#include "gpuadvisor/search/replicas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/serving/simulate.hpp"

namespace gpuadvisor {

bool sized_by_simulation(const InferenceWorkload& w) { return w.sizes_replicas_by_simulation(); }

bool meets_targets(const ServiceMetrics& s, const InferenceWorkload& w) {
  const int p = w.slo_percentile;
  return !s.stopped_early && s.completed > 0 && !s.saturated && s.rejected == 0 && (!w.max_ttft_s || s.ttft_s.at(p) <= *w.max_ttft_s) &&
         (!w.max_tpot_s || s.tpot_s.at(p) <= *w.max_tpot_s);
}

const ServiceMetrics& ReplicaSimulations::at(const ModelSpec& m, const InferenceWorkload& w, const ServingRow& row, int replicas) {
  const ServingLayout& l = row.estimate.layout;
  const double rate = *w.requests_per_second / replicas;
  const auto key = std::tuple<const void*, int, int, int, int, const void*, double>(row.accelerator, l.tp, l.pp, l.ep, l.attention_dp,
                                                                                    l.pp > 1 ? row.instance : nullptr, rate);
  if (auto it = done_.find(key); it != done_.end()) return it->second;
  ++runs_;
  const Cluster c{row.instance, row.accelerator, l.pp};
  return done_.emplace(key, simulate_service(m, w, c, row.estimate, *serving_load(w, rate, row.estimate.latency_s), true).metrics).first->second;
}

ServiceMetrics ReplicaSimulations::whole(const ModelSpec& m, const InferenceWorkload& w, const ServingRow& row, int replicas) {
  const ServiceMetrics& s = at(m, w, row, replicas);
  if (!s.stopped_early) return s;
  const Cluster c{row.instance, row.accelerator, row.estimate.layout.pp};
  return simulate_service(m, w, c, row.estimate, *serving_load(w, *w.requests_per_second / replicas, row.estimate.latency_s)).metrics;
}

void ReplicaSimulations::absorb(ReplicaSimulations&& other) {
  done_.merge(other.done_);
  runs_ += other.runs_;
}

namespace {

// Where the typical simulated request (p50) already takes
// kUnloadedShareOfTarget of a target or more, what it takes of which: then
// only idle replicas keep the percentile within it. Empty where it does not.
std::string typical_request_near_target(const ServiceMetrics& s, const InferenceWorkload& w) {
  if (w.max_ttft_s && s.ttft_s.p50 >= kUnloadedShareOfTarget * *w.max_ttft_s)
    return fmt::format("its typical request takes {} of the {} to the first token", format_latency(s.ttft_s.p50), format_latency(*w.max_ttft_s));
  if (w.max_tpot_s && s.tpot_s.p50 >= kUnloadedShareOfTarget * *w.max_tpot_s)
    return fmt::format("its typical request takes {} of the {} per output token", format_latency(s.tpot_s.p50), format_latency(*w.max_tpot_s));
  return "";
}

}  // namespace

std::vector<std::string> simulated_target_misses(const ServiceMetrics& s, const InferenceWorkload& w) {
  const std::string at = w.slo_percentile ? fmt::format("p{}", w.slo_percentile) : "mean";
  std::vector<std::string> misses;
  if (w.max_ttft_s && s.ttft_s.at(w.slo_percentile) > *w.max_ttft_s)
    misses.push_back(fmt::format("the simulated {} time to first token is {} (target {})", at, format_latency_against(s.ttft_s.at(w.slo_percentile), *w.max_ttft_s), format_latency(*w.max_ttft_s)));
  if (w.max_tpot_s && s.tpot_s.at(w.slo_percentile) > *w.max_tpot_s)
    misses.push_back(fmt::format("the simulated {} time per output token is {} (target {})", at, format_latency_against(s.tpot_s.at(w.slo_percentile), *w.max_tpot_s), format_latency(*w.max_tpot_s)));
  return misses;
}

std::vector<std::string> simulated_service_misses(const ServiceMetrics& s, const InferenceWorkload& w) {
  std::vector<std::string> misses = simulated_target_misses(s, w);
  if (s.saturated) misses.push_back("the queue keeps growing");
  if (s.rejected > 0) misses.push_back(fmt::format("{} requests do not fit the KV cache", s.rejected));
  return misses;
}

namespace {

// What the simulated users at `replicas` missed, for the rejection.
std::string miss_text(const ServiceMetrics& s, const InferenceWorkload& w, int replicas, bool limited) {
  const std::string where = limited ? fmt::format("even with {} replica{} (the most the instance limit allows)", replicas, replicas > 1 ? "s" : "")
                                    : fmt::format("even with {} replica{}", replicas, replicas > 1 ? "s" : "");
  const std::vector<std::string> misses = simulated_service_misses(s, w);
  return fmt::format("{}, {}", where, misses.empty() ? std::string("the targets are missed") : fmt::format("{}", fmt::join(misses, " and ")));
}

// What one replica serves at all: its throughput at the largest batch memory
// holds (a simulated window of requests that ends before a queue builds
// cannot say otherwise).
double most_requests_per_second(const ServingRow& row, const ModelSpec& m, const InferenceWorkload& w) {
  InferenceEstimate full = row.estimate;
  evaluate_batch(m, w, Cluster{row.instance, row.accelerator, row.estimate.layout.pp}, full,
                 std::min(full.max_batch, router_batch_cap(*full.engine, *row.accelerator, w)));
  return full.requests_per_second;
}

// The server's own wait for new requests, where the workload sets one: a
// prompt arriving while another decodes waits for it even at the lightest
// load. What the miss includes, and the setting that shortens it.
struct ServerHold {
  std::string included, remedy;
};
ServerHold server_hold(const InferenceWorkload& w, const ServingLayout& l, const EngineProfile& engine) {
  if (const int steps = router_hold_steps(engine, w); steps > 1)
    return {fmt::format(", TGI's router hold included: a prompt arriving while two or more sequences decode waits up to {} decode steps", steps),
            " a smaller --max-waiting-tokens,"};
  if (w.scheduler_recv_interval > 1)
    return {fmt::format(", SGLang's wait of up to {} decode steps for its next look included", w.scheduler_recv_interval),
            " a smaller --scheduler-recv-interval,"};
  if (w.attention_dp_balance_iters && l.attention_dp > 1)
    return {fmt::format(", TensorRT-LLM's hold of up to {} iterations for its ranks to balance included", *w.attention_dp_balance_iters),
            " a smaller --attention-dp-balance,"};
  return {};
}

// Replicas that take a request: a trace of n requests keeps at most n busy.
int busy_replicas(const InferenceWorkload& w, int replicas) {
  if (!w.trace) return replicas;
  return std::max(1, std::min(replicas, static_cast<int>(w.trace->requests.size())));
}

}  // namespace

// The analytic count at the default utilisation is the first guess; from
// there steps of 10%, 20%, 40% ... of it up (or down) to a count that meets
// (misses) the targets, then bisection to within 2% of the count: the
// simulation's own error is several times that (each count one simulation,
// cached).
std::string size_by_simulation(ServingRow& row, const ModelSpec& m, const InferenceWorkload& w, int max_instances, ReplicaSimulations& sims) {
  const ServingLayout& l = row.estimate.layout;
  const int slots = l.pp == 1 ? row.instance->accelerator_count / l.tp : 1;  // replicas per instance
  const int span = l.pp;                                                     // instances per replica
  const double lambda = *w.requests_per_second, capacity = row.estimate.requests_per_second;
  const int most = std::max(1, std::min(kMaxSimulatedReplicas, max_instances / span * slots));
  auto replicas_at = [&](double utilisation) {
    return static_cast<int>(std::min(replicas_for_load(lambda, capacity, utilisation), static_cast<double>(most)));
  };
  // No more load on a replica than it can serve at all, nor than a
  // --target-utilisation cap allows, where one is given.
  const double most_rps = most_requests_per_second(row, m, w);
  if (const double needed = std::ceil(lambda / most_rps - 1e-9); needed > most)
    return fmt::format("the load needs at least {:.0f} replicas even at the largest batch memory holds ({:.3g} requests/s each), more than "
                       "{}",
                       needed, most_rps,
                       most == kMaxSimulatedReplicas ? fmt::format("the {} replicas the search simulates at most", most)
                                                     : fmt::format("the {} replica{} that {} instances hold (--max-instances)", most,
                                                                   most > 1 ? "s" : "", max_instances));
  // Beyond the simulation's own cap (not an instance limit): the analytic count, unsimulated, is all there is.
  if (const double analytic = replicas_for_load(lambda, capacity, kDefaultTargetUtilisation); most == kMaxSimulatedReplicas && analytic > most)
    return fmt::format("the load needs about {:.0f} replicas at {:.0f}% utilisation (analytic), more than the {} replicas the search "
                       "simulates at most",
                       analytic, kDefaultTargetUtilisation * 100, most);
  const int floor = std::max(w.target_utilisation_given ? replicas_at(w.target_utilisation) : 1, replicas_at(most_rps / capacity));
  auto ok = [&](int r) { return meets_targets(sims.at(m, w, row, r), w); };
  auto step = [](int guess, int k) { return std::max(1, static_cast<int>(std::lround(guess * 0.1 * (1 << k)))); };
  const int guess = std::max(floor, replicas_at(kDefaultTargetUtilisation));
  int lo = floor - 1, hi = guess;  // lo misses (or is below the floor), hi meets
  if (ok(guess)) {
    for (int k = 0; hi - 1 > lo; ++k) {
      const int r = std::max(lo + 1, guess - step(guess, k));
      if (!ok(r)) {
        lo = r;
        break;
      }
      hi = r;
    }
  } else {
    // The lightest load first: where even the most replicas miss, no count
    // meets the targets. A trace leaves a replica beyond its requests nothing
    // to serve: its lightest load is one request per replica.
    const int lightest = w.trace ? std::max(guess, std::min(most, static_cast<int>(w.trace->requests.size()))) : most;
    if (guess == lightest || !ok(lightest)) return miss_text(sims.whole(m, w, row, lightest), w, lightest, lightest == most);
    lo = guess;
    hi = lightest;
    for (int k = 0;; ++k) {
      const int r = std::min(lightest, guess + step(guess, k));
      if (r >= lightest) break;
      if (ok(r)) {
        hi = r;
        break;
      }
      lo = r;
    }
  }
  while (hi - lo > std::max(1, hi / 50)) {
    const int mid = lo + (hi - lo) / 2;
    (ok(mid) ? hi : lo) = mid;
  }
  row.instances = (hi + slots - 1) / slots * span;
  // The bisection stops within 2% of the count: whole instances fewer that
  // still meet the targets, above the floor, are taken.
  while (row.instances > span) {
    const int fewer = (row.instances - span) / span * slots;
    if (fewer < floor || !ok(fewer)) break;
    row.instances -= span;
  }
  row.replicas = row.instances / span * slots;
  // At a high percentile a count above one that meets can miss by the
  // draw's noise: the deployed count must meet too, else one instance more.
  for (int more = 0; more < 4 && !ok(row.replicas) && row.replicas + slots <= most; ++more) {
    row.instances += span;
    row.replicas += slots;
  }
  row.utilisation = lambda / (row.replicas * capacity);
  // A layout that meets the targets only nearly idle, spread over many
  // instances, is not a service anyone runs: its unloaded latency is at the
  // target, and a faster layout or a looser target serves the load.
  const ServiceMetrics deployed = sims.whole(m, w, row, row.replicas);
  // Over all the time, idle included; a speculative sequence counts for the
  // tokens it emits a step (it finishes sooner on the same work).
  const double in_flight = deployed.busy_share * deployed.mean_sequences * w.tokens_per_decode_step();
  // Under a --concurrency of a few, one request in flight is most of what a
  // replica may hold: there the bar is a tenth of it.
  const double least_in_flight = std::min(kLeastSequencesInFlight, w.concurrency ? 0.1 * *w.concurrency : kLeastSequencesInFlight);
  if (const std::string near = typical_request_near_target(deployed, w); row.instances > span && in_flight < least_in_flight && !near.empty()) {
    const std::string at = w.slo_percentile ? fmt::format("p{}", w.slo_percentile) : "mean";
    const ServerHold hold = server_hold(w, row.estimate.layout, *row.estimate.engine);
    return fmt::format("meets the {} targets only nearly idle: {} replicas, each with {:.2f} requests in flight on average ({} at the "
                       "median{}; a faster layout,{} or a looser --max-ttft/--max-tpot or --slo-percentile, serves this load)",
                       at, row.replicas, in_flight, near, hold.included, hold.remedy);
  }
  // A whole run: the deployed count (whole instances) may be above the count
  // found, and at a high percentile one more replica can still miss by noise.
  // A trace shorter than the deployed replicas leaves some without a
  // request: the figures are a busy replica's (one request each), never an
  // idle one's zeros.
  row.simulated = sims.whole(m, w, row, busy_replicas(w, row.replicas));
  row.slo_percentile = w.slo_percentile;
  return "";
}

std::string sizing_note(const ServingRow& row, const ModelSpec& m, const InferenceWorkload& w, ReplicaSimulations& sims) {
  if (!row.simulated) return "";
  const ServingLayout& l = row.estimate.layout;
  const int slots = l.pp == 1 ? row.instance->accelerator_count / l.tp : 1;
  const std::string at = w.slo_percentile ? fmt::format("p{}", w.slo_percentile) : "mean";
  std::vector<std::string> targets;
  if (w.max_ttft_s) targets.push_back(fmt::format("{} TTFT", format_latency(*w.max_ttft_s)));
  if (w.max_tpot_s) targets.push_back(fmt::format("{} TPOT", format_latency(*w.max_tpot_s)));
  std::string out = fmt::format("{} replica{}: the fewest whose simulated {} meets {} at {:.3g} requests/s (--slo-percentile)", row.replicas,
                                row.replicas > 1 ? "s" : "", at, fmt::join(targets, " and "), *w.requests_per_second);
  if (w.trace) {
    const size_t taken = trace_share_of(*w.trace, 1.0 / row.replicas, kMaxTraceReplicaRequests).size();
    if (taken < kFewTraceRequests)
      out += fmt::format("; the trace gives each replica only {} request{}, replayed as one period of a steady load (a window that "
                         "short forms no steady queue): a longer trace sizes it better", taken, taken == 1 ? "" : "s");
  }
  const int fewer = row.replicas - slots;
  if (fewer < 1) return out;
  const double capacity = row.estimate.requests_per_second;
  if (const double most_rps = most_requests_per_second(row, m, w); *w.requests_per_second / fewer > most_rps)
    return out + fmt::format("; one instance fewer ({} replica{}) would offer each {:.3g} requests/s, more than the {:.3g} one replica serves "
                             "at the largest batch memory holds",
                             fewer, fewer > 1 ? "s" : "", *w.requests_per_second / fewer, most_rps);
  if (w.target_utilisation_given && *w.requests_per_second / fewer > capacity * w.target_utilisation)
    return out + fmt::format("; one instance fewer ({} replica{}) would run each past {:.0f}% (--target-utilisation) of the {:.3g} requests/s "
                             "one replica serves at its largest batch within the targets",
                             fewer, fewer > 1 ? "s" : "", w.target_utilisation * 100, capacity);
  const ServiceMetrics s = sims.whole(m, w, row, fewer);
  std::vector<std::string> seen;
  if (w.max_ttft_s) seen.push_back(fmt::format("TTFT {}", format_latency_against(s.ttft_s.at(w.slo_percentile), *w.max_ttft_s)));
  if (w.max_tpot_s) seen.push_back(fmt::format("TPOT {}", format_latency_against(s.tpot_s.at(w.slo_percentile), *w.max_tpot_s)));
  return out + fmt::format("; one instance fewer ({} replica{}): {} {}{}", fewer, fewer > 1 ? "s" : "", at, fmt::join(seen, ", "),
                           s.saturated ? ", the queue growing" : "");
}

}  // namespace gpuadvisor
