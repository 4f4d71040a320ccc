// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
#include "gpuadvisor/search/rl_search.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <cmath>

#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/physics/memory.hpp"
#include "gpuadvisor/physics/overheads.hpp"

namespace gpuadvisor {

namespace {
constexpr double kGb = 1e9;

// Generation of one step's sequences by `instances` instances
// (docs/methodology.md §RL generation).
struct Generation {
  ServingLayout layout;
  int generators = 0, sequences_per_generator = 0, batch = 0;
  double decode_step_s = 0, seconds = 0;
  bool straggler_bound = false;
};

InferenceWorkload rollout_workload(const RlWorkload& w, double resident_gb) {
  InferenceWorkload iw;
  iw.prompt_tokens = iw.prompt_tokens_p95 = w.prompt_tokens;
  iw.output_tokens = w.response_tokens;
  iw.output_tokens_p95 = w.response_tokens_max;  // the longest response must fit
  iw.mode = ServingMode::offline;
  iw.weights = w.rollout_weights;
  iw.resident_state_gb = resident_gb;
  return iw;
}

// One tensor-parallel size: prefill, then decode bounded by throughput (the
// batch kept full) and by the longest response (the straggler), whichever is longer.
// A rollout decode step: the serving step with the engine's own host time
// replaced by the RL host time it is part of (kRolloutStepOverheadS).
double rollout_step_s(const DecodeStep& s) { return s.total_s() - s.host_s + std::max(s.host_s, kRolloutStepOverheadS); }

std::optional<Generation> generate_at(const ModelSpec& m, const RlWorkload& w, const InferenceWorkload& iw, const Cluster& one, int instances,
                                      int tp, std::string& problem) {
  InferenceEstimate e = estimate_inference(m, iw, one, ServingLayout{tp, 1}, std::nullopt, &problem);
  if (!e.fits()) return std::nullopt;
  Generation g;
  g.layout = ServingLayout{tp, 1};
  g.generators = instances * one.instance->accelerator_count / tp;
  g.sequences_per_generator = (w.sequences_per_step() + g.generators - 1) / g.generators;
  const int n = g.sequences_per_generator;
  g.batch = std::min(n, e.max_batch);
  evaluate_batch(m, iw, one, e, g.batch);
  g.decode_step_s = rollout_step_s(e.step);
  const double prefill_s = n * e.prefill_gpu_s_per_request;
  const double throughput_s = n * w.response_tokens / g.batch * g.decode_step_s;
  // While the longest response runs, the batch holds n x mean / max sequences on average.
  const int tail_batch = std::clamp(static_cast<int>(std::lround(n * w.response_tokens / w.response_tokens_max)), 1, g.batch);
  evaluate_batch(m, iw, one, e, tail_batch);
  const double straggler_s = w.response_tokens_max * rollout_step_s(e.step);
  g.straggler_bound = straggler_s > throughput_s;
  g.seconds = prefill_s + std::max(throughput_s, straggler_s);
  return g;
}

std::optional<Generation> generate(const ModelSpec& m, const RlWorkload& w, const Instance& inst, const Accelerator& acc, int instances,
                                   double resident_gb, std::string& problem) {
  const Cluster one{&inst, &acc, 1};
  const InferenceWorkload iw = rollout_workload(w, resident_gb);
  if (auto p = serving_accelerator_problem(acc, iw)) {
    problem = *p;
    return std::nullopt;
  }
  std::optional<Generation> best;
  for (int tp = 1; tp <= inst.accelerator_count; tp *= 2) {
    if (serving_layout_problem(m, one, ServingLayout{tp, 1})) continue;
    std::string why;
    auto g = generate_at(m, w, iw, one, instances, tp, why);
    if (!g) {
      if (!why.empty()) problem = fmt::format("generation: {}", why);
      continue;
    }
    if (!best || g->seconds < best->seconds) best = g;
  }
  if (!best && problem.empty()) problem = "generation: no tensor-parallel size inside one instance holds the policy";
  return best;
}

// The training state an accelerator keeps between updates (weights,
// gradients, optimizer state and adapters; activations are freed), GB.
double static_state_gb(const TrainingEstimate& t) {
  return t.memory.weights_gb + t.memory.gradients_gb + t.memory.optimizer_gb + t.memory.adapters_gb;
}

// The frozen models scored each step, sharded over `accelerators`.
double frozen_models_gb(const ModelSpec& policy, const RlWorkload& w, int accelerators) {
  double bytes = 0;
  if (w.reference) bytes += inference_weight_bytes(policy, WeightFormat::bf16);
  if (w.reward_model) bytes += inference_weight_bytes(*w.reward_model, WeightFormat::bf16);
  return bytes / accelerators / kGb;
}

// The frozen models (reference, reward model) scored each step must fit the
// accelerators that score them, sharded, beside the runtime's reserve (the
// training state may be in host memory then, so nothing else is counted).
std::optional<std::string> frozen_models_problem(const ModelSpec& policy, const RlWorkload& w, const Accelerator& acc, int accelerators) {
  const double need_gb = frozen_models_gb(policy, w, accelerators);
  const double room_gb = acc.memory_usable_gb() * (1 - kReserveFraction) - kReserveFixedGb;
  if (need_gb <= room_gb) return std::nullopt;
  std::vector<std::string> names;
  if (w.reference) names.push_back(fmt::format("the reference, {}", policy.name));
  if (w.reward_model) names.push_back(fmt::format("the reward model, {}", w.reward_model->name));
  return fmt::format("scoring: the frozen models ({}) take {:.1f} GB per accelerator in bf16 over {} accelerator{}, more than the {:.1f} GB "
                     "one holds beside its runtime reserve",
                     fmt::join(names, "; "), need_gb, accelerators, accelerators > 1 ? "s" : "", room_gb);
}

// Forward passes over prompt + response of every sequence: the policy's
// log-probabilities (GRPO/PPO), the reference, the critic and the reward
// model, at the update's model-FLOPs utilisation.
void score(const ModelSpec& policy, const RlWorkload& w, const Accelerator& acc, const TrainingEstimate& t, int accelerators, RlEstimate& e) {
  const int seq = static_cast<int>(std::lround(w.tokens_per_sequence()));
  double flops = 0;
  auto add = [&](const ModelSpec& m, const char* name) {
    flops += w.tokens_per_step() * forward_flops_per_token(m, seq);
    e.scoring_models.push_back(name);
  };
  if (w.generates()) add(policy, "policy");
  if (w.reference) add(policy, "reference");
  if (w.critic) add(*w.critic, "critic");
  if (w.reward_model) add(*w.reward_model, "reward model");
  const double achieved = accelerators * acc.tflops(t.precision).value_or(0) * 1e12 * t.mfu;
  e.scoring.accelerators = accelerators;
  e.scoring.tokens = w.tokens_per_step() * e.scoring_models.size();
  e.scoring.seconds = flops > 0 && achieved > 0 ? flops / achieved : 0;
}

// The update's outcome on a trainer pool of one type, by its instance count:
// recommend_rl searches one pool size for the colocated placement and again
// for each split that leaves the trainer that many instances, so it keeps
// each search (one instance type's counts; the layout search is the cost).
struct TrainOutcome {
  std::optional<std::string> problem;
  TrainingEstimate trainer;
  std::optional<TrainingEstimate> critic_trainer;
  RlStage training;
};
using TrainerPools = std::map<int, TrainOutcome>;

std::optional<std::string> train_uncached(const ModelSpec& policy, const RlWorkload& w, const Cluster& trainer, RlEstimate& e);

// The policy update (and PPO's critic update) with the training layout
// search, from `pools` where this pool size was searched before.
std::optional<std::string> train(const ModelSpec& policy, const RlWorkload& w, const Cluster& trainer, RlEstimate& e, TrainerPools* pools) {
  if (!pools) return train_uncached(policy, w, trainer, e);
  auto it = pools->find(trainer.count);
  if (it == pools->end()) {
    RlEstimate fresh;
    TrainOutcome o;
    o.problem = train_uncached(policy, w, trainer, fresh);
    o.trainer = fresh.trainer;
    o.critic_trainer = fresh.critic_trainer;
    o.training = fresh.training;
    it = pools->emplace(trainer.count, std::move(o)).first;
  }
  e.trainer = it->second.trainer;
  e.critic_trainer = it->second.critic_trainer;
  e.training = it->second.training;
  return it->second.problem;
}

std::optional<std::string> train_uncached(const ModelSpec& policy, const RlWorkload& w, const Cluster& trainer, RlEstimate& e) {
  ClusterSearch s = search_cluster(policy, w.update, trainer);
  if (!s.best) return fmt::format("the policy update: {}", s.problem);
  e.trainer = *s.best;
  e.training.accelerators = trainer.accelerators();
  e.training.tokens = w.tokens_per_step();
  e.training.seconds = w.tokens_per_step() / s.best->tokens_per_second;
  if (w.critic) {
    TrainingWorkload cw = w.update;
    cw.task = Task::finetune;
    ClusterSearch cs = search_cluster(*w.critic, cw, trainer);
    if (!cs.best) return fmt::format("the critic update: {}", cs.problem);
    e.critic_trainer = *cs.best;
    e.training.seconds += w.tokens_per_step() / cs.best->tokens_per_second;
  }
  return std::nullopt;
}

// New weights from the trainer to the generators: each instance that
// generates receives a full copy over EFA (colocated: the shards it lacks),
// then each accelerator its tensor-parallel share over NVLink; colocated, the
// share then passes through the engine's weight-loading path.
double weight_sync_s(const ModelSpec& policy, const RlWorkload& w, const Cluster& c, const RlEstimate& e) {
  const Instance& inst = *c.instance;
  const Accelerator& acc = *c.accelerator;
  const double bytes = inference_weight_bytes(policy, w.rollout_weights);
  const double intra_s = bytes / e.rollout_layout.tp / (intra_node_gb_per_s(acc) * kGb);
  double across = 0;  // share of a full copy that crosses EFA into each generating instance
  if (e.placement == RlPlacement::split) across = 1;
  else if (c.count > 1) across = double(c.count - 1) / c.count;
  const double inter_s = across > 0 ? kCollectiveLatencyInterS + across * bytes / (inter_node_gb_per_s(inst, acc, inst.accelerator_count) * kGb) : 0;
  const double engine_s = e.placement == RlPlacement::colocated ? bytes / e.rollout_layout.tp / (kColocatedRefitGbPerS * kGb) : 0;
  return intra_s + inter_s + engine_s;
}

void finish_step(RlEstimate& e) {
  const double update = e.scoring.seconds + e.training.seconds;
  e.step_time_s = e.async ? std::max(e.generation.seconds, update) + e.weight_sync_s
                          : e.generation.seconds + update + e.weight_sync_s;
}

void set_generation(RlEstimate& e, const Generation& g, const RlWorkload& w) {
  e.rollout_layout = g.layout;
  e.generators = g.generators;
  e.sequences_per_generator = g.sequences_per_generator;
  e.batch = g.batch;
  e.decode_step_s = g.decode_step_s;
  e.straggler_bound = g.straggler_bound;
  e.generation.seconds = g.seconds;
  e.generation.tokens = w.sequences_per_step() * w.response_tokens;
}

RlEvaluation colocated(const ModelSpec& policy, const RlWorkload& w, const Cluster& c, TrainerPools* pools) {
  RlEvaluation out;
  RlEstimate e;
  e.placement = RlPlacement::colocated;
  e.rollout_instances = e.trainer_instances = c.count;
  e.rollout_accelerators = e.trainer_accelerators = c.accelerators();
  if (auto p = train(policy, w, c, e, pools)) {
    out.problem = *p;
    return out;
  }
  if (auto p = frozen_models_problem(policy, w, *c.accelerator, c.accelerators())) {
    out.problem = *p;
    return out;
  }
  score(policy, w, *c.accelerator, e.trainer, c.accelerators(), e);
  if (w.generates()) {
    e.resident_state_gb = static_state_gb(e.trainer) + (e.critic_trainer ? static_state_gb(*e.critic_trainer) : 0) +
                          frozen_models_gb(policy, w, c.accelerators());
    auto g = generate(policy, w, *c.instance, *c.accelerator, c.count, e.resident_state_gb, out.problem);
    if (!g) {  // the trainer's state goes to host memory while the generators run
      g = generate(policy, w, *c.instance, *c.accelerator, c.count, 0, out.problem);
      if (!g) return out;
      // Offloaded, each instance's host memory holds its accelerators' training state.
      const double host_need_gb = e.resident_state_gb * c.instance->accelerator_count;
      const double host_gb = c.instance->memory_gb();
      if (host_need_gb > host_gb) {
        out.problem = fmt::format("generation: the training state ({:.1f} GB per accelerator) does not fit beside the generators, and offloaded "
                                  "it needs {:.1f} GB of host memory per instance, more than the instance's {:.0f} GiB",
                                  e.resident_state_gb, host_need_gb, c.instance->memory_gib);
        return out;
      }
      e.offloaded = true;
      e.notes.push_back(fmt::format("the training state ({:.1f} GB per accelerator) is offloaded to host memory while generating",
                                    e.resident_state_gb));
    }
    set_generation(e, *g, w);
    e.generation.accelerators = c.accelerators();
    e.weight_sync_s = weight_sync_s(policy, w, c, e) + (e.offloaded ? 2 * e.resident_state_gb / kHostOffloadGbPerS : 0);
  }
  finish_step(e);
  out.problem.clear();
  out.estimate = std::move(e);
  return out;
}

RlEvaluation split_at(const ModelSpec& policy, const RlWorkload& w, const Cluster& c, int rollout_instances, TrainerPools* pools) {
  RlEvaluation out;
  if (rollout_instances < 1 || rollout_instances >= c.count) {
    out.problem = fmt::format("a split needs at least one instance for each pool ({} instance{} given)", c.count, c.count > 1 ? "s" : "");
    return out;
  }
  RlEstimate e;
  e.placement = RlPlacement::split;
  e.async = w.async;
  e.rollout_instances = rollout_instances;
  e.trainer_instances = c.count - rollout_instances;
  e.rollout_accelerators = rollout_instances * c.instance->accelerator_count;
  e.trainer_accelerators = e.trainer_instances * c.instance->accelerator_count;
  const Cluster trainer{c.instance, c.accelerator, e.trainer_instances};
  if (auto p = train(policy, w, trainer, e, pools)) {
    out.problem = *p;
    return out;
  }
  if (auto p = frozen_models_problem(policy, w, *c.accelerator, e.trainer_accelerators)) {
    out.problem = *p;
    return out;
  }
  score(policy, w, *c.accelerator, e.trainer, e.trainer_accelerators, e);
  auto g = generate(policy, w, *c.instance, *c.accelerator, rollout_instances, 0, out.problem);
  if (!g) return out;
  set_generation(e, *g, w);
  e.generation.accelerators = e.rollout_accelerators;
  e.weight_sync_s = weight_sync_s(policy, w, c, e);
  if (e.async) e.notes.push_back("asynchronous: rollouts run one policy version behind the update (off-policy by one step)");
  finish_step(e);
  out.problem.clear();
  out.estimate = std::move(e);
  return out;
}

bool faster(const RlEvaluation& a, const RlEvaluation& b) {
  if (!a.estimate) return false;
  return !b.estimate || a.estimate->step_time_s < b.estimate->step_time_s;
}

RlEvaluation estimate_rl(const ModelSpec& policy, const RlWorkload& w, const Cluster& c, RlPlacement placement, int rollout_instances,
                         TrainerPools* pools) {
  if (placement == RlPlacement::colocated) return colocated(policy, w, c, pools);
  if (!w.generates()) return RlEvaluation{std::nullopt, "DPO has no generation pool to place"};
  if (rollout_instances > 0) return split_at(policy, w, c, rollout_instances, pools);
  // The splits tried: a quarter, a third, half, two thirds and three quarters for rollouts.
  RlEvaluation best = split_at(policy, w, c, 0, pools);
  for (double share : {0.25, 1.0 / 3, 0.5, 2.0 / 3, 0.75}) {
    const int g = std::clamp(static_cast<int>(std::lround(c.count * share)), 1, std::max(1, c.count - 1));
    RlEvaluation ev = split_at(policy, w, c, g, pools);
    if (faster(ev, best)) best = std::move(ev);
    else if (!best.estimate && !ev.problem.empty()) best.problem = ev.problem;
  }
  return best;
}

RlEvaluation best_rl(const ModelSpec& policy, const RlWorkload& w, const Cluster& c, TrainerPools* pools) {
  if (w.placement) return estimate_rl(policy, w, c, *w.placement, 0, pools);
  RlEvaluation best = estimate_rl(policy, w, c, RlPlacement::colocated, 0, pools);
  if (w.generates() && c.count > 1) {
    RlEvaluation split = estimate_rl(policy, w, c, RlPlacement::split, 0, pools);
    if (faster(split, best)) best = std::move(split);
  }
  return best;
}
}  // namespace

double forward_flops_per_token(const ModelSpec& m, int seq_len) {
  return 2 * matmul_params_per_token(m) + attention_forward_flops_per_token(m, seq_len) * kCausalExecutedShare;  // causal, as MFU counts
}

RlEvaluation estimate_rl(const ModelSpec& policy, const RlWorkload& w, const Cluster& c, RlPlacement placement, int rollout_instances) {
  return estimate_rl(policy, w, c, placement, rollout_instances, nullptr);
}

RlEvaluation best_rl(const ModelSpec& policy, const RlWorkload& w, const Cluster& c) { return best_rl(policy, w, c, nullptr); }


RecommendRow rl_row(const ModelSpec& policy, const RlWorkload& w, const Cluster& c, const RlEstimate& e, const RecommendRequest& r) {
  RecommendRow row;
  row.instance = c.instance;
  row.count = c.count;
  row.estimate = e.trainer;
  row.estimate.steps = w.steps;
  row.estimate.train_hours = w.steps * e.step_time_s / 3600;
  add_job_overheads(row.estimate, policy, w.update, c, r.overheads);
  row.rl = e;
  price_row(row, policy, w.update, r);
  return row;
}

Recommendation recommend_rl(const ModelSpec& policy, const RlWorkload& w, const Catalog& catalog, const RecommendRequest& r) {
  Recommendation out;
  for (const Instance& inst : catalog.instances) {
    if (!considered(inst, r, out.rejections)) continue;
    const Accelerator& acc = catalog.accelerator_of(inst);
    if (auto p = accelerator_problem(acc, w.update)) {
      out.rejections.push_back({inst.name, *p});
      continue;
    }
    RowFilter filter;
    std::string problem;
    bool any_row = false;
    TrainerPools pools;  // this type's trainer searches, by pool size
    for (int count : candidate_counts(inst, r)) {
      const Cluster c{&inst, &acc, count};
      if (c.accelerators() > w.sequences_per_step()) break;  // more accelerators than sequences
      RlEvaluation ev = best_rl(policy, w, c, &pools);
      if (!ev.estimate) {
        if (problem.empty()) problem = ev.problem;
        continue;
      }
      any_row |= admit_row(rl_row(policy, w, c, *ev.estimate, r), r, filter, out);
    }
    if (!any_row) out.rejections.push_back({inst.name, !filter.reason.empty() ? filter.reason : problem.empty() ? "no feasible placement" : problem});
  }
  finish_recommendation(out, r);
  return out;
}

}  // namespace gpuadvisor
