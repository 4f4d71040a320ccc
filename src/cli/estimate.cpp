// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// `gpuadvisor estimate`: one configuration in full (training or a serving replica).
#include <spdlog/spdlog.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/search/replicas.hpp"
#include "gpuadvisor/serving/simulate.hpp"
#include "gpuadvisor/search/rl_search.hpp"

namespace gpuadvisor::cli {

namespace {

struct EstimateOptions {
  std::string instance, region = "us-east-1";
  std::string checkpoint_storage = "auto";
  int count = 1;
  int tp = 0, pp = 0, micro_batch = 0, zero_stage = -1, ep = 0, etp = 0, batch = 0, vp = 0, cp = 0, recompute_layers = 0, rollout_instances = 0;
  int attention_dp = 0;
  std::string recompute;
  bool explain = false;
};

class EstimateCommand : public Command {
 public:
  explicit EstimateCommand(CLI::App& parent) {
    app = parent.add_subcommand("estimate", "Explain one configuration in full: memory, time (with job overheads), cost");
    app->footer(
        "Examples:\n"
        "  gpuadvisor estimate --instance p5.48xlarge --count 8 --model llama-3-70b --task pretrain --precision fp8 --explain\n"
        "  gpuadvisor estimate --instance p4d.24xlarge --params 13B --task lora --tokens 1M\n"
        "  gpuadvisor estimate --task inference --instance inf2.xlarge --model llama-2-7b --max-ttft 1s --explain\n"
        "  gpuadvisor estimate --task rl --instance p5.48xlarge --model qwen2.5-7b --response-tokens 4096 --steps 500");
    add_model_options(app, mo);
    add_workload_options(app, wo);
    add_inference_options(app, io);
    add_rl_options(app, rlo);
    add_overhead_options(app, oo);
    add_emit_options(app, emit, false);
    app->add_option("--instance", eo.instance, "Instance type, e.g. p5.48xlarge")->required()->group("Cluster");
    app->add_option("--count", eo.count, "Number of instances (default 1)")->group("Cluster");
    app->add_option("--region", eo.region, "Region for prices (default us-east-1)")->group("Cluster");
    app->add_option("--checkpoint-storage", eo.checkpoint_storage, "Where weights are read and checkpoints written: auto (default: s3 on one instance, fsx-lustre on several) | s3 | fsx-lustre | efs | local-nvme")
        ->group("Cluster");
    app->add_option("--tp", eo.tp, "Tensor-parallel size (searched if omitted)")->group("Layout");
    app->add_option("--pp", eo.pp, "Pipeline stages (searched if omitted)")->group("Layout");
    app->add_option("--ep", eo.ep,
                    "Expert-parallel size (searched if omitted); serving an MoE model: 1 (experts tensor-sliced over --tp) or --tp (whole experts "
                    "spread over the replica's accelerators, tokens dispatched to them)")
        ->group("Layout");
    app->add_option("--attention-dp", eo.attention_dp,
                    "Serving an MoE model with --ep = --tp: attention data-parallel ranks, a divisor of --tp (each runs its own sequences and KV "
                    "cache at tensor parallel tp / attention-dp; TensorRT-LLM's DEP8 is --tp 8 --ep 8 --attention-dp 8); searched if omitted")
        ->group("Layout");
    app->add_option("--etp", eo.etp,
                    "Expert tensor-parallel size, a divisor of --tp: 1 with --tp above 1 keeps each expert whole and draws the expert ranks from "
                    "the tensor- and data-parallel ranks together (Megatron-Core MoE parallel folding), so --ep may divide tp x dp x cp; "
                    "with etp = tp, --ep must divide dp x cp; default: searched, tp or 1")
        ->group("Layout");
    app->add_option("--vp", eo.vp, "Virtual pipeline stages per rank, interleaved schedule (searched if omitted)")->group("Layout");
    app->add_option("--cp", eo.cp, "Context-parallel size: each sequence split over this many ranks, ring attention (searched if omitted, for sequences of 8k tokens and more)")
        ->group("Layout");
    app->add_option("--micro-batch", eo.micro_batch, "Sequences per micro-batch (searched if omitted)")->group("Layout");
    app->add_option("--zero-stage", eo.zero_stage, "ZeRO stage 0-3 (searched if omitted)")->group("Layout");
    app->add_option("--recompute", eo.recompute, "none | selective | full (searched if omitted)")->group("Layout");
    app->add_option("--recompute-layers", eo.recompute_layers, "With full recompute: layers per pipeline stage rebuilt (default: the fewest that fit)")
        ->group("Layout");
    app->add_option("--batch", eo.batch, "Inference: sequences in flight per replica (searched if omitted); with a load also the most the simulated engine runs, as --concurrency")->group("Layout");
    app->add_option("--rollout-instances", eo.rollout_instances, "RL, --placement split: instances that generate (the rest train; searched if omitted)")
        ->group("Layout");
    app->add_flag("--explain", eo.explain, "Print the formulas with the numbers filled in");
  }

  int run(const GlobalOptions& g) override {
    const Catalog catalog = load(g);
    check_priced_region(catalog, eo.region);
    check_task_flags(app, wo);
    ModelSpec m = build_model(mo);
    const Instance& inst = instance_of(catalog);
    refuse_neuron_flags_off_neuron(app, catalog.accelerator_of(inst), inst.name);
    if (wo.rl()) return run_rl(m, build_rl_workload(rlo, wo, io, m), catalog, inst, g);
    if (app->count("--rollout-instances")) throw InputError("--rollout-instances applies to --task rl --placement split");
    if (wo.inference()) {
      for (const char* f : {"--count", "--etp", "--vp", "--cp", "--micro-batch", "--zero-stage", "--recompute", "--recompute-layers", "--checkpoint-storage"})
        if (app->count(f))
          throw InputError(fmt::format("{} is a training flag; for inference give --tp, --pp (instances per replica), --ep and --attention-dp "
                                       "(MoE) and --batch; replicas follow from the load", f));
      return run_inference(m, batch_caps_the_engine(build_inference_workload(io, m)), catalog, inst, g);
    }
    if (app->count("--batch")) throw InputError("--batch applies to --task inference; training takes --micro-batch and --global-batch");
    if (app->count("--attention-dp")) throw InputError("--attention-dp applies to --task inference (an MoE service's attention data parallelism)");
    if (!m.is_moe())
      for (const char* f : {"--ep", "--etp"})
        if (app->count(f)) throw InputError(fmt::format("{}: expert parallelism needs a mixture-of-experts model; {} is dense", f, m.name));
    return run_training(m, build_workload(wo, m), catalog, inst, g);
  }

 private:
  ModelOptions mo;
  WorkloadOptions wo;
  InferenceOptions io;
  RlOptions rlo;
  OverheadOptions oo;
  EstimateOptions eo;
  EmitOptions emit;

  const Instance& instance_of(const Catalog& catalog) const {
    return instance_named(catalog, eo.instance, "--instance");
  }

  LayoutConstraints fixed_layout(const ModelSpec& m, const TrainingWorkload& w) const {
    for (int v : {eo.tp, eo.pp, eo.ep, eo.etp, eo.micro_batch, eo.vp, eo.cp})
      if (v < 0) throw InputError("--tp, --pp, --ep, --etp, --vp, --cp and --micro-batch must be positive");
    LayoutConstraints fixed;
    if (eo.tp) fixed.tp = eo.tp;
    if (eo.pp) fixed.pp = eo.pp;
    if (eo.ep) fixed.ep = eo.ep;
    if (eo.etp) {
      if (eo.tp && eo.tp % eo.etp != 0) throw InputError(fmt::format("--etp {} must divide --tp {}", eo.etp, eo.tp));
      fixed.etp = eo.etp;
    }
    if (eo.vp) fixed.vp = eo.vp;
    if (eo.cp) fixed.cp = eo.cp;
    if (eo.micro_batch) fixed.micro_batch = eo.micro_batch;
    if (eo.zero_stage >= 0) fixed.zero_stage = eo.zero_stage;
    if (!eo.recompute.empty()) {
      auto rc = recompute_from_string(eo.recompute);
      if (!rc) throw InputError(fmt::format("--recompute: '{}' is not one of none, selective, full", eo.recompute));
      fixed.recompute = *rc;
    }
    if (app->count("--recompute-layers")) {
      if (eo.recompute_layers < 1) throw InputError("--recompute-layers: must be at least 1");
      if (fixed.recompute != Recompute::full) throw InputError("--recompute-layers needs --recompute full");
      fixed.recompute_layers = eo.recompute_layers;
      // A stage holds layers / pp of them (the search's pp where --pp is not given: at most all of them).
      const int stage_layers = m.layers / std::max(1, eo.pp);
      if (eo.recompute_layers > stage_layers)
        throw InputError(fmt::format("--recompute-layers {}: a pipeline stage holds {} of {}'s {} layers{}", eo.recompute_layers, stage_layers,
                                     m.name, m.layers, eo.pp > 1 ? fmt::format(" at --pp {}", eo.pp) : std::string()));
    }
    if (eo.micro_batch > w.global_batch)
      throw InputError(fmt::format("--micro-batch {} is more than the global batch of {} sequences (--global-batch)", eo.micro_batch,
                                   w.global_batch));
    if (eo.cp > 1 && w.seq_len % (2 * eo.cp) != 0)
      throw InputError(fmt::format("--cp {}: the sequence length {} must divide into 2 x cp chunks (load-balanced ring attention)", eo.cp, w.seq_len));
    if (eo.zero_stage > 3 || eo.zero_stage < -1) throw InputError("--zero-stage: must be 0, 1, 2 or 3");
    if (eo.vp > 1 && eo.pp == 1) throw InputError("--vp: virtual pipeline stages need pipeline parallelism (--pp > 1)");
    // As the layout check says it where every flag is given: the search would find nothing and say only that.
    if (eo.zero_stage >= 2 && eo.pp > 1)
      throw InputError(fmt::format("--zero-stage {} with --pp {}: ZeRO stage 2 and 3 cannot be combined with pipeline parallelism "
                                   "(DeepSpeed/Megatron restriction)", eo.zero_stage, eo.pp));
    return fixed;
  }

  // The fixed tp x cp x pp must divide the accelerators (dp takes the rest).
  static void check_divides(const LayoutConstraints& fixed, const Cluster& c) {
    if (fixed.tp && (c.instance->accelerator_count % *fixed.tp != 0))
      throw InputError(fmt::format("--tp {} does not divide the {} accelerators of one {}", *fixed.tp, c.instance->accelerator_count, c.instance->name));
    std::string named;
    int ranks = 1;
    for (auto [flag, v] : {std::pair{"--tp", fixed.tp}, std::pair{"--cp", fixed.cp}, std::pair{"--pp", fixed.pp}})
      if (v) {
        named += fmt::format("{}{} {}", named.empty() ? "" : " x ", flag, *v);
        ranks *= *v;
      }
    if (c.accelerators() % ranks != 0)
      throw InputError(fmt::format("{} does not divide the {} accelerators of {} x {}", named, c.accelerators(), c.count, c.instance->name));
  }

  TrainingEstimate evaluate(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const LayoutConstraints& fixed) const {
    const bool fully_fixed = fixed.tp && fixed.pp && fixed.micro_batch && fixed.zero_stage && fixed.recompute;
    if (fully_fixed) {
      const int cp = fixed.cp.value_or(1);
      const int dp = c.accelerators() / (*fixed.tp * cp * *fixed.pp);
      Layout l{*fixed.tp, *fixed.pp, std::max(1, dp), fixed.ep.value_or(1), *fixed.zero_stage, *fixed.micro_batch, *fixed.recompute,
               fixed.vp.value_or(1), cp, fixed.recompute_layers.value_or(0)};
      l.etp = fixed.etp.value_or(0);  // 0: the same as tp
      if (auto problem = layout_problem(m, w, c, l)) throw InputError(*problem);
      return estimate_training(m, w, c, l);
    }
    check_divides(fixed, c);
    ClusterSearch s = search_cluster(m, w, c, fixed);
    // Fixed expert sizes that no split allows are bad input, not a lack of memory.
    if (!s.best && s.problem.rfind("no valid layout: ", 0) == 0) throw InputError(fmt::format("{} x {}: {}", c.count, c.instance->name, s.problem));
    if (!s.best) {
      nlohmann::ordered_json details{{"memory_need_gb", s.smallest_need_gb > 0 ? nlohmann::ordered_json(s.smallest_need_gb) : nullptr},
                                     {"capacity_gb", s.capacity_gb}};
      throw NothingFitsError(fmt::format("{} x {}: {}", c.count, c.instance->name, s.problem), json_text(details));
    }
    return *s.best;
  }

  int run_training(const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const Instance& inst, const GlobalOptions& g) {
    if (eo.count < 1 || eo.count > 100000) throw InputError("--count: must be in [1, 100000]");
    const Accelerator& acc = catalog.accelerator_of(inst);
    if (auto p = accelerator_problem(acc, w)) throw InputError(fmt::format("{}: {}", inst.name, *p));
    const Cluster c{&inst, &acc, eo.count};
    // recommend searches such types on one instance only (search.cpp: candidate_counts); the figures asked for are given, said.
    if (eo.count > 1 && !inst.efa_supported)
      warn(fmt::format("{} has no EFA: AWS does not recommend training across instances without it, and recommend searches it on one "
                       "instance only; these figures assume its network's listed bandwidth sustained between {} instances",
                       inst.name, eo.count));
    const LayoutConstraints fixed = fixed_layout(m, w);
    OverheadSettings settings = build_overheads(oo);
    settings.storage = parse_storage(eo.checkpoint_storage);
    log_assumptions(m.assumptions);
    log_assumptions(w.assumptions);
    TrainingEstimate e = evaluate(m, w, c, fixed);
    add_job_overheads(e, m, w, c, settings);
    const Format format = parse_format(g);
    refuse_neuron_training_emit(emit, inst, acc);
    if (!e.fits() && format == Format::json) {
      nlohmann::ordered_json details{{"memory_need_gb", e.memory.total_gb()}, {"capacity_gb", e.memory.capacity_gb}};
      throw NothingFitsError(fmt::format("this layout needs {:.1f} GB per accelerator but {} has {:.1f} GB", e.memory.total_gb(), acc.name,
                                         e.memory.capacity_gb),
                             json_text(details));
    }
    EstimateContext ctx{&m, &w, &c, &e, hourly_rate(inst, eo.region, Pricing::on_demand), hourly_rate(inst, eo.region, Pricing::spot), eo.region};
    print_document(render_estimate(catalog, ctx, RenderOptions{format, g.wide}), format);
    if (format == Format::table) std::cout << fmt::format("\n{}.\n", prices_note(catalog));
    if (eo.explain) explain_stream(format) << "\n" << explain_estimate(ctx);
    if (e.fits() && !emit.target.empty()) {
      // The files name the channel that delivers the count (a Capacity Block past the usual on-demand count, its
      // reservation placeholder), priced as cost --instance prices the same run.
      RecommendRow row;
      row.instance = &inst;
      row.count = c.count;
      row.estimate = e;
      RecommendRequest r;
      r.region = eo.region;
      r.overheads = settings;
      price_row(row, m, w, r);
      emit_training_files(emit, g, m, w, c, e, row.ranked_cost_usd, row.ranked_pricing, eo.region, &row);
    }
    if (!e.fits()) {
      spdlog::error("this layout needs {:.1f} GB per accelerator but {} has {:.1f} GB", e.memory.total_gb(), acc.name, e.memory.capacity_gb);
      return static_cast<int>(ExitCode::nothing_fits);
    }
    return 0;
  }

  // One RL step on the given instances: colocated unless --placement split
  // (or --rollout-instances) is given; the layouts are searched.
  int run_rl(const ModelSpec& m, const RlWorkload& w, const Catalog& catalog, const Instance& inst, const GlobalOptions& g) {
    for (const char* f : {"--tp", "--pp", "--ep", "--etp", "--vp", "--cp", "--micro-batch", "--zero-stage", "--recompute", "--recompute-layers", "--batch", "--attention-dp"})
      if (app->count(f)) throw InputError(fmt::format("{}: with --task rl the generation and update layouts are searched", f));
    if (eo.count < 1 || eo.count > 100000) throw InputError("--count: must be in [1, 100000]");
    const Accelerator& acc = catalog.accelerator_of(inst);
    if (auto p = accelerator_problem(acc, w.update)) throw InputError(fmt::format("{}: {}", inst.name, *p));
    const bool split = w.placement == RlPlacement::split || app->count("--rollout-instances");
    if (app->count("--rollout-instances") && w.placement == RlPlacement::colocated)
      throw InputError("--rollout-instances sizes the rollout pool of --placement split");
    if (split && eo.count < 2)
      throw InputError("--placement split (or --async) needs --count 2 or more: each pool is whole instances; one instance is colocated");
    if (split && (eo.rollout_instances < 0 || eo.rollout_instances >= eo.count))
      throw InputError(fmt::format("--rollout-instances: must be in [1, {}] (the rest of --count {} train)", eo.count - 1, eo.count));
    const Cluster c{&inst, &acc, eo.count};
    refuse_neuron_training_emit(emit, inst, acc);
    log_assumptions(m.assumptions);
    log_assumptions(w.assumptions);
    RlEvaluation ev = estimate_rl(m, w, c, split ? RlPlacement::split : RlPlacement::colocated, eo.rollout_instances);
    if (!ev.estimate) throw NothingFitsError(fmt::format("{} x {}: {}", c.count, inst.name, ev.problem));
    RecommendRequest r;
    r.region = eo.region;
    r.overheads = build_overheads(oo);
    r.overheads.storage = parse_storage(eo.checkpoint_storage);
    const RecommendRow row = rl_row(m, w, c, *ev.estimate, r);
    const Format format = parse_format(g);
    print_document(render_rl_estimate(catalog, RlEstimateContext{&m, &w, &c, &row, eo.region}, RenderOptions{format, g.wide}), format);
    if (format == Format::table) std::cout << fmt::format("\n{}.\n", prices_note(catalog));
    if (eo.explain) explain_stream(format) << "\n" << explain_rl(RlEstimateContext{&m, &w, &c, &row, eo.region});
    emit_training_files(emit, g, m, w.update, c, row.estimate, row.ranked_cost_usd, row.ranked_pricing, eo.region, &row, &w);
    return 0;
  }

  // Whether the estimate misses a latency target the user set (not a default).
  // Whether the estimate misses a latency target: only those the user set
  // (`given_only`), or any, the documented defaults included.
  static bool misses_target(const InferenceWorkload& w, const InferenceEstimate& e, bool given_only) {
    const bool tpot = (!given_only || !w.tpot_target_default) && w.max_tpot_s && e.tpot_s > *w.max_tpot_s;
    const bool ttft = (!given_only || !w.ttft_target_default) && w.max_ttft_s && e.prefill_p95_s + e.step.total_s() > *w.max_ttft_s;
    return tpot || ttft;
  }
  static bool misses_given_target(const InferenceWorkload& w, const InferenceEstimate& e) { return misses_target(w, e, true); }

  // The line above the figures when the choice has a problem that does not gate.
  static std::string ungated_problem_headline(const InferenceWorkload& w, const ServingRow& row, const std::string& problem) {
    // A replica meets every target: the load is what cannot be served as sized. The service rows, where
    // the simulated search could not size them, are the analytic count (a hostile review read them as one replica's).
    if (!misses_target(w, row.estimate, false))
      return row.simulated || !w.requests_per_second
                 ? fmt::format("Cannot size a service for this load ({}); the figures below are one replica's.\n\n", problem)
                 : fmt::format("Cannot size a service for this load by simulation ({}); the service and cost rows below are the analytic count "
                               "at {:.0f}% utilisation, not checked against the targets, and the other figures are one replica's at its "
                               "share of the load.\n\n",
                               problem, row.utilisation * 100);
    return fmt::format("Misses the default latency targets ({}); the figures below are what it does (set --max-ttft and --max-tpot "
                       "to your own, or --mode offline).\n\n",
                       problem);
  }

  // One replica under the load (--clients, or --requests-per-second over the replicas), simulated.
  static std::optional<SimulatedService> simulate_at_load(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const ServingRow& row) {
    const std::optional<double> per_replica =
        w.requests_per_second ? std::optional<double>(*w.requests_per_second / std::max(1, row.replicas)) : std::nullopt;
    const std::optional<ServingLoad> load = serving_load(w, per_replica, row.estimate.latency_s);
    if (!load) return std::nullopt;
    const size_t distinct = load->trace ? trace_share_of(*load->trace, load->trace_share, kMaxTraceReplicaRequests).size() : 0;
    if (load->trace && distinct < kLeastSimulatedTraceRequests) {
      warn(fmt::format("the trace's {} requests spread over {} replicas leave {} for one replica, too few to form a queue: the figures at the load "
                       "are the analytic operating point, not simulated (a longer trace gives each replica a share)",
                       load->trace->requests.size(), row.replicas, distinct == 0 ? std::string("none") : std::to_string(distinct)));
      return std::nullopt;
    }
    if (load->trace && distinct < kFewTraceRequests)
      warn(fmt::format("the trace gives one replica only {} requests, replayed as one period of a steady load to {}: a longer trace "
                       "gives steadier figures",
                       distinct, load->requests));
    if (!w.simulable()) {
      spdlog::warn("best-of-N samples and verifiers are not simulated: the figures at load are the analytic operating point (no queueing)");
      return std::nullopt;
    }
    return simulate_service(m, w, c, row.estimate, *load);
  }

  // Why no layout the instance offers is the one asked for (--tp, --ep,
  // --attention-dp, each left out searched), or empty: the problem of the
  // layout at --tp, else at --ep's size, else at the whole instance.
  static std::optional<std::string> asked_layout_problem(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const LayoutRequest& asked) {
    const Instance& inst = *c.instance;
    std::vector<int> sizes = asked.tp ? std::vector<int>{*asked.tp} : tensor_parallel_sizes(m, inst, *c.accelerator, c.count);
    if (sizes.empty()) sizes.push_back(inst.accelerator_count);
    const int named = asked.tp ? *asked.tp : asked.ep && *asked.ep > 1 ? *asked.ep : sizes.back();
    std::optional<std::string> at_named, at_largest;
    for (int size : sizes) {
      const bool expert = asked.ep.value_or(1) > 1 || asked.attention_dp.value_or(1) > 1;
      const ServingLayout l{size, c.count, asked.ep.value_or(expert ? size : 1), asked.attention_dp.value_or(1)};
      auto p = serving_layout_problem(m, c, l);
      if (!p) p = serving_engine_layout_problem(engine_for(*c.accelerator, w.engine), l);
      if (!p) return std::nullopt;
      (size == named ? at_named : at_largest) = *p;
    }
    return at_named ? at_named : at_largest;
  }

  // Under a load, --batch N is the most sequences the replica runs: the
  // simulated engine's limit too (as --concurrency N), so that the replicas
  // the simulation sizes and the utilisation of the batch are one replica's.
  InferenceWorkload batch_caps_the_engine(InferenceWorkload w) const {
    if (eo.batch > 0 && (w.requests_per_second || w.trace) && (!w.concurrency || *w.concurrency > eo.batch)) {
      w.concurrency = eo.batch;
      w.assumptions.push_back(fmt::format("under the load the engine runs at most --batch {} sequence{} at a time (as --concurrency {})", eo.batch,
                                          eo.batch > 1 ? "s" : "", eo.batch));
    }
    return w;
  }

  int run_inference(const ModelSpec& m, const InferenceWorkload& w, const Catalog& catalog, const Instance& inst, const GlobalOptions& g) {
    const Format format = parse_format(g);
    const Accelerator& acc = catalog.accelerator_of(inst);
    if (auto p = serving_accelerator_problem(acc, w)) throw InputError(fmt::format("{}: {}", inst.name, *p));
    if (w.prefix_share > 0)
      if (auto problem = prefix_share_problem(engine_for(acc, w.engine), acc.software))
        throw InputError(fmt::format("--prefix-share on {}: {}", inst.name, *problem));
    if (w.clients && app->count("--batch"))
      throw InputError("give --clients (the simulator finds the batch the users keep in flight) or --batch (a fixed batch), not both");
    for (auto [f, v] : {std::pair{"--tp", eo.tp}, std::pair{"--pp", eo.pp}, std::pair{"--batch", eo.batch}, std::pair{"--ep", eo.ep},
                        std::pair{"--attention-dp", eo.attention_dp}})
      if (app->count(f) && v < 1) throw InputError(fmt::format("{}: must be at least 1 (leave it out to search it)", f));
    log_assumptions(m.assumptions);
    log_assumptions(w.assumptions);
    if (w.compiled_batch && acc.software != "neuron")
      spdlog::warn("--compiled-batch applies to Inferentia and Trainium; {} is a GPU, whose graphs are captured for many batch sizes: ignored", acc.name);
    if (const auto slots = compiled_batch_on(acc, w); slots && eo.batch > *slots)
      throw InputError(fmt::format("--batch {} exceeds --compiled-batch {}: a Neuron decode graph runs at most the batch it was compiled for",
                                   eo.batch, *w.compiled_batch));
    const int pp = eo.pp ? eo.pp : 1;
    if (pp > 4096) throw InputError("--pp: at most 4096");
    const Cluster c{&inst, &acc, pp};
    auto given = [&](const char* f, int v) { return app->count(f) ? std::optional<int>(v) : std::nullopt; };
    const LayoutRequest asked{given("--tp", eo.tp), given("--ep", eo.ep), given("--attention-dp", eo.attention_dp)};
    if (w.attention_dp_balance_iters && asked.attention_dp.value_or(1) < 2)
      throw InputError("--attention-dp-balance: TensorRT-LLM balances the prompts among attention data-parallel ranks; give --attention-dp N "
                       "(N at least 2) for the layout it applies to");
    if (!m.is_moe())
      for (auto [f, v] : {std::pair{"--ep", asked.ep}, std::pair{"--attention-dp", asked.attention_dp}})
        if (v && *v > 1) throw InputError(fmt::format("{}: expert and attention data parallelism are for mixture-of-experts models; {} is dense", f, m.name));
    if (auto lp = asked_layout_problem(m, w, c, asked)) throw InputError(*lp);
    const ServingChoice choice = choose_serving_layout(m, w, inst, acc, pp, asked, eo.batch ? std::optional<int>(eo.batch) : std::nullopt);
    if (!choice.row)
      throw NothingFitsError(fmt::format("{} x {}: {}", pp, inst.name, choice.problem.empty() ? "no valid tensor-parallel size" : choice.problem));
    const ServingRow& row = *choice.row;
    if (!row.estimate.fits()) {
      nlohmann::ordered_json details{{"memory_need_gb", row.estimate.memory.total_gb()}, {"capacity_gb", row.estimate.memory.capacity_gb}};
      throw NothingFitsError(fmt::format("{} x {} with tp {}: {}", pp, inst.name, row.estimate.layout.tp, choice.problem), json_text(details));
    }
    // A load beyond the largest service sized (size_service caps it at a
    // billion replicas) would be priced overloaded: nothing carries it.
    if (w.requests_per_second && row.utilisation > 1 + 1e-9 && replicas_needed(row, w) > kMostServiceReplicas)
      throw NothingFitsError(fmt::format("{} x {} with tp {}: the load of {:.3g} requests/s needs about {:.3g} replicas at {:.0f}% "
                                         "utilisation, more than the billion a service is sized to",
                                         pp, inst.name, row.estimate.layout.tp, *w.requests_per_second, replicas_needed(row, w),
                                         w.target_utilisation * 100));
    // A --batch the memory (or a compiled Neuron graph) cannot hold is not run
    // at a smaller one under its name: nothing fits what was asked (exit 3).
    if (eo.batch > 0 && row.estimate.batch < eo.batch) {
      nlohmann::ordered_json details{{"batch", eo.batch}, {"max_batch", row.estimate.max_batch}};
      throw NothingFitsError(fmt::format("{} x {}: {}", pp, inst.name, choice.problem), json_text(details));
    }
    // A target the user set gates (exit 3); the documented defaults are only reported.
    const bool gate = !choice.problem.empty() && misses_given_target(w, row.estimate);
    if (gate && format == Format::json) {
      nlohmann::ordered_json details{{"ttft_s", row.estimate.ttft_s}, {"tpot_s", row.estimate.tpot_s}};
      throw NothingFitsError(choice.problem, json_text(details));
    }
    InferenceEstimateContext ctx{&m, &w, &c, &row, hourly_rate(inst, eo.region, Pricing::on_demand), hourly_rate(inst, eo.region, Pricing::spot),
                                 eo.region, eo.batch > 0, nullptr, {}};
    const std::optional<SimulatedService> simulated = simulate_at_load(m, w, c, row);
    ctx.simulated = simulated ? &*simulated : nullptr;
    if (!gate) ctx.targets_missed = choice.problem;
    if (!choice.problem.empty() && (format == Format::table || format == Format::markdown))
      std::cout << (gate ? fmt::format("MISSES ITS LATENCY TARGETS ({}): the figures below are for the closest batch, and the service they size "
                                       "does not meet them.\n\n",
                                       choice.problem)
                         : ungated_problem_headline(w, row, choice.problem));
    print_document(render_inference_estimate(catalog, ctx, RenderOptions{format, g.wide}), format);
    if (format == Format::table) std::cout << fmt::format("\n{}.\n", prices_note(catalog));
    if (eo.explain) explain_stream(format) << "\n" << explain_inference(ctx);
    if (!gate) {
      ServingRow priced = row;  // the launch files' header says what the replicas cost on demand, as recommend's do
      priced.ranked_usd_per_hour = serving_cost(row, w, hourly_rate(inst, eo.region, Pricing::on_demand)).usd_per_hour;
      emit_serving_files(emit, g, m, w, priced, "on-demand", eo.region);
    }
    if (gate) {
      spdlog::error("{} (the targets: --max-ttft, --max-tpot; --mode offline has none)", choice.problem);
      return static_cast<int>(ExitCode::nothing_fits);
    }
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> add_estimate_command(CLI::App& parent) { return std::make_unique<EstimateCommand>(parent); }

}  // namespace gpuadvisor::cli
