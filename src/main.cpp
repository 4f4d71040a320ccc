// gpuadvisor's command line: the only part that knows about flags.
// Commands: catalog (list, show, validate), models, recommend, estimate.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "gpuadvisor/catalog.hpp"
#include "gpuadvisor/compute.hpp"
#include "gpuadvisor/errors.hpp"
#include "gpuadvisor/files.hpp"
#include "gpuadvisor/inference_search.hpp"
#include "gpuadvisor/price_import.hpp"
#include "gpuadvisor/validation.hpp"
#include "gpuadvisor/model.hpp"
#include "gpuadvisor/pricing.hpp"
#include "gpuadvisor/quantity.hpp"
#include "gpuadvisor/report.hpp"
#include "gpuadvisor/search.hpp"

using namespace gpuadvisor;

namespace {

constexpr long kStalePriceDays = 90;

struct GlobalOptions {
  std::string catalog_file;
  std::vector<std::string> catalog_add;
  std::string format = "table";
  bool wide = false;
  int verbose = 0;
  bool quiet = false;
  std::vector<std::string> discounts;
};

struct ModelOptions {
  std::string params, model, model_config;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, vocab = 0;
};

struct WorkloadOptions {
  std::string task = "pretrain";
  std::string tokens, epochs, seq_len, global_batch;
  std::string precision = "bf16";
  int lora_rank = 16;
  std::string lora_targets = "attention+mlp";
  bool no_flash_attention = false;
};

struct InferenceOptions {
  std::string prompt_tokens, prompt_tokens_p95, output_tokens, output_tokens_p95, reasoning_tokens, samples;
  std::string requests_per_second, tokens_per_day, concurrency;
  std::string max_ttft, max_tpot, min_tokens_per_second_per_user;
  std::string weights = "bf16", kv_cache = "bf16", mode = "online";
};

constexpr const char* kTrainingFlags[] = {"--tokens", "--epochs", "--seq-len", "--global-batch", "--precision",
                                          "--lora-rank", "--lora-targets", "--no-flash-attention"};
constexpr const char* kInferenceFlags[] = {"--prompt-tokens", "--prompt-tokens-p95", "--output-tokens", "--output-tokens-p95",
                                           "--reasoning-tokens", "--samples", "--requests-per-second", "--tokens-per-day",
                                           "--concurrency", "--max-ttft", "--max-tpot", "--min-tokens-per-second-per-user",
                                           "--weights", "--kv-cache", "--mode"};

struct RecommendOptions {
  std::string sort_by = "pareto", deadline, budget, region = "us-east-1", pricing = "on-demand";
  std::string checkpoint_storage = "fsx-lustre", checkpoint_gb_per_s, restart_minutes, chart;
  int top = 10;
  int max_instances = 512;
  std::vector<std::string> families, exclude;
  bool explain = false;
};

struct EstimateOptions {
  std::string instance, region = "us-east-1";
  int count = 1;
  int tp = 0, pp = 0, micro_batch = 0, zero_stage = -1, ep = 0, batch = 0, vp = 0, cp = 0, recompute_layers = 0;
  std::string recompute;
  bool explain = false;
};

struct CatalogListOptions {
  std::vector<std::string> families, accelerators;
  std::string min_memory, max_price, region = "us-east-1", sort_by = "instance";
  int min_accelerators = 0;
  bool efa = false;
};

std::string today() {
  if (const char* t = std::getenv("GPUADVISOR_TODAY")) return t;
  auto now = std::chrono::system_clock::now();
  auto days = std::chrono::floor<std::chrono::days>(now);
  std::chrono::year_month_day ymd{days};
  return fmt::format("{:04d}-{:02d}-{:02d}", int(ymd.year()), unsigned(ymd.month()), unsigned(ymd.day()));
}

// The catalog's files: the base (built in, --catalog or GPUADVISOR_CATALOG) and the overlays.
std::pair<CatalogSource, std::vector<CatalogSource>> catalog_sources(const GlobalOptions& g) {
  CatalogSource base{"<embedded catalog>", std::string(embedded_catalog_text())};
  std::string file = g.catalog_file;
  if (file.empty())
    if (const char* env = std::getenv("GPUADVISOR_CATALOG"); env && *env) file = env;
  if (!file.empty()) base = read_catalog_file(file);
  std::vector<CatalogSource> overlays;
  for (const auto& f : g.catalog_add) overlays.push_back(read_catalog_file(f));
  return {base, overlays};
}

Catalog load(const GlobalOptions& g) {
  auto [base, overlays] = catalog_sources(g);
  Catalog c = load_catalog(base, overlays);
  Discounts d;
  for (const auto& x : g.discounts) add_discount(d, x);
  apply_discounts(c, d);
  if (auto age = days_between(c.prices_as_of, today()); age && *age > kStalePriceDays)
    spdlog::warn("prices are {} days old (as of {}); refresh them or pass --catalog-add with current prices", *age, c.prices_as_of);
  return c;
}

Format parse_format(const GlobalOptions& g) {
  auto f = format_from_string(g.format);
  if (!f) throw InputError(fmt::format("--format: '{}' is not one of table, json, csv, markdown", g.format));
  return *f;
}

void print_table(const Table& t, const Catalog& c, std::string_view command, std::string_view rows_key, const GlobalOptions& g,
                 std::string_view extra_json = {}) {
  RenderOptions o{parse_format(g), g.wide};
  int hidden = 0;
  std::cout << render_table(t, c, command, rows_key, o, &hidden, extra_json);
  if (hidden > 0 && o.format == Format::table) spdlog::info("{} columns hidden to fit 80 columns; use --wide to see them", hidden);
}

// An option given with an empty value ("--deadline ''") is an error, never
// the same as leaving it out.
void refuse_empty_values(const CLI::App* cmd) {
  for (const CLI::Option* opt : cmd->get_options()) {
    if (opt->count() == 0 || opt->get_expected_min() == 0) continue;
    for (const auto& v : opt->results())
      if (v.empty()) throw InputError(fmt::format("{}: empty value", opt->get_name()));
  }
  for (const CLI::App* sub : cmd->get_subcommands()) refuse_empty_values(sub);
}

ModelSpec build_model(const ModelOptions& o) {
  int sources = !o.params.empty() + !o.model.empty() + !o.model_config.empty();
  if (sources == 0) throw InputError("give the model: --params 13B, --model NAME (see `gpuadvisor models`) or --model-config config.json");
  if (sources > 1) throw InputError("give only one of --params, --model and --model-config");
  ModelSpec m;
  if (!o.model.empty()) {
    const ModelSpec* p = find_model_preset(o.model);
    if (!p) {
      std::string names;
      for (const auto& x : model_presets()) names += (names.empty() ? "" : ", ") + x.name;
      throw InputError(fmt::format("--model: unknown model '{}' (known: {})", o.model, names));
    }
    m = *p;
  } else if (!o.model_config.empty()) {
    std::vector<std::string> warnings;
    m = model_from_hf_config(o.model_config, warnings);
    for (const auto& w : warnings) spdlog::warn("{}", w);
  } else {
    double params = parse_count(o.params, "--params");
    if (params < 1e6) throw InputError(fmt::format("--params: {:.3g} is too small for a transformer (at least 1M)", params));
    if (params > kMaxParams) throw InputError(fmt::format("--params: {:.3g} exceeds the supported {:.0e}", params, kMaxParams));
    m = model_from_param_count(params);
  }
  ShapeOverrides ov{o.layers, o.hidden, o.heads, o.kv_heads, o.vocab};
  for (int v : {o.layers, o.hidden, o.heads, o.kv_heads, o.vocab})
    if (v < 0) throw InputError("shape overrides (--layers, --hidden, --heads, --kv-heads, --vocab) must be positive");
  apply_overrides(m, ov);
  return m;
}

TrainingWorkload build_workload(const WorkloadOptions& o, const ModelSpec& m) {
  WorkloadRequest r;
  auto task = task_from_string(o.task);
  if (!task) throw InputError(fmt::format("--task: '{}' is not one of pretrain, finetune, lora, qlora, inference", o.task));
  r.task = *task;
  if (!o.tokens.empty()) r.tokens = parse_count(o.tokens, "--tokens");
  if (!o.epochs.empty()) r.epochs = parse_number(o.epochs, "--epochs", 1e-6, 1e6);
  if (!o.seq_len.empty()) r.seq_len = static_cast<int>(std::min<long long>(parse_positive_integer(o.seq_len, "--seq-len"), 1LL << 30));
  if (!o.global_batch.empty()) r.global_batch = static_cast<int>(std::min<long long>(parse_positive_integer(o.global_batch, "--global-batch"), 1LL << 30));
  auto p = precision_from_string(o.precision);
  if (!p || (*p != Precision::bf16 && *p != Precision::fp8 && *p != Precision::fp4 && *p != Precision::fp16))
    throw InputError(fmt::format("--precision: '{}' is not one of bf16, fp16, fp8, fp4", o.precision));
  r.precision = *p;
  r.lora_rank = o.lora_rank;
  auto t = lora_targets_from_string(o.lora_targets);
  if (!t) throw InputError(fmt::format("--lora-targets: '{}' is not one of attention, attention+mlp", o.lora_targets));
  r.lora_targets = *t;
  r.flash_attention = !o.no_flash_attention;
  return make_workload(r, m);
}

InferenceWorkload build_inference_workload(const InferenceOptions& o) {
  InferenceRequest r;
  auto count = [](const std::string& v, const char* flag) { return v.empty() ? std::optional<double>() : std::optional<double>(parse_count(v, flag)); };
  r.prompt_tokens = count(o.prompt_tokens, "--prompt-tokens");
  r.prompt_tokens_p95 = count(o.prompt_tokens_p95, "--prompt-tokens-p95");
  r.output_tokens = count(o.output_tokens, "--output-tokens");
  r.output_tokens_p95 = count(o.output_tokens_p95, "--output-tokens-p95");
  if (!o.reasoning_tokens.empty()) r.reasoning_tokens = parse_number(o.reasoning_tokens, "--reasoning-tokens", 0, 1e7);
  if (!o.samples.empty()) r.samples = static_cast<int>(std::min<long long>(parse_positive_integer(o.samples, "--samples"), 1LL << 30));
  if (!o.requests_per_second.empty()) r.requests_per_second = parse_number(o.requests_per_second, "--requests-per-second", 1e-9, 1e9);
  r.output_tokens_per_day = count(o.tokens_per_day, "--tokens-per-day");
  if (!o.concurrency.empty()) r.concurrency = static_cast<int>(std::min<long long>(parse_positive_integer(o.concurrency, "--concurrency"), 1LL << 30));
  if (!o.max_ttft.empty()) r.max_ttft_s = parse_latency_s(o.max_ttft, "--max-ttft");
  if (!o.max_tpot.empty()) r.max_tpot_s = parse_latency_s(o.max_tpot, "--max-tpot");
  if (!o.min_tokens_per_second_per_user.empty())
    r.min_tokens_per_second_per_user = parse_number(o.min_tokens_per_second_per_user, "--min-tokens-per-second-per-user", 1e-6, 1e7);
  auto wf = weight_format_from_string(o.weights);
  if (!wf) throw InputError(fmt::format("--weights: '{}' is not one of bf16, fp8, int8, int4, fp4", o.weights));
  r.weights = *wf;
  if (o.kv_cache == "bf16" || o.kv_cache == "fp16") r.kv_cache = Precision::bf16;
  else if (o.kv_cache == "fp8") r.kv_cache = Precision::fp8;
  else throw InputError(fmt::format("--kv-cache: '{}' is not one of bf16, fp8", o.kv_cache));
  auto mode = serving_mode_from_string(o.mode);
  if (!mode) throw InputError(fmt::format("--mode: '{}' is not one of online, offline", o.mode));
  r.mode = *mode;
  return make_inference_workload(r);
}

bool given(const CLI::App* cmd, const char* flag) {
  const CLI::Option* o = cmd->get_option_no_throw(flag);
  return o && o->count() > 0;
}

// Flags of the other kind of task are refused rather than ignored.
void check_task_flags(const CLI::App* cmd, bool inference) {
  if (inference) {
    for (const char* f : kTrainingFlags)
      if (given(cmd, f)) throw InputError(fmt::format("{} is a training flag; --task inference takes --prompt-tokens, --output-tokens, --weights ... (see --help)", f));
  } else {
    for (const char* f : kInferenceFlags)
      if (given(cmd, f)) throw InputError(fmt::format("{} applies to --task inference only", f));
  }
}

void add_model_options(CLI::App* cmd, ModelOptions& o) {
  cmd->add_option("--params", o.params, "Parameter count: 13B, 1.5T, 7e9 (shape from the nearest preset)")->group("Model");
  cmd->add_option("--model", o.model, "A preset (see `gpuadvisor models`), e.g. llama-3-70b")->group("Model");
  cmd->add_option("--model-config", o.model_config, "A Hugging Face config.json")->group("Model");
  cmd->add_option("--layers", o.layers, "Override the number of layers")->group("Model");
  cmd->add_option("--hidden", o.hidden, "Override the hidden size")->group("Model");
  cmd->add_option("--heads", o.heads, "Override the attention heads")->group("Model");
  cmd->add_option("--kv-heads", o.kv_heads, "Override the key/value heads (GQA)")->group("Model");
  cmd->add_option("--vocab", o.vocab, "Override the vocabulary size")->group("Model");
}

void add_workload_options(CLI::App* cmd, WorkloadOptions& o) {
  cmd->add_option("--task", o.task, "pretrain | finetune (full SFT) | lora | qlora | inference")->group("Workload");
  cmd->add_option("--tokens", o.tokens, "Tokens per epoch: 1T, 500M (default: 20 per parameter for pretrain, 100M otherwise)")->group("Workload");
  cmd->add_option("--epochs", o.epochs, "Passes over the tokens (default 1)")->group("Workload");
  cmd->add_option("--seq-len", o.seq_len, "Sequence length (default 4096 pretrain, 2048 fine-tuning)")->group("Workload");
  cmd->add_option("--global-batch", o.global_batch, "Sequences per optimizer step (default ~4M tokens pretrain, 64 otherwise)")->group("Workload");
  cmd->add_option("--precision", o.precision, "Matrix-math precision: bf16 | fp16 | fp8 | fp4 (default bf16)")->group("Workload");
  cmd->add_option("--lora-rank", o.lora_rank, "LoRA rank (default 16)")->group("Workload");
  cmd->add_option("--lora-targets", o.lora_targets, "attention | attention+mlp (default attention+mlp)")->group("Workload");
  cmd->add_flag("--no-flash-attention", o.no_flash_attention, "Store attention scores (no fused attention kernel)")->group("Workload");
}

int run_validate(const std::vector<ValidationCase>& cases, const Catalog& catalog, bool all, const GlobalOptions& g) {
  const Format format = parse_format(g);
  const std::vector<CaseResult> results = run_cases(cases, catalog);
  const auto summary = summarise(results);
  if (format == Format::json) {
    print_table(validation_table(results, all), catalog, "validate", "cases", g, validation_json_extra(results, summary));
    return 0;
  }
  print_table(validation_table(results, all), catalog, "validate", "cases", g);
  if (format == Format::csv) return 0;
  const ResultCounts n = count_results(results);
  std::cout << fmt::format("\n{} cases, {} usable, {} predicted, {} usable without a prediction (disagreements: listed with the reason).\n\n",
                           n.total, n.usable, n.predicted, n.disagreements);
  print_table(error_summary_table(summary), catalog, "validate", "summary", g);
  return 0;
}

int run_calibrate(const std::vector<ValidationCase>& cases, Catalog catalog, const std::string& output, bool loso, const GlobalOptions& g) {
  if (loso) {
    print_table(source_check_table(leave_one_source_out(cases, catalog)), catalog, "calibrate", "leave_one_source_out", g);
    return 0;
  }
  const auto before = summarise(run_cases(cases, catalog));
  const auto fitted = calibrate(catalog, cases);
  const auto after = summarise(run_cases(cases, catalog));
  print_table(calibration_table(fitted), catalog, "calibrate", "parameters", g);
  if (!before.empty() && !after.empty())
    spdlog::info("median |error| {:.1f}% -> {:.1f}%, p90 {:.1f}% -> {:.1f}% over {} cases", before[0].median_abs * 100, after[0].median_abs * 100,
                 before[0].p90_abs * 100, after[0].p90_abs * 100, after[0].cases);
  if (!output.empty()) {
    write_file_atomically(output, efficiency_overlay(catalog, fitted, "efficiency parameters fitted by `gpuadvisor calibrate`"));
    spdlog::info("wrote the fitted parameters to {}; use it with --catalog-add {}", output, output);
  }
  return 0;
}

void write_chart(const std::string& path, const Chart& chart) {
  if (path.empty()) return;
  write_file_atomically(path, render_svg(chart));
  spdlog::info("wrote the chart to {}", path);
}

int run_recommend_inference(const ModelSpec& m, const InferenceWorkload& w, const Catalog& catalog, const RecommendRequest& r,
                            bool explain, const std::string& chart_path, const GlobalOptions& g) {
  const Format format = parse_format(g);
  for (const auto& a : m.assumptions) spdlog::info("assumption: {}", a);
  for (const auto& a : w.assumptions) spdlog::info("assumption: {}", a);
  if (w.test_time_multiplier() > 1)
    spdlog::info("test-time compute: {} sample(s) x ({:.0f} output + {:.0f} reasoning tokens) = {:.2f}x the generated tokens of a plain answer",
                 w.samples, w.output_tokens, w.reasoning_tokens, w.test_time_multiplier());
  ServingRecommendation result = recommend_inference(m, w, catalog, r);
  InferenceContext ctx{&m, &w, &r};
  const std::string extra = format == Format::json ? inference_json_extra(result, ctx) : std::string();
  if (result.rows.empty()) {
    if (format == Format::json) print_table(inference_table(result, ctx), catalog, "recommend", "options", g, extra);
    std::cerr << render_rejections_text(result.rejections, 100);
    std::string best;
    if (result.best_batch1_tpot_s)
      best = fmt::format("; the fastest option, {}, reaches {:.1f} ms per output token ({:.0f} tokens/s per user) at batch 1",
                         result.best_batch1_option, *result.best_batch1_tpot_s * 1e3, 1 / *result.best_batch1_tpot_s);
    throw NothingFitsError(fmt::format("no instance type can serve {} under these targets and constraints{}", m.name, best));
  }
  print_table(inference_table(result, ctx), catalog, "recommend", "options", g, extra);
  write_chart(chart_path, inference_chart(result, ctx));
  if (format == Format::table || format == Format::markdown) {
    std::cout << fmt::format("\n{} options found; top {} shown, ranked by {} ({} prices, {}). USD; a month is 720 h; $/M OUT is per "
                             "visible output token{}.\n",
                             result.rows.size(), std::min<size_t>(result.rows.size(), r.top), to_string(r.sort_by), to_string(r.pricing),
                             r.region, w.requests_per_second ? " at the given load" : " at full utilisation of one instance");
    std::cout << render_rejections_text(result.rejections, g.wide ? 1000 : 12);
    if (!result.notes.empty()) std::cout << "\nNotes:\n";
    const size_t limit = g.wide ? result.notes.size() : 6;
    for (size_t i = 0; i < result.notes.size() && i < limit; ++i) std::cout << "  " << result.notes[i] << "\n";
    if (result.notes.size() > limit) std::cout << fmt::format("  ... {} more (--wide or --format json for all)\n", result.notes.size() - limit);
  }
  if (explain) {
    const ServingRow& top = result.rows.front();
    Cluster c{top.instance, top.accelerator, top.estimate.layout.pp};
    InferenceEstimateContext ectx{&m, &w, &c, &top, hourly_rate(*top.instance, r.region, Pricing::on_demand),
                                  hourly_rate(*top.instance, r.region, Pricing::spot), r.region};
    (format == Format::json ? std::cerr : std::cout) << "\n" << explain_inference(ectx);
  }
  return 0;
}

int run_estimate_inference(const ModelSpec& m, const InferenceWorkload& w, const Catalog& catalog, const Instance& inst,
                           const EstimateOptions& eo, const GlobalOptions& g) {
  const Format format = parse_format(g);
  const Accelerator& acc = catalog.accelerator_of(inst);
  if (auto p = serving_accelerator_problem(acc, w)) throw InputError(fmt::format("{}: {}", inst.name, *p));
  for (int v : {eo.tp, eo.pp, eo.batch})
    if (v < 0) throw InputError("--tp, --pp and --batch must be positive");
  for (const auto& a : m.assumptions) spdlog::info("assumption: {}", a);
  for (const auto& a : w.assumptions) spdlog::info("assumption: {}", a);
  const int pp = eo.pp ? eo.pp : 1;
  if (pp > 4096) throw InputError("--pp: at most 4096");
  const Cluster c{&inst, &acc, pp};
  if (eo.tp)
    if (auto lp = serving_layout_problem(m, c, ServingLayout{eo.tp, pp})) throw InputError(*lp);
  const ServingChoice choice = choose_serving_layout(m, w, inst, acc, pp, eo.tp ? std::optional<int>(eo.tp) : std::nullopt,
                                                     eo.batch ? std::optional<int>(eo.batch) : std::nullopt);
  if (!choice.row) throw NothingFitsError(fmt::format("{} x {}: {}", pp, inst.name, choice.problem.empty() ? "no valid tensor-parallel size" : choice.problem));
  const ServingRow& row = *choice.row;
  if (!row.estimate.fits()) throw NothingFitsError(fmt::format("{} x {} with tp {}: {}", pp, inst.name, row.estimate.layout.tp, choice.problem));
  InferenceEstimateContext ctx{&m, &w, &c, &row, hourly_rate(inst, eo.region, Pricing::on_demand), hourly_rate(inst, eo.region, Pricing::spot),
                               eo.region};
  std::cout << render_inference_estimate(catalog, ctx, RenderOptions{format, g.wide});
  if (eo.explain) (format == Format::json ? std::cerr : std::cout) << "\n" << explain_inference(ctx);
  if (!choice.problem.empty()) {
    spdlog::error("{}", choice.problem);
    return static_cast<int>(ExitCode::nothing_fits);
  }
  return 0;
}

void add_interruption_options(CLI::App* cmd, RecommendOptions& o) {
  const char* g = "Interruptions (spot reclaims, hardware failures)";
  cmd->add_option("--checkpoint-storage", o.checkpoint_storage, "s3 | fsx-lustre (default) | efs | local-nvme")->group(g);
  cmd->add_option("--checkpoint-gb-per-s", o.checkpoint_gb_per_s, "Override the storage's write bandwidth for the whole job, GB/s")->group(g);
  cmd->add_option("--restart-minutes", o.restart_minutes, "Time to restart after an interruption (default 10)")->group(g);
  cmd->add_option("--chart", o.chart, "Also write an SVG scatter of time against cost with the Pareto frontier to this file")->group("Output");
}

// The ranking, constraint and interruption options recommend and cost share.
void add_ranking_options(CLI::App* cmd, RecommendOptions& o) {
  cmd->add_option("--sort-by", o.sort_by, "pareto (training default) | time | cost (inference default) | cost-per-token")->group("Ranking");
  cmd->add_option("--top", o.top, "Rows to show (default 10)")->group("Ranking");
  cmd->add_option("--max-instances", o.max_instances, "Largest instance count to consider (default 512)")->group("Constraints");
  cmd->add_option("--family", o.families, "Only these families (repeatable)")->group("Constraints");
  cmd->add_option("--exclude", o.exclude, "Skip these instance types or families (repeatable)")->group("Constraints");
  cmd->add_option("--region", o.region, "Region for prices (default us-east-1)")->group("Constraints");
  cmd->add_option("--pricing", o.pricing, "on-demand (default) | spot | savings-1y | savings-3y | best: the price used for ranking and any budget")
      ->group("Constraints");
  add_interruption_options(cmd, o);
}

void apply_interruption_options(const RecommendOptions& o, RecommendRequest& r) {
  auto s = checkpoint_storage_from_string(o.checkpoint_storage);
  if (!s) throw InputError(fmt::format("--checkpoint-storage: '{}' is not one of s3, fsx-lustre, efs, local-nvme", o.checkpoint_storage));
  r.checkpoint_storage = *s;
  if (!o.checkpoint_gb_per_s.empty()) r.checkpoint_write_gb_per_s = parse_number(o.checkpoint_gb_per_s, "--checkpoint-gb-per-s", 1e-3, 1e6);
  if (!o.restart_minutes.empty()) r.restart_s = parse_number(o.restart_minutes, "--restart-minutes", 0, 1e5) * 60;
}

// The ranking request of recommend and cost, checked against the catalog.
RecommendRequest build_request(const RecommendOptions& o, const Catalog& catalog) {
  RecommendRequest r;
  r.region = o.region;
  auto pricing = pricing_from_string(o.pricing);
  if (!pricing) throw InputError(fmt::format("--pricing: '{}' is not one of on-demand, spot, savings-1y, savings-3y, best", o.pricing));
  r.pricing = *pricing;
  auto sort = sort_by_from_string(o.sort_by);
  if (!sort) throw InputError(fmt::format("--sort-by: '{}' is not one of pareto, time, cost, cost-per-token", o.sort_by));
  r.sort_by = *sort;
  if (o.top < 1) throw InputError("--top: must be at least 1");
  if (o.max_instances < 1 || o.max_instances > 4096) throw InputError("--max-instances: must be in [1, 4096]");
  r.top = o.top;
  r.max_instances = o.max_instances;
  r.families = o.families;
  r.exclude = o.exclude;
  for (const auto& f : o.families)
    if (std::none_of(catalog.instances.begin(), catalog.instances.end(), [&](const Instance& i) { return i.family == f; }))
      throw InputError(fmt::format("--family: no instance family '{}' in the catalog", f));
  for (const auto& x : o.exclude)
    if (std::none_of(catalog.instances.begin(), catalog.instances.end(), [&](const Instance& i) { return i.name == x || i.family == x; }))
      throw InputError(fmt::format("--exclude: '{}' is neither an instance type nor a family in the catalog", x));
  if (!o.deadline.empty()) r.deadline_hours = parse_duration_hours(o.deadline, "--deadline");
  if (!o.budget.empty()) r.budget_usd = parse_usd(o.budget, "--budget");
  apply_interruption_options(o, r);
  return r;
}

// `cost --task inference`: the finance table of a service.
int run_cost_inference(const CLI::App* cmd, const ModelOptions& mo, const InferenceOptions& io, const RecommendOptions& co,
                       const Catalog& catalog, const GlobalOptions& g) {
  check_task_flags(cmd, true);
  for (const char* f : {"--instance", "--hours", "--count"})
    if (given(cmd, f)) throw InputError(fmt::format("{} prices a given training run; a service is sized from the load", f));
  ModelSpec m = build_model(mo);
  InferenceWorkload w = build_inference_workload(io);
  RecommendRequest r = build_request(co, catalog);
  r.sort_by = SortBy::cost;
  for (const auto& a : m.assumptions) spdlog::info("assumption: {}", a);
  for (const auto& a : w.assumptions) spdlog::info("assumption: {}", a);
  ServingRecommendation result = recommend_inference(m, w, catalog, r);
  if (result.rows.empty()) {
    std::cerr << render_rejections_text(result.rejections, 100);
    throw NothingFitsError(fmt::format("no instance type can serve {} under these targets and constraints", m.name));
  }
  InferenceContext ctx{&m, &w, &r};
  const Format format = parse_format(g);
  print_table(inference_cost_table(result, ctx), catalog, "cost", "options", g, format == Format::json ? inference_json_extra(result, ctx) : std::string());
  write_chart(co.chart, inference_chart(result, ctx));
  if (format == Format::table || format == Format::markdown)
    std::cout << fmt::format("\nUSD, {} prices as of {}; a month is 720 h. Spot assumes no interruptions (a reclaimed replica is replaced; "
                             "keep spare capacity). Commitments pay off above the UTIL> share of the month.\n",
                             r.region, catalog.prices_as_of);
  return 0;
}

void add_inference_options(CLI::App* cmd, InferenceOptions& o) {
  const char* g = "Inference (--task inference)";
  cmd->add_option("--prompt-tokens", o.prompt_tokens, "Prompt tokens per request, mean (default 1024)")->group(g);
  cmd->add_option("--prompt-tokens-p95", o.prompt_tokens_p95, "Prompt tokens, 95th percentile (the TTFT target is checked here)")->group(g);
  cmd->add_option("--output-tokens", o.output_tokens, "Visible output tokens per request, mean (default 256)")->group(g);
  cmd->add_option("--output-tokens-p95", o.output_tokens_p95, "Output tokens, 95th percentile (one such request must fit)")->group(g);
  cmd->add_option("--reasoning-tokens", o.reasoning_tokens, "Hidden thinking tokens per sample (default 0)")->group(g);
  cmd->add_option("--samples", o.samples, "Sequences per request: best-of-N, self-consistency (default 1)")->group(g);
  cmd->add_option("--requests-per-second", o.requests_per_second, "The load, requests per second (sets the replicas)")->group(g);
  cmd->add_option("--tokens-per-day", o.tokens_per_day, "The load as visible output tokens per day: 2B, 500M")->group(g);
  cmd->add_option("--concurrency", o.concurrency, "Most sequences in flight per replica (default: what fits, up to 1024)")->group(g);
  cmd->add_option("--max-ttft", o.max_ttft, "Time to first token target: 500ms, 2s (online default 2s)")->group(g);
  cmd->add_option("--max-tpot", o.max_tpot, "Time per output token target: 50ms (online default 200ms)")->group(g);
  cmd->add_option("--min-tokens-per-second-per-user", o.min_tokens_per_second_per_user, "Alternative to --max-tpot: 20 means 50ms")->group(g);
  cmd->add_option("--weights", o.weights, "Weight format: bf16 | fp8 | int8 | int4 | fp4 (default bf16)")->group(g);
  cmd->add_option("--kv-cache", o.kv_cache, "KV-cache precision: bf16 | fp8 (default bf16)")->group(g);
  cmd->add_option("--mode", o.mode, "online (latency targets) | offline (throughput, no targets unless given)")->group(g);
}

int run(int argc, char** argv) {
  CLI::App app{
      "gpuadvisor: which EC2 accelerator instances to rent for a foundation-model job, how many, how long and what it costs.\n"
      "Examples:\n"
      "  gpuadvisor recommend --params 13B --task lora\n"
      "  gpuadvisor recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d\n"
      "  gpuadvisor estimate --instance p5.48xlarge --count 8 --model llama-3-70b --task pretrain --precision fp8\n"
      "  gpuadvisor recommend --model llama-3-70b --task inference --requests-per-second 5 --max-tpot 50ms\n"
      "  gpuadvisor cost --model llama-3-70b --task pretrain --tokens 200B --family p5 --chart cost.svg\n"
      "  gpuadvisor validate\n"
      "  gpuadvisor catalog --family p5 --format csv\n"
      "Exit codes: 0 ok, 1 internal error, 2 bad input, 3 nothing fits. Docs: docs/cli.md",
      "gpuadvisor"};
  app.set_version_flag("--version", [] {
    Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
    return fmt::format("gpuadvisor {} (catalog {}, prices as of {})", tool_version(), c.catalog_version, c.prices_as_of);
  });
  app.require_subcommand(1);
  app.fallthrough();
  GlobalOptions g;
  app.add_option("--catalog", g.catalog_file, "Replace the built-in catalog with this JSON file (or set GPUADVISOR_CATALOG)");
  app.add_option("--catalog-add", g.catalog_add, "Add or override catalog entries from this JSON overlay (repeatable)");
  app.add_option("--format", g.format, "table | json | csv | markdown (default table)");
  app.add_flag("--wide", g.wide, "Show every column in tables");
  app.add_flag("-v,--verbose", g.verbose, "More detail on stderr (repeat for debug)");
  app.add_flag("-q,--quiet", g.quiet, "Only errors on stderr");
  app.add_option("--discount", g.discounts, "Negotiated discount off on-demand and commitment prices: 15%, or per family p5=20% (repeatable)");

  // catalog
  CLI::App* cat = app.add_subcommand("catalog", "List the instance catalog; `catalog show NAME`, `catalog validate FILE`");
  CatalogListOptions cl;
  cat->add_option("--family", cl.families, "Only these families (repeatable), e.g. p5");
  cat->add_option("--accelerator", cl.accelerators, "Only these accelerators (repeatable), e.g. H100-SXM");
  cat->add_option("--min-accelerator-memory", cl.min_memory, "At least this much memory per accelerator: 40GB, 80GiB");
  cat->add_option("--min-accelerators", cl.min_accelerators, "At least this many accelerators per instance");
  cat->add_option("--max-price", cl.max_price, "At most this on-demand USD per hour");
  cat->add_option("--region", cl.region, "Region for prices (default us-east-1)");
  cat->add_flag("--efa", cl.efa, "Only instances with EFA");
  cat->add_option("--sort-by", cl.sort_by, "Any column key, e.g. on_demand_usd_per_hour, accelerator_memory_gib");
  std::string show_name, validate_file;
  CLI::App* show = cat->add_subcommand("show", "One instance with its accelerator's specs and sources");
  show->add_option("name", show_name, "Instance type, e.g. p5.48xlarge")->required();
  CLI::App* validate = cat->add_subcommand("validate", "Check a catalog or overlay file");
  validate->add_option("file", validate_file, "Catalog JSON file")->required();
  bool validate_overlay = false;
  validate->add_flag("--overlay", validate_overlay, "Validate FILE as an overlay on the built-in catalog");

  CLI::App* models = app.add_subcommand("models", "List the model presets");

  // validate and calibrate
  CLI::App* val = app.add_subcommand("validate", "Compare predictions with published measurements (the bundled cases or --cases FILE)");
  std::string val_cases;
  bool val_all = false;
  val->add_option("--cases", val_cases, "A cases file (format: docs/validation.md); default: the bundled data/validation/cases.json");
  val->add_flag("--all", val_all, "Also list the cases kept with usable: false");
  CLI::App* cal = app.add_subcommand("calibrate", "Fit the efficiency parameters to measurements and write a catalog overlay");
  std::string cal_measurements, cal_output;
  bool cal_loso = false, cal_priors = false;
  cal->add_option("--measurements", cal_measurements, "Cases file with your runs (same format as validate --cases); default: the bundled cases");
  cal->add_option("--output", cal_output, "Overlay to write with the fitted parameters (use with --catalog-add)");
  cal->add_flag("--leave-one-source-out", cal_loso, "For each source: fit without it, report the error on it");
  cal->add_flag("--from-priors", cal_priors, "Start the fit from the priors instead of the catalog's values (reproduces the built-in fit)");

  // prices import
  CLI::App* prices = app.add_subcommand("prices", "Price files: `prices import` writes a catalog overlay from AWS price files");
  prices->require_subcommand(1);
  CLI::App* import = prices->add_subcommand("import", "Read AWS price files offline and write a catalog overlay for --catalog-add");
  std::vector<std::string> offer_files, sp_files, spot_files, advisor_files;
  std::string import_output, import_as_of, import_region;
  import->add_option("--offer-file", offer_files, "AWS Price List EC2 offer file (JSON): on-demand and reserved rates (repeatable)");
  import->add_option("--savings-plans-file", sp_files, "AWS Savings Plans offer file (JSON) (repeatable)");
  import->add_option("--spot-history", spot_files, "Output of `aws ec2 describe-spot-price-history --output json` (repeatable)");
  import->add_option("--spot-advisor", advisor_files, "The Spot Instance Advisor's spot-advisor-data.json (repeatable)");
  import->add_option("--output", import_output, "The overlay to write (replaced atomically)")->required();
  import->add_option("--as-of", import_as_of, "Date for files that carry none, YYYY-MM-DD (default today)");
  import->add_option("--region", import_region, "Region of Savings Plans rates whose usage type names none");

  // recommend
  CLI::App* rec = app.add_subcommand("recommend", "Rank instance types and counts for a training job or a service by time and cost");
  ModelOptions mo;
  WorkloadOptions wo;
  InferenceOptions io;
  RecommendOptions ro;
  add_model_options(rec, mo);
  add_workload_options(rec, wo);
  add_inference_options(rec, io);
  add_ranking_options(rec, ro);
  rec->add_option("--deadline", ro.deadline, "Longest acceptable run: 72h, 14d")->group("Constraints");
  rec->add_option("--budget", ro.budget, "Largest acceptable cost in USD: 50000, 12.5k (per month for inference)")->group("Constraints");
  rec->add_flag("--explain", ro.explain, "Print the top row's formulas with the numbers filled in");

  // cost: the finance table for the same options
  CLI::App* cost = app.add_subcommand("cost", "Finance view of a job (on-demand, spot with expected interruptions, commitments) or of a service (--task inference)");
  ModelOptions cmo;
  WorkloadOptions cwo;
  InferenceOptions cio;
  RecommendOptions co;
  add_model_options(cost, cmo);
  add_workload_options(cost, cwo);
  add_inference_options(cost, cio);
  add_ranking_options(cost, co);
  std::string cost_instance, cost_hours;
  int cost_count = 1;
  cost->add_option("--instance", cost_instance, "Price a given run instead: this instance type (with --count and --hours)")->group("Given run");
  cost->add_option("--count", cost_count, "Instances of the given run (default 1)")->group("Given run");
  cost->add_option("--hours", cost_hours, "Length of the given run: 72h, 14d")->group("Given run");

  // estimate
  CLI::App* est = app.add_subcommand("estimate", "Explain one configuration in full: memory, time, cost");
  ModelOptions emo;
  WorkloadOptions ewo;
  InferenceOptions eio;
  EstimateOptions eo;
  add_model_options(est, emo);
  add_workload_options(est, ewo);
  add_inference_options(est, eio);
  est->add_option("--instance", eo.instance, "Instance type, e.g. p5.48xlarge")->required()->group("Cluster");
  est->add_option("--count", eo.count, "Number of instances (default 1)")->group("Cluster");
  est->add_option("--region", eo.region, "Region for prices (default us-east-1)")->group("Cluster");
  est->add_option("--tp", eo.tp, "Tensor-parallel size (searched if omitted)")->group("Layout");
  est->add_option("--pp", eo.pp, "Pipeline stages (searched if omitted)")->group("Layout");
  est->add_option("--ep", eo.ep, "Expert-parallel size (searched if omitted)")->group("Layout");
  est->add_option("--vp", eo.vp, "Virtual pipeline stages per rank, interleaved schedule (searched if omitted)")->group("Layout");
  est->add_option("--cp", eo.cp, "Context-parallel size: each sequence split over this many ranks, ring attention (searched if omitted, for sequences of 8k tokens and more)")->group("Layout");
  est->add_option("--micro-batch", eo.micro_batch, "Sequences per micro-batch (searched if omitted)")->group("Layout");
  est->add_option("--zero-stage", eo.zero_stage, "ZeRO stage 0-3 (searched if omitted)")->group("Layout");
  est->add_option("--recompute", eo.recompute, "none | selective | full (searched if omitted)")->group("Layout");
  est->add_option("--recompute-layers", eo.recompute_layers,
                  "With full recompute: layers per pipeline stage rebuilt (default: the fewest that fit)")->group("Layout");
  est->add_option("--batch", eo.batch, "Inference: sequences in flight per replica (searched if omitted)")->group("Layout");
  est->add_flag("--explain", eo.explain, "Print the formulas with the numbers filled in");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return static_cast<int>(ExitCode::input_error);
  }

  refuse_empty_values(&app);
  auto logger = spdlog::stderr_color_mt("gpuadvisor", spdlog::color_mode::never);
  logger->set_pattern("gpuadvisor: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(g.quiet ? spdlog::level::err : g.verbose >= 2 ? spdlog::level::debug : spdlog::level::info);
  const Format format = parse_format(g);

  if (*cat && *validate) {
    CatalogSource file = read_catalog_file(validate_file);
    Catalog c = validate_overlay ? load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())}, {file}) : load_catalog(file);
    std::cout << fmt::format("{}: valid ({} accelerators, {} instances, catalog {}, prices as of {})\n", validate_file,
                             c.accelerators.size(), c.instances.size(), c.catalog_version, c.prices_as_of);
    return 0;
  }
  if (*val || *cal) {
    auto [base, overlays] = catalog_sources(g);
    overlays.push_back({"<data/validation/systems.json>", std::string(embedded_validation_systems_text())});
    Catalog catalog = load_catalog(base, overlays);
    const std::string file = *val ? val_cases : cal_measurements;
    const std::string origin = file.empty() ? "<data/validation/cases.json>" : file;
    const std::string text = file.empty() ? std::string(embedded_validation_cases_text()) : read_input_file(file, "a cases file");
    const std::vector<ValidationCase> cases = read_cases(origin, text);
    if (*val) return run_validate(cases, catalog, val_all, g);
    if (cal_priors) reset_to_prior(catalog);
    return run_calibrate(cases, catalog, cal_output, cal_loso, g);
  }
  if (*prices && *import) {
    auto [base, overlays] = catalog_sources(g);
    ImportInputs in;
    in.as_of = import_as_of.empty() ? today() : import_as_of;
    if (!days_between(in.as_of, in.as_of)) throw InputError(fmt::format("--as-of: '{}' is not a YYYY-MM-DD date", in.as_of));
    if (!import_region.empty()) in.region = import_region;
    auto read = [](const std::vector<std::string>& paths, std::vector<PriceFile>& out) {
      for (const auto& p : paths) out.push_back({p, read_input_file(p, "a price file")});
    };
    read(offer_files, in.offer_files);
    read(sp_files, in.savings_plan_files);
    read(spot_files, in.spot_histories);
    read(advisor_files, in.spot_advisors);
    if (in.offer_files.empty() && in.savings_plan_files.empty() && in.spot_histories.empty() && in.spot_advisors.empty())
      throw InputError("give at least one of --offer-file, --savings-plans-file, --spot-history, --spot-advisor");
    ImportResult result = import_prices(base, overlays, in);
    if (result.prices_written == 0) throw NothingFitsError("no price in these files matches an instance type of the catalog; nothing written");
    write_file_atomically(import_output, result.overlay_json);
    print_table(import_report_table(result.report), load_catalog(base, overlays), "prices import", "report", g);
    spdlog::info("wrote {} prices to {}; use it with --catalog-add {}", result.prices_written, import_output, import_output);
    return 0;
  }
  const Catalog catalog = load(g);
  if (*cat && *show) {
    const Instance* i = catalog.find_instance(show_name);
    if (!i) {
      auto near = catalog.nearest_instance_names(show_name);
      std::string s;
      for (const auto& n : near) s += (s.empty() ? "" : ", ") + n;
      throw InputError(fmt::format("unknown instance '{}'; did you mean: {}?", show_name, s));
    }
    std::cout << render_instance_details(catalog, *i, RenderOptions{format, g.wide});
    return 0;
  }
  if (*cat) {
    std::optional<double> min_mem, max_price;
    if (!cl.min_memory.empty()) min_mem = parse_memory_gb(cl.min_memory, "--min-accelerator-memory");
    if (!cl.max_price.empty()) max_price = parse_usd(cl.max_price, "--max-price");
    if (cl.min_accelerators < 0) throw InputError("--min-accelerators: must be at least 0");
    for (const auto& a : cl.accelerators)
      if (!catalog.find_accelerator(a)) throw InputError(fmt::format("--accelerator: unknown accelerator '{}'", a));
    std::vector<const Instance*> list;
    for (const auto& i : catalog.instances) {
      const Accelerator& a = catalog.accelerator_of(i);
      if (!cl.families.empty() && std::find(cl.families.begin(), cl.families.end(), i.family) == cl.families.end()) continue;
      if (!cl.accelerators.empty() && std::find(cl.accelerators.begin(), cl.accelerators.end(), a.name) == cl.accelerators.end()) continue;
      if (min_mem && a.memory_usable_gb() < *min_mem) continue;
      if (i.accelerator_count < cl.min_accelerators) continue;
      if (cl.efa && !i.efa_supported) continue;
      if (max_price) {
        auto od = hourly_rate(i, cl.region, Pricing::on_demand);
        if (!od || *od > *max_price) continue;
      }
      list.push_back(&i);
    }
    Table t = catalog_table(catalog, list, cl.region);
    auto col = std::find_if(t.columns.begin(), t.columns.end(), [&](const Column& c) { return c.key == cl.sort_by; });
    if (col == t.columns.end()) {
      std::string keys;
      for (const auto& c : t.columns) keys += (keys.empty() ? "" : ", ") + c.key;
      throw InputError(fmt::format("--sort-by: '{}' is not a column (use one of: {})", cl.sort_by, keys));
    }
    const size_t k = static_cast<size_t>(col - t.columns.begin());
    std::stable_sort(t.rows.begin(), t.rows.end(), [&](const auto& a, const auto& b) {
      const Value &va = a[k].value, &vb = b[k].value;
      // Unknown values sort last.
      if (va.index() != vb.index()) return vb.index() == 0;
      return va < vb;
    });
    print_table(t, catalog, "catalog", "instances", g);
    return 0;
  }
  if (*models) {
    print_table(models_table(), catalog, "models", "models", g);
    return 0;
  }
  if (*rec) {
    const bool inference = wo.task == "inference";
    check_task_flags(rec, inference);
    ModelSpec m = build_model(mo);
    RecommendRequest r = build_request(ro, catalog);
    if (inference) {
      if (!ro.deadline.empty()) throw InputError("--deadline applies to training; for a service give --max-ttft/--max-tpot and the load");
      if (!rec->count("--sort-by")) r.sort_by = SortBy::cost;
      return run_recommend_inference(m, build_inference_workload(io), catalog, r, ro.explain, ro.chart, g);
    }
    TrainingWorkload w = build_workload(wo, m);
    for (const auto& a : m.assumptions) spdlog::info("assumption: {}", a);
    for (const auto& a : w.assumptions) spdlog::info("assumption: {}", a);
    Recommendation result = recommend(m, w, catalog, r);
    spdlog::debug("{} layouts evaluated", result.layouts_evaluated);
    RecommendContext ctx{&m, &w, &r};
    if (result.rows.empty()) {
      if (format == Format::json) print_table(recommendation_table(result, ctx), catalog, "recommend", "options", g, recommendation_json_extra(result, ctx));
      std::cerr << render_rejections_text(result.rejections, 100);
      throw NothingFitsError(fmt::format("no instance type can run {} of {} under these constraints; see the reasons above "
                                         "(try --task qlora, a larger --max-instances, a later --deadline or a bigger --budget)",
                                         to_string(w.task), m.name));
    }
    print_table(recommendation_table(result, ctx), catalog, "recommend", "options", g,
                format == Format::json ? recommendation_json_extra(result, ctx) : std::string());
    write_chart(ro.chart, recommendation_chart(result, ctx));
    if (format == Format::table || format == Format::markdown) {
      std::cout << fmt::format("\n{} options found; top {} shown, ranked by {} ({} prices, {}). Costs in USD; SPOT assumes no interruptions (`gpuadvisor cost` adds them).\n",
                               result.rows.size(), std::min<size_t>(result.rows.size(), r.top), to_string(r.sort_by),
                               to_string(r.pricing), r.region);
      std::cout << render_rejections_text(result.rejections, g.wide ? 1000 : 12);
    }
    if (ro.explain) {
      const RecommendRow& top = result.rows.front();
      Cluster c{top.instance, &catalog.accelerator_of(*top.instance), top.count};
      EstimateContext ectx{&m, &w, &c, &top.estimate, top.on_demand_usd_per_hour, top.spot_usd_per_hour, r.region};
      (format == Format::json ? std::cerr : std::cout) << "\n" << explain_estimate(ectx);
    }
    return 0;
  }
  if (*cost) {
    if (cwo.task == "inference") return run_cost_inference(cost, cmo, cio, co, catalog, g);
    check_task_flags(cost, false);
    ModelSpec m = build_model(cmo);
    TrainingWorkload w = build_workload(cwo, m);
    RecommendRequest r = build_request(co, catalog);
    for (const auto& a : m.assumptions) spdlog::info("assumption: {}", a);
    for (const auto& a : w.assumptions) spdlog::info("assumption: {}", a);
    Recommendation result;
    if (!cost_instance.empty() || cost->count("--hours") || cost->count("--count")) {
      // A given run: its instance type, count and hours; the model sizes its checkpoints.
      if (cost_instance.empty() || cost_hours.empty()) throw InputError("a given run needs --instance and --hours (and optionally --count)");
      const Instance* inst = catalog.find_instance(cost_instance);
      if (!inst) throw InputError(fmt::format("--instance: unknown instance '{}'", cost_instance));
      if (cost_count < 1 || cost_count > 100000) throw InputError("--count: must be in [1, 100000]");
      RecommendRow row;
      row.instance = inst;
      row.count = cost_count;
      row.estimate.total_hours = parse_duration_hours(cost_hours, "--hours");
      price_row(row, m, w, r);
      result.rows.push_back(row);
    } else {
      result = recommend(m, w, catalog, r);
    }
    RecommendContext ctx{&m, &w, &r};
    if (result.rows.empty()) {
      std::cerr << render_rejections_text(result.rejections, 100);
      throw NothingFitsError(fmt::format("no instance type can run {} of {}", to_string(w.task), m.name));
    }
    print_table(cost_table(result, ctx), catalog, "cost", "options", g,
                format == Format::json ? recommendation_json_extra(result, ctx) : std::string());
    write_chart(co.chart, recommendation_chart(result, ctx));
    if (format == Format::table || format == Format::markdown)
      std::cout << fmt::format("\nUSD, {} prices as of {}. Spot expected cost includes reclaims at the Spot Advisor bucket's upper edge "
                               "and hardware failures, checkpoints to {} every Daly-optimal interval and {:.0f} min restarts; "
                               "BREAK-EVEN is the monthly interruption rate above which on-demand is cheaper.\n",
                               r.region, catalog.prices_as_of, to_string(r.checkpoint_storage), r.restart_s / 60);
    return 0;
  }
  if (*est) {
    const bool inference = ewo.task == "inference";
    check_task_flags(est, inference);
    ModelSpec m = build_model(emo);
    const Instance* inst = catalog.find_instance(eo.instance);
    if (!inst) {
      std::string s;
      for (const auto& n : catalog.nearest_instance_names(eo.instance)) s += (s.empty() ? "" : ", ") + n;
      throw InputError(fmt::format("--instance: unknown instance '{}'; did you mean: {}?", eo.instance, s));
    }
    if (inference) {
      for (const char* f : {"--count", "--ep", "--cp", "--micro-batch", "--zero-stage", "--recompute", "--recompute-layers"})
        if (est->count(f))
          throw InputError(fmt::format("{} is a training flag; for inference give --tp, --pp (instances per replica) and --batch; replicas follow from the load", f));
      return run_estimate_inference(m, build_inference_workload(eio), catalog, *inst, eo, g);
    }
    if (est->count("--batch")) throw InputError("--batch applies to --task inference; training takes --micro-batch and --global-batch");
    TrainingWorkload w = build_workload(ewo, m);
    if (eo.count < 1 || eo.count > 100000) throw InputError("--count: must be in [1, 100000]");
    const Accelerator& acc = catalog.accelerator_of(*inst);
    if (auto p = accelerator_problem(acc, w)) throw InputError(fmt::format("{}: {}", inst->name, *p));
    Cluster c{inst, &acc, eo.count};
    LayoutConstraints fixed;
    if (eo.tp) fixed.tp = eo.tp;
    if (eo.pp) fixed.pp = eo.pp;
    if (eo.ep) fixed.ep = eo.ep;
    if (eo.vp) fixed.vp = eo.vp;
    if (eo.cp) fixed.cp = eo.cp;
    if (eo.micro_batch) fixed.micro_batch = eo.micro_batch;
    if (eo.zero_stage >= 0) fixed.zero_stage = eo.zero_stage;
    if (!eo.recompute.empty()) {
      auto rc = recompute_from_string(eo.recompute);
      if (!rc) throw InputError(fmt::format("--recompute: '{}' is not one of none, selective, full", eo.recompute));
      fixed.recompute = *rc;
    }
    if (est->count("--recompute-layers")) {
      if (eo.recompute_layers < 1) throw InputError("--recompute-layers: must be at least 1");
      if (fixed.recompute != Recompute::full) throw InputError("--recompute-layers needs --recompute full");
      fixed.recompute_layers = eo.recompute_layers;
    }
    for (int v : {eo.tp, eo.pp, eo.ep, eo.micro_batch, eo.vp, eo.cp})
      if (v < 0) throw InputError("--tp, --pp, --ep, --vp, --cp and --micro-batch must be positive");
    if (eo.cp > 1 && w.seq_len % (2 * eo.cp) != 0)
      throw InputError(fmt::format("--cp {}: the sequence length {} must divide into 2 x cp chunks (load-balanced ring attention)", eo.cp, w.seq_len));
    if (eo.zero_stage > 3 || eo.zero_stage < -1) throw InputError("--zero-stage: must be 0, 1, 2 or 3");
    if (eo.vp > 1 && eo.pp == 1) throw InputError("--vp: virtual pipeline stages need pipeline parallelism (--pp > 1)");
    for (const auto& a : m.assumptions) spdlog::info("assumption: {}", a);
    for (const auto& a : w.assumptions) spdlog::info("assumption: {}", a);
    std::optional<TrainingEstimate> e;
    const bool fully_fixed = fixed.tp && fixed.pp && fixed.micro_batch && fixed.zero_stage && fixed.recompute;
    if (fully_fixed) {
      const int cp = fixed.cp.value_or(1);
      const int dp = c.accelerators() / (*fixed.tp * cp * *fixed.pp);
      Layout l{*fixed.tp, *fixed.pp, std::max(1, dp), fixed.ep.value_or(1), *fixed.zero_stage, *fixed.micro_batch, *fixed.recompute,
               fixed.vp.value_or(1), cp, fixed.recompute_layers.value_or(0)};
      if (auto problem = layout_problem(m, w, c, l)) throw InputError(*problem);
      e = estimate_training(m, w, c, l);
    } else {
      // Check what was fixed for validity before searching the rest.
      if (fixed.tp && (inst->accelerator_count % *fixed.tp != 0))
        throw InputError(fmt::format("--tp {} does not divide the {} accelerators of one {}", *fixed.tp, inst->accelerator_count, inst->name));
      // The fixed tp x cp x pp must divide the accelerators (dp takes the rest).
      std::string given;
      int ranks = 1;
      for (auto [flag, v] : {std::pair{"--tp", fixed.tp}, std::pair{"--cp", fixed.cp}, std::pair{"--pp", fixed.pp}})
        if (v) {
          given += fmt::format("{}{} {}", given.empty() ? "" : " x ", flag, *v);
          ranks *= *v;
        }
      if (c.accelerators() % ranks != 0)
        throw InputError(fmt::format("{} does not divide the {} accelerators of {} x {}", given, c.accelerators(), c.count, inst->name));
      ClusterSearch s = search_cluster(m, w, c, fixed);
      if (!s.best) throw NothingFitsError(fmt::format("{} x {}: {}", c.count, inst->name, s.problem));
      e = s.best;
    }
    EstimateContext ctx{&m, &w, &c, &*e, hourly_rate(*inst, eo.region, Pricing::on_demand), hourly_rate(*inst, eo.region, Pricing::spot), eo.region};
    std::cout << render_estimate(catalog, ctx, RenderOptions{format, g.wide});
    if (eo.explain) (format == Format::json ? std::cerr : std::cout) << "\n" << explain_estimate(ctx);
    if (!e->fits()) {
      spdlog::error("this layout needs {:.1f} GB per accelerator but {} has {:.1f} GB", e->memory.total_gb(), acc.name, e->memory.capacity_gb);
      return static_cast<int>(ExitCode::nothing_fits);
    }
    return 0;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const InputError& e) {
    std::cerr << "gpuadvisor: error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::input_error);
  } catch (const NothingFitsError& e) {
    std::cerr << "gpuadvisor: error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::nothing_fits);
  } catch (const std::exception& e) {
    std::cerr << "gpuadvisor: internal error: " << e.what() << " (please report this)\n";
    return static_cast<int>(ExitCode::internal_error);
  }
}
