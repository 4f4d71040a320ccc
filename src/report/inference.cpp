// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// Inference reports: the serving table of `recommend --task inference` and
// the breakdown of `estimate --task inference` (docs/json.md §Inference).
#include <cmath>
#include <fmt/format.h>

#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/workload/neuron.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/report/report.hpp"
#include "gpuadvisor/search/replicas.hpp"
#include "gpuadvisor/serving/kv_blocks.hpp"
#include "report/detail.hpp"

namespace gpuadvisor {

using namespace report_detail;

namespace {

const char* const kNoTokenGapNote = "each request generates one token: no gap between tokens";

Cell latency_cell(double s) {
  if (s < 0.01) return {fmt::format("{:.1f}ms", s * 1e3), sig6(s)};
  if (s < 1) return {fmt::format("{:.0f}ms", s * 1e3), sig6(s)};
  return {fmt::format("{:.1f}s", s), sig6(s)};
}

// A time per output token: 0 is one-token outputs' (no gap between tokens), shown as "none".
Cell tpot_cell(double s) { return s > 0 ? latency_cell(s) : Cell{"none", 0.0}; }

Cell per_million(std::optional<double> v) {
  if (!v) return {"unknown", std::monostate{}};
  return {format_price(*v), sig6(*v)};
}

ordered_json percentiles_json(const Percentiles& p) {
  return {{"p50", sig6(p.p50)}, {"p90", sig6(p.p90)}, {"p99", sig6(p.p99)}, {"mean", sig6(p.mean)}};
}

ordered_json metrics_percentiles_json(const ServiceMetrics& m) {
  ordered_json j = {{"ttft_s", percentiles_json(m.ttft_s)}, {"tpot_s", percentiles_json(m.tpot_s)}, {"e2e_s", percentiles_json(m.e2e_s)},
                    {"queue_s", percentiles_json(m.queue_s)}};
  if (m.first_visible_s) j["first_visible_s"] = percentiles_json(*m.first_visible_s);
  return j;
}

// --slo-percentile in JSON: 50, 90, 99, or "mean".
ordered_json slo_percentile_json(int percentile) { return percentile ? ordered_json(percentile) : ordered_json("mean"); }

// "p90 " before a latency simulated at the targets' percentile; "" for the analytic operating point.
std::string seen_text(const ServingRow& r) {
  if (!r.simulated) return "";
  return r.slo_percentile ? fmt::format("p{} ", r.slo_percentile) : "mean ";
}

// Empty (JSON null) for a row sized analytically.
Cell slo_cell(const ServingRow& r) {
  if (!r.simulated) return {"", std::monostate{}};
  return r.slo_percentile ? integer(r.slo_percentile) : text("mean");
}
// A latency at the targets' percentile: blank where the row was not simulated.
Cell seen_cell(const ServingRow& r, const Cell& cell) { return r.simulated ? cell : Cell{"", std::monostate{}}; }

std::string precision_text(const InferenceWorkload& w, const ServingPrecision& p) {
  // 16-bit weights and KV are fp16 where the accelerator has no bf16 (V100, T4): the math runs in fp16.
  const bool fp16_only = p.compute == Precision::fp16;
  const std::string weights = w.weights == WeightFormat::bf16 && fp16_only ? "fp16" : std::string(to_string(w.weights));
  const std::string kv = p.kv_cache == Precision::bf16 && fp16_only ? "fp16" : std::string(to_string(p.kv_cache));
  return fmt::format("{}{} (kv {})", weights, p.weight_only ? fmt::format(", {} math", to_string(p.compute)) : "", kv);
}

ordered_json workload_json(const InferenceWorkload& w) {
  ordered_json j;
  j["task"] = "inference";
  j["mode"] = to_string(w.mode);
  j["prompt_tokens"] = w.prompt_tokens;
  j["prompt_tokens_p95"] = w.prompt_tokens_p95;
  j["output_tokens"] = w.output_tokens;
  j["output_tokens_p95"] = w.output_tokens_p95;
  j["reasoning_tokens"] = w.reasoning_tokens;
  j["samples"] = w.samples;
  j["test_time_multiplier"] = sig6(w.test_time_multiplier());
  j["requests_per_second"] = w.requests_per_second ? ordered_json(sig6(*w.requests_per_second)) : ordered_json(nullptr);
  j["concurrency"] = w.concurrency ? ordered_json(*w.concurrency) : ordered_json(nullptr);
  j["compiled_batch"] = w.compiled_batch ? ordered_json(*w.compiled_batch) : ordered_json(nullptr);
  j["prefix_share"] = sig6(w.prefix_share);
  j["prefix_tokens"] = w.prefix_tokens();
  j["scheduler_recv_interval"] = w.scheduler_recv_interval;
  const int hold_steps = w.engine ? router_hold_steps(*w.engine, w) : 0;
  j["max_waiting_tokens"] = hold_steps > 0 ? ordered_json(hold_steps) : ordered_json(nullptr);
  j["max_batched_tokens"] = w.max_batched_tokens ? ordered_json(*w.max_batched_tokens) : ordered_json(nullptr);
  j["attention_dp_balance_iters"] = w.attention_dp_balance_iters ? ordered_json(*w.attention_dp_balance_iters) : ordered_json(nullptr);
  j["speculative"] = w.speculative ? ordered_json{{"drafter", w.speculative->drafter},
                                                  {"draft_tokens", w.speculative->draft_tokens},
                                                  {"acceptance", sig6(w.speculative->acceptance)},
                                                  {"tokens_per_step", sig6(w.speculative->tokens_per_step())}}
                                   : ordered_json(nullptr);
  j["max_ttft_s"] = w.max_ttft_s ? ordered_json(*w.max_ttft_s) : ordered_json(nullptr);
  j["max_tpot_s"] = w.max_tpot_s ? ordered_json(*w.max_tpot_s) : ordered_json(nullptr);
  j["weights"] = to_string(w.weights);
  j["kv_cache"] = w.kv_cache ? std::string(to_string(*w.kv_cache)) : std::string("auto");
  return j;
}

ordered_json assumptions_json(const ModelSpec& m, const InferenceWorkload& w) {
  ordered_json a = ordered_json::array();
  for (const auto& s : m.assumptions) a.push_back(s);
  for (const auto& s : w.assumptions) a.push_back(s);
  return a;
}

std::string software_text(const Accelerator& a) { return a.software == "neuron" ? "Neuron SDK" : "CUDA"; }

std::optional<double> per_month(std::optional<double> usd_per_hour) {
  return usd_per_hour ? std::optional<double>(*usd_per_hour * kHoursPerMonth) : std::nullopt;
}

ordered_json service_json(const ServingRow& r, const ModelSpec& m) {
  const auto& e = r.estimate;
  return {{"instance", r.instance->name},
          {"count", r.instances},
          {"accelerators", r.instances * r.instance->accelerator_count},
          {"accelerator", r.instance->accelerator_name},
          {"layout", layout_json(e.layout)},
          {"engine", e.engine->name},
          {"engine_title", e.engine->title},
          {"replicas", r.replicas},
          {"utilisation", sig6(r.utilisation)},
          {"batch_at_load", static_cast<int>(std::lround(r.batch_seen()))},
          {"ttft_s", sig6(r.ttft_mean_s())},
          {"tpot_s", sig6(r.tpot_mean_s())},
          {"sized_by", r.simulated ? "simulation" : "utilisation"},
          {"slo_percentile", r.simulated ? slo_percentile_json(r.slo_percentile) : ordered_json(nullptr)},
          {"percentiles", r.simulated ? metrics_percentiles_json(*r.simulated) : ordered_json(nullptr)},
          {"costs", {{"ranked_usd_per_month", money_json(per_month(r.ranked_usd_per_hour))},
                     {"on_demand_usd_per_month", money_json(per_month(r.on_demand_usd_per_hour))},
                     {"spot_usd_per_month", money_json(per_month(r.spot_usd_per_hour))},
                     {"usd_per_million_output_tokens", r.usd_per_million_output_tokens ? ordered_json(sig6(*r.usd_per_million_output_tokens)) : ordered_json(nullptr)}}},
          {"capacity", capacity_json(r.capacity)},
          {"accuracy", accuracy_json(r.instance->accelerator_name, "inference", e.engine->name, m.is_moe())}};
}

// `after_ttft`: a figure the headline shows after the TTFT (the first visible
// token of a reasoning model), with its ", ".
std::string service_line(const ServingRow& r, std::string_view after_ttft = {}) {
  const auto& e = r.estimate;
  // Utilisation is the load over the analytic capacity at the targets; a
  // replica sized by simulation can serve more than that (chunked prefill
  // overlaps decode where the analytic model adds it in series).
  const std::string busy = r.utilisation <= 1
                               ? fmt::format("{:.0f}% utilisation", r.utilisation * 100)
                               : fmt::format("{:.0f}% utilisation: more than the analytic capacity, and the simulated replicas meet the targets", r.utilisation * 100);
  const std::string per_token =
      r.usd_per_million_output_tokens ? fmt::format(" (${} per million output tokens at {})", format_price(*r.usd_per_million_output_tokens), busy) : "";
  const std::string at = seen_text(r);
  // One-token outputs (a TPOT of 0) have no time per token to show: their request's latency instead.
  const std::string tpot = r.tpot_seen_s() > 0 ? fmt::format("{}{:.0f} ms per token, ", at, r.tpot_seen_s() * 1e3)
                                               : fmt::format("{}request latency {:.0f} ms, ", at, r.e2e_seen_s() * 1e3);
  // The pricing, where it is not on demand (spot, a commitment, or the one --pricing best took).
  const std::string channel = r.ranked_usd_per_hour && r.ranked_pricing != Pricing::on_demand ? fmt::format(" {}", to_string(r.ranked_pricing)) : "";
  return fmt::format("{} x {} ({}, {} replica{}), {}TTFT {:.0f} ms, {}{}{}/month{}{}", r.instances, r.instance->name, layout_text(e.layout), r.replicas,
                     r.replicas > 1 ? "s" : "", at, r.ttft_seen_s() * 1e3, after_ttft, tpot,
                     r.ranked_usd_per_hour ? money_text(*r.ranked_usd_per_hour * kHoursPerMonth) : "cost unknown", channel, per_token);
}

}  // namespace

std::string workload_json_text(const InferenceWorkload& w) { return json_text(workload_json(w)); }

// A pick sized close to its time-per-token target may miss it by the
// prediction's own error: the pick's time per token at its band's p90 error
// against the target, and the target that keeps the service inside it.
struct TpotMargin {
  double predicted_tpot_s = 0, max_tpot_s = 0, p90_abs_error = 0;
  bool leans_optimistic = false;  // the band's median error: faster than measured by 5% or more
  double suggested_max_tpot_s() const { return max_tpot_s / (1 + p90_abs_error); }
  bool exceeds_target_at_p90() const { return predicted_tpot_s * (1 + p90_abs_error) > max_tpot_s; }
};

// The pick's time per token against its target at the band's p90 error; empty
// without a target or a band.
std::optional<TpotMargin> tpot_margin(const ServingRow& pick, const InferenceWorkload& w, bool moe) {
  if (!w.max_tpot_s) return std::nullopt;
  const auto band = accuracy_band(pick.instance->accelerator_name, "inference", pick.estimate.engine->name, moe);
  if (!band) return std::nullopt;
  return TpotMargin{pick.tpot_seen_s(), *w.max_tpot_s, band->p90_abs_error, band->median_signed_error >= 0.05};
}

std::string margin_text(const ServingRow& pick, const InferenceWorkload& w, bool moe) {
  const auto m = tpot_margin(pick, w, moe);
  if (!m || !m->leans_optimistic || !m->exceeds_target_at_p90()) return "";
  return fmt::format("  margin: {:.0f} ms per token against the {:.0f} ms target, and the band above leans optimistic: "
                     "--max-tpot {:.0f}ms keeps the target at its p90 error\n",
                     m->predicted_tpot_s * 1e3, m->max_tpot_s * 1e3, m->suggested_max_tpot_s() * 1e3);
}

ordered_json margin_json(const ServingRow& pick, const InferenceWorkload& w, bool moe) {
  const auto m = tpot_margin(pick, w, moe);
  if (!m) return nullptr;
  return {{"predicted_tpot_s", sig6(m->predicted_tpot_s)}, {"max_tpot_s", sig6(m->max_tpot_s)}, {"p90_abs_error", sig6(m->p90_abs_error)},
          {"exceeds_target_at_p90", m->exceeds_target_at_p90()}, {"leans_optimistic", m->leans_optimistic},
          {"suggested_max_tpot_s", sig6(m->suggested_max_tpot_s())}};
}

// Offline, a pick that is not kept busy (whole instances round the load up)
// can run as a batch job for only the hours its volume needs.
std::optional<double> batch_hours_per_day(const ServingRow& pick, const InferenceWorkload& w) {
  if (w.mode != ServingMode::offline || !w.requests_per_second || pick.utilisation >= kBatchHoursNoteBelowUtilisation) return std::nullopt;
  return 24 * pick.utilisation;
}

std::string batch_hours_text(const ServingRow& pick, const InferenceWorkload& w) {
  const auto hours = batch_hours_per_day(pick, w);
  if (!hours || !pick.ranked_usd_per_hour) return "";
  return fmt::format("  batch: {:.0f}% busy at this load; a batch job that runs only while its queue has work needs about {:.1f} h a day, "
                     "{}/month (plus start-up each run)\n",
                     pick.utilisation * 100, *hours, money_text_not_free(*pick.ranked_usd_per_hour * *hours * kHoursPerMonth / 24));
}

namespace {

std::string pool_text(const Instance& inst, const DisaggregatedPool& p, const char* role) {
  return fmt::format("{} x {} {} ({}, {} replica{})", p.instances, inst.name, role, layout_text(p.layout), p.replicas, p.replicas > 1 ? "s" : "");
}

// "1 x p5en.48xlarge prefill (DP8 EP8, 1 replica) + 2 x ... decode (...), TTFT ..., $.../month, 12% cheaper than the pick (...)"
std::string disaggregated_text(const DisaggregatedService& d, const ServingRow& pick, double target_utilisation) {
  std::string cost = "cost unknown";
  if (d.usd_per_hour) {
    cost = money_text(*d.usd_per_hour * kHoursPerMonth) + "/month";
    if (pick.ranked_usd_per_hour)
      cost += fmt::format(" against the pick's {}{}", money_text(*pick.ranked_usd_per_hour * kHoursPerMonth),
                          pick.simulated ? " (the pick sized by simulated percentiles, these by analytic means: not the same bar)" : "");
  }
  return fmt::format("{} + {}, TTFT {:.0f} ms (KV over the network {:.1f} ms), {:.0f} ms per token at the decode pool's capacity, means without "
                     "a queue; {}; the cheapest such service over the types with EFA, sized at {:.0f}% utilisation, no prefill in the decode "
                     "steps, not checked against a published disaggregated run (methodology §Disaggregated prefill and decode)",
                     pool_text(*d.instance, d.prefill, "prefill"), pool_text(*d.instance, d.decode, "decode"), d.ttft_s * 1e3,
                     d.kv_transfer_s * 1e3, d.tpot_s * 1e3, cost, target_utilisation * 100);
}

ordered_json disaggregated_json(const std::optional<DisaggregatedService>& d) {
  if (!d) return nullptr;
  auto pool = [](const DisaggregatedPool& p) {
    return ordered_json{{"layout", layout_json(p.layout)}, {"replicas", p.replicas}, {"instances", p.instances},
                        {"requests_per_second_per_replica", sig6(p.requests_per_second_per_replica)}};
  };
  return {{"instance", d->instance->name}, {"prefill", pool(d->prefill)}, {"decode", pool(d->decode)}, {"decode_batch", d->decode_batch},
          {"ttft_s", sig6(d->ttft_s)}, {"kv_transfer_s", sig6(d->kv_transfer_s)}, {"tpot_s", sig6(d->tpot_s)},
          {"usd_per_month", money_json(d->usd_per_hour ? std::optional<double>(*d->usd_per_hour * kHoursPerMonth) : std::nullopt)}};
}

}  // namespace

// An online service whose whole fleet is one replica's instances: nothing
// answers while one of them fails or its engine restarts (methodology
// §Redundancy). Said, with what a second copy costs; never added to the pick.
struct Redundancy {
  std::string fleet;                           // "one instance", "one replica over 2 instances"
  int failover_instances = 0;                  // the service doubled
  std::optional<double> failover_usd_per_month;  // at the pick's ranked rate, rounded once
};

std::optional<Redundancy> redundancy_of(const ServingRow& p, const InferenceWorkload& w) {
  if (w.mode != ServingMode::online || p.instances > p.estimate.layout.pp) return std::nullopt;
  Redundancy r;
  r.fleet = p.instances == 1 ? "one instance" : fmt::format("one replica over {} instances", p.instances);
  r.failover_instances = 2 * p.instances;
  if (p.ranked_usd_per_hour) r.failover_usd_per_month = std::round(2 * *p.ranked_usd_per_hour * kHoursPerMonth);
  return r;
}

std::string redundancy_text(const ServingRow& p, const InferenceWorkload& w) {
  const auto r = redundancy_of(p, w);
  if (!r) return "";
  const std::string doubled = r->failover_usd_per_month ? fmt::format(", ${}/month", format_thousands(*r->failover_usd_per_month)) : "";
  return fmt::format("  redundancy: the whole service is {}: a hardware failure or an engine restart stops it until a replacement has started "
                     "and loaded the weights; a second copy for failover is {} x {}{}\n",
                     r->fleet, r->failover_instances, p.instance->name, doubled);
}

ordered_json redundancy_json(const ServingRow& p, const InferenceWorkload& w) {
  const auto r = redundancy_of(p, w);
  if (!r) return nullptr;
  return {{"fleet", r->fleet}, {"failover_instances", r->failover_instances}, {"failover_usd_per_month", money_json(r->failover_usd_per_month)}};
}

// A reasoning service's first visible token, the mean: simulated where the
// pick was, else TTFT + hidden tokens x TPOT (nullopt without hidden tokens).
std::optional<double> first_visible_mean_s(const ServingRow& pick, double hidden_tokens) {
  if (hidden_tokens <= 0) return std::nullopt;
  if (pick.simulated && pick.simulated->first_visible_s) return pick.simulated->first_visible_s->mean;
  return pick.at_load.ttft_s + hidden_tokens * pick.at_load.tpot_s;
}

// A wait in words: "340 ms", "126.7 s".
std::string wait_text(double s) { return s < 1 ? fmt::format("{:.0f} ms", s * 1e3) : fmt::format("{:.1f} s", s); }

// The first visible token in words: simulated at the targets' percentile, with the mean.
std::string first_visible_text(const ServingRow& pick, double hidden_tokens) {
  const auto mean_s = first_visible_mean_s(pick, hidden_tokens);
  if (!mean_s) return "";
  if (pick.simulated && pick.simulated->first_visible_s) {
    const Percentiles& p = *pick.simulated->first_visible_s;
    const std::string at = pick.slo_percentile ? fmt::format("p{} {}, mean {}", pick.slo_percentile, wait_text(p.at(pick.slo_percentile)), wait_text(p.mean))
                                               : fmt::format("mean {}", wait_text(p.mean));
    return fmt::format("  first visible token: {} (simulated: TTFT, then {:.0f} hidden reasoning tokens at each request's own pace)\n", at,
                       hidden_tokens);
  }
  return fmt::format("  first visible token: after about {} (TTFT, then {:.0f} hidden reasoning tokens at {:.0f} ms each)\n", wait_text(*mean_s),
                     hidden_tokens, pick.at_load.tpot_s * 1e3);
}

// The headline's figure for a reasoning model: a user waits for the hidden
// tokens before the first visible one, so the TTFT alone would read as the wait.
std::string first_visible_headline(const ServingRow& pick, double hidden_tokens) {
  const auto mean_s = first_visible_mean_s(pick, hidden_tokens);
  if (!mean_s) return "";
  if (pick.simulated && pick.simulated->first_visible_s && pick.slo_percentile)
    return fmt::format("p{} first visible token {}, ", pick.slo_percentile, wait_text(pick.simulated->first_visible_s->at(pick.slo_percentile)));
  return fmt::format("first visible token {}, ", wait_text(*mean_s));
}

// The bill per generated token (hidden reasoning and every sample included),
// what an API bills as output; nullopt where every generated token is visible.
std::optional<double> usd_per_million_generated_tokens(const ServingRow& pick, const InferenceWorkload& w) {
  if (!pick.usd_per_million_output_tokens || w.test_time_multiplier() <= 1) return std::nullopt;
  return *pick.usd_per_million_output_tokens / w.test_time_multiplier();
}

std::string generated_price_text(const ServingRow& pick, const InferenceWorkload& w) {
  const auto usd = usd_per_million_generated_tokens(pick, w);
  if (!usd) return "";
  return fmt::format("  per generated token: ${} per million generated tokens, the hidden reasoning and every sample included (what an API "
                     "bills as output); the ${} above is per visible output token, {:.2f}x as many generated\n",
                     format_price(*usd), format_price(*pick.usd_per_million_output_tokens), w.test_time_multiplier());
}

// The alternatives are priced options; one faster than the fastest of them
// by more than the predictions' typical error, whose price the catalog lacks,
// is named beside it, as training's `fastest:` line does.
std::string faster_unpriced_text(const ServingRecommendation& rec) {
  if (!rec.fastest_unpriced) return "";
  const ServingRow& r = *rec.fastest_unpriced;
  const std::string pace = r.tpot_seen_s() > 0 ? fmt::format("{:.0f} ms per token", r.tpot_seen_s() * 1e3)
                                               : fmt::format("request latency {:.0f} ms", r.e2e_seen_s() * 1e3);
  return fmt::format("; faster at a price the catalog lacks: {} x {} ({}), {}{}", r.instances, r.instance->name, layout_text(r.estimate.layout),
                     seen_text(r), pace);
}

// The fastest service one would weigh: within --max-cost-multiple of the
// cheapest, then the fastest at any price where that costs more, as
// training's fastest line (report/recommend.cpp fastest_text).
template <class Alternative>
std::string fastest_service_text(const ServingRecommendation& rec, const Alternative& alternative, const RecommendRequest& r) {
  const std::string any_price = alternative(*rec.fastest) + price_multiple_text(rec.fastest->ranked_usd_per_hour, rec.pick->ranked_usd_per_hour);
  if (!rec.fastest_within_cost_ceiling) return any_price;
  return cost_ceiling_fastest_text(alternative(*rec.fastest_within_cost_ceiling), r.max_cost_multiple, any_price);
}

std::string render_serving_pick_text(const ServingRecommendation& rec, const InferenceContext& ctx) {
  if (!rec.pick) return "No option has a known price, so there is no pick; the options below are by time per token.\n\n";
  std::string out = fmt::format("Recommended: {}\n  why: {}\n", service_line(*rec.pick, first_visible_headline(*rec.pick, ctx.workload->reasoning_tokens)),
                                rec.why);
  out += first_visible_text(*rec.pick, ctx.workload->reasoning_tokens);
  out += generated_price_text(*rec.pick, *ctx.workload);
  if (const auto& p = rec.pick->estimate.precision; p.weight_only)
    out += fmt::format("  weights: {} in memory, dequantised to {} for the math (weight-only kernels; {} has no {} matrix path the engine uses; "
                       "methodology §Precision)\n",
                       to_string(ctx.workload->weights), to_string(p.compute), rec.pick->accelerator->name, to_string(ctx.workload->weights));
  out += fmt::format("  accuracy: {}\n", accuracy_line(rec.pick->instance->accelerator_name, "inference", rec.pick->estimate.engine->name, ctx.model->is_moe()));
  if (rec.pick->simulated)
    if (const std::string at_load = accuracy_at_load_line(rec.pick->instance->accelerator_name); !at_load.empty())
      out += fmt::format("  accuracy at load: {}, never fitted (the simulated means against them: docs/validation.md §Under load)\n", at_load);
  if (!rec.sizing.empty()) out += fmt::format("  sizing: {}\n", rec.sizing);
  out += redundancy_text(*rec.pick, *ctx.workload);
  out += margin_text(*rec.pick, *ctx.workload, ctx.model->is_moe());
  out += batch_hours_text(*rec.pick, *ctx.workload);
  if (!rec.pick->capacity.note.empty()) out += fmt::format("  capacity: {}\n", rec.pick->capacity.note);
  auto alternative = [&](const ServingRow& x) {
    const bool same = x.instance == rec.pick->instance && x.estimate.layout == rec.pick->estimate.layout;
    return same ? std::string("the pick") : service_line(x);
  };
  const bool one_token = ctx.workload->one_token_outputs();
  out += fmt::format("  cheapest: {}\n  {}: {}{}\n", alternative(*rec.cheapest), one_token ? "fastest (request latency)" : "fastest per token",
                     fastest_service_text(rec, alternative, *ctx.request), faster_unpriced_text(rec));
  if (rec.disaggregated) out += "  disaggregated: " + disaggregated_text(*rec.disaggregated, *rec.pick, ctx.workload->target_utilisation) + "\n";
  return out + "\n";
}

// Whether a row is the service's pick: the same type, layout and instance count.
static bool serving_pick(const ServingRow& r, const ServingRecommendation& rec) {
  return rec.pick && r.instance == rec.pick->instance && r.estimate.layout == rec.pick->estimate.layout && r.instances == rec.pick->instances;
}

// "TTFT P90": the column of latencies at the targets' percentile.
static std::string slo_header(const char* what, const ServingRecommendation& rec) {
  for (const auto& r : rec.rows)
    if (r.simulated) return r.slo_percentile ? fmt::format("{} P{}", what, r.slo_percentile) : fmt::format("{} MEAN", what);
  return fmt::format("{} SLO", what);
}

namespace {
// One instance's on-demand rate (the rows' on_demand_usd_per_hour; the service's bill is service_on_demand_usd_per_hour).
std::optional<double> instance_rate(const ServingRow& r, const std::string& region) { return hourly_rate(*r.instance, region, Pricing::on_demand); }
}  // namespace

Table inference_table(const ServingRecommendation& rec, const InferenceContext& ctx) {
  const bool simulated = std::any_of(rec.rows.begin(), rec.rows.end(), [](const ServingRow& r) { return r.simulated.has_value(); });
  Table t;
  t.columns = {{"rank", "#", true},
               {"instance", "INSTANCE"},
               {"layout", "LAYOUT"},
               {"precision", "PRECISION", false, true},
               {"memory_percent", "MEM", true, true},
               {"max_batch", "MAXB", true, true},
               {"batch", "BATCH", true, true},
               {"ttft_s", "TTFT", true, simulated},
               {"tpot_s", "TPOT", true, simulated},
               {"slo_percentile", "SLO", true, false, true},
               {"ttft_at_slo_s", slo_header("TTFT", rec), true, !simulated},
               {"tpot_at_slo_s", slo_header("TPOT", rec), true, !simulated},
               {"tokens_per_second_per_user", "TOK/S/USER", true, true},
               {"output_tokens_per_second", "TOK/S/REPL", true, true},
               {"bound", "BOUND", false, true},
               {"replicas", "REPL", true},
               {"instances", "N", true},
               {"utilisation", "UTIL", true, true},
               {"usd_per_month", "$/MONTH", true},
               {"on_demand_usd_per_hour", "OD $/H", true, true},
               {"service_on_demand_usd_per_hour", "SERVICE OD $/H", true, true},
               {"on_demand_usd_per_month", "OD $/MONTH", true, true},
               {"spot_usd_per_month", "SPOT $/MONTH", true, true},
               {"usd_per_million_output_tokens", "$/M OUT", true},
               {"usd_per_million_input_tokens", "$/M IN", true, true},
               {"software", "SOFTWARE", false, true},
               {"pareto", "PARETO", false, true},
               {"pick", "PICK", false, true}};
  for (auto& c : provenance_columns(false)) t.columns.push_back(c);
  int rank = 0;
  for (const auto& r : rec.rows) {
    if (rank >= ctx.request->top) break;
    ++rank;
    const auto& e = r.estimate;
    auto month = [](std::optional<double> h) { return h ? std::optional<double>(*h * kHoursPerMonth) : std::nullopt; };
    t.rows.push_back({integer(rank), text(r.instance->name), text(layout_text(e.layout)), text(precision_text(*ctx.workload, e.precision)),
                      pct(e.memory.total_gb() / e.memory.capacity_gb), integer(e.max_batch), integer(static_cast<int>(std::lround(r.batch_seen()))),
                      latency_cell(r.ttft_mean_s()), tpot_cell(r.tpot_mean_s()), slo_cell(r), seen_cell(r, latency_cell(r.ttft_seen_s())), seen_cell(r, tpot_cell(r.tpot_seen_s())),
                      num(r.simulated ? (r.tpot_mean_s() > 0 ? 1 / r.tpot_mean_s() : 0) : r.at_load.tokens_per_second_per_user, 1), num(e.output_tokens_per_second, 0),
                      text(e.step.bound()), integer(r.replicas), integer(r.instances), pct(r.utilisation),
                      money(month(r.ranked_usd_per_hour)), rate(instance_rate(r, ctx.request->region)), rate(r.on_demand_usd_per_hour),
                      money(month(r.on_demand_usd_per_hour)),
                      money(month(r.spot_usd_per_hour)), per_million(r.usd_per_million_output_tokens),
                      per_million(r.usd_per_million_input_tokens), text(software_text(*r.accelerator)),
                      {r.pareto ? "yes" : "", r.pareto},
                      pick_cell(serving_pick(r, rec))});
    append_provenance(t.rows.back(), *r.instance, ctx.request->region, to_string(r.ranked_pricing));
  }
  return t;
}

Table inference_cost_table(const ServingRecommendation& rec, const InferenceContext& ctx) {
  Table t;
  t.columns = {{"instance", "INSTANCE"},
               {"layout", "LAYOUT"},
               {"replicas", "REPL", true},
               {"instances", "N", true},
               {"utilisation", "UTIL", true, true},
               {"on_demand_usd_per_hour", "OD $/H", true, true},
               {"service_on_demand_usd_per_hour", "SERVICE OD $/H", true, true},
               {"on_demand_usd_per_month", "ON-DEMAND/MO", true},
               {"spot_usd_per_month", "SPOT/MO", true},
               {"spot_savings_fraction", "SPOT SAVES", true, true},
               {"savings_1y_usd_per_month", "1Y/MO", true},
               {"savings_1y_break_even_utilisation", "1Y UTIL>", true, true},
               {"savings_3y_usd_per_month", "3Y/MO", true},
               {"savings_3y_break_even_utilisation", "3Y UTIL>", true, true},
               {"usd_per_million_output_tokens", "$/M OUT", true}};
  for (auto& c : provenance_columns(true)) t.columns.push_back(c);
  auto month = [](std::optional<double> h) { return h ? std::optional<double>(*h * kHoursPerMonth) : std::nullopt; };
  auto ratio = [](std::optional<double> a, std::optional<double> b) {
    return a && b && *b > 0 ? pct(*a / *b) : Cell{"unknown", std::monostate{}};
  };
  int rank = 0;
  for (const auto& r : rec.rows) {
    if (rank++ >= ctx.request->top) break;
    std::optional<double> spot_saves;
    if (r.spot_usd_per_hour && r.on_demand_usd_per_hour) spot_saves = 1 - *r.spot_usd_per_hour / *r.on_demand_usd_per_hour;
    t.rows.push_back({text(r.instance->name), text(layout_text(r.estimate.layout)), integer(r.replicas), integer(r.instances),
                      pct(r.utilisation), rate(instance_rate(r, ctx.request->region)), rate(r.on_demand_usd_per_hour),
                      money(month(r.on_demand_usd_per_hour)),
                      money(month(r.spot_usd_per_hour)), spot_saves ? pct(*spot_saves) : Cell{"unknown", std::monostate{}},
                      money(month(r.savings_1y_usd_per_hour)), ratio(r.savings_1y_usd_per_hour, r.on_demand_usd_per_hour),
                      money(month(r.savings_3y_usd_per_hour)), ratio(r.savings_3y_usd_per_hour, r.on_demand_usd_per_hour),
                      per_million(r.usd_per_million_output_tokens)});
    append_provenance(t.rows.back(), *r.instance, ctx.request->region, to_string(r.ranked_pricing), serving_pick(r, rec));
  }
  return t;
}

Chart inference_chart(const ServingRecommendation& rec, const InferenceContext& ctx) {
  Chart c;
  const bool one_token = ctx.workload->one_token_outputs();
  c.title = fmt::format("{} serving: {} against monthly cost", ctx.model->name, one_token ? "request latency" : "time per output token");
  c.x_label = one_token ? "request latency at the load (ms)" : "time per output token at the load (ms)";
  c.y_label = "cost per 30-day month (USD)";
  c.x_unit = "ms";
  c.y_unit = "USD/month";
  c.region = ctx.request->region;
  auto same = [](const ServingRow& a, const std::optional<ServingRow>& b) {
    return b && a.instance == b->instance && a.estimate.layout == b->estimate.layout;
  };
  std::vector<ServingRow> rows = rec.rows;
  for (const auto* x : {&rec.cheapest, &rec.fastest})
    if (*x && std::none_of(rows.begin(), rows.end(), [&](const ServingRow& r) { return same(r, *x); })) rows.push_back(**x);
  for (const auto& r : rows) {
    const std::string label = fmt::format("{} {} x {}", r.instance->name, layout_text(r.estimate.layout), r.instances);
    std::string role;
    for (auto [name, x] : {std::pair{"pick", &rec.pick}, std::pair{"cheapest", &rec.cheapest}, std::pair{"fastest", &rec.fastest}})
      if (same(r, *x)) role += (role.empty() ? "" : ", ") + std::string(name);
    // The role sits on the point of the pricing the row is ranked at: on
    // demand, spot, or a commitment (drawn as a series of its own, as the
    // table prices it).
    const Pricing ranked = r.ranked_usd_per_hour ? r.ranked_pricing : Pricing::on_demand;
    const bool committed = ranked == Pricing::savings_1y || ranked == Pricing::savings_3y;
    if (r.on_demand_usd_per_hour)
      c.points.push_back({label, r.pace_seen_s() * 1e3, *r.on_demand_usd_per_hour * kHoursPerMonth, "on-demand", ranked == Pricing::on_demand ? role : ""});
    if (r.spot_usd_per_hour)
      c.points.push_back({label, r.pace_seen_s() * 1e3, *r.spot_usd_per_hour * kHoursPerMonth, "spot, no interruptions", ranked == Pricing::spot ? role : ""});
    if (committed)
      c.points.push_back({label, r.pace_seen_s() * 1e3, *r.ranked_usd_per_hour * kHoursPerMonth,
                          ranked == Pricing::savings_1y ? "1-year savings plan" : "3-year savings plan", role});
  }
  return c;
}

std::string inference_json_extra(const ServingRecommendation& rec, const InferenceContext& ctx) {
  ordered_json j;
  j["model"] = model_json(*ctx.model);
  j["workload"] = workload_json(*ctx.workload);
  j["request"] = request_json(*ctx.request);
  j["request"]["target_utilisation"] = ctx.workload->target_utilisation;
  j["assumptions"] = assumptions_json(*ctx.model, *ctx.workload);
  j["options_found"] = rec.options_found;
  if (rec.pick) {
    j["recommendation"] = service_json(*rec.pick, *ctx.model);
    j["recommendation"]["why"] = rec.why;
    j["recommendation"]["sizing"] = rec.sizing.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(rec.sizing);
    j["recommendation"]["tpot_margin"] = margin_json(*rec.pick, *ctx.workload, ctx.model->is_moe());
    j["recommendation"]["redundancy"] = redundancy_json(*rec.pick, *ctx.workload);
    j["recommendation"]["accuracy_at_load"] = rec.pick->simulated ? accuracy_at_load_json(rec.pick->instance->accelerator_name) : ordered_json(nullptr);
    const auto batch_hours = batch_hours_per_day(*rec.pick, *ctx.workload);
    j["recommendation"]["batch_hours_per_day"] = batch_hours ? ordered_json(sig6(*batch_hours)) : ordered_json(nullptr);
    const auto first_visible = first_visible_mean_s(*rec.pick, ctx.workload->reasoning_tokens);
    j["recommendation"]["first_visible_s"] = first_visible ? ordered_json(sig6(*first_visible)) : ordered_json(nullptr);
    const auto generated = usd_per_million_generated_tokens(*rec.pick, *ctx.workload);
    j["recommendation"]["usd_per_million_generated_tokens"] = generated ? ordered_json(sig6(*generated)) : ordered_json(nullptr);
    j["alternatives"] = {{"cheapest", service_json(*rec.cheapest, *ctx.model)},
                         {"fastest", service_json(*rec.fastest, *ctx.model)},
                         {"fastest_unpriced", rec.fastest_unpriced ? service_json(*rec.fastest_unpriced, *ctx.model) : ordered_json(nullptr)},
                         {"fastest_within_cost_ceiling",
                          rec.fastest_within_cost_ceiling ? service_json(*rec.fastest_within_cost_ceiling, *ctx.model) : ordered_json(nullptr)},
                         {"disaggregated", disaggregated_json(rec.disaggregated)}};
  } else {
    j["recommendation"] = nullptr;
    j["alternatives"] = {{"cheapest", nullptr}, {"fastest", nullptr}, {"fastest_unpriced", nullptr}, {"fastest_within_cost_ceiling", nullptr},
                         {"disaggregated", nullptr}};
  }
  j["best_batch1_tpot_s"] = rec.best_batch1_tpot_s ? ordered_json(sig6(*rec.best_batch1_tpot_s)) : ordered_json(nullptr);
  j["best_batch1_ttft_s"] = rec.best_batch1_ttft_s ? ordered_json(sig6(*rec.best_batch1_ttft_s)) : ordered_json(nullptr);
  ordered_json rej = ordered_json::array();
  for (const auto& x : rec.rejections) rej.push_back({{"instance", x.instance}, {"reason", x.reason}});
  j["cannot_run"] = rej;
  j["notes"] = rec.notes;
  return json_text(j);
}

namespace {

ordered_json serving_memory_json(const InferenceMemory& m) {
  return {{"per_accelerator_gb", sig6(m.total_gb())}, {"capacity_gb", sig6(m.capacity_gb)}, {"weights_gb", sig6(m.weights_gb)},
          {"kv_cache_gb", sig6(m.kv_cache_gb)}, {"workspace_gb", sig6(m.workspace_gb)}, {"reserve_gb", sig6(m.reserve_gb)}};
}

ordered_json decode_step_json(const InferenceEstimate& e) {
  return {{"weights_read_s", sig6(e.step.weights_read_s)}, {"kv_read_s", sig6(e.step.kv_read_s)},
          {"compute_s", sig6(e.step.compute_s)},
          {"dequant_s", e.step.dequant_unknown ? ordered_json(nullptr) : ordered_json(sig6(e.step.dequant_s))},
          {"tensor_parallel_s", sig6(e.step.tensor_parallel_s)},
          {"expert_parallel_s", sig6(e.step.expert_parallel_s)},
          {"pipeline_p2p_s", sig6(e.step.pipeline_p2p_s)}, {"kernel_floor_s", sig6(e.step.kernel_floor_s)},
          {"moe_routing_s", sig6(e.step.moe_routing_s)}, {"moe_permute_s", sig6(e.step.moe_permute_s)}, {"sequence_s", sig6(e.step.sequence_s)},
          {"launch_s", sig6(e.step.launch_s)}, {"draft_s", sig6(e.step.draft_s)},
          {"engine_host_s", sig6(e.step.host_s)}, {"step_s", sig6(e.step.total_s())},
          {"bound", e.step.bound()}};
}


// A replica's share of a trace: its rate and the spread of its gaps as recorded.
ordered_json trace_load_json(const ServingLoad& load) {
  const std::vector<TraceRequest> taken = trace_share_of(*load.trace, load.trace_share, load.requests);
  std::vector<double> gaps;
  for (size_t i = 1; i < taken.size(); ++i) gaps.push_back(taken[i].arrival_s - taken[i - 1].arrival_s);
  const double span = taken.size() > 1 ? taken.back().arrival_s - taken.front().arrival_s : 0;
  double mean = 0, var = 0;
  for (double g : gaps) mean += g / gaps.size();
  for (double g : gaps) var += (g - mean) * (g - mean) / gaps.size();
  return {{"kind", "trace"},
          {"requests_per_second", span > 0 ? ordered_json(sig6((taken.size() - 1) / span)) : ordered_json(nullptr)},
          {"gap_cv", mean > 0 ? ordered_json(sig6(std::sqrt(var) / mean)) : ordered_json(nullptr)},
          {"trace", {{"file", load.trace->name}, {"requests", load.trace->requests.size()}, {"share", sig6(load.trace_share)}}}};
}

ordered_json load_json(const ServingLoad& load) {
  auto lengths = [](const LengthDistribution& d) {
    ordered_json j{{"shape", d.shape == LengthShape::fixed ? "fixed" : d.shape == LengthShape::uniform ? "uniform" : "lognormal"}, {"mean", sig6(d.mean)}};
    if (d.shape == LengthShape::uniform) j["spread"] = sig6(d.spread);
    return j;
  };
  ordered_json j;
  if (load.arrivals.closed_loop) j = {{"kind", "closed loop"}, {"clients", load.arrivals.clients}};
  else if (load.trace) j = trace_load_json(load);
  else j = {{"kind", "open loop"}, {"requests_per_second", sig6(load.arrivals.requests_per_second)}, {"gap_cv", sig6(load.arrivals.gap_cv)}};
  j["prompt_tokens"] = lengths(load.prompt);
  j["generated_tokens"] = lengths(load.output);
  j["simulated_requests"] = load.requests;
  j["seed"] = load.seed;
  return j;
}

// The replica simulated under the load (docs/methodology.md §Serving under load).
ordered_json simulated_at_load_json(const SimulatedService& sim, const InferenceWorkload& w) {
  const ServiceMetrics& m = sim.metrics;
  return {{"model", "simulated"},
          {"meets_targets", meets_targets(m, w)},
          {"target_misses", simulated_service_misses(m, w)},
          {"batch", static_cast<int>(std::lround(m.mean_sequences))},
          {"ttft_s", sig6(m.ttft_s.mean)},
          {"tpot_s", sig6(m.tpot_s.mean)},
          {"latency_s", sig6(m.e2e_s.mean)},
          {"tokens_per_second_per_user", sig6(m.tpot_s.mean > 0 ? 1 / m.tpot_s.mean : 0)},
          {"percentiles", metrics_percentiles_json(m)},
          {"requests_per_second", sig6(m.requests_per_second)},
          {"output_tokens_per_second", sig6(m.output_tokens_per_second)},
          {"goodput_requests_per_second", sig6(m.goodput_requests_per_second)},
          {"mean_sequences", sig6(m.mean_sequences)},
          {"kv_utilisation", sig6(m.kv_utilisation)},
          {"busy_share", sig6(m.busy_share)},
          {"preemptions", m.preemptions},
          {"rejected", m.rejected},
          {"saturated", m.saturated},
          {"steps", m.steps},
          {"load", load_json(sim.load)},
          {"engine_limits", {{"max_sequences", sim.limits.max_sequences}, {"token_budget", sim.limits.token_budget},
                             {"kv_blocks", sim.limits.kv_blocks}, {"kv_block_tokens", kKvBlockTokens},
                             {"prefill", sim.limits.chunked ? "chunked" : "separate"}, {"continuous_batching", sim.limits.continuous},
                             {"prefill_pauses_decode", sim.limits.prefill_pauses_decode},
                             {"reserves_full_kv", sim.limits.reserves_full_kv}}}};
}

ordered_json at_load_json(const ServingRow& row, const InferenceWorkload& w, const SimulatedService* sim) {
  if (sim) return simulated_at_load_json(*sim, w);
  if (!w.requests_per_second) return nullptr;
  return {{"batch", row.at_load.batch},
          {"ttft_s", sig6(row.at_load.ttft_s)},
          {"tpot_s", sig6(row.at_load.tpot_s)},
          {"latency_s", sig6(row.at_load.latency_s)},
          {"tokens_per_second_per_user", sig6(row.at_load.tokens_per_second_per_user)}};
}

ordered_json serving_figures_json(const ServingRow& row, const InferenceWorkload& w, const SimulatedService* sim) {
  const InferenceEstimate& e = row.estimate;
  return {{"ttft_s", sig6(e.ttft_s)},
          {"ttft_p95_s", sig6(e.prefill_p95_s + e.step.total_s())},
          {"tpot_s", sig6(e.tpot_s)},
          {"latency_s", sig6(e.latency_s)},
          {"tokens_per_second_per_user", sig6(e.tokens_per_second_per_user)},
          {"output_tokens_per_second", sig6(e.output_tokens_per_second)},
          {"visible_output_tokens_per_second", sig6(e.visible_tokens_per_second)},
          {"requests_per_second", sig6(e.requests_per_second)},
          {"max_batch", e.max_batch},
          {"max_batch_by_memory", e.max_batch_by_memory},
          {"max_batch_limit", to_string(e.max_batch_limit)},
          {"batch", e.batch},
          {"replicas", row.replicas},
          {"instances", row.instances},
          {"utilisation", sig6(row.utilisation)},
          {"prefill_s", sig6(e.prefill_s)},
          {"prefill_share", sig6(e.prefill_share)},
          {"test_time_multiplier", sig6(w.test_time_multiplier())},
          {"at_load", at_load_json(row, w, sim)},
          {"decode_step", decode_step_json(e)}};
}

ordered_json serving_cost_json(const InferenceEstimateContext& ctx, const ServingCost& od, const ServingCost& spot) {
  auto opt = [](std::optional<double> v, bool cents) {
    return v ? ordered_json(cents ? round_cents(*v) : sig6(*v)) : ordered_json(nullptr);
  };
  auto hourly = [](std::optional<double> v) { return v ? ordered_json(rate_json_value(*v)) : ordered_json(nullptr); };
  // *_usd_per_hour is per instance in every document (schema_version 2); the whole service's bill is service_*.
  return {{"on_demand_usd_per_hour_per_instance", hourly(ctx.on_demand_usd_per_hour)},
          {"spot_usd_per_hour_per_instance", hourly(ctx.spot_usd_per_hour)},
          {"on_demand_usd_per_hour", hourly(ctx.on_demand_usd_per_hour)},
          {"spot_usd_per_hour", hourly(ctx.spot_usd_per_hour)},
          {"service_on_demand_usd_per_hour", hourly(od.usd_per_hour)},
          {"service_spot_usd_per_hour", hourly(spot.usd_per_hour)},
          {"on_demand_usd_per_month", opt(od.usd_per_month, true)},
          {"spot_usd_per_month", opt(spot.usd_per_month, true)},
          {"usd_per_million_output_tokens", opt(od.usd_per_million_output_tokens, false)},
          {"usd_per_million_input_tokens", opt(od.usd_per_million_input_tokens, false)},
          {"spot_usd_per_million_output_tokens", opt(spot.usd_per_million_output_tokens, false)},
          {"pricing_note", "usd_per_million_* use on-demand prices; a month is 720 hours"}};
}

std::string serving_estimate_json(const Catalog& catalog, const InferenceEstimateContext& ctx, const ServingCost& od, const ServingCost& spot) {
  const InferenceEstimate& e = ctx.row->estimate;
  const InferenceWorkload& w = *ctx.workload;
  const Cluster& c = *ctx.cluster;
  ordered_json j = envelope(catalog, "estimate");
  j["model"] = model_json(*ctx.model);
  j["workload"] = workload_json(w);
  j["assumptions"] = assumptions_json(*ctx.model, w);
  j["instance"] = c.instance->name;
  j["accelerators_per_replica"] = e.layout.accelerators();
  j["region"] = ctx.region;
  j["software"] = software_text(*c.accelerator);
  j["engine"] = {{"name", e.engine->name}, {"title", e.engine->title}};
  j["layout"] = layout_json(e.layout);
  j["precision"] = {{"weights", std::string(to_string(w.weights))}, {"compute", std::string(to_string(e.precision.compute))},
                    {"weight_only", e.precision.weight_only}, {"kv_cache", std::string(to_string(e.precision.kv_cache))}};
  j["fits"] = e.fits();
  j["accuracy"] = accuracy_json(c.accelerator->name, "inference", e.engine->name, ctx.model->is_moe());
  j["memory"] = serving_memory_json(e.memory);
  j["inference"] = serving_figures_json(*ctx.row, w, ctx.simulated);
  if (!ctx.targets_missed.empty()) j["targets_missed"] = ctx.targets_missed;
  j["cost"] = serving_cost_json(ctx, od, spot);
  return json_text(j, 2) + "\n";
}

void add_serving_config(const InferenceEstimateContext& ctx, const ItemAdder& add) {
  const InferenceEstimate& e = ctx.row->estimate;
  const InferenceWorkload& w = *ctx.workload;
  const Cluster& c = *ctx.cluster;
  const auto& m = e.memory;
  add("config", "replica", text(fmt::format("{} x {}, {}", e.layout.pp, c.instance->name, layout_text(e.layout))), "");
  add("config", "accelerators per replica", integer(e.layout.accelerators()), c.accelerator->name + " (" + software_text(*c.accelerator) + ")");
  add("config", "precision", text(precision_text(w, e.precision)), "");
  add("config", "engine", text(e.engine->name), e.engine->title);
  add("config", "test-time multiplier", num(w.test_time_multiplier(), 2),
      fmt::format("{} sample(s) x ({:.0f} output + {:.0f} reasoning) / {:.0f}", w.samples, w.output_tokens, w.reasoning_tokens, w.output_tokens));
  add("memory", "weights", num(m.weights_gb, 2), "GB per accelerator");
  add("memory", "KV cache at the batch", num(m.kv_cache_gb, 2), "GB");
  add("memory", "workspace", num(m.workspace_gb, 2), "GB");
  add("memory", c.accelerator->software == "cuda" ? "runtime reserve (engine free share, CUDA graphs)" : "runtime reserve (Neuron runtime)",
      num(m.reserve_gb, 2), "GB");
  add("memory", "total", num(m.total_gb(), 2), "GB");
  add("memory", "capacity", num(m.capacity_gb, 2), e.fits() ? "GB (fits)" : "GB (DOES NOT FIT)");
  add("memory", "max batch", integer(e.max_batch), "sequences");
}

void add_decode_step(const InferenceEstimateContext& ctx, const ItemAdder& add) {
  const InferenceEstimate& e = ctx.row->estimate;
  const InferenceWorkload& w = *ctx.workload;
  const Cluster& c = *ctx.cluster;
  add("decode", "batch", integer(e.batch),
      ctx.fixed_batch            ? "sequences in flight (--batch)"
      : w.requests_per_second    ? "sequences in flight at capacity (the most that meets the targets)"
                                 : "sequences in flight");
  add("decode", "weights read", latency_cell(e.step.weights_read_s), "per step");
  add("decode", "KV read", latency_cell(e.step.kv_read_s), "per step");
  add("decode", "compute", latency_cell(e.step.compute_s), "per step");
  if (e.step.kernel_floor_s > 0)
    add("decode", "kernels' fixed time", latency_cell(e.step.kernel_floor_s), "per step, in series: launch gap, ramp-up and tail of each kernel");
  if (e.step.moe_routing_s > 0) add("decode", "MoE routing", latency_cell(e.step.moe_routing_s), "per step, router and permute kernels");
  if (e.step.moe_permute_s > 0) add("decode", "MoE permute", latency_cell(e.step.moe_permute_s), "per step, dispatch and combine copies (memory)");
  if (e.step.sequence_s > 0) add("decode", "per-sequence work", latency_cell(e.step.sequence_s), "per step, Neuron: each sequence's attention per layer");
  if (e.step.dequant_unknown)
    add("decode", "dequantise weights", Cell{"unknown", std::monostate{}}, "no vector FLOP/s in the catalog for " + c.accelerator->name + "; not counted");
  else if (e.precision.weight_only)
    add("decode", "dequantise weights", latency_cell(e.step.dequant_s), "per step, on the vector units");
  add("decode", "tensor-parallel all-reduce", latency_cell(e.step.tensor_parallel_s), "per step");
  if (e.layout.experts_all_to_all()) add("decode", "expert all-to-alls", latency_cell(e.step.expert_parallel_s), "per step, each MoE layer's dispatch and combine");
  if (e.step.pipeline_p2p_s > 0) add("decode", "pipeline p2p", latency_cell(e.step.pipeline_p2p_s), "per step");
  if (w.speculative)
    add("decode", "speculative drafter", latency_cell(e.step.draft_s),
        fmt::format("per step, {} ({:.2f} tokens per sequence and step; the step verifies {} positions per sequence)",
                    speculative_text(*w.speculative), w.tokens_per_decode_step(), w.decode_queries_per_sequence()));
  if (e.step.launch_s > 0) add("decode", "kernel launches", latency_cell(e.step.launch_s), "per step, overlapped with the accelerator");
  add("decode", "engine host time", latency_cell(e.step.host_s), "per step, in series (scheduling, per-sequence work)");
  add("decode", "step", latency_cell(e.step.total_s()), e.step.bound() + "-bound");
}

std::string percentiles_cell_note(const Percentiles& p) {
  return fmt::format("p50 {} / p90 {} / p99 {}", latency_cell(p.p50).text, latency_cell(p.p90).text, latency_cell(p.p99).text);
}

// The replica simulated step by step under the load: percentiles of what users saw.
void add_simulated_load(const SimulatedService& sim, const InferenceWorkload& w, const ServingRow& row, const ItemAdder& add) {
  const ServiceMetrics& m = sim.metrics;
  const std::string load = sim.load.arrivals.closed_loop
                               ? fmt::format("{} clients, closed loop", sim.load.arrivals.clients)
                               : fmt::format("{:.3g} requests/s per replica, {}", sim.load.arrivals.requests_per_second,
                                             sim.load.trace ? fmt::format("as recorded in {} (1 request in {:.3g})", sim.load.trace->name, 1 / sim.load.trace_share)
                                             : sim.load.arrivals.gap_cv == 1 ? std::string("Poisson")
                                                                             : fmt::format("gamma gaps, CV {:g}", sim.load.arrivals.gap_cv));
  const std::string g = "at load (simulated)";
  const std::string finished =
      m.unfinished > 0 ? fmt::format("{} of {} requests", m.completed, m.completed + m.unfinished) : fmt::format("{} requests", m.completed);
  add(g, "load", Cell{finished, std::monostate{}}, load);
  // Over busy time, as the steps see it; over the whole run (Little's law: rate x latency) it is that x the busy share.
  add(g, "sequences in flight", num(m.mean_sequences, 1),
      fmt::format("mean while busy ({:.0f}% of the run; {:.2g} over the whole run, as Little's law gives); engine limit {}, {}-token steps{}, "
                  "{} KV blocks of {} tokens",
                  m.busy_share * 100, m.mean_sequences * m.busy_share, sim.limits.max_sequences, sim.limits.token_budget,
                  sim.limits.prefill_pauses_decode ? " (prefill steps pause the decodes)" : "", sim.limits.kv_blocks, kKvBlockTokens));
  add(g, "time to first token", latency_cell(m.ttft_s.mean), "mean; " + percentiles_cell_note(m.ttft_s));
  if (w.one_token_outputs())
    add(g, "time per output token", tpot_cell(0), kNoTokenGapNote);
  else
    add(g, "time per output token", latency_cell(m.tpot_s.mean), "mean; " + percentiles_cell_note(m.tpot_s));
  add(g, "request latency", latency_cell(m.e2e_s.mean), "mean; " + percentiles_cell_note(m.e2e_s));
  add(g, "queueing", latency_cell(m.queue_s.mean), "mean; " + percentiles_cell_note(m.queue_s));
  if (m.first_visible_s)
    add(g, "first visible token", latency_cell(m.first_visible_s->mean),
        "mean, after the hidden reasoning tokens; " + percentiles_cell_note(*m.first_visible_s));
  add(g, "requests/s", num(m.requests_per_second, 3), fmt::format("served; goodput {:.3g} within the targets", m.goodput_requests_per_second));
  add(g, "output tokens/s", num(m.output_tokens_per_second, 0), "generated, per replica");
  add(g, "KV cache in use", num(m.kv_utilisation * 100, 0), fmt::format("% of blocks, mean; {} preemptions", m.preemptions));
  if (m.saturated && m.unfinished > 0)
    add(g, "SATURATED", Cell{"yes", std::monostate{}},
        fmt::format("the simulation stopped at its limit of {} engine rounds with {} requests unfinished: the figures are over those that "
                    "finished, and the load is more than one replica serves in that many",
                    kMaxSchedulerRounds, m.unfinished));
  else if (m.saturated)
    add(g, "SATURATED", Cell{"yes", std::monostate{}}, "the queue still grows: the load is above what one replica serves");
  if (m.rejected > 0) add(g, "rejected", integer(m.rejected), "requests longer than the whole KV cache");
  (void)row;
}

// The analytic time per token and request latency of one operating point.
void add_tpot_and_latency(const std::string& section, const InferenceWorkload& w, const InferenceEstimate& e, const ItemAdder& add) {
  if (w.one_token_outputs()) {
    add(section, "time per output token", tpot_cell(0), kNoTokenGapNote);
    add(section, "request latency", latency_cell(e.latency_s), "TTFT + the prefills of the other requests in flight, which run before its step");
    return;
  }
  add(section, "time per output token", latency_cell(e.tpot_s),
      fmt::format("with the other requests' prefills interleaved ({:.0f}% of time in prefill)", e.prefill_share * 100));
  const int waves = sample_waves(w, e.batch);
  add(section, "request latency", latency_cell(e.latency_s),
      waves > 1 ? fmt::format("TTFT + ({} waves x generated tokens - 1) x TPOT: {} samples, {} at a time", waves, w.samples, e.batch)
                : std::string("TTFT + (generated tokens - 1) x TPOT"));
}

void add_latency_and_throughput(const InferenceEstimateContext& ctx, const ItemAdder& add) {
  const ServingRow& row = *ctx.row;
  const InferenceEstimate& e = row.estimate;
  const InferenceWorkload& w = *ctx.workload;
  // With a load (a rate, or clients simulated), these are the replica's capacity point; the rows "at load" follow.
  const std::string latency = w.requests_per_second || ctx.simulated ? "at capacity" : "latency";
  add(latency, "time to first token", latency_cell(e.ttft_s), "mean prompt, no queueing");
  add_tpot_and_latency(latency, w, e, add);
  if (ctx.simulated) {
    add_simulated_load(*ctx.simulated, w, row, add);
  } else if (w.requests_per_second) {
    // With a load, what a user sees: the batch the load keeps in flight (Little's law), as recommend reports it.
    const InferenceEstimate& a = row.at_load;
    const std::string per_replica = fmt::format("{:.3g} requests/s per replica", *w.requests_per_second / row.replicas);
    add("at load", "sequences in flight", integer(a.batch), "at " + per_replica + " (Little's law)");
    add("at load", "time to first token", latency_cell(a.ttft_s), "mean prompt, no queueing");
    add_tpot_and_latency("at load", w, a, add);
    if (!w.one_token_outputs()) add("at load", "tokens/s per user", num(a.tokens_per_second_per_user, 1), "");
  }
  if (!w.one_token_outputs())
    add("throughput", "tokens/s per user", num(e.tokens_per_second_per_user, 1), w.requests_per_second ? "at capacity" : "");
  add("throughput", "output tokens/s per replica", num(e.output_tokens_per_second, 0), "generated, all samples");
  add("throughput", "requests/s per replica", num(e.requests_per_second, 3), "");
}

void add_service_and_cost(const InferenceEstimateContext& ctx, const ServingCost& od, const ServingCost& spot, const ItemAdder& add) {
  const ServingRow& row = *ctx.row;
  const InferenceWorkload& w = *ctx.workload;
  const std::string replicas_note = w.requests_per_second ? fmt::format("for {:.3g} requests/s", *w.requests_per_second)
                                     : w.clients           ? fmt::format("every slot of one instance; the closed loop of {} clients is simulated on one replica", *w.clients)
                                                           : std::string("no load given: every slot of one instance");
  add("service", "replicas", integer(row.replicas), replicas_note);
  // Above 100% the analytic capacity is below what the simulated replica
  // serves (chunked prefill overlaps decode where the analytic step adds it
  // in series): said, so the figure is not read as an overload.
  const std::string beyond = row.utilisation > 1 && ctx.simulated && !ctx.simulated->metrics.saturated
                                 ? " of the analytic capacity above: more than it, and the simulated replica serves the load (at load rows)"
                                 : "";
  add("service", "instances", integer(row.instances),
      w.requests_per_second ? fmt::format("utilisation {:.0f}%{}", row.utilisation * 100, beyond)
                            : fmt::format("utilisation {:.0f}% assumed for the costs per token below (--target-utilisation)", row.utilisation * 100));
  add("cost", "on-demand per hour", money(od.usd_per_hour), ctx.region);
  add("cost", "on-demand per month", money(od.usd_per_month), "720 h");
  add("cost", "spot per month", money(spot.usd_per_month), "no interruptions");
  add("cost", "per million output tokens", per_million(od.usd_per_million_output_tokens), "USD, on-demand");
  add("cost", "per million input tokens", per_million(od.usd_per_million_input_tokens), "USD, the same bill per prompt token");
}

// The latency targets the simulated load misses at the percentile they bind
// at (--slo-percentile), given or default: a line under the load's headline,
// or "" where it meets them.
std::string load_targets_missed(const InferenceWorkload& w, const ServiceMetrics& m) {
  const std::vector<std::string> misses = simulated_target_misses(m, w);
  if (misses.empty()) return "";
  return fmt::format("MISSES ITS LATENCY TARGETS AT THIS LOAD: {}; the figures below are what it does (--max-ttft, --max-tpot and "
                     "--slo-percentile set the targets; recommend sizes the replicas that meet them).\n",
                     fmt::join(misses, " and "));
}

// How the replica count was reached (--explain): by simulation, by the
// utilisation formula, or one instance's slots without a load.
std::string replicas_explained(const ServingRow& row, const InferenceWorkload& w) {
  const std::string whole = fmt::format("{} on {} instance(s)", row.replicas, row.instances);
  if (!w.requests_per_second) return fmt::format("  replicas = the replica slots of one instance (no load given) = {}\n", whole);
  const double load = *w.requests_per_second, per_replica = row.estimate.requests_per_second;
  if (row.simulated)
    return fmt::format("  replicas = the fewest whose simulated {}latencies meet the targets at {:.4g} requests/s (the sizing: line; "
                       "methodology §Serving under load), rounded up to whole instances = {}; at {:.0f}% utilisation the formula "
                       "ceil(load / (requests/s per replica x utilisation)) would give {:.0f}\n",
                       row.slo_percentile ? fmt::format("p{} ", row.slo_percentile) : "mean ", load, whole, w.target_utilisation * 100,
                       replicas_for_load(load, per_replica, w.target_utilisation));
  return fmt::format("  replicas = ceil(load {:.4g} / (requests/s per replica {:.4g} x utilisation {:.2f})), rounded up to whole instances = {}\n",
                     load, per_replica, w.target_utilisation, whole);
}

// What sets the replica's sequence limit below what its KV cache holds (--explain).
std::string batch_limit_text(const InferenceEstimate& e, const InferenceWorkload& w) {
  switch (e.max_batch_limit) {
    case BatchLimit::concurrency: return "--concurrency";
    case BatchLimit::max_batched_tokens:
      return fmt::format("--max-batched-tokens {} / {} token{} a sequence per step{}", w.max_batched_tokens.value_or(0),
                         w.decode_queries_per_sequence(), w.decode_queries_per_sequence() == 1 ? "" : "s",
                         e.layout.attention_dp > 1 ? fmt::format(" x {} attention ranks", e.layout.attention_dp) : std::string());
    case BatchLimit::compiled_batch: return "the batch the decode graph was compiled for";
    case BatchLimit::engine_sequence_limit:
      return e.layout.attention_dp > 1 ? fmt::format("{}'s sequence limit x {} attention ranks", e.engine->name, e.layout.attention_dp)
                                       : fmt::format("{}'s sequence limit", e.engine->name);
    case BatchLimit::memory: break;
  }
  return "the KV cache";
}

}  // namespace

// Text only: what the simulated load saw, first, so the capacity rows above
// the "at load" section are not read as the answer to the load given.
std::string load_headline(const InferenceEstimateContext& ctx, const RenderOptions& o) {
  if (!ctx.simulated || o.format != Format::table) return "";
  const SimulatedService& sim = *ctx.simulated;
  const ServiceMetrics& m = sim.metrics;
  const std::string load = sim.load.arrivals.closed_loop ? fmt::format("{} clients", sim.load.arrivals.clients)
                                                         : fmt::format("{:.3g} requests/s per replica", sim.load.arrivals.requests_per_second);
  // An open loop's completions over the whole run include its drain after the
  // last arrival, so they read below the offered rate even when it is served.
  const std::string served = sim.load.arrivals.closed_loop ? fmt::format("{:.3g} requests/s per replica", m.requests_per_second)
                                                           : fmt::format("{:.3g} requests/s per replica completed over the run (its drain included)",
                                                                         m.requests_per_second);
  const std::string tpot = ctx.workload->one_token_outputs()
                               ? std::string("one token per request (no time per output token)")
                               : fmt::format("time per output token {} mean (p90 {})", latency_cell(m.tpot_s.mean).text, latency_cell(m.tpot_s.p90).text);
  return fmt::format("At the load ({}, simulated): time to first token {} mean (p90 {}), {}, {}{}; "
                     "the 'at capacity' rows are the replica at its largest batch.\n{}",
                     load, latency_cell(m.ttft_s.mean).text, latency_cell(m.ttft_s.p90).text, tpot, served, m.saturated ? ", SATURATED" : "",
                     load_targets_missed(*ctx.workload, m));
}

std::string render_inference_estimate(const Catalog& catalog, const InferenceEstimateContext& ctx, const RenderOptions& o) {
  const ServingRow& row = *ctx.row;
  const InferenceWorkload& w = *ctx.workload;
  const ServingCost od = serving_cost(row, w, ctx.on_demand_usd_per_hour), spot = serving_cost(row, w, ctx.spot_usd_per_hour);
  if (o.format == Format::json) return serving_estimate_json(catalog, ctx, od, spot);
  Table t = items_table();
  const ItemAdder add = item_adder(t);
  add_serving_config(ctx, add);
  add_decode_step(ctx, add);
  add_latency_and_throughput(ctx, add);
  add_service_and_cost(ctx, od, spot, add);
  const Cluster& c = *ctx.cluster;
  return load_headline(ctx, o) +
         render_items(std::move(t), catalog, o, accuracy_line(c.accelerator->name, "inference", row.estimate.engine->name, ctx.model->is_moe()));
}

std::string explain_inference(const InferenceEstimateContext& ctx) {
  const InferenceEstimate& e = ctx.row->estimate;
  const InferenceWorkload& w = *ctx.workload;
  const ModelSpec& m = *ctx.model;
  const Accelerator& a = *ctx.cluster->accelerator;
  const ServingLayout& l = e.layout;
  std::string out = "How these numbers were computed (docs/methodology.md §Inference):\n";
  if (l.attention_dp == 1)
    out += fmt::format("  weights = {:.4g} params ({:.4g} embeddings at 2 bytes, the rest at {:.4g} bytes) / (tp {} x pp {}) = {:.2f} GB\n",
                       m.total_params(), m.embedding_params(), bytes_per_weight(w.weights), l.tp, l.pp, e.memory.weights_gb);
  else
    out += fmt::format("  weights = {:.4g} routed-expert params / ep {} + the other {:.4g} ({:.4g} embeddings at 2 bytes) / attention tp {}, "
                       "the rest at {:.4g} bytes = {:.2f} GB (each of the {} attention ranks holds the non-expert weights)\n",
                       m.expert_params_total(), l.ep, m.total_params() - m.expert_params_total(), m.embedding_params(), l.attention_tp(),
                       bytes_per_weight(w.weights), e.memory.weights_gb, l.attention_dp);
  const double held = kv_tokens_held(*e.engine, w);
  out += fmt::format("  KV per token per rank = {} = {:.0f} bytes; per sequence {} = {:.0f} tokens{}\n",
                     m.uses_mla() ? "layers x (kv_lora_rank + rope_dim) x bytes" : "2 x layers x ceil(kv_heads/tp) x head_dim x bytes",
                     kv_cache_bytes_per_token(m, e.precision.kv_cache, l.attention_tp()),
                     e.engine->reserves_full_kv ? "reserved at admission (prompt + every generated token)" : "at mean occupancy (prompt + generated/2)",
                     held,
                     m.sliding_layers == 0 ? std::string()
                     : e.engine->full_length_local_kv
                         ? fmt::format(", the {} local layers held at full length by the engine", m.sliding_layers)
                         : fmt::format(", {:.0f} averaged over the layers ({} local layers hold at most {} tokens)",
                                       kv_cached_tokens(m, *e.engine, held), m.sliding_layers, m.sliding_window));
  const double shared = kv_shared_prefix_tokens(*e.engine, w);
  const double shared_gb = e.memory.kv_shared_prefix_gb;
  if (shared > 0)
    out += fmt::format("  shared prefix = {:.0f} prompt tokens (--prefix-share) cached once per rank by the engine's prefix cache = {:.2f} GB; "
                       "each sequence holds only its own {:.0f}\n",
                       shared, shared_gb, held - shared);
  const std::string capped = e.max_batch < e.max_batch_by_memory
                                 ? fmt::format("{}, above the {} sequences the replica runs at most ({}): {}", e.max_batch_by_memory, e.max_batch,
                                               batch_limit_text(e, w), e.max_batch)
                                 : fmt::format("{}", e.max_batch);
  out += fmt::format("  max batch = (capacity {:.1f} - weights - workspace {:.2f} - reserve {:.2f}{}) / KV per sequence = {}\n",
                     e.memory.capacity_gb, e.memory.workspace_gb, e.memory.reserve_gb,
                     shared > 0 ? fmt::format(" - shared prefix {:.2f}", shared_gb) : std::string(), capped);
  const EngineProfile& engine = *e.engine;
  out += fmt::format("  engine: {} ({})\n", engine.name, engine.title);
  out += fmt::format("  decode step at batch {} = max(weights {:.2f} ms + KV {:.2f} ms{} at {:.0f} GB/s x {:.2f}, compute {:.2f} ms at {} TFLOPS {}) "
                     "+ kernels' fixed time {:.2f} ms + MoE routing {:.2f} ms + per-sequence {:.2f} ms + dequantise {:.2f} ms + all-reduces {:.2f} ms + "
                     "{}pipeline {:.2f} ms{} "
                     "= {:.2f} ms on the accelerator\n",
                     e.batch, e.step.weights_read_s * 1e3, e.step.kv_read_s * 1e3,
                     e.step.moe_permute_s > 0 ? fmt::format(" + MoE permute {:.2f} ms", e.step.moe_permute_s * 1e3) : std::string(),
                     a.memory_bandwidth_gb_per_s,
                     a.efficiency.memory_bandwidth_fraction, e.step.compute_s * 1e3, a.tflops(e.precision.compute).value_or(0),
                     to_string(e.precision.compute), e.step.kernel_floor_s * 1e3, e.step.moe_routing_s * 1e3, e.step.sequence_s * 1e3, e.step.dequant_s * 1e3,
                     e.step.tensor_parallel_s * 1e3,
                     e.step.expert_parallel_s > 0 ? fmt::format("expert all-to-alls {:.2f} ms + ", e.step.expert_parallel_s * 1e3) : std::string(),
                     e.step.pipeline_p2p_s * 1e3, w.speculative ? fmt::format(" + drafter {:.2f} ms", e.step.draft_s * 1e3) : std::string(), e.step.accelerator_s() * 1e3);
  if (w.speculative)
    out += fmt::format("  speculative ({}): each sequence computes its token and {} proposals in the step (matrix, attention, experts and all-reduces "
                       "of batch x {} positions; weights and KV read once); the drafter = {} passes ({}); E = (1 - a^(K+1)) / (1 - a) = {:.3f} "
                       "tokens per sequence and step (methodology §Speculative decoding)\n",
                       speculative_text(*w.speculative), w.speculative->draft_tokens, w.decode_queries_per_sequence(), w.speculative->draft_tokens,
                       w.speculative->drafter == "mtp" ? "a one-layer draft head and the output head each" : "prompt lookup: no model pass, 0 ms",
                       w.tokens_per_decode_step());
  if (e.step.kernel_floor_s > 0)
    out += fmt::format("  kernels' fixed time = layers / pp x {:.0f} kernels x {:.0f} us, in series; MoE routing = MoE layers / pp x {:.0f} us (GPUs)\n",
                       decode_kernels_per_layer(m), kKernelMinS * 1e6, kMoeRoutingPerLayerS * 1e6);
  if (e.step.sequence_s > 0)
    out += fmt::format("  per-sequence = sequences x layers / pp x {:.1f} us (Neuron, fitted per chip)\n", decode_sequence_layer_s(a) * 1e6);
  if (l.ep > 1 && m.is_moe()) {
    const double tokens = double(e.batch) * w.decode_queries_per_sequence();
    out += fmt::format("  experts read = {} MoE layers x the busiest of {} ranks' touched experts, {:.1f} of its {} (uniform routing: E[max] of {} binomial "
                       "counts; {:.1f} on the mean rank) x one expert's weights (methodology §MoE serving layouts)\n",
                       m.moe_layers(), l.ep, busiest_rank_experts_touched(m, tokens, l.ep), m.experts / l.ep, l.ep,
                       busiest_rank_experts_touched(m, tokens, 1) / l.ep);
  }
  if (e.step.expert_parallel_s > 0)
    out += fmt::format("  expert all-to-alls = 2 x {} MoE layers x (latency {:.0f} us + (ep-1)/ep x batch / tp x top-{} x hidden x 2 bytes / {:.0f} GB/s) = "
                       "{:.2f} ms (dispatch and combine over EP{}; {}all-reduces over the attention's TP{} only, methodology §MoE serving layouts)\n",
                       m.moe_layers(), kExpertAllToAllLatencyS * 1e6, m.active_experts, intra_node_gb_per_s(a), e.step.expert_parallel_s * 1e3, l.ep,
                       l.attention_dp > 1 ? fmt::format("attention data parallel over {} ranks, each with its own sequences and KV cache; ", l.attention_dp)
                                          : std::string(),
                       l.attention_tp());
  if (e.step.tensor_parallel_s > 0 && !l.experts_all_to_all()) {
    const int ranks = tensor_parallel_ranks(a, e.layout.tp);
    out += fmt::format("  all-reduces = 2 x layers x (latency {:.1f} us over {} ranks + 2(r-1)/r x batch x hidden x 2 bytes / {:.0f} GB/s){}\n",
                       serving_all_reduce_latency_s(a, ranks) * 1e6, ranks, intra_node_gb_per_s(a),
                       neuron_small_collectives_mesh(a) ? std::string("; Neuron mesh: one routed step at any ranks")
                       : a.software == "neuron"         ? fmt::format("; Neuron rings: {:.1f} us at 8 cores x (r - 1) / 7", serving_all_reduce_latency_s(a) * 1e6)
                                                        : std::string());
  }
  out += fmt::format("  step = max(accelerator, kernel launches {:.2f} ms) + engine host time {:.2f} ms ({:.2f} ms per step + {:.3f} ms per sequence) = {:.2f} ms\n",
                     e.step.launch_s * 1e3, e.step.host_s * 1e3, engine.step_overhead_s * 1e3, engine.sequence_overhead_s * 1e3,
                     e.step.total_s() * 1e3);
  if (e.precision.weight_only)
    out += fmt::format("  dequantise = quantised weights / tp x {} operations / vector FP32 {} TFLOPS{}\n", engine.dequant_ops_per_weight,
                       a.vector_fp32_tflops ? fmt::format("{}", *a.vector_fp32_tflops) : "unknown",
                       e.step.dequant_unknown ? " (not counted)" : "");
  out += fmt::format("  prefill = max((2 N_matmul P + 2 L w P^2) / (tp x peak x efficiency), weights / (tp x bandwidth)) + 2 L all-reduces of"
                     " P x hidden x 2 bytes = {:.1f} ms alone; {:.1f} ms of replica time under load; attention at {}{}\n",
                     e.prefill_s * 1e3, e.prefill_gpu_s_per_request * 1e3,
                     to_string(serving_attention_precision(a, e.precision.compute, e.precision.kv_cache)),
                     engine.prefill_compute_factor > 0
                         ? fmt::format(" (compiled graphs: efficiency = {:.3f} x {:.2f}, no ramp)", max_compute_fraction(a, e.precision.compute),
                                       engine.prefill_compute_factor)
                         : std::string(" (efficiency ramps with width and tokens, methodology §Efficiency)"));
  if (m.is_moe())
    out += fmt::format("  MoE matrices: {:.0f}% of the matrix weights a token uses are routed experts ({} wide / tp): prefill runs them as a grouped GEMM "
                       "of tokens x {}/{} rows each, decode at their width factor only (methodology §Prefill, §Decode step)\n",
                       routed_expert_share(m) * 100, m.expert_ffn, m.active_experts, m.experts);
  const std::string per_step = w.speculative ? fmt::format(" / E {:.3f}", w.tokens_per_decode_step()) : "";
  out += fmt::format("  replica requests/s = 1 / (prefill {:.1f} ms + samples {} x {:.0f} tokens x step{} / batch) = {:.3f}\n",
                     e.prefill_gpu_s_per_request * 1e3, w.samples, w.generated_tokens_per_sequence(), per_step, e.requests_per_second);
  out += fmt::format("  TPOT = step{} / (1 - prefill share {:.2f}) = {:.2f} ms; TTFT = prefill + one step = {:.1f} ms\n", per_step, e.prefill_share,
                     e.tpot_s * 1e3, e.ttft_s * 1e3);
  out += replicas_explained(*ctx.row, w);
  out += "  $/M output tokens = service $/h / (served requests/h x output tokens) x 1e6\n";
  return out;
}

}  // namespace gpuadvisor
