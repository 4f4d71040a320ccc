// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
#include "gpuadvisor/search/disaggregated.hpp"

#include <algorithm>
#include <cmath>

#include "gpuadvisor/catalog/pricing.hpp"
#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/search/inference_search.hpp"

namespace gpuadvisor {

namespace {

// One layout tried for either pool: its estimate (memory, prefill times) and
// its replicas per instance.
struct PoolCandidate {
  ServingLayout layout;
  InferenceEstimate estimate;
  int replicas_per_instance = 1;
};

std::vector<PoolCandidate> pool_candidates(const ModelSpec& m, const InferenceWorkload& w, const Instance& inst, const Accelerator& acc) {
  std::vector<PoolCandidate> out;
  const Cluster c{&inst, &acc, 1};
  const EngineProfile& engine = engine_for(acc, w.engine);
  for (int tp : tensor_parallel_sizes(m, inst, acc, 1)) {
    std::vector<ServingLayout> layouts{ServingLayout{tp, 1}};
    for (const ServingLayout& l : expert_parallel_layouts(m, engine, acc, tp)) layouts.push_back(l);
    for (const ServingLayout& l : layouts) {
      if (serving_layout_problem(m, c, l) || serving_engine_layout_problem(engine, l)) continue;
      InferenceEstimate e = estimate_inference(m, w, c, l, 1, nullptr);
      if (e.fits()) out.push_back({l, e, inst.accelerator_count / tp});
    }
  }
  return out;
}

// Decode time per generated token at `batch`, no prefill in the step.
double decode_tpot_s(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, InferenceEstimate& e, int batch) {
  evaluate_batch(m, w, c, e, batch);
  return e.step.total_s() / w.tokens_per_decode_step();
}

// The largest batch whose decode-only step meets the TPOT target (memory's
// largest without one); 0 when even one sequence misses it.
int decode_batch(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, InferenceEstimate& e) {
  auto meets = [&](int b) { return !w.max_tpot_s || decode_tpot_s(m, w, c, e, b) <= *w.max_tpot_s; };
  if (!meets(1)) return 0;
  int lo = 1, hi = e.max_batch;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (meets(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The mean prompt's KV cache, every layer, over the instance's network (the
// whole instance's EFA share): the transfer between the pools.
double kv_transfer_s(const ModelSpec& m, const InferenceWorkload& w, const Instance& inst, const Accelerator& acc) {
  const EngineProfile& engine = engine_for(acc, w.engine);
  const double tokens = kv_cached_tokens(m, engine, w.computed_prompt_tokens(w.prompt_tokens));
  const double bytes = tokens * kv_cache_bytes_per_token(m, serving_kv_cache(acc, engine, w), 1);
  return bytes / (inter_node_gb_per_s(inst, acc, inst.accelerator_count) * 1e9);
}

// A pool for `load` requests/s at `utilisation` of its replicas' capacity, in
// whole instances (every replica slot of them deployed).
DisaggregatedPool size_pool(const ServingLayout& l, double load, double per_replica, int replicas_per_instance, double utilisation) {
  DisaggregatedPool p;
  p.layout = l;
  p.requests_per_second_per_replica = per_replica;
  const int needed = static_cast<int>(replicas_for_load(load, per_replica, utilisation));
  p.instances = (needed + replicas_per_instance - 1) / replicas_per_instance;
  p.replicas = p.instances * replicas_per_instance;
  return p;
}

}  // namespace

std::optional<DisaggregatedService> disaggregated_service(const ModelSpec& m, const InferenceWorkload& w, const Instance& inst,
                                                          const Accelerator& acc, const RecommendRequest& r) {
  // One generated token per request leaves no decode to put on a pool of its own.
  if (!w.requests_per_second || !inst.efa_supported || w.verifier || w.one_token_outputs()) return std::nullopt;
  const Cluster c{&inst, &acc, 1};
  const double transfer_s = kv_transfer_s(m, w, inst, acc);
  const double load = *w.requests_per_second;
  std::optional<DisaggregatedService> out;
  std::vector<PoolCandidate> candidates = pool_candidates(m, w, inst, acc);
  // Decode: the most requests/s an instance finishes within the TPOT target.
  const PoolCandidate* best_decode = nullptr;
  double decode_per_instance = 0, decode_step_s = 0;
  int best_batch = 0;
  for (PoolCandidate& d : candidates) {
    const int b = decode_batch(m, w, c, d.estimate);
    if (b < 1) continue;
    const double tpot = decode_tpot_s(m, w, c, d.estimate, b);
    const double per_replica = b / (w.samples * w.generated_tokens_per_sequence() * tpot);
    if (per_replica * d.replicas_per_instance > decode_per_instance) {
      decode_per_instance = per_replica * d.replicas_per_instance;
      best_decode = &d;
      best_batch = b;
      decode_step_s = tpot;
    }
  }
  if (!best_decode) return std::nullopt;
  // Prefill: the most prompts/s an instance prefills within the TTFT target
  // (its p95 prompt alone, the transfer and the first decode step).
  for (const PoolCandidate& p : candidates) {
    const double ttft_p95 = p.estimate.prefill_p95_s + transfer_s + decode_step_s;
    if (w.max_ttft_s && ttft_p95 > *w.max_ttft_s) continue;
    const double per_replica = 1 / p.estimate.prefill_gpu_s_per_request;
    DisaggregatedService s;
    s.instance = &inst;
    s.accelerator = &acc;
    s.prefill = size_pool(p.layout, load, per_replica, p.replicas_per_instance, w.target_utilisation);
    s.decode = size_pool(best_decode->layout, load, decode_per_instance / best_decode->replicas_per_instance, best_decode->replicas_per_instance,
                         w.target_utilisation);
    s.decode_batch = best_batch;
    s.kv_transfer_s = transfer_s;
    s.ttft_s = p.estimate.prefill_s + transfer_s + decode_step_s;
    s.tpot_s = decode_step_s;
    if (s.instances() > r.max_instances) continue;
    if (const auto rate = hourly_rate(inst, r.region, r.pricing)) s.usd_per_hour = *rate * s.instances();
    if (!out || s.instances() < out->instances()) out = s;
  }
  return out;
}

}  // namespace gpuadvisor
