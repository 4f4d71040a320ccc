// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
// RL post-training physics and search (docs/methodology.md §RL post-training):
// one step on a given cluster and placement, and the ranked recommendation
// over (instance type, count, placement, split).
#pragma once
#include <optional>
#include <string>

#include "gpuadvisor/physics/rl.hpp"
#include "gpuadvisor/search/search.hpp"

namespace gpuadvisor {

struct RlEvaluation {
  std::optional<RlEstimate> estimate;
  std::string problem;  // why this cluster cannot run the step (empty with an estimate)
};

// Forward FLOPs per token of `m` over sequences of `seq_len` tokens (2 x the
// matrix-multiply parameters + causal attention's scores and values, half
// the matrix: the count the update's MFU uses).
double forward_flops_per_token(const ModelSpec& m, int seq_len);

// One step with `placement` on `c` (all its instances). Split: the rollout
// pool is `rollout_instances` of them, the trainer the rest; 0 tries the
// splits and keeps the fastest.
RlEvaluation estimate_rl(const ModelSpec& policy, const RlWorkload& w, const Cluster& c, RlPlacement placement, int rollout_instances = 0);

// The best placement on `c`: w.placement when given, else the faster of both.
RlEvaluation best_rl(const ModelSpec& policy, const RlWorkload& w, const Cluster& c);

// A priced row from an evaluated step: hours = steps x step time + job overheads.
RecommendRow rl_row(const ModelSpec& policy, const RlWorkload& w, const Cluster& c, const RlEstimate& e, const RecommendRequest& r);

Recommendation recommend_rl(const ModelSpec& policy, const RlWorkload& w, const Catalog& catalog, const RecommendRequest& r);

}  // namespace gpuadvisor
