// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
#include "gpuadvisor/search/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <initializer_list>
#include <cmath>

#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/workload/framework.hpp"
#include "gpuadvisor/base/quantity.hpp"

namespace gpuadvisor {

std::optional<SortBy> sort_by_from_string(std::string_view s) {
  if (s == "recommended") return SortBy::recommended;
  if (s == "pareto") return SortBy::pareto;
  if (s == "time") return SortBy::time;
  if (s == "cost") return SortBy::cost;
  if (s == "cost-per-token") return SortBy::cost_per_token;
  return std::nullopt;
}

std::string_view to_string(SortBy s) {
  switch (s) {
    case SortBy::recommended: return "recommended";
    case SortBy::pareto: return "pareto";
    case SortBy::time: return "time";
    case SortBy::cost: return "cost";
    case SortBy::cost_per_token: return "cost-per-token";
  }
  return "?";
}

std::optional<std::string> accelerator_problem(const Accelerator& acc, const TrainingWorkload& w) {
  if (acc.name.find("Inferentia") != std::string::npos)
    return fmt::format("{} is an inference accelerator; train on Trainium (trn1, trn2) or GPUs", acc.name);
  if (!effective_precision(acc, w.precision))
    return fmt::format("{} has no {} tensor throughput", acc.name, to_string(w.precision));
  if (w.framework) return framework_problem(*w.framework, acc);
  return std::nullopt;
}

namespace {

std::vector<int> powers_of_two_dividing(int n, int limit) {
  std::vector<int> out;
  for (int v = 1; v <= n && v <= limit; v *= 2)
    if (n % v == 0) out.push_back(v);
  return out;
}

// The size lists below fill a vector the caller reuses: the layout search
// asks for them once per (tp, cp, pp), and a fresh vector each time was a
// tenth of its time.

// Expert-parallel sizes to try: powers of two dividing the ranks the experts
// are drawn from (dp x cp; folded, tp x dp x cp / etp) and the experts.
void expert_parallel_sizes(const ModelSpec& m, int tp, int dp, int cp, int etp, std::vector<int>& out) {
  out.clear();
  if (!m.is_moe()) {
    out.push_back(1);
    return;
  }
  const int ranks = etp == tp ? dp * cp : tp * dp * cp / etp;
  for (int ep = 1; ep <= ranks; ep *= 2)
    if (ranks % ep == 0 && m.experts % ep == 0) out.push_back(ep);
}

void divisors(int n, int limit, std::vector<int>& out) {
  out.clear();
  for (int v = 1; v <= n && v <= limit; ++v)
    if (n % v == 0) out.push_back(v);
}

// Megatron's block recompute: the fewest layers of a stage to rebuild so that
// the layout fits (memory falls as more are rebuilt). The layout fits with
// all of them rebuilt; 0 means all.
int fewest_rebuilt_layers(const ModelSpec& m, const TrainingWorkload& w, const TrainingPerToken& t, Layout l, const Accelerator& acc) {
  const int stage = static_cast<int>(std::ceil(double(m.layers) / l.pp));
  int lo = 1, hi = stage;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    l.recompute_layers = mid;
    if (training_memory(m, w, l, acc, t).fits()) hi = mid;
    else lo = mid + 1;
  }
  return lo >= stage ? 0 : lo;
}

bool faster(const TrainingEstimate& a, const TrainingEstimate& b) {
  const double ta = a.step.total_s(), tb = b.step.total_s();
  if (ta != tb) return ta < tb;
  // Deterministic tie-break: the simpler layout.
  auto key = [](const Layout& l) {
    return std::tuple(l.tp, l.cp, l.pp, l.vp, l.ep, -l.expert_tp(), l.zero_stage, -l.micro_batch, static_cast<int>(l.recompute), l.recompute_layers);
  };
  return key(a.layout) < key(b.layout);
}

// A bound strictly slower than the best layout found (the margin keeps exact
// ties, which the layout tie-break decides, and rounding, out of pruning).
bool slower_than_best(double bound_s, const TrainingEstimate& best) { return bound_s > best.step.total_s() * (1 + 1e-9); }

// Up to four small integers without a heap allocation (the inner loop's
// ZeRO stages and virtual pipeline sizes), ascending.
class SmallInts {
 public:
  SmallInts(std::initializer_list<int> values) {
    for (int v : values) values_[size_++] = v;
  }
  const int* begin() const { return values_.data(); }
  const int* end() const { return values_.data() + size_; }
  int back() const { return values_[size_ - 1]; }
  std::size_t size() const { return size_; }

 private:
  std::array<int, 4> values_{};
  std::size_t size_ = 0;
};

// The bound at its most favourable interleaving among vps (more virtual
// stages shrink the bubble but add pipeline sends).
double fastest_over(const StepTimeBound& bound, const SmallInts& vps) {
  double least = 1e300;
  for (int vp : vps) least = std::min(least, bound.at(vp));
  return least;
}

// What search_cluster walks for one cluster: the recompute modes and
// micro-batches to try, after the user's fixed values.
struct SearchSpace {
  const ModelSpec& m;
  const TrainingWorkload& w;
  const Cluster& c;
  const LayoutConstraints& fixed;
  std::vector<Recompute> recomputes;
  std::vector<int> micro_batches;
  bool prune = true;  // skip sizes whose step-time bound is slower than the best found
  TrainingPerToken per_token;  // the job's terms that no layout changes, computed once
};

SearchSpace search_space(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const LayoutConstraints& fixed) {
  SearchSpace s{m, w, c, fixed, {Recompute::none, Recompute::full}, {1, 2, 4, 8, 16, 32, 64}, true, training_per_token(m, w)};
  if (!w.flash_attention) s.recomputes = {Recompute::none, Recompute::selective, Recompute::full};
  if (fixed.recompute) s.recomputes = {*fixed.recompute};
  if (fixed.micro_batch) s.micro_batches = {*fixed.micro_batch};  // any size the user fixed, not only powers of two
  return s;
}

// Context parallelism only where each rank keeps at least
// kMinContextParallelTokens of a sequence (it pays off for long ones).
// The largest power-of-two context-parallel size that leaves each rank at
// least kMinContextParallelTokens of a sequence.
int largest_context_parallel(int seq_len) {
  int cp = 1;
  while (seq_len / (2 * cp) >= kMinContextParallelTokens) cp *= 2;
  return cp;
}

void context_parallel_sizes(const SearchSpace& s, int tp, int total, std::vector<int>& cps) {
  cps.assign(1, s.fixed.cp.value_or(1));
  if (s.fixed.cp) return;
  for (int cp = 2; cp <= std::min(total / tp, largest_context_parallel(s.w.seq_len)); cp *= 2)
    if ((total / tp) % cp == 0 && s.w.seq_len % (2 * cp) == 0) cps.push_back(cp);
}

// Expert ranks come from the data- and context-parallel ranks (Megatron-Core);
// folded (etp 1), from the tensor-parallel ranks too.
void expert_tensor_sizes(const SearchSpace& s, int tp, std::vector<int>& etps) {
  etps.assign(1, s.fixed.etp && *s.fixed.etp > 0 ? *s.fixed.etp : tp);
  if (s.fixed.etp) return;
  if (s.m.is_moe() && tp > 1 && s.c.accelerator->is_cuda()) etps.push_back(1);  // a Megatron-Core feature
}

// The step-time bound of one (sizes, micro-batch), computed when first read
// (only once a best layout exists is there anything to compare it with), or
// given: the edge bounds hold it at the smallest and largest micro-batch.
struct BoundOnDemand {
  const SearchSpace& s;
  const Layout& base;
  std::optional<StepTimeBound> bound;
  const StepTimeBound& get() {
    if (!bound) bound = step_time_lower_bound(s.m, s.w, s.c, base, s.per_token);
    return *bound;
  }
};

// One micro-batch size at one (tp, cp, pp, dp, ep, etp): the least recompute,
// then the lowest ZeRO stage that fits (stages 0-2 cost the same time here,
// stage 3 more: docs/methodology.md §Search), each interleaving allowed.
// False when nothing fits (a larger micro-batch will not either).
bool search_micro_batch(const SearchSpace& s, const Layout& base, const SmallInts& zeros, const SmallInts& vps, BoundOnDemand& bound,
                        ClusterSearch& out) {
  const Accelerator& acc = *s.c.accelerator;
  for (Recompute rc : s.recomputes) {
    Layout l = base;
    l.recompute = rc;
    if (rc == Recompute::full && s.fixed.recompute_layers) l.recompute_layers = *s.fixed.recompute_layers;
    // Memory falls as the ZeRO stage rises: when the highest stage does not
    // fit, no stage of this recompute does.
    l.zero_stage = zeros.back();
    if (zeros.size() > 1 && layout_valid(s.m, s.w, s.c, l)) {
      ++out.layouts_evaluated;
      if (!training_memory(s.m, s.w, l, acc, s.per_token).fits()) continue;
    }
    for (int z : zeros) {
      l.zero_stage = z;
      if (!layout_valid(s.m, s.w, s.c, l)) continue;
      ++out.layouts_evaluated;
      MemoryBreakdown memory = training_memory(s.m, s.w, l, acc, s.per_token);  // the same at every vp (memory does not depend on it)
      if (!memory.fits()) continue;
      // Full recompute of only as many layers as memory needs.
      if (rc == Recompute::full && !s.fixed.recompute_layers) {
        const int rebuilt = fewest_rebuilt_layers(s.m, s.w, s.per_token, l, acc);
        if (rebuilt != l.recompute_layers) {
          l.recompute_layers = rebuilt;
          memory = training_memory(s.m, s.w, l, acc, s.per_token);
        }
      }
      // Interleaved schedules (vp virtual stages) where the layers and
      // micro-batches allow, each unless its bound is already slower.
      for (int vp : vps) {
        l.vp = vp;
        if (vp > 1 && !layout_valid(s.m, s.w, s.c, l)) continue;
        if (s.prune && out.best && slower_than_best(bound.get().at(vp), *out.best)) {
          ++out.layouts_pruned;
          continue;
        }
        TrainingEstimate e = estimate_training(s.m, s.w, s.c, l, memory, s.per_token);
        if (!out.best || faster(e, *out.best)) out.best = e;
      }
      return true;  // less recompute is faster
    }
  }
  return false;
}

// The step-time bounds at the smallest and the largest micro-batch the
// search would try at these sizes, computed once: the test across all sizes
// reads both, and the loop over sizes reuses them.
struct EdgeBounds {
  int smallest = 0, largest = 0;
  StepTimeBound lo, hi;
  std::optional<StepTimeBound> at(int mb) const {
    if (mb == smallest) return lo;
    if (mb == largest) return hi;
    return std::nullopt;
  }
};

std::optional<EdgeBounds> edge_bounds(const SearchSpace& s, const Layout& sizes) {
  EdgeBounds e;
  for (int mb : s.micro_batches) {
    if ((s.w.global_batch / sizes.dp) % mb != 0) continue;
    if (e.smallest == 0 || mb < e.smallest) e.smallest = mb;
    e.largest = std::max(e.largest, mb);
  }
  if (e.smallest == 0) return std::nullopt;
  Layout at = sizes;
  at.micro_batch = e.smallest;
  e.lo = step_time_lower_bound(s.m, s.w, s.c, at, s.per_token);
  at.micro_batch = e.largest;
  e.hi = e.largest == e.smallest ? e.lo : step_time_lower_bound(s.m, s.w, s.c, at, s.per_token);
  return e;
}

// Whether every micro-batch size between the edges has a step-time bound
// slower than the best (StepTimeBound::across_micro_batches): one test
// instead of one per size.
bool all_micro_batches_slower(const EdgeBounds& e, const SmallInts& vps, const TrainingEstimate& best) {
  double least = 1e300;
  for (int vp : vps) least = std::min(least, StepTimeBound::across_micro_batches(e.lo, e.hi, vp));
  return slower_than_best(least, best);
}

// Whether a recompute mode other than the one tried fits at the least memory
// of these sizes (the highest ZeRO stage, the smallest micro-batch: memory
// only grows with the micro-batch and falls with the stage). Full recompute usually needs least,
// but not always: it keeps a layer's activations as workspace, more than no
// recompute keeps for a stage of one layer with one micro-batch in flight.
bool any_other_recompute_fits(const SearchSpace& s, Layout lean) {
  const Recompute tried = lean.recompute;
  for (Recompute rc : s.recomputes) {
    if (rc == tried) continue;
    lean.recompute = rc;
    if (training_memory(s.m, s.w, lean, *s.c.accelerator, s.per_token).fits()) return true;
  }
  return false;
}

// Every micro-batch, recompute, ZeRO stage and interleaving at one
// (tp, cp, pp, dp, ep, etp), and its smallest memory need for the message.
void search_parallel_sizes(const SearchSpace& s, const Layout& sizes, ClusterSearch& out) {
  SmallInts zeros = sizes.pp > 1 ? SmallInts{0, 1} : SmallInts{0, 1, 2, 3};
  SmallInts vps = sizes.pp > 1 ? SmallInts{1, 2, 4, 8} : SmallInts{1};
  if (s.fixed.vp) vps = {*s.fixed.vp};
  if (s.fixed.zero_stage) zeros = {*s.fixed.zero_stage};
  // Smallest memory need of these sizes: most sharding, full recompute, the smallest micro-batch allowed.
  Layout lean = sizes;
  lean.zero_stage = zeros.back();
  lean.micro_batch = s.fixed.micro_batch.value_or(1);
  lean.recompute = s.recomputes.back();
  if (s.w.global_batch % sizes.dp == 0) {
    const MemoryBreakdown least = training_memory(s.m, s.w, lean, *s.c.accelerator, s.per_token);
    out.smallest_need_gb = std::min(out.smallest_need_gb, least.total_gb());
    if (s.prune && !least.fits() && !any_other_recompute_fits(s, lean)) return;  // nothing of these sizes fits
  }
  // Pruned: no layout of these sizes at any micro-batch can be faster than the best found.
  std::optional<EdgeBounds> edges;
  if (s.prune && out.best) {
    edges = edge_bounds(s, sizes);
    if (edges && all_micro_batches_slower(*edges, vps, *out.best)) {
      ++out.layouts_pruned;
      return;
    }
  }
  for (int mb : s.micro_batches) {
    if ((s.w.global_batch / sizes.dp) % mb != 0) continue;
    Layout base = sizes;
    base.micro_batch = mb;
    // Pruned: no layout of these sizes at this micro-batch can be faster than
    // the best found.
    BoundOnDemand bound{s, base, edges ? edges->at(mb) : std::nullopt};
    if (s.prune && out.best && slower_than_best(fastest_over(bound.get(), vps), *out.best)) {
      ++out.layouts_pruned;
      continue;
    }
    if (!search_micro_batch(s, base, zeros, vps, bound, out) && !s.fixed.micro_batch) break;  // larger micro-batches need more memory
  }
}

// Every (tp, cp, pp, dp, ep, etp) of one cluster, in the search's order;
// `expert_problem` gets the first reason a fixed ep fits none.
std::vector<Layout> parallel_sizes(const SearchSpace& s, std::string& expert_problem) {
  const ModelSpec& m = s.m;
  const LayoutConstraints& fixed = s.fixed;
  const int per_node = s.c.instance->accelerator_count;
  const int total = s.c.accelerators();
  std::vector<Layout> out;
  std::vector<int> cps, pps, etps, eps;
  for (int tp : powers_of_two_dividing(per_node, per_node)) {
    if ((fixed.tp && tp != *fixed.tp) || m.heads % tp != 0) continue;
    context_parallel_sizes(s, tp, total, cps);
    for (int cp : cps) {
      divisors(total / (tp * cp), m.layers, pps);
      for (int pp : pps) {
        if (fixed.pp && pp != *fixed.pp) continue;
        const int dp = total / (tp * cp * pp);
        if (s.w.global_batch % dp != 0) continue;
        expert_tensor_sizes(s, tp, etps);
        for (int etp : etps) {
          if (fixed.ep) eps.assign(1, *fixed.ep);
          else expert_parallel_sizes(m, tp, dp, cp, etp, eps);
          for (int ep : eps) {
            Layout sizes{tp, pp, dp, ep, 0, 1, Recompute::none, 1, cp};
            sizes.etp = etp;
            if (!expert_layout_valid(m, sizes)) {
              if (expert_problem.empty()) expert_problem = *expert_layout_problem(m, sizes);
              continue;
            }
            out.push_back(sizes);
          }
        }
      }
    }
  }
  return out;
}

// Why no layout was found, when none was.
void explain_no_layout(ClusterSearch& out, const std::string& expert_problem) {
  if (out.smallest_need_gb > 1e299) {
    out.smallest_need_gb = 0;
    out.problem = expert_problem.empty() ? "no valid layout (the batch or heads do not divide over the accelerators)"
                                         : "no valid layout: " + expert_problem;
  } else if (!out.best && out.smallest_need_gb <= out.capacity_gb) {
    out.problem = "no valid layout with the fixed values: the global batch, micro-batch, heads or layers do not divide over them";
  } else if (!out.best) {
    out.problem = fmt::format("needs {:.1f} GB per accelerator at best, has {:.1f} GB", out.smallest_need_gb, out.capacity_gb);
  }
}

}  // namespace

ClusterSearch search_cluster(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const LayoutConstraints& fixed, const SearchOrder& order) {
  ClusterSearch out;
  out.capacity_gb = c.accelerator->memory_usable_gb();
  out.smallest_need_gb = 1e300;
  if (auto p = accelerator_problem(*c.accelerator, w)) {
    out.problem = *p;
    out.smallest_need_gb = 0;
    return out;
  }
  SearchSpace s = search_space(m, w, c, fixed);
  s.prune = order.prune;
  std::string expert_problem;  // why a fixed ep fits no (tp, dp, cp, etp), for the message
  std::vector<Layout> sizes = parallel_sizes(s, expert_problem);
  // The sizes most like the start layout first: a fast layout found early
  // lets the bound cut more. The best is the same in any order (faster()).
  if (order.start) {
    const Layout& a = *order.start;
    auto first = std::find_if(sizes.begin(), sizes.end(), [&](const Layout& l) {
      return l.tp == a.tp && l.cp == a.cp && l.pp == a.pp && l.etp == a.etp && l.ep == a.ep;
    });
    if (first != sizes.end()) std::rotate(sizes.begin(), first, first + 1);
  }
  for (const Layout& l : sizes) search_parallel_sizes(s, l, out);
  explain_no_layout(out, expert_problem);
  return out;
}

bool excluded(const Instance& inst, const RecommendRequest& r) {
  if (!r.families.empty() && std::find(r.families.begin(), r.families.end(), inst.family) == r.families.end()) return true;
  for (const auto& x : r.exclude)
    if (x == inst.name || x == inst.family) return true;
  return false;
}

std::vector<int> candidate_counts(const Instance& inst, const RecommendRequest& r) {
  // A job spans instances only over EFA: without it AWS does not recommend
  // multi-node training, and "up to" network figures are bursts.
  const int most = inst.efa_supported ? r.max_instances : 1;
  std::vector<int> counts;
  auto add = [&](long n) {
    if (n >= 1 && n <= most) counts.push_back(static_cast<int>(n));
  };
  for (long n = 1; n <= most; n *= 2) {
    add(n);
    add(3 * n);
  }
  add(most);
  if (inst.on_demand_max_instances) add(*inst.on_demand_max_instances);
  if (auto q = on_demand_vcpu_quota(inst); q && inst.vcpus > 0) {
    auto it = r.quota_vcpus.find(q->key);
    if (it == r.quota_vcpus.end()) it = r.quota_vcpus.find("all");
    if (it != r.quota_vcpus.end()) add(it->second / inst.vcpus);
  }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

bool considered(const Instance& inst, const RecommendRequest& r, std::vector<Rejection>& rejections) {
  if (excluded(inst, r)) return false;
  if (inst.prices_in(r.region)) return true;
  rejections.push_back({inst.name, fmt::format("not offered in {} in this catalog", r.region)});
  return false;
}

std::string human_params(double p) {
  if (p >= 1e12) return fmt::format("{:.4g}T", p / 1e12);
  if (p >= 1e9) return fmt::format("{:.4g}B", p / 1e9);
  return fmt::format("{:.4g}M", p / 1e6);
}

namespace {

struct ChannelOffer {
  Channel channel;
  std::optional<double> cost_usd;
};

// The quota an option passes: more vCPUs than --quota-vcpus gives its family's
// on-demand quota (on demand, reservations and commitments draw on it), or "".
std::string quota_exceeded_text(const RecommendRow& row, const RecommendRequest& r) {
  if (r.quota_vcpus.empty()) return {};
  const auto q = on_demand_vcpu_quota(*row.instance);
  if (!q) return {};
  auto it = r.quota_vcpus.find(q->key);
  if (it == r.quota_vcpus.end()) it = r.quota_vcpus.find("all");
  const long need = static_cast<long>(row.instance->vcpus) * row.count;
  if (it == r.quota_vcpus.end() || need <= it->second) return {};
  return fmt::format("needs {} vCPUs of the on-demand quota '{}' ({}), {} given by --quota-vcpus: raise it in Service Quotas", need, q->name,
                     q->code, it->second);
}

// The channel that delivers instances bought at will: on demand within the
// usual count and the account's quota, else Capacity Blocks (where sold, up to
// 256 instances and 182 days), else a reservation billed at the on-demand rate
// (within the quota; past it nothing delivers the option).
ChannelOffer at_will_offer(const RecommendRow& row) {
  const Instance& inst = *row.instance;
  const bool within_quota = row.quota_exceeded.empty();
  if (inst.purchase == "on_demand_and_spot" && !beyond_usual_on_demand(inst, row.count) && within_quota)
    return {Channel::on_demand, row.on_demand_cost_usd};
  if (row.capacity.block_days) return {Channel::capacity_block, row.capacity.block_cost_usd};
  return {Channel::reservation, within_quota ? row.on_demand_cost_usd : std::nullopt};
}

// Whether a commitment's discount reaches the row: only where on demand
// itself delivers it (sold on demand, within the usual count and the quota).
bool commitment_delivers(const RecommendRow& row) { return at_will_offer(row).channel == Channel::on_demand; }

// The offers each pricing may take: spot only within its usual count (above
// it --pricing spot has no price: the row is listed, not ranked, as an unknown
// spot price is), Capacity Blocks for --pricing best wherever their rate is known.
std::vector<ChannelOffer> channel_offers(const RecommendRow& row, Pricing pricing, bool interruptions_priced) {
  // Spot ranks by its expected cost with interruptions, so only where the
  // interruption range is known: a snapshot cost without them would rank an
  // unknown rate as none beside others that pay theirs. Hours given without a
  // model have no interruption figures at all: the snapshot cost for them.
  const std::optional<double> spot =
      interruptions_priced || pricing == Pricing::best ? row.spot_expected_cost_usd : row.spot_cost_usd;
  const ChannelOffer at_will = at_will_offer(row);
  const bool best = pricing == Pricing::best;
  std::vector<ChannelOffer> offers;
  if (pricing == Pricing::on_demand || best) offers.push_back(at_will);
  if (pricing == Pricing::spot || (best && row.spot_offered))
    offers.push_back({Channel::spot, row.spot_offered ? spot : std::nullopt});
  // A commitment discounts on-demand usage and delivers no capacity of its
  // own: it takes what on demand delivers (the quota, the usual count, a type
  // sold on demand), else it has no price here.
  const bool delivers = at_will.channel == Channel::on_demand;  // commitment_delivers(row), computed above
  if (pricing == Pricing::savings_1y || best) offers.push_back({Channel::savings_1y, delivers ? row.savings_1y_cost_usd : std::nullopt});
  if (pricing == Pricing::savings_3y || best) offers.push_back({Channel::savings_3y, delivers ? row.savings_3y_cost_usd : std::nullopt});
  // Where the usual on-demand count is unknown, on demand may not deliver at
  // all: a Capacity Block that does is offered beside it, and taken where cheaper.
  const bool on_demand_uncertain = pricing == Pricing::on_demand && at_will.channel == Channel::on_demand &&
                                   (row.capacity.limit_unknown || !at_will.cost_usd);  // no usual count, or no on-demand rate here
  if ((best || on_demand_uncertain) && at_will.channel != Channel::capacity_block && row.capacity.block_cost_usd)
    offers.push_back({Channel::capacity_block, row.capacity.block_cost_usd});
  return offers;
}

std::string block_note(const RecommendRow& row, std::string_view region) {
  const RegionPrices* rp = row.instance->prices_in(region);
  if (row.channel_rate_unknown || !rp || !rp->capacity_block.usd_per_hour)
    return std::string("Capacity Block rate unknown here: ") +
           (row.ranked_cost_usd ? "ranked at the on-demand rate for the block's whole days" : "not ranked (no on-demand rate either)") +
           " (see the Capacity Blocks console, or `gpuadvisor prices fetch --capacity-blocks`)";
  const int days = *row.capacity.block_days;
  return fmt::format("{} Capacity Block{} of {} day{} at ${:.2f}/h (a rate of {}), whole days billed{}", row.capacity.blocks,
                     row.capacity.blocks > 1 ? "s" : "", days, days > 1 ? "s" : "", *rp->capacity_block.usd_per_hour,
                     rp->capacity_block.as_of, row.capacity.margin > 0 ? ", sized to the prediction plus its p90 error" : "");
}

// "compute-savings-plan-1yr-partial-upfront" in words, with its rates: the instrument, term, payment option and upfront cash.
std::string commitment_note(const Instance& inst, std::string_view region, int term_years, int count) {
  std::string key;
  const CommitmentQuote* q = cheapest_commitment(inst, region, term_years, &key);
  if (!q) return {};
  std::string instrument = key.rfind("compute-savings-plan", 0) == 0  ? "a Compute Savings Plan"
                           : key.rfind("ec2-savings-plan", 0) == 0    ? "an EC2 Instance Savings Plan"
                           : key.rfind("reserved-standard", 0) == 0   ? "Standard Reserved Instances"
                           : key.rfind("reserved-convertible", 0) == 0 ? "Convertible Reserved Instances"
                                                                        : key;
  const std::string payment = key.find("all-upfront") != std::string::npos       ? "all upfront"
                              : key.find("partial-upfront") != std::string::npos ? "partial upfront"
                                                                                 : "no upfront";
  return fmt::format("{}, {} year{}, {}: ${:.4g}/h per instance committed for the whole term{}, ${:.4g}/h effective", instrument,
                     q->term_years, q->term_years > 1 ? "s" : "", payment, q->usd_per_hour,
                     q->upfront_usd > 0 ? fmt::format(" plus ${} upfront for {} instance{}", format_thousands(q->upfront_usd * count, 0), count,
                                                      count > 1 ? "s" : "")
                                        : std::string(),
                     q->effective_usd_per_hour());
}

// Why a commitment prices no row on demand cannot deliver.
std::string commitment_undelivered_text(const RecommendRow& row) {
  const Instance& inst = *row.instance;
  const std::string instead = "--pricing on-demand or best ranks it at the channel that delivers it";
  if (inst.purchase != "on_demand_and_spot")
    return fmt::format("not under a commitment: {} is sold through Capacity Blocks only, and a Savings Plan or Reserved Instance discounts "
                       "on-demand usage ({})",
                       inst.name, instead);
  if (!row.quota_exceeded.empty()) return fmt::format("not under a commitment: it {}", row.quota_exceeded);
  return fmt::format("not under a commitment: a Savings Plan or Reserved Instance discounts on-demand usage and delivers no capacity of "
                     "its own, and about {} is the most one usually starts on demand ({})",
                     *inst.on_demand_max_instances, instead);
}

std::string channel_note_text(const RecommendRow& row, Pricing pricing, std::string_view region) {
  const Instance& inst = *row.instance;
  if (pricing == Pricing::spot && !row.spot_offered)
    return inst.purchase != "on_demand_and_spot"
               ? std::string("not sold on spot: Capacity Blocks only (--pricing on-demand or best ranks it)")
               : fmt::format("not offered on spot: about {} is the most one usually holds at once, and a synchronous job needs every "
                             "node (--pricing on-demand or best ranks it at the channel that delivers it)",
                             *usual_spot_max_instances(inst));
  switch (row.channel) {
    case Channel::capacity_block: return block_note(row, region);
    case Channel::reservation:
      if (!inst.capacity_blocks) return "Capacity Blocks do not sell it: an On-Demand Capacity Reservation, billed at the on-demand rate";
      if (row.count > kCapacityBlocksMaxInstances)
        return fmt::format("more than the {} instances Capacity Blocks sell: an On-Demand Capacity Reservation or private capacity, "
                           "at the on-demand rate where AWS can fill it (an upper bound: private pricing is negotiated)",
                           kCapacityBlocksMaxInstances);
      return "longer than a Capacity Block lasts (182 days): a reservation, at the on-demand rate where AWS can fill it";
    case Channel::savings_1y:
    case Channel::savings_3y:
      if (!commitment_delivers(row)) return commitment_undelivered_text(row);
      return commitment_note(inst, region, row.channel == Channel::savings_1y ? 1 : 3, row.count);
    case Channel::on_demand:
      return row.capacity.limit_unknown
                 ? fmt::format("no usual on-demand count is known for {}: check the account's quota for {} instances", inst.name, row.count)
                 : std::string();
    default: return {};
  }
}

// A Capacity Block whose rate is unknown, at the on-demand rate as a stand-in:
// still whole days, as the block is billed (per second, a 31-hour run read
// $42 where its 2-day block at that rate is $65, and the cheaper figure set
// the cost cap of the other options).
std::optional<double> block_at_on_demand_rate_usd(const RecommendRow& row) {
  if (!row.capacity.block_days || !row.on_demand_usd_per_hour) return row.on_demand_cost_usd;
  return *row.on_demand_usd_per_hour * row.count * *row.capacity.block_days * 24;
}

// Ranks a row at the cost of the cheapest channel its pricing may take that
// can deliver it; where a Capacity Block's rate is unknown, at the on-demand
// rate for its whole days, flagged.
void choose_channel(RecommendRow& row, const RecommendRequest& r, bool interruptions_priced) {
  row.quota_exceeded = quota_exceeded_text(row, r);
  const auto offers = channel_offers(row, r.pricing, interruptions_priced);
  const ChannelOffer* chosen = nullptr;
  for (const auto& o : offers)
    if (o.cost_usd && (!chosen || *o.cost_usd < *chosen->cost_usd)) chosen = &o;
  if (!chosen) chosen = &offers.front();
  row.channel = chosen->channel;
  row.channel_cost_usd = chosen->cost_usd;
  row.channel_rate_unknown = !chosen->cost_usd && chosen->channel == Channel::capacity_block;
  const bool fallback = row.channel_rate_unknown && row.on_demand_cost_usd;
  row.ranked_cost_usd = fallback ? block_at_on_demand_rate_usd(row) : chosen->cost_usd;
  row.ranked_pricing = std::string(fallback ? to_string(Channel::on_demand) : to_string(row.channel));
  row.channel_note = channel_note_text(row, r.pricing, r.region);
}

// The capacity advice of the pricing the chosen channel is bought at.
void advise_for_channel(RecommendRow& row, const RecommendRequest& r) {
  const Pricing bought = row.channel == Channel::spot         ? Pricing::spot
                         : row.channel == Channel::savings_1y ? Pricing::savings_1y
                         : row.channel == Channel::savings_3y ? Pricing::savings_3y
                                                              : Pricing::on_demand;
  const bool same = bought == r.pricing || (bought == Pricing::on_demand && r.pricing == Pricing::best);
  if (!same) row.capacity = capacity_advice(*row.instance, row.count, row.estimate.total_hours, r.region, bought, row.capacity.margin);
  if (row.channel == Channel::capacity_block && !row.capacity.beyond_on_demand && !row.capacity.blocks_only)
    advise_block_instead_of_on_demand(row.capacity, *row.instance, row.count, r.region, row.on_demand_cost_usd.has_value(), row.quota_exceeded);
}

// Expected costs are billed as the run is: per second, EC2's 60 s minimum.
void price_interruptions(RecommendRow& row, const ModelSpec& m, const TrainingWorkload& w, const RecommendRequest& r) {
  const double hours = row.estimate.total_hours;
  const int accelerators = row.count * row.instance->accelerator_count;
  const double write_s = checkpoint_size_gb(m, w) /
                         r.overheads.checkpoint_write_gb_per_s.value_or(checkpoint_write_gb_per_s(r.overheads.storage, row.count, w.task));
  const double hardware_mtti = hardware_mtti_hours(accelerators);
  row.on_demand_interruptions = expected_runtime(hours, hardware_mtti, write_s, r.restart_s);
  if (row.on_demand_usd_per_hour) row.on_demand_expected_cost_usd = *row.on_demand_usd_per_hour * row.count * billed_hours(row.on_demand_interruptions.expected_hours);
  const RegionPrices* rp = row.instance->prices_in(r.region);
  if (!rp) return;
  if (!row.spot_offered) return;
  row.spot_interruption_bucket = rp->spot.interruption_bucket;
  auto fraction = interruption_bucket_monthly_fraction(rp->spot.interruption_bucket);
  if (!fraction || !row.spot_usd_per_hour) return;
  auto spot_at = [&](double p) {
    const double mtti = 1 / (1 / spot_mtti_hours(p, row.count) + 1 / hardware_mtti);
    return expected_runtime(hours, mtti, write_s, r.restart_s);
  };
  row.spot_interruptions = spot_at(*fraction);
  row.spot_expected_cost_usd = *row.spot_usd_per_hour * row.count * billed_hours(row.spot_interruptions->expected_hours);
  if (!row.on_demand_expected_cost_usd) return;
  auto spot_cost = [&](double p) { return *row.spot_usd_per_hour * row.count * billed_hours(spot_at(p).expected_hours); };
  if (spot_cost(0.99) <= *row.on_demand_expected_cost_usd) return;  // spot cheaper at any rate
  if (spot_cost(1e-6) >= *row.on_demand_expected_cost_usd) {
    row.break_even_monthly_interruption = 0;
    return;
  }
  double lo = 1e-6, hi = 0.99;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (spot_cost(mid) < *row.on_demand_expected_cost_usd ? lo : hi) = mid;
  }
  row.break_even_monthly_interruption = lo;
}

}  // namespace

double ranked_hours(const RecommendRow& r) {
  return r.channel == Channel::spot && r.spot_interruptions ? r.spot_interruptions->expected_hours : r.estimate.total_hours;
}

std::optional<DeadlineMargin> deadline_margin(const RecommendRow& pick, const RecommendRequest& r) {
  if (!r.deadline_hours) return std::nullopt;
  DeadlineMargin d;
  d.deadline_hours = *r.deadline_hours;
  d.predicted_hours = ranked_hours(pick);
  d.p90_abs_error = pick.capacity.margin;
  d.hours_at_p90 = d.predicted_hours * (1 + d.p90_abs_error);
  d.exceeds_deadline_at_p90 = d.hours_at_p90 > d.deadline_hours;
  return d;
}

void price_row(RecommendRow& row, const ModelSpec& m, const TrainingWorkload& w, const RecommendRequest& r, bool hours_given) {
  // A block ends at a fixed time: cover the prediction's p90 error (its group's band).
  const auto band = row.rl ? accuracy_band(row.instance->accelerator_name, "rl")
                           : accuracy_band(row.instance->accelerator_name, accuracy_task(to_string(w.task)),
                                           row.estimate.framework ? row.estimate.framework->name : std::string(), m.is_moe());
  price_hours(row, r, band && !hours_given ? band->p90_abs_error : 0);
  price_interruptions(row, m, w, r);
  choose_channel(row, r, true);
  advise_for_channel(row, r);
  if (row.ranked_cost_usd) row.usd_per_million_tokens = *row.ranked_cost_usd / (w.total_tokens() / 1e6);
}

void price_hours(RecommendRow& row, const RecommendRequest& r, double block_margin) {
  const Instance& inst = *row.instance;
  const double instance_hours = row.count * billed_hours(row.estimate.total_hours);
  auto job = [&](std::optional<double> rate) { return rate ? std::optional<double>(*rate * instance_hours) : std::nullopt; };
  row.on_demand_usd_per_hour = hourly_rate(inst, r.region, Pricing::on_demand);
  row.spot_usd_per_hour = hourly_rate(inst, r.region, Pricing::spot);
  row.savings_1y_usd_per_hour = hourly_rate(inst, r.region, Pricing::savings_1y);
  row.savings_3y_usd_per_hour = hourly_rate(inst, r.region, Pricing::savings_3y);
  row.on_demand_cost_usd = job(row.on_demand_usd_per_hour);
  // Above the usual spot count spot is not offered: no spot figures at all.
  row.spot_offered = spot_offered(inst, row.count);
  if (row.spot_offered) row.spot_cost_usd = job(row.spot_usd_per_hour);
  row.savings_1y_cost_usd = job(row.savings_1y_usd_per_hour);
  row.savings_3y_cost_usd = job(row.savings_3y_usd_per_hour);
  row.capacity = capacity_advice(inst, row.count, row.estimate.total_hours, r.region, r.pricing, block_margin);
  choose_channel(row, r, false);
  advise_for_channel(row, r);
}

namespace {

// Why nothing on this instance type is acceptable.
std::string rejection_reason(const ModelSpec& m, const TrainingWorkload& w, const Instance& inst, const Accelerator& acc,
                             const RecommendRequest& r, double smallest_need, const std::string& problem, const std::string& constraint_reason) {
  if (!constraint_reason.empty()) return constraint_reason;
  if (smallest_need >= 1e299) return problem.empty() ? "no feasible layout" : problem;
  // Memory held, but no layout's parallel degrees divide the model and the batch.
  if (smallest_need <= acc.memory_usable_gb())
    return fmt::format("{} fits in memory ({:.1f} GB of {:.1f} GB per accelerator) but no parallel layout divides its {} heads ({} KV), "
                       "{} layers and global batch of {} over the {}s (set --heads, --layers or --global-batch)",
                       human_params(m.total_params()), smallest_need, acc.memory_usable_gb(), m.heads, m.kv_heads, m.layers, w.global_batch,
                       acc.name);
  const std::string span = inst.efa_supported ? fmt::format("with up to {} instance(s)", r.max_instances)
                                              : "on one instance (no EFA, so no multi-instance training)";
  // QLoRA's base weights are 4-bit NF4 whatever the compute precision.
  const std::string precision = w.task == Task::qlora ? fmt::format("(4-bit NF4 base, {} compute)", to_string(w.precision))
                                                      : fmt::format("in {}", to_string(w.precision));
  std::string reason = fmt::format("{} on {} {} needs {:.1f} GB per accelerator {}, has {:.1f} GB ({:.0f} GiB)", to_string(w.task),
                                   human_params(m.total_params()), precision, smallest_need, span, acc.memory_usable_gb(),
                                   acc.memory_usable_gib);
  // Suggest the lighter task that would fit on one instance.
  std::optional<Task> lighter;
  if (w.task == Task::lora) lighter = Task::qlora;
  else if (w.task == Task::finetune) lighter = Task::lora;
  if (lighter) {
    TrainingWorkload lw = w;
    lw.task = *lighter;
    if (search_cluster(m, lw, Cluster{&inst, &acc, 1}).best) reason += fmt::format("; --task {} fits", to_string(*lighter));
  }
  return reason;
}

// The most accelerators a layout is searched on: a sequence per instance (each
// data-parallel rank's sequences over an instance's tensor-parallel group, the
// pipeline stages taking the place of ranks), times the context-parallel ranks
// the sequence length allows (sequence / CP >= kMinContextParallelTokens). At
// one sequence per instance alone, long-context jobs (a global batch of a few
// dozen sequences) lost their context-parallel layouts: 32 instances for
// llama-3-8b at 128k tokens where 128 run it 3.7x faster. Pipeline stages past
// it would leave each stage fewer micro-batches than stages (a bubble of more
// than half), and a 200M-token 70B fine-tune was picked on 384 p4d.24xlarge.
double most_searched_accelerators(const TrainingWorkload& w, const Instance& inst) {
  return double(w.global_batch) * inst.accelerator_count * largest_context_parallel(w.seq_len);
}

// Every acceptable count of one instance type (candidate_counts), or a rejection.
void options_for_instance(const ModelSpec& m, const TrainingWorkload& w, const Instance& inst, const Accelerator& acc,
                          const RecommendRequest& r, Recommendation& out) {
  double smallest_need = 1e300;
  std::string problem;
  RowFilter filter;
  bool any_row = false;
  std::optional<Layout> previous_best;  // where the next count's search starts
  for (int count : candidate_counts(inst, r)) {
    Cluster c{&inst, &acc, count};
    if (c.accelerators() > most_searched_accelerators(w, inst)) break;
    ClusterSearch s = search_cluster(m, w, c, {}, SearchOrder{!r.exhaustive_search, previous_best ? &*previous_best : nullptr});
    if (s.best) previous_best = s.best->layout;
    out.layouts_evaluated += s.layouts_evaluated;
    out.layouts_pruned += s.layouts_pruned;
    if (!s.best) {
      if (s.smallest_need_gb > 0) smallest_need = std::min(smallest_need, s.smallest_need_gb);
      if (problem.empty()) problem = s.problem;
      continue;
    }
    RecommendRow row;
    row.instance = &inst;
    row.count = count;
    row.estimate = *s.best;
    add_job_overheads(row.estimate, m, w, c, r.overheads);
    price_row(row, m, w, r);
    any_row |= admit_row(std::move(row), r, filter, out);
  }
  if (!any_row)
    out.rejections.push_back({inst.name, rejection_reason(m, w, inst, acc, r, smallest_need, problem, filter.reason), false,
                              filter.reason.empty() && smallest_need <= acc.memory_usable_gb()});
}

void mark_pareto(std::vector<RecommendRow>& rows) {
  // Pareto frontier over (ranked time, ranked cost); rows without a price are never on it.
  for (auto& a : rows) {
    if (!a.ranked_cost_usd) continue;
    a.pareto = std::none_of(rows.begin(), rows.end(), [&](const RecommendRow& b) {
      if (!b.ranked_cost_usd) return false;
      const double ta = ranked_hours(a), tb = ranked_hours(b);
      const double ca = *a.ranked_cost_usd, cb = *b.ranked_cost_usd;
      return tb <= ta && cb <= ca && (tb < ta || cb < ca);
    });
  }
}

std::string option_text(const RecommendRow& r) {
  return fmt::format("{} x {}, {}, ${}", r.count, r.instance->name, format_duration(ranked_hours(r)),
                     format_thousands(*r.ranked_cost_usd, *r.ranked_cost_usd < 1000 ? 2 : 0));
}

// The rule the pick was made by (docs/methodology.md §The pick).
struct PickRule {
  bool deadline = false;          // the cheapest that meets the deadline (no slack, no value of time)
  bool deadline_at_p90 = false;   // ... at its p90 error (else at the prediction: none meets it at p90)
  double slack = 0;
  double value_of_time_usd_per_hour = 0;
};

PickRule pick_rule(const RecommendRequest& r) {
  PickRule rule;
  rule.deadline = r.deadline_hours && !r.cost_slack_given && !r.value_of_time_given;
  rule.deadline_at_p90 = rule.deadline;
  rule.slack = rule.deadline ? 0 : r.cost_slack;
  rule.value_of_time_usd_per_hour = rule.deadline ? 0 : r.value_of_time_usd_per_hour;
  return rule;
}

}  // namespace

double pick_rule_value_of_time(const RecommendRequest& r) { return pick_rule(r).value_of_time_usd_per_hour; }

std::string_view pick_rule_name(const RecommendRequest& r) {
  const PickRule rule = pick_rule(r);
  if (rule.deadline) return "deadline";
  return rule.value_of_time_usd_per_hour > 0 ? "value-of-time" : "slack";
}

namespace {

std::string slack_rule_text(const Recommendation& rec, const PickRule& rule) {
  const RecommendRow &p = *rec.pick, &low = *rec.cheapest;
  const double slack_pct = rule.slack * 100;
  const bool same = p.instance == low.instance && p.count == low.count;
  if (slack_pct <= 0 && same && rule.value_of_time_usd_per_hour <= 0) return fmt::format("the cheapest option ({}; --cost-slack 0)", option_text(p));
  if (rule.value_of_time_usd_per_hour <= 0) {
    if (same)
      return fmt::format("the cheapest option ({}), and no option within {:.0f}% of its cost is faster by as much as it costs more", option_text(p), slack_pct);
    return fmt::format("the fastest option within {:.0f}% of the cheapest cost that is faster than each cheaper one by as much as it costs "
                       "more: {}, {:.0f}% more than the cheapest ({}) and {:.1f}x faster",
                       slack_pct, option_text(p), (*p.ranked_cost_usd / *low.ranked_cost_usd - 1) * 100, option_text(low),
                       low.estimate.total_hours / p.estimate.total_hours);
  }
  // With a value of time: price plus wait, within the slack's dollars of the least such total.
  const std::string wait = fmt::format("price plus its wait at ${:g} an hour (--value-of-time)", rule.value_of_time_usd_per_hour);
  const std::string allowance = fmt::format("${} ({:.0f}% of the cheapest price)", format_thousands(rule.slack * *low.ranked_cost_usd, rule.slack * *low.ranked_cost_usd < 1000 ? 2 : 0), slack_pct);
  if (same)
    return fmt::format("the cheapest option ({}), and no option whose {} is within {} of the lowest such total is faster by as much as it costs more",
                       option_text(p), wait, allowance);
  return fmt::format("the fastest option whose {} is within {} of the lowest such total, and that is faster than each option below it by as much "
                     "as it costs more: {}, {:.0f}% more money than the cheapest ({}) and {:.1f}x faster",
                     wait, allowance, option_text(p), (*p.ranked_cost_usd / *low.ranked_cost_usd - 1) * 100, option_text(low),
                     low.estimate.total_hours / p.estimate.total_hours);
}

// --task qlora: whether the pick needs QLoRA, and where bf16 LoRA would do.
std::string qlora_clause(const Recommendation& rec) {
  const RecommendRow& p = *rec.pick;
  if (!p.bf16_lora_fits) return "";
  std::string s = *p.bf16_lora_fits ? "; bf16 LoRA fits it too (--task lora runs faster on the same instances)"
                                    : "; bf16 LoRA does not fit it, QLoRA's 4-bit base does";
  if (rec.options_set_aside_for_lora > 0)
    s += fmt::format("; {} option{} that bf16 LoRA fits on more than {} accelerator{} {} listed last, never the QLoRA pick (QLoRA is for "
                     "fitting on fewer: --task lora runs faster there)",
                     rec.options_set_aside_for_lora, rec.options_set_aside_for_lora > 1 ? "s" : "", rec.qlora_fewest_accelerators,
                     rec.qlora_fewest_accelerators > 1 ? "s" : "", rec.options_set_aside_for_lora > 1 ? "are" : "is");
  return s;
}

// Why the pick, in one sentence: the rule that decided, then the deadline,
// budget and horizon it was held to.
std::string why_text(const Recommendation& rec, const RecommendRequest& r, const PickRule& rule) {
  const RecommendRow& p = *rec.pick;
  std::string s;
  const auto d = deadline_margin(p, r);
  if (rule.deadline) {
    s = rule.deadline_at_p90
            ? fmt::format("the cheapest option that meets the {} deadline at its p90 error (+{:.0f}%: {}): {}", format_duration(d->deadline_hours),
                          d->p90_abs_error * 100, format_duration(d->hours_at_p90), option_text(p))
            : fmt::format("the cheapest option that meets the {} deadline: {}; none meets it at its p90 error (+{:.0f}%: {}; a later --deadline "
                          "leaves room)", format_duration(d->deadline_hours), option_text(p), d->p90_abs_error * 100, format_duration(d->hours_at_p90));
    s += " (--cost-slack or --value-of-time trade money for time)";
  } else {
    s = slack_rule_text(rec, rule);
    if (rec.above_cost_ceiling) {
      const double ceiling_usd = *rec.cheapest->ranked_cost_usd * r.max_cost_multiple;
      s += fmt::format("; not {}, which costs more than {:g}x the cheapest (${}; --max-cost-multiple)", option_text(*rec.above_cost_ceiling),
                       r.max_cost_multiple, format_thousands(ceiling_usd, ceiling_usd < 1000 ? 2 : 0));
    }
    if (rec.uncertain_count_pick)
      s += fmt::format("; not {}, as no usual on-demand count is known for {} (an option one can start comes first)",
                       option_text(*rec.uncertain_count_pick), rec.uncertain_count_pick->instance->name);
    if (d) {
      s += fmt::format("; meets the {} deadline", format_duration(d->deadline_hours));
      if (d->exceeds_deadline_at_p90)
        s += fmt::format(" at the prediction, not at its p90 error (+{:.0f}%: {}; a later --deadline or a faster pick leaves room)",
                         d->p90_abs_error * 100, format_duration(d->hours_at_p90));
    }
  }
  if (r.budget_usd) s += fmt::format("; within the ${} budget", format_thousands(*r.budget_usd));
  if (rec.beyond_horizon > 0)
    s += fmt::format("; {} option{} longer than the {} horizon {} listed last, never the pick (--horizon)", rec.beyond_horizon,
                     rec.beyond_horizon > 1 ? "s" : "", format_duration(r.horizon_hours), rec.beyond_horizon > 1 ? "are" : "is");
  return s + qlora_clause(rec);
}

// The candidates the pick rule weighs: within the horizon (and, under the
// deadline rule, meeting the deadline at the p90 error when `at_p90`), each
// hour weighed at the rule's value of time.
int accelerators(const RecommendRow& x) { return x.count * x.instance->accelerator_count; }

std::vector<Candidate> candidates(const Recommendation& rec, const RecommendRequest& r, const PickRule& rule) {
  std::vector<Candidate> c;
  for (const auto& x : rec.rows) {
    const double hours = ranked_hours(x);
    Candidate k{x.ranked_cost_usd, hours, x.count * x.instance->accelerator_count, x.instance->name};
    k.time_value_usd = rule.value_of_time_usd_per_hour * hours;
    k.eligible = hours <= r.horizon_hours && !set_aside_for_lora(x, rec);
    if (rule.deadline && rule.deadline_at_p90) k.eligible = k.eligible && hours * (1 + x.capacity.margin) <= *r.deadline_hours;
    k.count_uncertain = x.capacity.limit_unknown && x.channel == Channel::on_demand;
    c.push_back(k);
  }
  mark_cost_ceiling(c, r.max_cost_multiple);
  return c;
}

void sort_rows(std::vector<RecommendRow>& rows, SortBy sort_by) {
  auto name_key = [](const RecommendRow& x) { return std::pair(x.instance->name, x.count); };
  auto cost_or_inf = [](const RecommendRow& x) { return x.ranked_cost_usd.value_or(1e300); };
  std::stable_sort(rows.begin(), rows.end(), [&](const RecommendRow& a, const RecommendRow& b) {
    switch (sort_by) {
      case SortBy::recommended: return false;  // already in that order
      case SortBy::time:
        if (ranked_hours(a) != ranked_hours(b)) return ranked_hours(a) < ranked_hours(b);
        break;
      case SortBy::cost:
      case SortBy::cost_per_token:
        if (cost_or_inf(a) != cost_or_inf(b)) return cost_or_inf(a) < cost_or_inf(b);
        break;
      case SortBy::pareto:
        if (a.pareto != b.pareto) return a.pareto;
        if (a.pareto) {
          if (ranked_hours(a) != ranked_hours(b)) return ranked_hours(a) < ranked_hours(b);
        } else if (cost_or_inf(a) != cost_or_inf(b)) {
          return cost_or_inf(a) < cost_or_inf(b);
        }
        break;
    }
    return name_key(a) < name_key(b);
  });
}

// The pick, the alternatives, one row per instance type (or every count) in
// the requested order.
void choose_rows(Recommendation& out, const RecommendRequest& r) {
  PickRule rule = pick_rule(r);
  std::vector<Candidate> c = candidates(out, r, rule);
  if (rule.deadline && std::none_of(c.begin(), c.end(), [](const Candidate& k) { return k.cost && k.eligible; })) {
    rule.deadline_at_p90 = false;  // none meets it at p90: the cheapest that meets it at the prediction
    c = candidates(out, r, rule);
  }
  bool priced_within = false;
  std::optional<size_t> fastest_beyond;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i].time <= r.horizon_hours) {
      priced_within = priced_within || c[i].cost.has_value();
      continue;
    }
    ++out.beyond_horizon;
    if (c[i].cost && (!fastest_beyond || c[i].time < c[*fastest_beyond].time)) fastest_beyond = i;
  }
  if (!priced_within && fastest_beyond) out.fastest_beyond_horizon = out.rows[*fastest_beyond];
  const Choice ch = choose(c, rule.slack, r.all_counts);
  if (ch.pick) {
    std::vector<Candidate> unbounded = c;
    for (auto& k : unbounded) k.within_cost_ceiling = true;
    if (const auto i = pick(unbounded, rule.slack); i && *i != *ch.pick) out.above_cost_ceiling = out.rows[*i];
    std::vector<Candidate> any_count = c;
    for (auto& k : any_count) k.count_uncertain = false;
    if (const auto i = pick(any_count, rule.slack); i && *i != *ch.pick) out.uncertain_count_pick = out.rows[*i];
  }
  if (ch.pick && out.rows[*ch.pick].capacity.beyond_on_demand) {
    // The pick's own type at the counts one can usually start on demand.
    std::vector<Candidate> startable = c;
    for (size_t i = 0; i < c.size(); ++i)
      if (out.rows[i].capacity.beyond_on_demand || out.rows[i].instance != out.rows[*ch.pick].instance) startable[i].cost.reset();
    if (const auto i = pick(startable, rule.slack)) out.on_demand_pick = out.rows[*i];
  }
  if (ch.fastest_unpriced) out.fastest_unpriced = out.rows[*ch.fastest_unpriced];
  if (ch.fastest_within_cost_ceiling) out.fastest_within_cost_ceiling = out.rows[*ch.fastest_within_cost_ceiling];
  apply_choice(out, ch);
  if (out.pick) out.why = why_text(out, r, rule);
  sort_rows(out.rows, r.sort_by);
}

}  // namespace

namespace {

// QLoRA exists to fit a model where bf16 LoRA does not (docs/methodology.md
// §The pick): each QLoRA option says whether bf16 LoRA fits the same
// instances, and the LoRA pick of the same job is kept as the alternative.
void compare_with_lora(const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r, Recommendation& out) {
  TrainingWorkload lora_w = w;
  lora_w.task = Task::lora;
  RecommendRequest every_count = r;
  every_count.all_counts = true;  // every fitting (type, count), not one row per type
  const Recommendation lora = recommend(m, lora_w, catalog, every_count);
  std::set<std::pair<std::string, int>> fits;
  for (const auto& x : lora.rows) fits.insert({x.instance->name, x.count});
  for (auto& x : out.rows) {
    x.bf16_lora_fits = fits.count({x.instance->name, x.count}) > 0;
    if (x.ranked_cost_usd && ranked_hours(x) <= r.horizon_hours)
      out.qlora_fewest_accelerators = std::min(out.qlora_fewest_accelerators > 0 ? out.qlora_fewest_accelerators : 1 << 30, accelerators(x));
  }
  for (const auto& x : out.rows) out.options_set_aside_for_lora += set_aside_for_lora(x, out) ? 1 : 0;
  out.lora_alternative = lora.pick;
}

// --pricing spot ranks spot alone, and spot is not offered above the usual
// spot count: a large job's spot pick may be a fleet of small GPUs that costs
// more than the same job bought another way. The --pricing best pick, where its
// price plus its wait is lower (docs/methodology.md §Channels).
void compare_with_other_channels(const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r,
                                 Recommendation& out) {
  if (r.pricing != Pricing::spot || !out.pick || !out.pick->ranked_cost_usd) return;
  RecommendRequest best = r;
  best.pricing = Pricing::best;
  const Recommendation other = recommend(m, w, catalog, best);
  if (!other.pick || !other.pick->ranked_cost_usd || other.pick->channel == Channel::spot) return;
  const double value = pick_rule(r).value_of_time_usd_per_hour;
  auto weighed = [&](const RecommendRow& x) { return *x.ranked_cost_usd + value * ranked_hours(x); };
  if (weighed(*other.pick) < weighed(*out.pick)) out.other_channels_pick = other.pick;
}

}  // namespace

namespace {
// A pick that fills its memory with several sequences per micro-batch: the
// same cluster and layout at half, a quarter, ... of them (the global batch
// stays divisible), the first that leaves room.
std::optional<RoomierMicroBatch> roomier_micro_batch(const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog,
                                                     const RecommendRow& pick, const RecommendRequest& r) {
  const auto share = [](const TrainingEstimate& e) { return e.memory.total_gb() / e.memory.capacity_gb; };
  if (pick.rl || share(pick.estimate) < kTightMemoryShare) return std::nullopt;
  const Cluster c{pick.instance, &catalog.accelerator_of(*pick.instance), pick.count};
  Layout l = pick.estimate.layout;
  for (l.micro_batch /= 2; l.micro_batch >= 1; l.micro_batch /= 2) {
    TrainingEstimate e = estimate_training(m, w, c, l);
    if (!e.fits() || share(e) > kRoomyMemoryShare) continue;
    add_job_overheads(e, m, w, c, r.overheads);
    return RoomierMicroBatch{l.micro_batch, share(e), e.total_hours};
  }
  return std::nullopt;
}
}  // namespace

Recommendation recommend(const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r) {
  Recommendation out;
  for (const Instance& inst : catalog.instances) {
    if (!considered(inst, r, out.rejections)) continue;
    const Accelerator& acc = catalog.accelerator_of(inst);
    if (auto p = accelerator_problem(acc, w)) {
      out.rejections.push_back({inst.name, *p});
      continue;
    }
    options_for_instance(m, w, inst, acc, r, out);
  }
  if (w.task == Task::qlora) compare_with_lora(m, w, catalog, r, out);
  finish_recommendation(out, r);
  compare_with_other_channels(m, w, catalog, r, out);
  add_bills(out, m, w, catalog, r);
  if (out.pick) out.roomier_micro_batch = roomier_micro_batch(m, w, catalog, *out.pick, r);
  return out;
}

std::vector<std::string> priced_regions(const Catalog& catalog) {
  std::set<std::string> regions;
  for (const auto& inst : catalog.instances)
    for (const auto& [region, prices] : inst.prices)
      if (prices.on_demand.usd_per_hour) regions.insert(region);
  return {regions.begin(), regions.end()};
}

Recommendation recommend_across_regions(const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r,
                                        std::string& region) {
  std::vector<Recommendation> recs;
  std::optional<size_t> best;
  double best_weighed = 0;
  for (const auto& name : r.regions) {
    RecommendRequest one = r;
    one.region = name;
    one.regions.clear();
    recs.push_back(recommend(m, w, catalog, one));
    const auto& p = recs.back().pick;
    if (!p || !p->ranked_cost_usd) continue;
    // A transfer whose rate is unknown weighs nothing here (the regions line says it is unknown): an unknown is no reason to choose.
    const double transfer = p->bill && p->bill->transfer_usd ? *p->bill->transfer_usd : 0;
    const double weighed = *p->ranked_cost_usd + transfer + pick_rule_value_of_time(r) * ranked_hours(*p);
    const bool at_data = name == r.data_region;
    if (!best || weighed < best_weighed - 1e-9 || (std::abs(weighed - best_weighed) <= 1e-9 && at_data && r.regions[*best] != r.data_region)) {
      best = recs.size() - 1;
      best_weighed = weighed;
    }
  }
  const size_t chosen = best.value_or(0);
  Recommendation out = recs[chosen];
  for (size_t i = 0; i < recs.size(); ++i) {
    const auto& p = recs[i].pick;
    out.across_regions.push_back({r.regions[i], p, p && p->bill ? p->bill->transfer_usd : std::nullopt, i == chosen});
  }
  region = r.regions[chosen];
  return out;
}

void add_bill(RecommendRow& row, const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r) {
  if (row.rl) return;
  row.bill = job_bill(m, w, row.estimate.total_hours, row.ranked_cost_usd, r.overheads.storage, row.count, r.overheads.checkpoint_write_gb_per_s, catalog,
                      r.region, r.data_region);
}

void add_bills(Recommendation& rec, const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r) {
  for (auto& row : rec.rows) add_bill(row, m, w, catalog, r);
  for (auto* row : {&rec.pick, &rec.cheapest, &rec.fastest, &rec.fastest_unpriced, &rec.fastest_within_cost_ceiling, &rec.on_demand_pick, &rec.above_cost_ceiling, &rec.uncertain_count_pick, &rec.other_channels_pick, &rec.fastest_beyond_horizon})
    if (*row) add_bill(**row, m, w, catalog, r);
}

bool set_aside_for_lora(const RecommendRow& x, const Recommendation& rec) {
  return x.bf16_lora_fits.value_or(false) && rec.qlora_fewest_accelerators > 0 &&
         x.count * x.instance->accelerator_count > rec.qlora_fewest_accelerators;
}

bool blocked_by_quota(const RecommendRow& row) {
  return !row.quota_exceeded.empty() && !row.ranked_cost_usd && row.channel != Channel::spot && row.channel != Channel::capacity_block;
}

bool admit_row(RecommendRow&& row, const RecommendRequest& r, RowFilter& filter, Recommendation& out) {
  const double hours = ranked_hours(row);  // a spot row is held to its expected time with reclaims
  if (blocked_by_quota(row)) {
    // Counts rise: the first blocked count is the smallest the quota stops, the one to name (not the largest tried).
    if (filter.reason.find("on-demand quota") == std::string::npos)
      filter.reason = fmt::format("{} x {} {}", row.count, row.instance->name, row.quota_exceeded);
    return false;
  }
  if (r.deadline_hours && hours > *r.deadline_hours) {
    out.fastest_over_deadline_hours = std::min(out.fastest_over_deadline_hours.value_or(1e300), hours);
    if (row.ranked_cost_usd) out.fastest_priced_over_deadline_hours = std::min(out.fastest_priced_over_deadline_hours.value_or(1e300), hours);
    if (r.budget_usd && row.ranked_cost_usd && round_cents(*row.ranked_cost_usd) <= round_cents(*r.budget_usd))
      out.fastest_over_deadline_within_budget_hours = std::min(out.fastest_over_deadline_within_budget_hours.value_or(1e300), hours);
    filter.reason = fmt::format("misses the {} deadline (fastest {} at {} instances)", format_duration(*r.deadline_hours),
                                format_duration(hours), row.count);
    return false;
  }
  // In cents, as the costs are shown: a budget of the $18.32 printed is met.
  if (r.budget_usd && (!row.ranked_cost_usd || round_cents(*row.ranked_cost_usd) > round_cents(*r.budget_usd))) {
    if (!row.ranked_cost_usd) {
      // A priced count already over the budget says more than an unpriced one (a type with blocks but no on-demand rate).
      if (filter.cheapest_over_budget == 1e300) filter.reason = "price unknown, so the budget cannot be checked";
    } else if (*row.ranked_cost_usd < filter.cheapest_over_budget) {
      out.cheapest_over_budget_usd = std::min(out.cheapest_over_budget_usd.value_or(1e300), *row.ranked_cost_usd);
      filter.cheapest_over_budget = *row.ranked_cost_usd;
      filter.reason = fmt::format("over the {} budget (cheapest {} at {} instance{})", format_usd(*r.budget_usd), format_usd(*row.ranked_cost_usd),
                                  row.count, row.count > 1 ? "s" : "");
    }
    return false;
  }
  out.rows.push_back(std::move(row));
  return true;
}

void finish_recommendation(Recommendation& out, const RecommendRequest& r) {
  out.options_found = out.rows.size();
  mark_pareto(out.rows);
  choose_rows(out, r);
  std::sort(out.rejections.begin(), out.rejections.end(), [](const Rejection& a, const Rejection& b) { return a.instance < b.instance; });
}

}  // namespace gpuadvisor
