// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// `gpuadvisor cost`: the finance view. A training job ranked like
// `recommend` (on-demand, spot with expected interruptions, commitments); a
// given run (--instance, --count, --hours or the model's hours); a bare
// reservation (no model); or a service per month (--task inference).
#include <spdlog/spdlog.h>

#include <iostream>

#include "cli.hpp"
#include "document.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/search/rl_search.hpp"

namespace gpuadvisor::cli {

namespace {

// "100" is 100 hours; "72h", "14d", "90min" as everywhere else, within the same
// bounds with a unit as without (at most a thousand years).
double parse_hours(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos)
    return parse_number(text, "--hours", 1e-6, kLongestDurationHours);
  const double hours = parse_duration_hours(text, "--hours");
  check_range(hours, "--hours (in hours)", 1e-6, kLongestDurationHours);
  return hours;
}

class CostCommand : public Command {
 public:
  explicit CostCommand(CLI::App& parent) {
    app = parent.add_subcommand(
        "cost", "Finance view: on-demand, spot with expected interruptions and commitments, for a job, a given run or a service");
    app->footer(
        "Examples:\n"
        "  gpuadvisor cost --instance p5.48xlarge --count 4 --hours 100          (a reservation; no model needed)\n"
        "  gpuadvisor cost --instance p5.48xlarge --count 16 --model llama-3-70b --task pretrain --tokens 200B\n"
        "  gpuadvisor cost --model llama-3-70b --task pretrain --tokens 200B --family p5 --format csv\n"
        "  gpuadvisor cost --model llama-3-8b --task inference --requests-per-second 20");
    add_model_options(app, mo);
    add_workload_options(app, wo);
    add_inference_options(app, io);
    add_rl_options(app, rlo);
    add_overhead_options(app, oo);
    add_ranking_options(app, co);
    add_gate_options(app, go);
    const char* given_run = "Given run";
    app->add_option("--instance", instance, "Price a given run: this instance type")->group(given_run);
    app->add_option("--count", count, "Instances of the given run (default 1)")->group(given_run);
    app->add_option("--hours", hours, "Length of the given run: 100 (hours), 72h, 14d; without it the model's run length is estimated")
        ->group(given_run);
  }

  int run(const GlobalOptions& g) override {
    const Catalog catalog = load(g);
    if (wo.inference()) return run_inference(catalog, g);
    if (wo.rl()) return run_rl(catalog, g);
    check_task_flags(app, wo);
    RecommendRequest r = build_request(co, oo, catalog);
    refuse_region_list(r, "cost");
    const bool given_run = !instance.empty() || given(app, "--hours") || given(app, "--count");
    if (given_run && !mo.given()) return run_reservation(catalog, r, g);
    ModelSpec m = build_model(mo);
    TrainingWorkload w = build_workload(wo, m);
    log_assumptions(m.assumptions);
    log_assumptions(w.assumptions);
    Recommendation result = given_run ? price_given_run(catalog, m, w, r) : recommend(m, w, catalog, r);
    if (result.rows.empty()) {
      print_before_refusal([&] { return cost_table(result, RecommendContext{&m, &w, &r}); }, catalog, "cost", g, &result.rejections);
      throw NothingFitsError(fmt::format("no instance type can run {} of {} under these constraints ({})", to_string(w.task), m.name,
                                         nothing_fits_hint(w.task, result.rejections)),
                             rejections_json(result.rejections));
    }
    if (!result.pick) {
      print_before_refusal([&] { return cost_table(result, RecommendContext{&m, &w, &r}); }, catalog, "cost", g);
      throw_no_pick(result, r);
    }
    return print(result, RecommendContext{&m, &w, &r}, catalog, g);
  }

 private:
  ModelOptions mo;
  WorkloadOptions wo;
  InferenceOptions io;
  RlOptions rlo;
  OverheadOptions oo;
  RankingOptions co;
  GateOptions go;
  std::string instance, hours;
  int count = 1;

  const Instance& given_instance(const Catalog& catalog) const {
    if (instance.empty()) throw InputError("a given run needs --instance (with --count and --hours, or a model to estimate the hours)");
    const Instance* inst = &instance_named(catalog, instance, "--instance");
    if (count < 1 || count > 100000) throw InputError("--count: must be in [1, 100000]");
    for (const char* f : {"--family", "--exclude", "--horizon", "--value-of-time", "--max-cost-multiple"})
      if (given(app, f)) throw InputError(fmt::format("{} shapes a ranking; a given run is the --instance it names", f));
    refuse_neuron_flags_off_neuron(app, catalog.accelerator_of(*inst), inst->name);
    return *inst;
  }

  // The given run becomes the pick; deadline and budget are checked against it.
  static void settle_given(Recommendation& out, RecommendRow row, const RecommendRequest& r) {
    if (blocked_by_quota(row))
      throw NothingFitsError(fmt::format("{} x {} {}", row.count, row.instance->name, row.quota_exceeded));
    if (r.pricing == Pricing::spot && !row.spot_offered)
      throw NothingFitsError(fmt::format("{} x {} on spot: {}", row.count, row.instance->name, row.channel_note));
    if (r.deadline_hours && row.estimate.total_hours > *r.deadline_hours)
      throw NothingFitsError(fmt::format("{} x {} takes {}, past the {} deadline", row.count, row.instance->name,
                                         format_duration(row.estimate.total_hours), format_duration(*r.deadline_hours)));
    if (r.budget_usd && row.ranked_cost_usd && *row.ranked_cost_usd > *r.budget_usd)
      throw NothingFitsError(fmt::format("{} x {} costs ${}, over the ${} budget", row.count, row.instance->name,
                                         format_thousands(*row.ranked_cost_usd), format_thousands(*r.budget_usd)));
    out.rows.push_back(row);
    out.options_found = 1;
    if (row.ranked_cost_usd) {
      out.pick = out.cheapest = out.fastest = row;
      out.why = "the run given with --instance and --count";
    }
  }

  // A given run with a model: its hours given, or estimated with the job overheads.
  Recommendation price_given_run(const Catalog& catalog, const ModelSpec& m, const TrainingWorkload& w, const RecommendRequest& r) const {
    const Instance& inst = given_instance(catalog);
    const Accelerator& acc = catalog.accelerator_of(inst);
    RecommendRow row;
    row.instance = &inst;
    row.count = count;
    if (!hours.empty()) {
      row.estimate.total_hours = row.estimate.train_hours = parse_hours(hours);
    } else {
      if (auto p = accelerator_problem(acc, w)) throw InputError(fmt::format("{}: {}", inst.name, *p));
      const Cluster c{&inst, &acc, count};
      ClusterSearch s = search_cluster(m, w, c);
      if (!s.best) throw NothingFitsError(fmt::format("{} x {}: {}", count, inst.name, s.problem));
      row.estimate = *s.best;
      add_job_overheads(row.estimate, m, w, c, r.overheads);
      spdlog::info("{} x {} runs {} in {} (training {} + setup {}; `gpuadvisor estimate` shows the breakdown)", count, inst.name,
                   to_string(w.task), format_duration(row.estimate.total_hours), format_duration(row.estimate.train_hours),
                   format_duration(row.estimate.setup.hours()));
    }
    price_row(row, m, w, r, !hours.empty());
    Recommendation out;
    settle_given(out, row, r);
    add_bills(out, m, w, catalog, r);
    return out;
  }

  // An RL run: ranked like `recommend --task rl`, or the given --instance and --count.
  int run_rl(const Catalog& catalog, const GlobalOptions& g) {
    check_task_flags(app, wo);
    if (given(app, "--hours")) throw InputError("--hours: an RL run's hours follow from --steps and the step time; price bare hours without --task");
    ModelSpec m = build_model(mo);
    const RlWorkload rl = build_rl_workload(rlo, wo, io, m);
    RecommendRequest r = build_request(co, oo, catalog);
    refuse_region_list(r, "cost");
    log_assumptions(m.assumptions);
    log_assumptions(rl.assumptions);
    const RecommendContext ctx{&m, &rl.update, &r, &rl};
    Recommendation result;
    if (!instance.empty() || given(app, "--count")) {
      const Instance& inst = given_instance(catalog);
      const Cluster c{&inst, &catalog.accelerator_of(inst), count};
      if (auto p = accelerator_problem(*c.accelerator, rl.update)) throw InputError(fmt::format("{}: {}", inst.name, *p));
      RlEvaluation ev = best_rl(m, rl, c);
      if (!ev.estimate) throw NothingFitsError(fmt::format("{} x {}: {}", count, inst.name, ev.problem));
      settle_given(result, rl_row(m, rl, c, *ev.estimate, r), r);
    } else {
      result = recommend_rl(m, rl, catalog, r);
    }
    if (result.rows.empty()) {
      print_before_refusal([&] { return cost_table(result, ctx); }, catalog, "cost", g, &result.rejections);
      throw NothingFitsError(fmt::format("no instance type can run RL post-training of {} under these constraints", m.name),
                             rejections_json(result.rejections));
    }
    if (!result.pick) {
      print_before_refusal([&] { return cost_table(result, ctx); }, catalog, "cost", g);
      throw_no_pick(result, r);
    }
    return print(result, ctx, catalog, g);
  }

  // A reservation is one option priced for bare hours: flags of a job, its
  // overheads, its checkpoints or a ranking would change nothing, so they are refused.
  void refuse_reservation_flags() const {
    static constexpr const char* kJob[] = {"--task", "--tokens", "--epochs", "--seq-len", "--global-batch", "--precision", "--layers",
                                           "--hidden", "--heads", "--kv-heads", "--vocab", "--lora-rank", "--lora-targets",
                                           "--no-flash-attention", "--framework"};
    static constexpr const char* kOverheads[] = {"--provision-minutes", "--image-gb", "--load-gb-per-s", "--neuron-compile-minutes",
                                                 "--resume", "--no-overheads", "--checkpoint-storage", "--checkpoint-gb-per-s",
                                                 "--restart-minutes", "--data-region"};
    static constexpr const char* kRanking[] = {"--sort-by", "--cost-slack", "--horizon", "--value-of-time", "--max-cost-multiple", "--top", "--all-counts", "--max-instances", "--family", "--exclude"};
    for (const char* f : kJob)
      if (given(app, f)) throw InputError(fmt::format("{} needs the model (--params, --model or --model-config)", f));
    for (const char* f : kOverheads)
      if (given(app, f))
        throw InputError(fmt::format("{}: a reservation prices bare hours, with no job's set-up, checkpoints or restarts; give the model for those", f));
    for (const char* f : kRanking)
      if (given(app, f)) throw InputError(fmt::format("{}: a reservation is the one option named by --instance and --count; nothing is ranked", f));
  }

  // --instance --count --hours without a model: what the instances cost for those hours.
  int run_reservation(const Catalog& catalog, const RecommendRequest& r, const GlobalOptions& g) {
    refuse_reservation_flags();
    if (hours.empty()) throw InputError("without a model, a given run needs --hours (or give the model to estimate them)");
    RecommendRow row;
    row.instance = &given_instance(catalog);
    row.count = count;
    row.estimate.total_hours = row.estimate.train_hours = parse_hours(hours);
    price_hours(row, r);
    Recommendation result;
    settle_given(result, row, r);
    // A reservation priced under a pricing with no rate (a commitment not imported) has nothing to show: exit 3, never on-demand figures.
    if (!result.pick) throw_no_price(r, row_instances(result.rows));
    spdlog::info("no model given: the instances alone are priced; expected interruption costs need the model's checkpoint size");
    const PickSummary now{row.instance->name, row.count, row.ranked_cost_usd, row.estimate.total_hours, "ranked_usd", "", {}};
    const auto cmp = comparison(go, now, r);
    const auto gates = gate_results(go, now, cmp);
    if (parse_format(g) != Format::html) print_comparison(cmp, gates, parse_format(g));
    print_reservation(result, r, catalog, g, cmp, gates);
    return gate_exit(gates);
  }

  // Where the notes say checkpoints go (storage_for's `auto`, in words).
  static std::string checkpoints_to(const RecommendContext& ctx) {
    if (ctx.request->overheads.storage != CheckpointStorage::automatic) return std::string(to_string(ctx.request->overheads.storage));
    if (ctx.workload && is_adapter_task(ctx.workload->task)) return "S3 (an adapter's checkpoint, on any count)";
    return "S3 (one instance) or FSx for Lustre (several)";
  }

  int print(const Recommendation& result, const RecommendContext& ctx, const Catalog& catalog, const GlobalOptions& g) const {
    const RecommendRow& pick = *result.pick;
    const PickSummary now{pick.instance->name, pick.count, pick.ranked_cost_usd, pick.estimate.total_hours, "ranked_usd",
                          job_of(ctx.model->name, ctx.rl ? "rl" : to_string(ctx.workload->task)), {}, workload_summary(*ctx.workload)};
    const auto cmp = comparison(go, now, *ctx.request);
    const auto gates = gate_results(go, now, cmp);
    const std::string notes = fmt::format("USD, {} {}; times and costs include job overheads. COST is at the channel VIA that can deliver the "
                               "option (block: a Capacity Block, whole days; block*: its rate unknown, at the on-demand rate for its whole days; reserved: "
                               "at the on-demand rate; on demand?: no usual count known, check the quota); spot is not offered above the "
                               "usual spot count (no spot: not ranked) and is priced at the typical "
                               "zone (the midpoint of the snapshot's lowest and highest). SAVES = OD EXP - SPOT EXP: both expected costs, with failures and checkpoints (ON-DEMAND, without them, under --wide; TIME LOST "
                               "there is the share of spot's expected hours lost to reclaims, restarts and checkpoints). Spot expected cost includes reclaims at "
                               "the Spot Advisor bucket's upper edge and hardware failures, checkpoints to {} every Daly-optimal interval "
                               "and {:.0f} min restarts; BREAK-EVEN is the monthly interruption rate above which on-demand is cheaper ('spot always': at no rate). "
                               "Commitment columns (--wide) price the job's hours at the commitment rate and assume the rest of the term "
                               "is used by other work; a commitment for this job alone costs the committed monthly spend for the whole "
                               "term.{}\n",
                               ctx.request->region, prices_note(catalog),
                               checkpoints_to(ctx), ctx.request->restart_s / 60, commitment_rates_note(catalog, ctx.request->region, "the commitment columns (--wide)"));
    print_costed({{"cost", job_of(ctx.model->name, ctx.rl ? "rl" : to_string(ctx.workload->task)), render_pick_text(result, ctx), cost_table(result, ctx),
                   recommendation_chart(result, ctx), joined(ctx.model->assumptions, ctx.rl ? ctx.rl->assumptions : ctx.workload->assumptions),
                   ctx.request->region, {notes}, render_rejections_text(result.rejections, g.wide ? 1000 : 12)},
                  [&] { return recommendation_json_extra(result, ctx); }, co.chart, notes, ""},
                 catalog, g, cmp, gates);
    return gate_exit(gates);
  }

  void print_reservation(const Recommendation& result, const RecommendRequest& r, const Catalog& catalog, const GlobalOptions& g,
                         const nlohmann::ordered_json& cmp, const nlohmann::ordered_json& gates) const {
    const Format format = parse_format(g);
    const Chart chart = recommendation_chart(result, RecommendContext{nullptr, nullptr, &r});
    write_chart(co.chart, chart, catalog);
    const std::string notes = fmt::format("USD, {} {}; billed per second with a 60 s minimum. COST is at the channel VIA that can deliver the instances "
                                          "(block: a Capacity Block of whole days; reserved: at the on-demand rate); SPOT assumes no "
                                          "interruptions and is not offered above the usual spot count.\n", r.region,
                                          prices_note(catalog));
    if (format == Format::html) {
      const RecommendRow& row = result.rows.front();
      print_html({"cost", fmt::format("{} x {} for {}", row.count, row.instance->name, format_duration(row.estimate.total_hours)),
                  fmt::format("Priced: {} x {} for {}\n  why: {}\n", row.count, row.instance->name, format_duration(row.estimate.total_hours), result.why),
                  reservation_table(result, r), chart,
                  {"no model given: the instances alone are priced for the hours, billed per second with a 60 s minimum"}, r.region, {notes}, ""},
                 catalog, g, cmp, gates);
      return;
    }
    print_table(reservation_table(result, r), catalog, "cost", "options", g,
                format == Format::json ? with_gates(reservation_json_extra(result, r), cmp, gates) : std::string());
    if (format == Format::table || format == Format::markdown) std::cout << "\n" << notes;
  }

  int run_inference(const Catalog& catalog, const GlobalOptions& g) {
    check_task_flags(app, wo);
    for (const char* f : {"--instance", "--hours", "--count"})
      if (given(app, f)) throw InputError(fmt::format("{} prices a given training run or reservation; a service is sized from the load", f));
    ModelSpec m = build_model(mo);
    refuse_clients_for_sizing(io, "cost");
    limit_sizing_simulations(io, "cost");
    InferenceWorkload w = build_inference_workload(io, m);
    refuse_unused_slo_percentile(io, w, "cost");
    RecommendRequest r = build_request(co, oo, catalog);
    refuse_region_list(r, "cost");
    if (co.sort_by.empty()) r.sort_by = SortBy::cost;
    log_assumptions(m.assumptions);
    log_assumptions(w.assumptions);
    ServingRecommendation result = recommend_inference(m, w, catalog, r);
    InferenceContext ctx{&m, &w, &r};
    if (result.rows.empty()) {
      print_before_refusal([&] { return inference_cost_table(result, ctx); }, catalog, "cost", g, &result.rejections);
      throw NothingFitsError(fmt::format("no instance type can serve {} under these targets and constraints", m.name),
                             rejections_json(result.rejections));
    }
    if (!result.pick) {
      print_before_refusal([&] { return inference_cost_table(result, ctx); }, catalog, "cost", g);
      throw_no_price(r, row_instances(result.rows));
    }
    // The gates, as on every costed document: a service's month against --fail-if-over and the baseline.
    PickSummary now = serving_summary(*result.pick, m.name);
    now.workload = workload_summary(w);
    const auto cmp = comparison(go, now, r);
    const auto gates = gate_results(go, now, cmp);
    const std::string notes = fmt::format("USD, {} {}; a month is 720 h. Spot assumes no interruptions (a reclaimed replica is replaced; "
                               "keep spare capacity). A service runs all month, so a commitment's effective rate applies as is; it pays "
                               "off above the UTIL> share of the month.{}\n",
                               r.region, prices_note(catalog), commitment_rates_note(catalog, r.region, "the 1Y/MO and 3Y/MO columns"));
    print_costed({{"cost", job_of(m.name, "inference"), render_serving_pick_text(result, ctx), inference_cost_table(result, ctx),
                   inference_chart(result, ctx), joined(m.assumptions, w.assumptions), r.region, joined({notes}, result.notes),
                   render_rejections_text(result.rejections, g.wide ? 1000 : 12)},
                  [&] { return inference_json_extra(result, ctx); }, co.chart, notes, notes_list(result.notes, g.wide)},
                 catalog, g, cmp, gates);
    return gate_exit(gates);
  }
};

}  // namespace

std::unique_ptr<Command> add_cost_command(CLI::App& parent) { return std::make_unique<CostCommand>(parent); }

}  // namespace gpuadvisor::cli
