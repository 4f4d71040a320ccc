// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
// The serving search: for each instance type and tensor-parallel size, the
// batch that meets the latency targets, the replicas the load needs and the
// cost (docs/methodology.md §Inference search).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/search/disaggregated.hpp"
#include "gpuadvisor/search/search.hpp"
#include "gpuadvisor/serving/metrics.hpp"

namespace gpuadvisor {

struct ServingRow {
  const Instance* instance = nullptr;
  const Accelerator* accelerator = nullptr;
  InferenceEstimate estimate;     // at the largest batch that meets the targets: the replica's capacity
  // At the operating point: the batch the load keeps in flight (Little's law),
  // so TTFT and TPOT are what a user sees at this load (operating_point).
  InferenceEstimate at_load;
  int replicas = 0;               // deployed: one without a load, else enough at the target utilisation
  int instances = 0;
  double utilisation = 0;         // load / capacity of the deployed replicas (the target without a load)
  std::optional<double> on_demand_usd_per_hour;  // whole service
  std::optional<double> spot_usd_per_hour;
  std::optional<double> savings_1y_usd_per_hour;  // whole service, cheapest 1-year commitment (effective)
  std::optional<double> savings_3y_usd_per_hour;
  std::optional<double> ranked_usd_per_hour;     // under the requested pricing
  // The pricing that gave ranked_usd_per_hour: the requested one, or under
  // --pricing best the cheapest known of on demand and the commitments (a
  // standing service is not ranked on spot: a reclaim drops its requests).
  Pricing ranked_pricing = Pricing::on_demand;
  std::optional<double> usd_per_million_output_tokens;  // ranked pricing, per visible output token
  std::optional<double> usd_per_million_input_tokens;   // ranked pricing, the same bill per prompt token
  bool pareto = false;
  CapacityAdvice capacity;        // on-demand plausibility of the instance count
  // Sized by simulation (search/replicas.hpp): what the deployed replicas'
  // users see, each replica simulated at its share of the load, and the
  // percentile the targets bind at (0: the mean). Empty: sized analytically.
  std::optional<ServiceMetrics> simulated;
  int slo_percentile = 0;

  // What a user sees at the load: the simulated latency at the target's
  // percentile where simulated, else the analytic operating point's.
  double ttft_seen_s() const { return simulated ? simulated->ttft_s.at(slo_percentile) : at_load.ttft_s; }
  double tpot_seen_s() const { return simulated ? simulated->tpot_s.at(slo_percentile) : at_load.tpot_s; }
  // The mean at the load: simulated where simulated.
  double ttft_mean_s() const { return simulated ? simulated->ttft_s.mean : at_load.ttft_s; }
  double tpot_mean_s() const { return simulated ? simulated->tpot_s.mean : at_load.tpot_s; }
  double e2e_seen_s() const { return simulated ? simulated->e2e_s.at(slo_percentile) : at_load.latency_s; }
  // How fast the service is to its users, what "fastest" ranks by: the time
  // per output token, or for one-token outputs (a time per token of 0: no gap
  // between tokens) the request's whole latency.
  double pace_seen_s() const { return tpot_seen_s() > 0 ? tpot_seen_s() : e2e_seen_s(); }
  // Sequences in flight per replica at the load.
  double batch_seen() const { return simulated ? simulated->mean_sequences : at_load.batch; }
};

// Services that fit an instance count, at a price: costs for a given row.
struct ServingCost {
  std::optional<double> usd_per_hour, usd_per_month, usd_per_million_output_tokens, usd_per_million_input_tokens;
};
ServingCost serving_cost(const ServingRow& row, const InferenceWorkload& w, std::optional<double> instance_usd_per_hour);

struct ServingRecommendation {
  std::vector<ServingRow> rows;      // ranked: one per instance type (every tensor-parallel size with all_counts)
  size_t options_found = 0;
  // The recommended service and the alternatives (docs/methodology.md §The pick):
  // cost is the service per month, time the time per output token.
  std::optional<ServingRow> pick, cheapest, fastest;
  // Faster than `fastest` by more than kSoonerToNameFraction of its time per
  // token, at a price the catalog lacks (training's rule, objective.hpp).
  std::optional<ServingRow> fastest_unpriced;
  // The fastest within --max-cost-multiple of the cheapest, where `fastest`
  // costs more than that (else empty), named first as training's is.
  std::optional<ServingRow> fastest_within_cost_ceiling;
  std::string why;
  std::string sizing;  // the pick sized by simulation: why this many replicas (search/replicas.hpp sizing_note)
  std::vector<Rejection> rejections;
  std::vector<std::string> notes;  // e.g. a model pipelined over instances because it does not fit one
  // The lowest time per output token any option reaches at batch 1, for the
  // message when no option meets the targets.
  std::optional<double> best_batch1_tpot_s;
  std::string best_batch1_option;
  int best_batch1_ties = 0;  // options within 0.5% of it (itself included): a tie is not a "fastest"
  // The lowest time to first token at batch 1, for the same message when the
  // TTFT target is what no option meets.
  std::optional<double> best_batch1_ttft_s;
  std::string best_batch1_ttft_option;
  // With a load: the cheapest disaggregated service over the instance types
  // with a row (search/disaggregated.hpp), shown beside the pick, not ranked.
  std::optional<DisaggregatedService> disaggregated;
};

// An offline job without a volume (no --requests-per-second or
// --tokens-per-day) is billed for the time its tokens take: its options are
// weighed by $ per million output tokens, each instance with its replica slots
// filled, not by $ per month (docs/methodology.md §The pick).
bool priced_per_token(const InferenceWorkload& w);

// Replicas and instances for the load at the workload's target utilisation,
// or one replica without a load (docs/methodology.md §Replicas).
// The most replicas (and instances) a service is sized to: a load beyond
// what that many carry is refused by estimate, never priced overloaded.
inline constexpr double kMostServiceReplicas = 1e9;
// The utilisation formula, the one place it is written: replicas =
// ceil(load / (requests/s per replica x utilisation)), at least one however
// light the load (1e-7 requests/s still needs a server to answer it), uncapped.
double replicas_for_load(double load_requests_per_second, double requests_per_second_per_replica, double utilisation);
// Replicas the load needs at the target utilisation, uncapped (at least one).
double replicas_needed(const ServingRow& row, const InferenceWorkload& w);
void size_service(ServingRow& row, const InferenceWorkload& w);
// Fills row.at_load: in-flight sequences per replica b = λ_replica · samples ·
// latency(b), found by fixed-point iteration from the capacity batch down
// (docs/methodology.md §Replicas).
void operating_point(ServingRow& row, const ModelSpec& m, const InferenceWorkload& w);

// The MoE layouts tried beside plain tensor parallelism at a stage of `tp`
// accelerators (docs/methodology.md §MoE serving layouts): experts expert
// parallel over the stage with attention at TP tp ("TP8 EP8"), and with
// attention data parallel over every accelerator ("DP8 EP8", TensorRT-LLM's
// DEP8). None for dense models, engines without expert parallelism, Neuron,
// or where tp does not divide the experts.
std::vector<ServingLayout> expert_parallel_layouts(const ModelSpec& m, const EngineProfile& engine, const Accelerator& acc, int tp);

// Tensor-parallel sizes worth trying on one instance type: divisors of its
// accelerator count that divide the attention heads (any divisor where the
// stack pads heads); only the whole instance when pipelined (pp > 1).
std::vector<int> tensor_parallel_sizes(const ModelSpec& m, const Instance& inst, const Accelerator& acc, int pp = 1);

// One instance type's serving layout: with `tp`, that size; otherwise the size
// cheapest for the load (most capacity per instance without one) among those
// that meet the targets. When none meets them, the closest that fits in memory
// is returned with `problem` saying which targets it misses (estimate shows it
// and exits 3). The row is sized for the load.
struct ServingChoice {
  std::optional<ServingRow> row;
  std::string problem;  // why the returned row (or no row) misses
};
// The layout asked for: each part unset is searched (tp over the sizes that
// divide the instance, ep and attention_dp over expert_parallel_layouts).
struct LayoutRequest {
  std::optional<int> tp, ep, attention_dp;
};
ServingChoice choose_serving_layout(const ModelSpec& m, const InferenceWorkload& w, const Instance& inst, const Accelerator& acc, int pp,
                                    const LayoutRequest& asked, std::optional<int> batch);

// The workload as `acc`'s engine serves it: --prefix-share only where the
// engine caches prefixes (EngineProfile::prefix_cache), else whole prompts.
InferenceWorkload served_workload(const InferenceWorkload& w, const Accelerator& acc);
ServingRecommendation recommend_inference(const ModelSpec& m, const InferenceWorkload& w, const Catalog& catalog,
                                          const RecommendRequest& r);

}  // namespace gpuadvisor
