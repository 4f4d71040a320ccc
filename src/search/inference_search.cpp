// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
#include "gpuadvisor/search/inference_search.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>
#include <system_error>
#include <thread>
#include <tuple>

#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/search/replicas.hpp"
#include "gpuadvisor/serving/simulate.hpp"

namespace gpuadvisor {

bool priced_per_token(const InferenceWorkload& w) { return w.mode == ServingMode::offline && !w.requests_per_second; }

double replicas_for_load(double load_requests_per_second, double requests_per_second_per_replica, double utilisation) {
  return std::max(1.0, std::ceil(load_requests_per_second / (requests_per_second_per_replica * utilisation) - 1e-9));
}

double replicas_needed(const ServingRow& row, const InferenceWorkload& w) {
  return replicas_for_load(*w.requests_per_second, row.estimate.requests_per_second, w.target_utilisation);
}

void size_service(ServingRow& row, const InferenceWorkload& w) {
  const InferenceEstimate& e = row.estimate;
  const int per_node = row.instance->accelerator_count;
  const int replicas_per_instance = e.layout.pp == 1 ? per_node / e.layout.tp : 1;
  const int instances_per_replica = e.layout.pp;
  if (w.requests_per_second) {
    const double capped = std::min(replicas_needed(row, w), kMostServiceReplicas);
    row.instances = static_cast<int>(std::min(kMostServiceReplicas, std::ceil(capped / replicas_per_instance) * instances_per_replica));
    row.replicas = row.instances / instances_per_replica * replicas_per_instance;
    row.utilisation = *w.requests_per_second / (row.replicas * e.requests_per_second);
  } else {
    // The smallest service one can rent: one instance (pp with a pipeline), every replica slot of it deployed.
    row.instances = instances_per_replica;
    row.replicas = replicas_per_instance;
    row.utilisation = w.target_utilisation;
  }
}

void operating_point(ServingRow& row, const ModelSpec& m, const InferenceWorkload& w) {
  const InferenceEstimate& cap = row.estimate;
  const Cluster c{row.instance, row.accelerator, cap.layout.pp};
  const double load_per_replica = row.utilisation * cap.requests_per_second;
  row.at_load = cap;
  int batch = cap.batch;
  for (int i = 0; i < 32; ++i) {
    evaluate_batch(m, w, c, row.at_load, batch);
    const int next = std::clamp(static_cast<int>(std::ceil(load_per_replica * w.samples * row.at_load.latency_s - 1e-9)), 1, cap.batch);
    if (next == batch) break;
    batch = next;
  }
}

ServingCost serving_cost(const ServingRow& row, const InferenceWorkload& w, std::optional<double> instance_usd_per_hour) {
  ServingCost c;
  if (!instance_usd_per_hour) return c;
  c.usd_per_hour = *instance_usd_per_hour * row.instances;
  c.usd_per_month = *c.usd_per_hour * kHoursPerMonth;
  const double requests_per_hour = 3600 * row.utilisation * row.replicas * row.estimate.requests_per_second;
  c.usd_per_million_output_tokens = *c.usd_per_hour / (requests_per_hour * w.output_tokens) * 1e6;
  c.usd_per_million_input_tokens = *c.usd_per_hour / (requests_per_hour * w.prompt_tokens) * 1e6;
  return c;
}

namespace {


// The lighter weight format to suggest when the weights do not fit.
std::optional<WeightFormat> lighter(WeightFormat f) {
  switch (f) {
    case WeightFormat::bf16: return WeightFormat::int8;
    case WeightFormat::fp8:
    case WeightFormat::int8: return WeightFormat::int4;
    default: return std::nullopt;
  }
}

}  // namespace

std::vector<ServingLayout> expert_parallel_layouts(const ModelSpec& m, const EngineProfile& engine, const Accelerator& acc, int tp) {
  if (!m.is_moe() || !engine.expert_parallel || tp < 2 || acc.software != "cuda" || m.experts % tp != 0) return {};
  return {ServingLayout{tp, 1, tp, 1}, ServingLayout{tp, 1, tp, tp}};
}

std::vector<int> tensor_parallel_sizes(const ModelSpec& m, const Instance& inst, const Accelerator& acc, int pp) {
  std::vector<int> out;
  for (int tp = 1; tp <= inst.accelerator_count; ++tp)
    if (inst.accelerator_count % tp == 0 && (m.heads % tp == 0 || pads_attention_heads(acc)) && (pp == 1 || tp == inst.accelerator_count))
      out.push_back(tp);
  return out;
}

namespace {

// "tp 8", "tp 8 pp 2" (pp_word " pp "), "tp 8 ep 8 attention dp 8".
std::string layout_name(const ServingLayout& l, const char* pp_word) {
  std::string s = fmt::format("tp {}{}", l.tp, l.pp > 1 ? fmt::format("{}{}", pp_word, l.pp) : "");
  if (l.ep > 1) s += fmt::format(" ep {}", l.ep);
  if (l.attention_dp > 1) s += fmt::format(" attention dp {}", l.attention_dp);
  return s;
}

// The layouts choose_serving_layout tries: plain tensor parallel at each size
// asked, and the expert-parallel ones at it, those matching what was asked.
std::vector<ServingLayout> asked_layouts(const ModelSpec& m, const InferenceWorkload& w, const Instance& inst, const Accelerator& acc, int pp,
                                         const LayoutRequest& asked) {
  std::vector<ServingLayout> out;
  for (int size : asked.tp ? std::vector<int>{*asked.tp} : tensor_parallel_sizes(m, inst, acc, pp)) {
    std::vector<ServingLayout> at{ServingLayout{size, pp}};
    if (pp == 1)
      for (const ServingLayout& l : expert_parallel_layouts(m, engine_for(acc, w.engine), acc, size)) at.push_back(l);
    const size_t before = out.size();
    for (const ServingLayout& l : at)
      if ((!asked.ep || l.ep == *asked.ep) && (!asked.attention_dp || l.attention_dp == *asked.attention_dp)) out.push_back(l);
    // A layout asked for that is not among them is tried as asked, so that its problem is named.
    if (out.size() == before) out.push_back(ServingLayout{size, pp, asked.ep.value_or(size), asked.attention_dp.value_or(1)});
  }
  return out;
}

}  // namespace

ServingChoice choose_serving_layout(const ModelSpec& m, const InferenceWorkload& w, const Instance& inst, const Accelerator& acc, int pp,
                                    const LayoutRequest& asked, std::optional<int> batch) {
  const std::optional<int> tp = asked.tp;
  ServingChoice out;
  const Cluster c{&inst, &acc, pp};
  const std::vector<ServingLayout> layouts = asked_layouts(m, w, inst, acc, pp, asked);
  ReplicaSimulations sims;
  // Cheapest for the load (fewest instances), then the fastest. An offline
  // job without a volume is priced per token: the most requests/s one instance serves, then the fastest.
  // A closed loop (--clients) keeps its own sequences in flight, not the
  // capacity batch: there each layout is simulated with the clients and paced
  // by its mean request latency, first token and every gap after it (the
  // clients' requests per second is their number over it).
  auto pace = [&](const ServingRow& x) {
    if (!w.clients || layouts.size() < 2 || !x.estimate.fits()) return x.pace_seen_s();
    return simulate_service(m, w, c, x.estimate, *serving_load(w, std::nullopt, std::nullopt)).metrics.e2e_s.mean;
  };
  auto key = [&](const ServingRow& x, double pace_s) {
    const double capacity = priced_per_token(w) ? -x.replicas * x.estimate.requests_per_second : 0.0;
    return std::tuple(x.instances, capacity, pace_s);
  };
  double chosen_pace_s = 0;
  double least_need_gb = std::numeric_limits<double>::infinity();
  for (const ServingLayout& l : layouts) {
    auto lp = serving_layout_problem(m, c, l);
    if (!lp) lp = serving_engine_layout_problem(engine_for(acc, w.engine), l);
    if (lp) {
      out.problem = *lp;
      continue;
    }
    ServingRow row;
    row.instance = &inst;
    row.accelerator = &acc;
    std::string problem;
    row.estimate = estimate_inference(m, w, c, l, batch, &problem);
    if (row.estimate.fits()) {
      size_service(row, w);
      operating_point(row, m, w);
      if (problem.empty() && sized_by_simulation(w)) problem = size_by_simulation(row, m, w, kMaxSimulatedReplicas, sims);
    }
    if (!row.estimate.fits() || !problem.empty()) {
      // When no size meets the targets, the one closest is still returned
      // (with a fixed --tp, that size), with the targets it misses.
      // Of layouts that do not fit, the one that needs the least memory says why.
      const bool shown = tp || row.estimate.fits();
      if (out.row && out.problem.empty()) continue;
      const std::string said = layouts.size() == 1 ? problem : fmt::format("{}: {}", layout_name(l, " pp "), problem);
      if (shown) {
        const double row_pace_s = pace(row);
        if (!out.row || key(row, row_pace_s) < key(*out.row, chosen_pace_s)) {
          out.row = row;
          out.problem = said;
          chosen_pace_s = row_pace_s;
        }
      } else if (!out.row && row.estimate.memory.total_gb() < least_need_gb) {
        least_need_gb = row.estimate.memory.total_gb();
        out.problem = said;
      }
      continue;
    }
    const double row_pace_s = pace(row);
    if (!out.row || !out.problem.empty() || key(row, row_pace_s) < key(*out.row, chosen_pace_s)) {
      out.row = row;
      out.problem.clear();
      chosen_pace_s = row_pace_s;
    }
  }
  return out;
}

namespace {

// A replica pipelined over instances is never preferred when one instance of
// the same family holds the model.
void drop_needless_pipelines(ServingRecommendation& out) {
  auto single = [&](const std::string& family) {
    return std::any_of(out.rows.begin(), out.rows.end(), [&](const ServingRow& x) { return x.instance->family == family && x.estimate.layout.pp == 1; });
  };
  std::vector<std::string> dropped;
  std::erase_if(out.rows, [&](const ServingRow& x) {
    const bool drop = x.estimate.layout.pp > 1 && single(x.instance->family);
    if (drop) dropped.push_back(x.instance->name + ":");
    return drop;
  });
  std::erase_if(out.notes, [&](const std::string& n) {
    return std::any_of(dropped.begin(), dropped.end(), [&](const std::string& d) { return n.rfind(d, 0) == 0; });
  });
}

void mark_pareto(std::vector<ServingRow>& rows) {
  for (auto& a : rows) {
    if (!a.ranked_usd_per_hour) continue;
    a.pareto = std::none_of(rows.begin(), rows.end(), [&](const ServingRow& b) {
      if (!b.ranked_usd_per_hour) return false;
      const double ta = a.pace_seen_s(), tb = b.pace_seen_s(), ca = *a.ranked_usd_per_hour, cb = *b.ranked_usd_per_hour;
      return tb <= ta && cb <= ca && (tb < ta || cb < ca);
    });
  }
}

// The cost the pick weighs: the service per hour (for a load, or the smallest
// service without one); for an offline job without a volume, the cost per
// million output tokens at the target utilisation, since it is billed for the
// time its tokens take.
std::optional<double> ranked_cost(const ServingRow& x, bool per_token) {
  return per_token ? x.usd_per_million_output_tokens : x.ranked_usd_per_hour;
}

// "p90 " before a latency the simulation gave at the targets' percentile.
std::string seen_prefix(const ServingRow& x) {
  if (!x.simulated) return "";
  return x.slo_percentile ? fmt::format("p{} ", x.slo_percentile) : "mean ";
}

std::string service_text(const ServingRow& x, bool per_token) {
  const double month = *x.ranked_usd_per_hour * kHoursPerMonth;
  const std::string tpot = x.tpot_seen_s() > 0 ? fmt::format("{}{:.0f} ms per token, ", seen_prefix(x), x.tpot_seen_s() * 1e3)
                                               : fmt::format("{}request latency {:.0f} ms, ", seen_prefix(x), x.e2e_seen_s() * 1e3);
  std::string s = fmt::format("{} x {} ({} replica{}), {}${}/month", x.instances, x.instance->name, x.replicas, x.replicas > 1 ? "s" : "", tpot,
                              format_thousands(month, month < 1000 ? 2 : 0));
  if (per_token && x.usd_per_million_output_tokens) s += fmt::format(", ${} per million output tokens", format_price(*x.usd_per_million_output_tokens));
  return s;
}

// Online without a load the pick is the smallest bill for one instance; per
// token a bigger one may be cheaper once a load keeps it busy: say which.
std::string no_load_note(const ServingRecommendation& rec, const InferenceWorkload& w) {
  if (w.requests_per_second || priced_per_token(w) || !rec.pick->usd_per_million_output_tokens) return "";
  const ServingRow* low = &*rec.pick;
  for (const auto& x : rec.rows)
    if (x.usd_per_million_output_tokens && *x.usd_per_million_output_tokens < *low->usd_per_million_output_tokens) low = &x;
  if (low->instance == rec.pick->instance) return "";
  return fmt::format("; with no load given this is the smallest bill: per million output tokens {} x {} is cheaper (${} against ${}, each at "
                     "{:.0f}% busy): give --requests-per-second or --tokens-per-day to size for a load",
                     low->instances, low->instance->name, format_price(*low->usd_per_million_output_tokens),
                     format_price(*rec.pick->usd_per_million_output_tokens), w.target_utilisation * 100);
}

std::string why_text(const ServingRecommendation& rec, const RecommendRequest& r, const InferenceWorkload& w) {
  const ServingRow &p = *rec.pick, &low = *rec.cheapest;
  const bool per_token = priced_per_token(w);
  const std::string per = per_token ? " per output token" : "";
  const std::string targets = w.max_tpot_s || w.max_ttft_s ? " that meets the latency targets" : "";
  const bool same = p.instance == low.instance && p.estimate.layout == low.estimate.layout;
  if (same && r.cost_slack <= 0)
    return fmt::format("the cheapest service{}{} ({}){}", per, targets, service_text(p, per_token),
                       w.mode == ServingMode::offline ? "; offline, so no speed is bought (--cost-slack to trade cost for it)" : "");
  if (same)
    return fmt::format("the cheapest service{}{} ({}), and no option within {:.0f}% of its cost is faster by as much as it costs more", per, targets,
                       service_text(p, per_token), r.cost_slack * 100);
  return fmt::format("the fastest service within {:.0f}% of the cheapest{} that is faster than each cheaper one by as much as it costs more: "
                     "{}, {:.0f}% more{} than the cheapest ({})", r.cost_slack * 100,
                     per, service_text(p, per_token), (*ranked_cost(p, per_token) / *ranked_cost(low, per_token) - 1) * 100, per,
                     service_text(low, per_token));
}

// cost: the service per month (with or without a load).
void sort_rows(std::vector<ServingRow>& rows, SortBy sort_by) {
  auto cost = [](const ServingRow& x) { return x.ranked_usd_per_hour.value_or(1e300); };
  auto per_token = [](const ServingRow& x) { return x.usd_per_million_output_tokens.value_or(1e300); };
  auto key = [](const ServingRow& x) {
    const ServingLayout& l = x.estimate.layout;
    return std::tuple(x.instance->name, l.tp, l.pp, l.ep, l.attention_dp);
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const ServingRow& a, const ServingRow& b) {
    switch (sort_by) {
      case SortBy::recommended: return false;  // already in that order
      case SortBy::time:
        if (a.pace_seen_s() != b.pace_seen_s()) return a.pace_seen_s() < b.pace_seen_s();
        break;
      case SortBy::cost_per_token:
        if (per_token(a) != per_token(b)) return per_token(a) < per_token(b);
        break;
      case SortBy::pareto:
        if (a.pareto != b.pareto) return a.pareto;
        if (a.pareto && a.pace_seen_s() != b.pace_seen_s()) return a.pace_seen_s() < b.pace_seen_s();
        [[fallthrough]];
      case SortBy::cost:
        if (cost(a) != cost(b)) return cost(a) < cost(b);
        break;
    }
    return key(a) < key(b);
  });
}

void choose_rows(ServingRecommendation& out, const RecommendRequest& r, const InferenceWorkload& w) {
  std::vector<Candidate> c;
  for (const auto& x : out.rows)
    c.push_back({ranked_cost(x, priced_per_token(w)), x.pace_seen_s(), x.instances * x.instance->accelerator_count, x.instance->name});
  mark_cost_ceiling(c, r.max_cost_multiple);
  const Choice ch = choose(c, r.cost_slack, r.all_counts);
  if (ch.pick && ch.fastest_unpriced) out.fastest_unpriced = out.rows[*ch.fastest_unpriced];
  if (ch.pick && ch.fastest_within_cost_ceiling) out.fastest_within_cost_ceiling = out.rows[*ch.fastest_within_cost_ceiling];
  apply_choice(out, ch);
  if (out.pick) out.why = why_text(out, r, w) + no_load_note(out, w);
  sort_rows(out.rows, r.sort_by);
}

// "; --weights int8 fits on one instance" when a lighter weight format would.
std::string lighter_fit(const ModelSpec& m, const InferenceWorkload& w, const Instance& i, const Accelerator& a) {
  for (auto q = lighter(w.weights); q; q = lighter(*q)) {
    InferenceWorkload lw = w;
    lw.weights = *q;
    const int tp = tensor_parallel_sizes(m, i, a).back();
    if (estimate_inference(m, lw, Cluster{&i, &a, 1}, ServingLayout{tp, 1}, std::nullopt, nullptr).fits())
      return fmt::format("; --weights {} fits on one instance", to_string(*q));
  }
  return "";
}

// Why an instance has no row, kept as its layouts are tried: the model does
// not fit, the targets are missed (its fastest layout at batch 1 named), or a
// constraint (instance count, budget) refuses it.
struct InstanceProblems {
  std::string memory, target, constraint;
  bool constraint_is_budget = false;
  double target_tpot_s = std::numeric_limits<double>::infinity();
  // The cheapest layout over the budget: the one its rejection names.
  double cheapest_over_budget_usd_per_month = std::numeric_limits<double>::infinity();
};

// The request and the instance one serving search step looks at.
struct ServingProbe {
  const ModelSpec& m;
  const InferenceWorkload& w;
  const RecommendRequest& r;
  const Instance& inst;
  const Accelerator& acc;
  ReplicaSimulations& sims;
};


// Batch-1 times per token within this fraction of each other tie.
constexpr double kBatch1TieFraction = 0.005;

// The fastest batch-1 time per token and to first token over every option
// that fits, for the message when no option meets the targets.
InferenceEstimate note_batch1(const ServingProbe& p, const Cluster& c, const InferenceEstimate& e, ServingRecommendation& out) {
  InferenceEstimate batch1 = e;
  evaluate_batch(p.m, p.w, c, batch1, 1);
  const std::string option = fmt::format("{} with {}", p.inst.name, layout_name(e.layout, " x pp "));
  if (!out.best_batch1_tpot_s || batch1.tpot_s < *out.best_batch1_tpot_s * (1 - kBatch1TieFraction)) {
    out.best_batch1_tpot_s = batch1.tpot_s;
    out.best_batch1_option = option;
    out.best_batch1_ties = 1;
  } else if (batch1.tpot_s <= *out.best_batch1_tpot_s * (1 + kBatch1TieFraction)) {
    ++out.best_batch1_ties;
  }
  if (!out.best_batch1_ttft_s || batch1.ttft_s < *out.best_batch1_ttft_s) {
    out.best_batch1_ttft_s = batch1.ttft_s;
    out.best_batch1_ttft_option = option;
  }
  return batch1;
}

// The row's hourly rates under every pricing, and its ranked cost per token
// (a service runs all month: a commitment's effective rate applies as is).
ServingCost price_row(ServingRow& row, const ServingProbe& p) {
  const auto& [m, w, r, inst, acc, sims] = p;
  const std::array<std::pair<Pricing, std::optional<double>>, 4> rates{{{Pricing::on_demand, hourly_rate(inst, r.region, Pricing::on_demand)},
                                                                         {Pricing::savings_1y, hourly_rate(inst, r.region, Pricing::savings_1y)},
                                                                         {Pricing::savings_3y, hourly_rate(inst, r.region, Pricing::savings_3y)},
                                                                         {Pricing::spot, hourly_rate(inst, r.region, Pricing::spot)}}};
  row.on_demand_usd_per_hour = serving_cost(row, w, rates[0].second).usd_per_hour;
  row.savings_1y_usd_per_hour = serving_cost(row, w, rates[1].second).usd_per_hour;
  row.savings_3y_usd_per_hour = serving_cost(row, w, rates[2].second).usd_per_hour;
  row.spot_usd_per_hour = serving_cost(row, w, rates[3].second).usd_per_hour;
  // Under best, the cheapest of on demand and the commitments (never spot:
  // see ServingRow::ranked_pricing); on demand is named where no rate is known.
  row.ranked_pricing = r.pricing == Pricing::best ? Pricing::on_demand : r.pricing;
  std::optional<double> rate;
  for (const auto& [pricing, x] : rates) {
    const bool taken = r.pricing == Pricing::best ? pricing != Pricing::spot && x && (!rate || *x < *rate) : pricing == r.pricing;
    if (taken) {
      rate = x;
      row.ranked_pricing = pricing;
    }
  }
  const ServingCost ranked = serving_cost(row, w, rate);
  row.ranked_usd_per_hour = ranked.usd_per_hour;
  row.usd_per_million_output_tokens = ranked.usd_per_million_output_tokens;
  row.usd_per_million_input_tokens = ranked.usd_per_million_input_tokens;
  row.capacity = service_capacity_advice(inst, row.instances, r.pricing);
  return ranked;
}

// What trying one layout on an instance led to.
enum class Tried { more_stages, stop, added };

Tried try_serving_layout(const ServingProbe& p, const ServingLayout& l, InstanceProblems& why, ServingRecommendation& out) {
  const auto& [m, w, r, inst, acc, sims] = p;
  const int tp = l.tp, pp = l.pp;
  Cluster c{&inst, &acc, pp};
  if (serving_layout_problem(m, c, l)) return Tried::more_stages;
  std::string problem;
  InferenceEstimate e = estimate_inference(m, w, c, l, std::nullopt, &problem);
  if (!e.fits()) {
    if (pp == 1 && l.ep == 1) why.memory = fmt::format("{}: {}", tp == 1 ? "one accelerator" : fmt::format("tp {}", tp), problem);
    return Tried::more_stages;
  }
  const InferenceEstimate batch1 = note_batch1(p, c, e, out);
  if (!problem.empty()) {
    // Targets missed: more stages would only add latency.
    if (batch1.tpot_s < why.target_tpot_s) {
      why.target_tpot_s = batch1.tpot_s;
      why.target = fmt::format("{}: {}", layout_name(l, " pp "), problem);
    }
    return Tried::stop;
  }
  ServingRow row;
  row.instance = &inst;
  row.accelerator = &acc;
  row.estimate = e;
  size_service(row, w);
  operating_point(row, m, w);
  if (sized_by_simulation(w)) {
    if (const std::string miss = size_by_simulation(row, m, w, r.max_instances, sims); !miss.empty()) {
      why.target = fmt::format("{}: {}", layout_name(l, " pp "), miss);
      return Tried::stop;
    }
  }
  if (row.instances > r.max_instances) {
    why.constraint = fmt::format("{}: the load needs {} instances (--max-instances {})", layout_name(l, " pp "), row.instances, r.max_instances);
    why.constraint_is_budget = false;
    return Tried::stop;
  }
  const ServingCost ranked = price_row(row, p);
  if (r.budget_usd && (!ranked.usd_per_month || *ranked.usd_per_month > *r.budget_usd)) {
    // Named by its cheapest layout (the last one tried may cost far more), in the money format of every output.
    if (!ranked.usd_per_month) {
      if (!why.constraint_is_budget) why.constraint = "price unknown, so the budget cannot be checked";
    } else if (*ranked.usd_per_month < why.cheapest_over_budget_usd_per_month) {
      why.cheapest_over_budget_usd_per_month = *ranked.usd_per_month;
      why.constraint = fmt::format("{} instance{} at {} (its cheapest layout): {} per month is over the {} budget", row.instances,
                                   row.instances > 1 ? "s" : "", layout_name(l, " pp "), format_usd(*ranked.usd_per_month),
                                   format_usd(*r.budget_usd));
    }
    why.constraint_is_budget = true;
    return Tried::stop;
  }
  if (pp > 1)
    out.notes.push_back(fmt::format("{}: {} in {} weights does not fit one instance ({}), so it is pipelined over {}{}", inst.name,
                                    human_params(m.total_params()), to_string(w.weights), why.memory, pp, lighter_fit(m, w, inst, acc)));
  out.rows.push_back(std::move(row));
  return Tried::added;
}

// The rejection of an instance that gave no row: a constraint, else the
// targets, else memory (with what a lighter format or EFA would change).
std::string rejection_reason(const ServingProbe& p, const InstanceProblems& why) {
  const auto& [m, w, r, inst, acc, sims] = p;
  std::string reason = !why.constraint.empty() ? why.constraint : !why.target.empty() ? why.target : why.memory;
  if (reason.empty()) reason = "no valid tensor-parallel layout for this model";
  if (why.constraint.empty() && why.target.empty()) {
    reason = inst.efa_supported ? fmt::format("{} in {} weights does not fit with up to {} instance(s): {}", human_params(m.total_params()),
                                              to_string(w.weights), r.max_instances, why.memory)
                                : fmt::format("{} in {} weights does not fit one instance ({}), and without EFA a replica is not "
                                              "pipelined across instances", human_params(m.total_params()), to_string(w.weights), why.memory);
    reason += lighter_fit(m, w, inst, acc);
  }
  return reason;
}

// Every tensor-parallel size on one instance type, a row for each with the
// smallest pipeline that fits: pipeline stages across instances only when one
// instance cannot hold the model, and only over EFA; for an MoE model also
// its expert-parallel layouts at that size (expert_parallel_layouts). No row: its rejection.
void consider_serving_instance(const ServingProbe& p, ServingRecommendation& out) {
  InstanceProblems why;
  bool any = false;
  for (int tp : tensor_parallel_sizes(p.m, p.inst, p.acc)) {
    std::vector<int> pps{1};
    if (tp == p.inst.accelerator_count && p.inst.efa_supported)
      for (int pp = 2; pp <= std::min(p.r.max_instances, p.m.layers); pp *= 2) pps.push_back(pp);
    for (int pp : pps) {
      const Tried tried = try_serving_layout(p, ServingLayout{tp, pp}, why, out);
      any = any || tried == Tried::added;
      if (tried != Tried::more_stages) break;
    }
    for (const ServingLayout& l : expert_parallel_layouts(p.m, engine_for(p.acc, p.w.engine), p.acc, tp))
      any = try_serving_layout(p, l, why, out) == Tried::added || any;
  }
  if (!any) out.rejections.push_back({p.inst.name, rejection_reason(p, why), !why.constraint.empty() && why.constraint_is_budget});
}

}  // namespace

namespace {

// The cheapest priced disaggregated service over the types with a row (fewest instances where none is priced).
std::optional<DisaggregatedService> cheapest_disaggregated(const ModelSpec& m, const InferenceWorkload& w, const std::vector<ServingRow>& rows,
                                                           const RecommendRequest& r) {
  std::optional<DisaggregatedService> best;
  std::vector<const Instance*> seen;
  for (const ServingRow& row : rows) {
    if (std::find(seen.begin(), seen.end(), row.instance) != seen.end()) continue;
    seen.push_back(row.instance);
    auto s = disaggregated_service(m, w, *row.instance, *row.accelerator, r);
    if (!s) continue;
    auto key = [](const DisaggregatedService& x) { return std::pair(x.usd_per_hour.value_or(1e300), x.instances()); };
    if (!best || key(*s) < key(*best)) best = s;
  }
  return best;
}

}  // namespace

InferenceWorkload served_workload(const InferenceWorkload& w, const Accelerator& acc) {
  InferenceWorkload out = w;
  if (!has_prefix_cache(engine_for(acc, w.engine))) out.prefix_share = 0;
  return out;
}

namespace {

// One instance type's share of the serving search, kept apart so that the
// types run in threads and join in catalog order: the same bytes for any
// number of threads.
struct InstanceSearch {
  const Instance* inst = nullptr;
  const Accelerator* acc = nullptr;
  InferenceWorkload served;
  std::string prefix_note;  // its engine has no prefix cache for --prefix-share
  ServingRecommendation part;
};

// The types to search, in catalog order; the others' rejections into `out`.
std::vector<InstanceSearch> instances_to_search(const InferenceWorkload& w, const Catalog& catalog, const RecommendRequest& r,
                                                ServingRecommendation& out) {
  std::vector<InstanceSearch> out_types;
  for (const Instance& inst : catalog.instances) {
    if (!considered(inst, r, out.rejections)) continue;
    const Accelerator& acc = catalog.accelerator_of(inst);
    if (auto p = serving_accelerator_problem(acc, w)) {
      out.rejections.push_back({inst.name, *p});
      continue;
    }
    InstanceSearch t{&inst, &acc, served_workload(w, acc), {}, {}};
    if (t.served.prefix_share != w.prefix_share)
      t.prefix_note = fmt::format("{} ({}) has no prefix cache: its rows prefill every prompt whole (--prefix-share applies to {})",
                                  engine_for(acc, w.engine).name, acc.name, engine_names_where(has_prefix_cache));
    out_types.push_back(std::move(t));
  }
  return out_types;
}

// Types of one accelerator share a thread and its simulations (the same
// replica on the same accelerator is one run); the threads take accelerators
// in turn.
void search_in_threads(std::vector<InstanceSearch>& types, const ModelSpec& m, const RecommendRequest& r, ReplicaSimulations& sims) {
  std::vector<const Accelerator*> accs;
  for (const InstanceSearch& t : types)
    if (std::find(accs.begin(), accs.end(), t.acc) == accs.end()) accs.push_back(t.acc);
  std::vector<ReplicaSimulations> runs(accs.size());
  // What an accelerator's search threw, thrown here after every thread has
  // joined (the first accelerator's, in catalog order): never std::terminate.
  std::vector<std::exception_ptr> thrown(accs.size());
  std::atomic<size_t> next{0};
  auto search_accelerator = [&](size_t a) {
    try {
      for (InstanceSearch& t : types)
        if (t.acc == accs[a]) consider_serving_instance(ServingProbe{m, t.served, r, *t.inst, *t.acc, runs[a]}, t.part);
    } catch (...) {
      thrown[a] = std::current_exception();
    }
  };
  auto work = [&] {
    for (size_t a = next++; a < accs.size(); a = next++) search_accelerator(a);
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int threads = std::clamp(r.jobs > 0 ? r.jobs : static_cast<int>(cores), 1, static_cast<int>(std::max<size_t>(1, accs.size())));
  std::vector<std::thread> pool;
  try {
    for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads to be had (a process limit): those started and this one do the work.
  }
  work();
  for (auto& t : pool) t.join();
  for (const std::exception_ptr& e : thrown)
    if (e) std::rethrow_exception(e);
  for (ReplicaSimulations& s : runs) sims.absorb(std::move(s));
}

// One type's rows, notes and rejections after those before it, as a search
// over the types in turn would have left them.
void join_type(InstanceSearch& t, ServingRecommendation& out) {
  if (!t.prefix_note.empty() && std::find(out.notes.begin(), out.notes.end(), t.prefix_note) == out.notes.end())
    out.notes.push_back(t.prefix_note);
  ServingRecommendation& p = t.part;
  std::move(p.rows.begin(), p.rows.end(), std::back_inserter(out.rows));
  std::move(p.rejections.begin(), p.rejections.end(), std::back_inserter(out.rejections));
  std::move(p.notes.begin(), p.notes.end(), std::back_inserter(out.notes));
  if (p.best_batch1_tpot_s && (!out.best_batch1_tpot_s || *p.best_batch1_tpot_s < *out.best_batch1_tpot_s * (1 - kBatch1TieFraction))) {
    out.best_batch1_tpot_s = p.best_batch1_tpot_s;
    out.best_batch1_option = p.best_batch1_option;
    out.best_batch1_ties = p.best_batch1_ties;
  } else if (p.best_batch1_tpot_s && *p.best_batch1_tpot_s <= *out.best_batch1_tpot_s * (1 + kBatch1TieFraction)) {
    out.best_batch1_ties += p.best_batch1_ties;
  }
  if (p.best_batch1_ttft_s && (!out.best_batch1_ttft_s || *p.best_batch1_ttft_s < *out.best_batch1_ttft_s)) {
    out.best_batch1_ttft_s = p.best_batch1_ttft_s;
    out.best_batch1_ttft_option = p.best_batch1_ttft_option;
  }
}

// The shown types without a rate under the pricing asked, each with the
// catalog's reason (and its Capacity Block rate, where one is listed), said
// once: their rows read "unknown" and are listed, not ranked by cost.
std::string unpriced_note(const std::vector<ServingRow>& rows, const RecommendRequest& r) {
  const Pricing asked = r.pricing == Pricing::best ? Pricing::on_demand : r.pricing;
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;  // in the rows' order; types sharing a reason named together
  for (size_t i = 0; i < rows.size() && static_cast<int>(i) < r.top; ++i) {
    const Instance& inst = *rows[i].instance;
    if (rows[i].ranked_usd_per_hour) continue;
    std::string why;
    hourly_rate(inst, r.region, asked, &why);
    const RegionPrices* rp = inst.prices_in(r.region);
    if (rp && rp->capacity_block.usd_per_hour)
      why += fmt::format("; Capacity Blocks: ${:.2f}/h as of {}, blocks of at most 182 days", *rp->capacity_block.usd_per_hour,
                         rp->capacity_block.as_of);
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& x) { return x.first == why; });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {why, {}});
    it->second.push_back(inst.name);
  }
  if (by_reason.empty()) return {};
  std::vector<std::string> parts;
  for (const auto& [why, names] : by_reason) parts.push_back(fmt::format("{} ({})", fmt::join(names, ", "), why));
  return fmt::format("unknown prices: these types are listed, not ranked by cost: {}", fmt::join(parts, "; "));
}

}  // namespace

ServingRecommendation recommend_inference(const ModelSpec& m, const InferenceWorkload& w, const Catalog& catalog,
                                          const RecommendRequest& r) {
  ServingRecommendation out;
  ReplicaSimulations sims;
  std::vector<InstanceSearch> types = instances_to_search(w, catalog, r, out);
  search_in_threads(types, m, r, sims);
  for (InstanceSearch& t : types) join_type(t, out);

  drop_needless_pipelines(out);
  out.options_found = out.rows.size();
  mark_pareto(out.rows);
  choose_rows(out, r, w);
  if (std::string note = unpriced_note(out.rows, r); !note.empty()) out.notes.insert(out.notes.begin(), std::move(note));
  if (out.pick) out.sizing = sizing_note(*out.pick, m, served_workload(w, *out.pick->accelerator), sims);
  out.disaggregated = cheapest_disaggregated(m, w, out.rows, r);
  std::sort(out.rejections.begin(), out.rejections.end(), [](const Rejection& a, const Rejection& b) { return a.instance < b.instance; });
  return out;
}

}  // namespace gpuadvisor
