// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// `gpuadvisor recommend`: the pick for a training job or a service, its
// alternatives and one row per instance type.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>

#include "cli.hpp"
#include "document.hpp"
#include "gpuadvisor/workload/engine.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/search/rl_search.hpp"

namespace gpuadvisor::cli {

namespace {

// The shape of the load beyond its mean rate, for the exit-3 message: ", on average, as the
// trace records it (its bursts included)", " on average, in bursts (--arrival gamma:3)", or "".
std::string load_shape_text(const InferenceWorkload& w) {
  if (w.trace) return ", on average, as the trace records it (its bursts included)";
  if (w.arrival_cv > 1) return fmt::format(" on average, in bursts (--arrival gamma:{:g})", w.arrival_cv);
  return {};
}

// The server's own wait for new requests, which adds to every TTFT whatever the replicas.
std::string server_wait_text(const InferenceWorkload& w) {
  if (const int hold = w.engine ? router_hold_steps(*w.engine, w) : 0; hold > 1)
    return fmt::format(", with TGI's router hold of up to {} decode steps for waiting prompts (--max-waiting-tokens)", hold);
  if (w.scheduler_recv_interval > 1)
    return fmt::format(", with SGLang's wait of up to {} decode steps for new requests (--scheduler-recv-interval)", w.scheduler_recv_interval);
  if (w.attention_dp_balance_iters) return fmt::format(", with TensorRT-LLM's hold of up to {} iterations (--attention-dp-balance)", *w.attention_dp_balance_iters);
  return {};
}

// How the default order reads: the rule that chooses the pick, applied to the
// rows, each instance type's row being that type's own pick.
// "Rows 9-10 take longer than ...": the options past the horizon, listed last, named by their rank in the table.
std::string horizon_rows_text(const Recommendation& result, const RecommendRequest& r) {
  int first = 0, last = 0;
  const int shown = static_cast<int>(std::min<size_t>(result.rows.size(), r.top));
  for (int i = 0; i < shown; ++i)
    if (result.rows[i].estimate.total_hours > r.horizon_hours) {
      if (!first) first = i + 1;
      last = i + 1;
    }
  if (!first) return {};
  return fmt::format("Row{} {} take{} longer than the {} horizon (--horizon): listed last, never the pick. ", first == last ? "" : "s",
                     first == last ? std::to_string(first) : fmt::format("{}-{}", first, last), first == last ? "s" : "",
                     format_duration(r.horizon_hours));
}

// "Row 7 meets the 30.0 d deadline at the prediction but not at its p90 error ...": under the
// deadline rule such rows are listed last, never the pick while some option meets it at p90.
std::string deadline_rows_text(const Recommendation& result, const RecommendRequest& r) {
  if (!result.pick || !r.deadline_hours || pick_rule_name(r) != "deadline") return {};
  if (const auto d = deadline_margin(*result.pick, r); !d || d->exceeds_deadline_at_p90) return {};  // the rule fell back to the prediction
  std::vector<std::string> rows;
  const size_t shown = std::min<size_t>(result.rows.size(), r.top);
  for (size_t i = 0; i < shown; ++i)
    if (const auto d = deadline_margin(result.rows[i], r); d && d->exceeds_deadline_at_p90) rows.push_back(std::to_string(i + 1));
  if (rows.empty()) return {};
  return fmt::format("Row{} {} meet{} the {} deadline at the prediction but not at {} p90 error: listed last, not the pick "
                     "(JSON and CSV: misses_deadline_at_p90). ",
                     rows.size() > 1 ? "s" : "", fmt::join(rows, ", "), rows.size() > 1 ? "" : "s", format_duration(*r.deadline_hours),
                     rows.size() > 1 ? "their" : "its");
}

// Under --pricing spot, shown rows with a spot rate but no interruption range:
// their expected spot cost is unknown, so COST reads "unknown" beside a rate
// `cost --wide` prices; say why once.
std::string spot_unranked_text(const Recommendation& result, const RecommendRequest& r) {
  if (r.pricing != Pricing::spot) return {};
  std::vector<std::string> names;
  const size_t shown = std::min<size_t>(result.rows.size(), r.top);
  for (size_t i = 0; i < shown; ++i) {
    const RecommendRow& x = result.rows[i];
    if (x.channel == Channel::spot && x.spot_offered && x.spot_cost_usd && !x.ranked_cost_usd) names.push_back(x.instance->name);
  }
  if (names.empty()) return {};
  return fmt::format("{} {} a spot rate but no Spot Advisor interruption range, so {} expected spot cost is unknown and {} not ranked "
                     "(`gpuadvisor cost --wide` shows SPOT (NO INT.), the rate without reclaims). ",
                     fmt::join(names, ", "), names.size() > 1 ? "have" : "has", names.size() > 1 ? "their" : "its", names.size() > 1 ? "they are" : "it is");
}

// `training`: the pick rule weighs each hour at the value of time (docs/methodology.md §The pick); a service's does not.
std::string recommended_order_text(const RecommendRequest& r, bool training = false) {
  if (training && pick_rule_name(r) == "deadline")
    return "the pick first, then the rest cheapest first (the deadline rule: the cheapest that meets the deadline at its p90 error), "
           "those that meet it only at the prediction last; each type's row is its own pick by the same rule";
  if (training && pick_rule_name(r) == "value-of-time")
    return fmt::format("the pick first, then the options whose price plus ${:g} for each hour of the run exceeds the least such total by "
                       "at most {:.0f}% of the cheapest price, fastest first, then the rest cheapest first; each type's row is its own pick by "
                       "the same rule",
                       r.value_of_time_usd_per_hour, r.cost_slack * 100);
  return fmt::format("the pick first, then the rows within {0:.0f}% of the cheapest row's cost fastest first, then the rest cheapest first; each "
                     "type's row is its own pick: the fastest within {0:.0f}% of its cheapest that is faster by as much as it costs more",
                     r.cost_slack * 100);
}

class RecommendCommand : public Command {
 public:
  explicit RecommendCommand(CLI::App& parent) {
    app = parent.add_subcommand("recommend", "What to rent for a training job or a service: the pick, why, and the alternatives");
    app->footer(
        "The pick (training and RL) is the fastest option whose price plus each hour of the run at --value-of-time ($25) is within "
        "--cost-slack (20%) of the cheapest price above the least such total, at most --max-cost-multiple (2) times the cheapest's price, never one longer than --horizon (90d), and with --deadline "
        "alone the cheapest that meets it at its p90 error; a service's is the fastest that meets its latency targets within --cost-slack of the cheapest such service and faster than each cheaper one by as much as it costs more (offline: the cheapest). Each option "
        "is priced through the channel that can deliver it (on demand, a Capacity Block, a reservation, spot within its usual count); "
        "job overheads (provisioning, image pull, loading weights, start-up, final checkpoint) count in time and cost.\n"
        "Examples:\n"
        "  gpuadvisor recommend --params 13B --task lora\n"
        "  gpuadvisor recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d\n"
        "  gpuadvisor recommend --params 7B --task inference\n"
        "  gpuadvisor recommend --params 7B --task rl --prompts-per-step 256 --samples-per-prompt 8 --response-tokens 1024\n"
        "  gpuadvisor recommend --model llama-3-70b --task inference --requests-per-second 5 --max-tpot 50ms --weights fp8");
    add_model_options(app, mo);
    add_workload_options(app, wo);
    add_inference_options(app, io);
    add_rl_options(app, rlo);
    add_overhead_options(app, oo);
    add_ranking_options(app, ro);
    add_emit_options(app, eo, true);
    add_gate_options(app, go);
    app->add_flag("--explain", explain, "Print the pick's formulas with the numbers filled in");
  }

  int run(const GlobalOptions& g) override {
    const Catalog catalog = load(g);
    check_task_flags(app, wo);
    ModelSpec m = build_model(mo);
    RecommendRequest r = build_request(ro, oo, catalog);
    if (wo.inference()) {
      refuse_clients_for_sizing(io, "recommend");
      limit_sizing_simulations(io, "recommend");
      const InferenceWorkload w = build_inference_workload(io, m);
      refuse_unused_slo_percentile(io, w, "recommend");
      // Offline work has no latency to buy: the pick is the cheapest unless --cost-slack says otherwise.
      if (w.mode == ServingMode::offline && ro.cost_slack.empty()) {
        r.cost_slack = 0;
        spdlog::info("assumption: offline: the pick is the cheapest service, as no latency is worth paying for (--cost-slack 20% to buy speed)");
      }
      refuse_region_list(r, "a service");
      return run_inference(m, w, catalog, r, g);
    }
    if (wo.rl()) {
      refuse_region_list(r, "an RL run");
      const RlWorkload rl = build_rl_workload(rlo, wo, io, m);
      return run_training(m, rl.update, catalog, r, g, &rl);
    }
    return run_training(m, build_workload(wo, m), catalog, r, g);
  }

 private:
  ModelOptions mo;
  WorkloadOptions wo;
  InferenceOptions io;
  RlOptions rlo;
  OverheadOptions oo;
  RankingOptions ro;
  EmitOptions eo;
  GateOptions go;
  bool explain = false;

  // The row --emit writes: the pick, or row --rank N of the table.
  template <class Row>
  const Row& emitted(const std::optional<Row>& pick, const std::vector<Row>& rows) const {
    if (eo.rank < 0 || eo.rank > static_cast<int>(rows.size())) throw InputError(fmt::format("--rank: must be in [1, {}]", rows.size()));
    return eo.rank == 0 ? *pick : rows[eo.rank - 1];
  }

  // A training job, or with `rl` an RL post-training run (the rows carry its steps).
  int run_training(const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& asked, const GlobalOptions& g,
                   const RlWorkload* rl = nullptr) {
    const Format format = parse_format(g);
    log_assumptions(m.assumptions);
    log_assumptions(rl ? rl->assumptions : w.assumptions);
    RecommendRequest r = asked;  // with --region any or a list: the chosen region
    Recommendation result = rl                     ? recommend_rl(m, *rl, catalog, r)
                            : r.regions.size() > 1 ? recommend_across_regions(m, w, catalog, asked, r.region)
                                                   : recommend(m, w, catalog, r);
    spdlog::debug("{} layouts evaluated, {} pruned by the step-time bound", result.layouts_evaluated, result.layouts_pruned);
    RecommendContext ctx{&m, &w, &r, rl};
    if (result.rows.empty()) {
      print_before_refusal([&] { return recommendation_table(result, ctx); }, catalog, "recommend", g, &result.rejections);
      std::string least = result.cheapest_over_budget_usd
                              ? fmt::format("; the cheapest option --budget left out costs {}", format_usd(*result.cheapest_over_budget_usd))
                              : "";
      if (const auto& f = result.fastest_over_deadline_hours) {
        least += fmt::format("; the fastest option --deadline left out takes {}", format_duration(*f));
        const auto& priced = result.fastest_priced_over_deadline_hours;
        if (!priced) least += " (none it left out has a known price)";
        else if (format_duration(*priced) != format_duration(*f)) least += fmt::format(", the fastest with a known price {}", format_duration(*priced));
        // Both limits: a later deadline helps only as far as an option within the budget (a trial read 30.5 d as "a day later would do").
        if (r.budget_usd) {
          const auto& within = result.fastest_over_deadline_within_budget_hours;
          least += within ? fmt::format(", the fastest within the {} budget {}", format_usd(*r.budget_usd), format_duration(*within))
                          : fmt::format(", and none it left out is within the {} budget", format_usd(*r.budget_usd));
        }
      }
      throw NothingFitsError(fmt::format("no instance type can run {} of {} under these constraints ({}){}; each type's reason is "
                                         "listed{}",
                                         rl ? "RL post-training" : to_string(w.task), m.name,
                                         rl ? "try --policy-update lora, fewer --samples-per-prompt, a larger --max-instances or a later --deadline"
                                            : nothing_fits_hint(w.task, result.rejections),
                                         least, format == Format::json ? " under error.cannot_run" : " above"),
                             rejections_json(result.rejections));
    }
    if (!result.pick) {
      std::string fastest;
      const auto f = std::min_element(result.rows.begin(), result.rows.end(),
                                      [](const RecommendRow& a, const RecommendRow& b) { return a.estimate.total_hours < b.estimate.total_hours; });
      if (f != result.rows.end()) fastest = fmt::format("{} x {}, {}", f->count, f->instance->name, format_duration(f->estimate.total_hours));
      print_before_refusal([&] { return recommendation_table(result, ctx); }, catalog, "recommend", g);
      throw_no_pick(result, r, fastest);
    }
    const RecommendRow& pick = *result.pick;
    // A deadline met only at the prediction is a risk a script must see, not only the why line.
    if (const auto d = deadline_margin(pick, r); d && d->exceeds_deadline_at_p90)
      warn(fmt::format("the pick meets the {} deadline at the prediction ({}) but not at its p90 error (+{:.0f}%: {}); a later --deadline or "
                       "a faster pick leaves room",
                       format_duration(d->deadline_hours), format_duration(d->predicted_hours), d->p90_abs_error * 100,
                       format_duration(d->hours_at_p90)));
    if (!eo.target.empty()) {
      const RecommendRow& row = emitted(result.pick, result.rows);
      refuse_neuron_training_emit(eo, *row.instance, catalog.accelerator_of(*row.instance));
    }
    const PickSummary now{pick.instance->name, pick.count, pick.ranked_cost_usd, pick.estimate.total_hours, "ranked_usd",
                          job_of(m.name, rl ? "rl" : to_string(w.task)), {}, workload_summary(w)};
    const auto cmp = comparison(go, now, r);
    const auto gates = gate_results(go, now, cmp);
    const std::string notes = horizon_rows_text(result, r) + deadline_rows_text(result, r) + spot_unranked_text(result, r) + fmt::format("{} options found; {} shown ({}), ranked {} ({}, {}; {}). Times and costs include job overheads; "
                               "USD. COST is at the channel VIA that can deliver the option: on demand up to the usual count, else a Capacity Block "
                               "(block: whole days, sized to the prediction plus its p90 error; block*: its rate unknown, so at the on-demand "
                               "rate for its whole days), else reserved at the on-demand rate (on demand?: no usual count known, check the quota); spot only up "
                               "to the usual spot count (no spot: above it, not ranked) (--wide: ON-DEMAND, and SPOT "
                               "without interruptions; `gpuadvisor cost` adds them). MEM is the need per accelerator with a "
                               "reserve of 1 GB + 5% for the runtime, communication buffers and fragmentation already in it, so 100% still fits.\n",
                               result.options_found, std::min<size_t>(result.rows.size(), r.top),
                               r.all_counts ? "every count" : "one per instance type; --all-counts for every count",
                               r.sort_by == SortBy::recommended ? recommended_order_text(r, true) : fmt::format("by {}", to_string(r.sort_by)),
                               to_string(r.pricing), r.region, prices_note(catalog));
    const std::string rejections = render_rejections_text(result.rejections, g.wide ? 1000 : 12);
    const std::string rl_note = rl ? "STEP S = GEN S + SCORE S (forward passes: policy and reference log-probabilities, critic, reward model) + TRAIN S + "
                                     "SYNC S (weights to the generators); --wide shows every stage.\n"
                                   : "";
    print_costed({{"recommend", job_of(m.name, rl ? "rl" : to_string(w.task)), render_pick_text(result, ctx), recommendation_table(result, ctx),
                   recommendation_chart(result, ctx), joined(m.assumptions, rl ? rl->assumptions : w.assumptions), r.region, {notes}, rejections},
                  [&] { return recommendation_json_extra(result, ctx); }, ro.chart, notes, rl_note + rejections},
                 catalog, g, cmp, gates);
    if (explain && result.pick && rl) {
      const RecommendRow& top = *result.pick;
      const Cluster c{top.instance, &catalog.accelerator_of(*top.instance), top.count};
      const RlEstimateContext ectx{&m, rl, &c, &top, r.region};
      explain_stream(format) << "\n"
                                                       << render_rl_estimate(catalog, ectx, RenderOptions{Format::table, g.wide}) << "\n"
                                                       << explain_rl(ectx);
    } else if (explain && result.pick) {
      const RecommendRow& top = *result.pick;
      Cluster c{top.instance, &catalog.accelerator_of(*top.instance), top.count};
      EstimateContext ectx{&m, &w, &c, &top.estimate, top.on_demand_usd_per_hour, top.spot_usd_per_hour, r.region};
      explain_stream(format) << "\n" << explain_estimate(ectx);
    }
    if (!eo.target.empty()) {
      const RecommendRow& row = emitted(result.pick, result.rows);
      const Cluster c{row.instance, &catalog.accelerator_of(*row.instance), row.count};
      emit_training_files(eo, g, m, w, c, row.estimate, row.ranked_cost_usd, row.ranked_pricing, r.region, &row, rl);
    }
    return gate_exit(gates);
  }

  int run_inference(const ModelSpec& m, const InferenceWorkload& w, const Catalog& catalog, const RecommendRequest& r, const GlobalOptions& g) {
    const Format format = parse_format(g);
    log_assumptions(m.assumptions);
    log_assumptions(w.assumptions);
    if (w.test_time_multiplier() > 1)
      spdlog::info("test-time compute: {} sample(s) x ({:.0f} output + {:.0f} reasoning tokens) = {:.2f}x the generated tokens of a plain answer",
                   w.samples, w.output_tokens, w.reasoning_tokens, w.test_time_multiplier());
    ServingRecommendation result = recommend_inference(m, w, catalog, r);
    InferenceContext ctx{&m, &w, &r};
    if (result.rows.empty()) {
      print_before_refusal([&] { return inference_table(result, ctx); }, catalog, "recommend", g, &result.rejections);
      std::string best;
      const bool over_budget =
          std::any_of(result.rejections.begin(), result.rejections.end(), [](const Rejection& x) { return x.over_budget; });
      if (over_budget)
        best = fmt::format("; the budget of {} per month (--budget) is the limit: each type's line gives what its service costs",
                           format_usd(*r.budget_usd));
      else if (result.best_batch1_ttft_s && w.max_ttft_s && *result.best_batch1_ttft_s > *w.max_ttft_s)
        best = fmt::format("; the time to first token is the limit: the lowest, {}'s, is {} at batch 1 against the {} target "
                           "(--max-ttft, or shorter --prompt-tokens)",
                           result.best_batch1_ttft_option, format_latency_against(*result.best_batch1_ttft_s, *w.max_ttft_s),
                           format_latency(*w.max_ttft_s));
      else if (result.best_batch1_tpot_s && w.max_tpot_s && *result.best_batch1_tpot_s <= *w.max_tpot_s && w.requests_per_second)
        best = fmt::format("; the targets are met at batch 1 ({} reaches {:.1f} ms per output token), so the load of {:.3g} requests/s{} is the "
                           "limit{}: each type's line says how many replicas it needs (--max-instances allows more)",
                           result.best_batch1_option, *result.best_batch1_tpot_s * 1e3, *w.requests_per_second, load_shape_text(w),
                           server_wait_text(w));
      else if (result.best_batch1_tpot_s)
        best = result.best_batch1_ties > 1
                   ? fmt::format("; the fastest options reach {:.1f} ms per output token ({:.0f} tokens/s per user) at batch 1, {} of them "
                                 "within 0.5% of each other ({} among them), so no one of them is the fastest",
                                 *result.best_batch1_tpot_s * 1e3, 1 / *result.best_batch1_tpot_s, result.best_batch1_ties,
                                 result.best_batch1_option)
                   : fmt::format("; the fastest option, {}, reaches {:.1f} ms per output token ({:.0f} tokens/s per user) at batch 1",
                                 result.best_batch1_option, *result.best_batch1_tpot_s * 1e3, 1 / *result.best_batch1_tpot_s);
      // When the engine is what rules every type out, say that rather than the targets.
      const bool engine_only = w.engine && !result.rejections.empty() &&
                               std::all_of(result.rejections.begin(), result.rejections.end(),
                                           [&](const Rejection& x) { return x.reason.find("engine " + w.engine->name) != std::string::npos; });
      if (engine_only)
        throw NothingFitsError(fmt::format("no instance type considered runs engine {} ({}): {}", w.engine->name, w.engine->title,
                                           result.rejections.front().reason),
                               rejections_json(result.rejections));
      throw NothingFitsError(fmt::format("no instance type can serve {} under these targets and constraints{}", m.name, best),
                             rejections_json(result.rejections));
    }
    if (!result.pick) {
      print_before_refusal([&] { return inference_table(result, ctx); }, catalog, "recommend", g);
      throw_no_price(r, row_instances(result.rows));
    }
    const ServingRow& pick = *result.pick;
    PickSummary now = serving_summary(pick, m.name);
    now.workload = workload_summary(w);
    const auto cmp = comparison(go, now, r);
    const auto gates = gate_results(go, now, cmp);
    const std::string notes = fmt::format("{} options found; {} shown, ranked {} ({}, {}; {}). USD; a month is 720 h; $/M OUT is the whole bill per visible "
                               "output token at {} ($/M IN divides the same bill by prompt tokens: do not add the two); "
                               "TOK/S/REPL is a replica's capacity, BATCH and TPOT are at the load.\n",
                               result.options_found, std::min<size_t>(result.rows.size(), r.top),
                               r.sort_by == SortBy::recommended ? recommended_order_text(r) : fmt::format("by {}", to_string(r.sort_by)),
                               to_string(r.pricing), r.region, prices_note(catalog),
                               w.requests_per_second ? "the given load" : fmt::format("{:.0f}% utilisation", w.target_utilisation * 100));
    const std::string rejections = render_rejections_text(result.rejections, g.wide ? 1000 : 12);
    print_costed({{"recommend", job_of(m.name, "inference"), render_serving_pick_text(result, ctx), inference_table(result, ctx),
                   inference_chart(result, ctx), joined(m.assumptions, w.assumptions), r.region, joined({notes}, result.notes), rejections},
                  [&] { return inference_json_extra(result, ctx); }, ro.chart, notes, rejections + notes_list(result.notes, g.wide)},
                 catalog, g, cmp, gates);
    if (explain && result.pick) {
      const ServingRow& top = *result.pick;
      Cluster c{top.instance, top.accelerator, top.estimate.layout.pp};
      InferenceEstimateContext ectx{&m, &w, &c, &top, hourly_rate(*top.instance, r.region, Pricing::on_demand),
                                    hourly_rate(*top.instance, r.region, Pricing::spot), r.region, false, nullptr, {}};
      explain_stream(format) << "\n" << explain_inference(ectx);
    }
    if (!eo.target.empty())
      emit_serving_files(eo, g, m, w, emitted(result.pick, result.rows), std::string(to_string(r.pricing)), r.region);
    return gate_exit(gates);
  }
};

}  // namespace

std::unique_ptr<Command> add_recommend_command(CLI::App& parent) { return std::make_unique<RecommendCommand>(parent); }

}  // namespace gpuadvisor::cli
