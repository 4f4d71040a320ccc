// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// What the commands share: catalog loading, output, warnings, option groups
// and the builders from flag text to the core's requests.
#include <spdlog/spdlog.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <regex>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "gpuadvisor/workload/engine.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/workload/framework.hpp"
#include "gpuadvisor/base/named.hpp"
#include "gpuadvisor/base/names.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/files.hpp"
#include "gpuadvisor/catalog/pricing.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/serving/arrivals.hpp"

namespace gpuadvisor::cli {

namespace {
constexpr long kStalePriceDays = 90;
constexpr double kSuspiciousTokens = 1e6;  // fewer training tokens than this is likely a missing suffix
std::vector<std::string> g_warnings;
}  // namespace

std::string today() {
  if (const char* t = std::getenv("GPUADVISOR_TODAY")) return t;
  auto now = std::chrono::system_clock::now();
  auto days = std::chrono::floor<std::chrono::days>(now);
  std::chrono::year_month_day ymd{days};
  return fmt::format("{:04d}-{:02d}-{:02d}", int(ymd.year()), unsigned(ymd.month()), unsigned(ymd.day()));
}

std::string cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/gpuadvisor";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/gpuadvisor";
  return "";
}

std::string cached_prices_path() {
  const std::string d = cache_dir();
  return d.empty() ? "" : d + "/prices.json";
}

std::pair<CatalogSource, std::vector<CatalogSource>> catalog_sources(const GlobalOptions& g) {
  CatalogSource base = embedded_catalog_source();
  std::string file = g.catalog_file;
  if (file.empty())
    if (const char* env = std::getenv("GPUADVISOR_CATALOG"); env && *env) file = env;
  if (!file.empty()) base = read_catalog_file(file);
  std::vector<CatalogSource> overlays;
  // The newest fetched prices first, so the user's own overlays win over them.
  const std::string cached = cached_prices_path();
  std::error_code ec;
  if (!g.no_cache_prices && !cached.empty() && std::filesystem::is_regular_file(cached, ec)) {
    try {
      overlays.push_back(read_catalog_file(cached));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}; pass --no-cache-prices to use the built-in prices", e.what()));
    }
  }
  for (const auto& f : g.catalog_add) overlays.push_back(read_catalog_file(f));
  return {base, overlays};
}

std::string prices_note(const Catalog& c) {
  const std::string advisor = c.spot_advisor_as_of();
  return fmt::format("prices as of {}, {}; Spot Advisor interruption ranges as of {}", c.prices_as_of, c.prices_origin,
                     advisor.empty() ? "unknown" : advisor);
}

namespace {

// A date after today would hide the stale-price warning: refused, naming the entry (a day's grace for time zones).
void refuse_future_date(const std::string& date, const std::string& what, const std::string& today_date) {
  if (auto ahead = days_between(today_date, date); ahead && *ahead > kFutureDateGraceDays)
    throw InputError(fmt::format("{}: as of {} is in the future (today is {}); a price cannot be dated after it was read", what, date, today_date));
}

void refuse_future_dates(const Catalog& c) {
  const std::string now = today();
  refuse_future_date(c.prices_as_of, "prices_as_of", now);
  for (const auto& i : c.instances)
    for (const auto& [region, p] : i.prices) {
      const std::string where = fmt::format("{} prices.{}", i.name, region);
      refuse_future_date(p.on_demand.as_of, where + ".on_demand", now);
      refuse_future_date(p.spot.as_of, where + ".spot", now);
      refuse_future_date(p.spot.interruption_as_of, where + ".spot.interruption", now);
      refuse_future_date(p.capacity_block.as_of, where + ".capacity_block", now);
      for (const auto& [name, q] : p.commitments) refuse_future_date(q.as_of, where + ".commitments." + name, now);
    }
}

}  // namespace

void refuse_future_import(const Catalog& merged) {
  try {
    refuse_future_dates(merged);
  } catch (const InputError& e) {
    throw InputError(fmt::format("the imported prices would be refused by every command: {}; nothing written (--as-of, or a Timestamp "
                                 "of --spot-history, dates them; give the day the files were read)",
                                 e.what()));
  }
}

namespace {

// The catalog with its overlays; a damaged cache of fetched prices says how to go on without it.
Catalog load_with_hint(const CatalogSource& base, const std::vector<CatalogSource>& overlays) {
  const std::string cached = cached_prices_path();
  const bool uses_cache =
      !cached.empty() && std::any_of(overlays.begin(), overlays.end(), [&](const CatalogSource& o) { return o.origin == cached; });
  try {
    Catalog c = load_catalog(base, overlays);
    refuse_future_dates(c);
    return c;
  } catch (const InputError& e) {
    if (!uses_cache) throw;
    throw InputError(fmt::format("{}; the cached prices are damaged: run `gpuadvisor prices fetch` again, or pass --no-cache-prices "
                                 "(or delete {}) to use the built-in prices",
                                 e.what(), cached));
  }
}

}  // namespace

Catalog load(const GlobalOptions& g) {
  auto [base, overlays] = catalog_sources(g);
  Catalog c = load_with_hint(base, overlays);
  const std::string cached = cached_prices_path();
  if (!cached.empty() && std::find(c.origins.begin(), c.origins.end(), cached) != c.origins.end())
    c.prices_origin = fmt::format("fetched from the AWS Price List ({})", cached);
  else if (base.origin != "<embedded catalog>")
    c.prices_origin = fmt::format("catalog {}", base.origin);
  if (!g.catalog_add.empty()) c.prices_origin += fmt::format(", with overlays {}", fmt::join(g.catalog_add, ", "));
  Discounts d;
  for (const auto& x : g.discounts) add_discount(d, x);
  apply_discounts(c, d);
  if (!d.empty())  // said wherever the prices' origin is (footers, JSON catalog.prices_origin)
    c.prices_origin += fmt::format(", with --discount {} off on-demand and commitment rates (spot and Capacity Block rates at list)",
                                   fmt::join(g.discounts, ", "));
  if (auto age = days_between(c.prices_as_of, today()); age && *age > kStalePriceDays)
    warn(fmt::format("prices are {} days old (as of {}); refresh them or pass --catalog-add with current prices", *age, c.prices_as_of));
  return c;
}

Format parse_format(const GlobalOptions& g) {
  auto f = format_from_string(g.format);
  if (!f) throw InputError(fmt::format("--format: '{}' is not one of table, json, csv, markdown, html", g.format));
  return *f;
}

void warn(const std::string& message) {
  spdlog::warn("{}", message);
  g_warnings.push_back(message);
}

const std::vector<std::string>& warnings() { return g_warnings; }

void log_assumptions(const std::vector<std::string>& a) {
  for (const auto& x : a) spdlog::info("assumption: {}", x);
}

void print_table(const Table& t, const Catalog& c, std::string_view command, std::string_view rows_key, const GlobalOptions& g,
                 std::string_view extra_json) {
  RenderOptions o{parse_format(g), g.wide};
  std::string extra(extra_json);
  if (o.format == Format::json) {
    nlohmann::ordered_json j = extra.empty() ? nlohmann::ordered_json::object() : nlohmann::ordered_json::parse(extra);
    j["warnings"] = warnings();
    extra = json_text(j);
  }
  int hidden = 0;
  std::cout << render_table(t, c, command, rows_key, o, &hidden, extra);
  if (hidden > 0 && o.format == Format::table) spdlog::info("{} columns hidden to fit 80 columns; use --wide to see them", hidden);
}

void print_document(const std::string& text, Format f) {
  if (f != Format::json) {
    std::cout << text;
    return;
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  j["warnings"] = warnings();
  std::cout << json_text(j, 2) << "\n";
}

// The chart is SVG: a file named for another format would hold what its name denies.
static std::string svg_file_name(const std::string& path) {
  const auto dot = path.find_last_of('.');
  std::string ext = dot == std::string::npos || path.find('/', dot) != std::string::npos ? "" : path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (ext == ".svg") return "";
  return fmt::format("charts are SVG: name the file .svg, not '{}' (for a PNG, convert it: rsvg-convert -o chart.png chart.svg)", path);
}

void write_chart(const std::string& path, Chart chart, const Catalog& catalog) {
  if (path.empty()) return;
  if (chart.prices_note.empty()) chart.prices_note = prices_note(catalog);  // the date and source, under the title
  write_file_atomically(path, render_svg(chart));
  spdlog::info("wrote the chart to {}", path);
}

void refuse_empty_values(const CLI::App* cmd) {
  for (const CLI::Option* opt : cmd->get_options()) {
    if (opt->count() == 0 || opt->get_expected_min() == 0) continue;
    for (const auto& v : opt->results())
      if (v.empty()) throw InputError(fmt::format("{}: empty value", opt->get_name()));
  }
  for (const CLI::App* sub : cmd->get_subcommands()) refuse_empty_values(sub);
}

bool given(const CLI::App* cmd, const char* flag) {
  const CLI::Option* o = cmd->get_option_no_throw(flag);
  return o && o->count() > 0;
}

// ---------------------------------------------------------------------------
// Option groups

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
  cmd->add_option("--task", o.task, "pretrain (default) | finetune (full SFT) | lora | qlora | inference | rl (GRPO/PPO/DPO post-training)")->group("Workload");
  cmd->add_option("--tokens", o.tokens, "Tokens per epoch: 1T, 500M (default: 20 per parameter for pretrain, 100M otherwise)")->group("Workload");
  cmd->add_option("--epochs", o.epochs, "Passes over the tokens (default 1)")->group("Workload");
  cmd->add_option("--seq-len", o.seq_len, "Sequence length: 4096, 8k (= 8192) (default 4096 pretrain, 2048 fine-tuning)")->group("Workload");
  cmd->add_option("--global-batch", o.global_batch, "Sequences per optimizer step (default ~4M tokens pretrain, 64 otherwise)")->group("Workload");
  cmd->add_option("--precision", o.precision, "Matrix-math precision: bf16 | fp16 | fp8 | fp4 (default bf16)")->group("Workload");
  cmd->add_option("--lora-rank", o.lora_rank, "LoRA rank (default 16)")->group("Workload");
  cmd->add_option("--lora-targets", o.lora_targets, "attention | attention+mlp (default attention+mlp)")->group("Workload");
  cmd->add_flag("--no-flash-attention", o.no_flash_attention, "Store attention scores (no fused attention kernel)")->group("Workload");
  cmd->add_option("--framework", o.framework,
                  fmt::format("Training stack: {} (default: megatron on GPUs, neuron on Trainium; docs/methodology.md §Training frameworks; "
                              "pretrain, finetune, lora and qlora only)",
                              framework_names()))
      ->group("Workload");
}

void add_inference_options(CLI::App* cmd, InferenceOptions& o) {
  const char* g = "Inference (--task inference)";
  cmd->add_option("--prompt-tokens", o.prompt_tokens, "Prompt tokens per request, mean (default 1024)")->group(g);
  cmd->add_option("--prompt-tokens-p95", o.prompt_tokens_p95, "Prompt tokens, 95th percentile (the TTFT target is checked here)")->group(g);
  cmd->add_option("--output-tokens", o.output_tokens, "Visible output tokens per request, mean (default 256)")->group(g);
  cmd->add_option("--output-tokens-p95", o.output_tokens_p95, "Output tokens, 95th percentile (one such request must fit)")->group(g);
  cmd->add_option("--reasoning-tokens", o.reasoning_tokens, "Hidden thinking tokens per sample (default 0)")->group(g);
  cmd->add_option("--samples", o.samples, "Sequences per request: best-of-N, self-consistency (default 1)")->group(g);
  cmd->add_option("--verifier-model", o.verifier_model, "Best-of-N: a verifier (preset or size, e.g. 8B) on the same replica scores every sample")->group(g);
  cmd->add_option("--requests-per-second", o.requests_per_second, "The load, requests per second (sets the replicas)")->group(g);
  cmd->add_option("--tokens-per-day", o.tokens_per_day, "The load as visible output tokens per day: 2B, 500M")->group(g);
  cmd->add_option("--clients", o.clients,
                  "estimate: the load as a closed loop of N users, each sending its next request when the last completes (as benchmark "
                  "clients' --max-concurrency); simulated step by step, with latency percentiles")->group(g);
  cmd->add_option("--arrival", o.arrival, "Open-loop arrivals with --requests-per-second: poisson (default) | gamma:CV, bursty gaps (gamma:2)")->group(g);
  cmd->add_option("--length-spread", o.length_spread,
                  "Simulated lengths uniform over mean x (1 +- spread): 0.8 (default 0: fixed; a p95 above the mean draws lognormal lengths)")->group(g);
  cmd->add_option("--simulated-requests", o.simulated_requests, "Requests the simulator runs (default 1000, or 8 per client)")->group(g);
  cmd->add_option("--prefix-share", o.prefix_share,
                  "Share of the mean prompt every request shares (a system prompt), cached once and reused by the engine's prefix cache: "
                  "30%, 0.3 (default 0)")->group(g);
  cmd->add_option("--speculative", o.speculative,
                  "Speculative decoding as DRAFTER:TOKENS:ACCEPTANCE: mtp:3:0.7 (a one-layer draft head on the model, as DeepSeek's MTP or "
                  "EAGLE, proposing 3 tokens a step, each accepted with probability 0.7) or ngram:4:0.5 (prompt lookup, no draft model); "
                  "each step verifies the proposals in one pass (default: none)")->group(g);
  cmd->add_option("--trace", o.trace,
                  "The load as recorded: a JSON Lines or CSV file of arrival time, prompt and output tokens per request (Mooncake, "
                  "BurstGPT and Azure LLM traces read as they are; JSON `timestamp` in ms as Mooncake's, CSV `Timestamp` in s as BurstGPT's, `arrival_s` in s); "
                  "sets the rate, arrivals and lengths; replicas take its requests in turn")->group(g);
  cmd->add_option("--target-utilisation", o.target_utilisation,
                  "Most a replica may be busy: 0.6, 80%. Online with a load and targets the simulated latencies size the replicas and this "
                  "is a cap (default none); otherwise replicas = load / (capacity x this) (default 80% online, 100% offline)")->group(g);
  cmd->add_option("--concurrency", o.concurrency, "Most sequences in flight per replica (default: what fits, up to the engine's limit: vLLM 256, or 1024 on 70 GiB+ GPUs except A100; 1024 otherwise)")->group(g);
  cmd->add_option("--compiled-batch", o.compiled_batch,
                  "Inferentia/Trainium: the batch the decode graph is compiled for; every step reads the KV, runs the matrices "
                  "and routes the experts of all its slots, filled or not, while per-sequence and host time follow the sequences in "
                  "flight (default: the batch in flight; GPUs ignore it)")->group(g);
  cmd->add_option("--scheduler-recv-interval", o.scheduler_recv_interval,
                  "SGLang (--engine sglang): its server's --scheduler-recv-interval, the decode steps between two looks for new "
                  "requests (a prefill step looks at once); an arriving prompt waits for the next (default 1: every step)")->group(g);
  cmd->add_option("--max-waiting-tokens", o.max_waiting_tokens,
                  "TGI 1.x (--engine tgi-1): its router's --max-waiting-tokens, the most decode steps a waiting prompt is held from a "
                  "decoding batch (it joins sooner when 1.2 per running sequence wait; an idle server takes it at once) (default 20; 1 to "
                  "1000)")->group(g);
  cmd->add_option("--max-batched-tokens", o.max_batched_tokens,
                  "The engine's token budget per step, decode tokens and prompt chunks together, as its server was started: vLLM "
                  "--max-num-batched-tokens, SGLang --chunked-prefill-size, TensorRT-LLM --max_num_tokens, TGI --max-batch-prefill-tokens "
                  "(default: the engine's own by GPU memory, docs/methodology.md §Serving engines; 64 to 1048576)")->group(g);
  cmd->add_option("--attention-dp-balance", o.attention_dp_balance,
                  "TensorRT-LLM (--engine trtllm) with attention data parallelism: its attention_dp_config enable_balance with timeout_iters N; "
                  "a prompt is held until every attention rank has one, a rank has nothing to decode, or N iterations pass since the last "
                  "release (default: off, TensorRT-LLM's own; 1 to 1000)")->group(g);
  cmd->add_option("--max-ttft", o.max_ttft,
                  "Time to first token target: 500ms, 2s (online default by model size, MLPerf's interactive chat scenarios: 500ms up to 20B "
                  "parameters per token, 450ms up to 150B, 4.5s above)")->group(g);
  cmd->add_option("--max-tpot", o.max_tpot,
                  "Time per output token target: 50ms (online default by model size, as MLPerf's interactive scenarios: 30ms up to 20B, 40ms up "
                  "to 150B, 80ms above)")->group(g);
  cmd->add_option("--slo-percentile", o.slo_percentile,
                  "With a load: the percentile of the simulated latencies the targets bind at: 50 | 90 (default) | 99 | mean")->group(g);
  cmd->add_option("--min-tokens-per-second-per-user", o.min_tokens_per_second_per_user, "Alternative to --max-tpot: 20 means 50ms")->group(g);
  cmd->add_option("--weights", o.weights, "Weight format: bf16 | fp8 | int8 | int4 | fp4 (default: the checkpoint's own, e.g. fp4 for gpt-oss; else bf16)")->group(g);
  cmd->add_option("--kv-cache", o.kv_cache, "KV-cache precision: auto | bf16 | fp8 (default auto: fp8 under TensorRT-LLM with fp8 or fp4 weights on an accelerator with fp8 math, as NVIDIA's Model Optimizer checkpoints hold it; else bf16)")->group(g);
  cmd->add_option("--mode", o.mode, "online (latency targets) | offline (throughput, no targets unless given)")->group(g);
  cmd->add_option("--engine", o.engine,
                  fmt::format("Serving engine: {} (default: vllm on GPUs, neuron on Inferentia/Trainium; profiles in data/engines.json); "
                              "vllm@RELEASE for an earlier vLLM, e.g. vllm@0.13 (before 0.14 its scheduling runs in series with the model)",
                              engine_names()))
      ->group(g);
}

void add_rl_options(CLI::App* cmd, RlOptions& o) {
  const char* g = "RL post-training (--task rl; with --prompt-tokens, --precision, --lora-rank)";
  cmd->add_option("--algorithm", o.algorithm, "grpo (default) | ppo (critic, reward model) | dpo (offline pairs, no generation)")->group(g);
  cmd->add_option("--prompts-per-step", o.prompts_per_step, "Prompts per step (DPO: preference pairs) (default 256)")->group(g);
  cmd->add_option("--samples-per-prompt", o.samples_per_prompt, "Responses generated per prompt, the group size (default 8)")->group(g);
  cmd->add_option("--response-tokens", o.response_tokens, "Response tokens, mean (default 1024)")->group(g);
  cmd->add_option("--response-tokens-max", o.response_tokens_max, "The longest response: it sets a synchronous step's generation time (default 2x the mean)")
      ->group(g);
  cmd->add_option("--steps", o.steps, "Optimizer steps (default 200)")->group(g);
  cmd->add_option("--prompts", o.prompts, "Instead of --steps: prompts in the dataset (with --epochs)")->group(g);
  cmd->add_option("--reward", o.reward, "rule (default: a verifier, no accelerator time) | model (with --reward-model)")->group(g);
  cmd->add_option("--reward-model", o.reward_model, "The reward model: a preset or a size (7B); it is scored every step")->group(g);
  cmd->add_option("--placement", o.placement,
                  "colocated (generation and training take turns on the same accelerators) | split (separate pools) (default: both tried)")
      ->group(g);
  cmd->add_flag("--async", o.async, "Split pools overlap: generation runs one step behind the update (off-policy by one step)")->group(g);
  cmd->add_option("--policy-update", o.policy_update, "full (default) | lora")->group(g);
  cmd->add_flag("--no-reference", o.no_reference, "No KL term, so no reference log-probabilities (DAPO, Dr. GRPO)")->group(g);
}

void add_overhead_options(CLI::App* cmd, OverheadOptions& o) {
  const char* g = "Job overheads (time before the first step and after the last; docs/methodology.md)";
  cmd->add_option("--provision-minutes", o.provision_minutes, "Request to booted instance (default 3, or 6 with 8+ accelerators)")->group(g);
  cmd->add_option("--image-gb", o.image_gb, "Container image pulled on every instance at 60 MB/s (default 18; 0 if baked in)")->group(g);
  cmd->add_option("--load-gb-per-s", o.load_gb_per_s, "Read bandwidth per instance for the weights (default: the checkpoint storage's)")->group(g);
  cmd->add_option("--neuron-compile-minutes", o.neuron_compile_minutes, "Trainium/Inferentia compilation (default 30, 75 above 20B; 0 if cached)")
      ->group(g);
  cmd->add_flag("--resume", o.resume, "Load a full checkpoint (weights and optimizer state) before the first step")->group(g);
  cmd->add_flag("--no-overheads", o.no_overheads, "Count the training steps only")->group(g);
}

void add_ranking_options(CLI::App* cmd, RankingOptions& o) {
  cmd->add_option("--sort-by", o.sort_by,
                  "recommended (default: the pick, then the options within --cost-slack by time, then by cost) | pareto | time | cost | cost-per-token")
      ->group("Ranking");
  cmd->add_option("--cost-slack", o.cost_slack, "The pick is the fastest option within this much of the cheapest cost that is faster than each cheaper one by as much as it costs more: 20% (default; 0 for --mode offline), 0.5")
      ->group("Ranking");
  cmd->add_option("--horizon", o.horizon,
                  "Longest run the pick may take: 90d (default), 180d; longer options are listed last, never picked (training, RL)")
      ->group("Ranking");
  cmd->add_option("--value-of-time", o.value_of_time,
                  "What an hour of the run's wait is worth, USD: 25 (default, a judgement: part of an engineer's hour), 0 to rank by money alone (training, RL)")
      ->group("Ranking");
  cmd->add_option("--max-cost-multiple", o.max_cost_multiple,
                  "The pick costs at most this many times the cheapest option within the horizon: 2 (default, a judgement: speed buys at most the "
                  "cheapest price again), 0 for no ceiling (training, RL; serving: the fastest alternative within it is named first)")
      ->group("Ranking");
  cmd->add_option("--top", o.top, "Rows to show (default 10; every row with --all-counts)")->group("Ranking");
  cmd->add_flag("--all-counts", o.all_counts, "Show every instance count (every tensor-parallel size for a service), not one row per type")
      ->group("Ranking");
  cmd->add_option("--max-instances", o.max_instances, "Largest instance count to consider (default 512); counts searched: 1, 2, 3, 4, 6, 8, 12, 16, 24, ... (powers of two and three times them), this one, the usual on-demand count and the count --quota-vcpus allows")->group("Constraints");
  cmd->add_option("--family", o.families, "Only these families: p5,p4d or repeated")->delimiter(',')->group("Constraints");
  cmd->add_option("--exclude", o.exclude, "Skip these instance types or families: g5,p4d.24xlarge or repeated")->delimiter(',')->group("Constraints");
  cmd->add_option("--region", o.region,
                  "Region for prices (default us-east-1); for a training job's recommend also any, or a list us-east-1,us-west-2: each region "
                  "ranked, the one whose pick weighs least (with moving the data in from --data-region) chosen")
      ->group("Constraints");
  cmd->add_option("--data-region", o.data_region,
                  "Where the dataset and the weights are stored (default: --region); another region adds moving them in to the bill (training)")
      ->group("Constraints");
  cmd->add_option("--pricing", o.pricing, "on-demand (default) | spot | savings-1y | savings-3y | best: the price used for ranking and any budget")
      ->group("Constraints");
  cmd->add_option("--deadline", o.deadline, "Longest acceptable run: 72h, 14d (training)")->group("Constraints");
  cmd->add_option("--budget", o.budget, "Largest acceptable cost in USD, to the cent as costs are printed: 50000, 12.5k (per month for a service)")->group("Constraints");
  cmd->add_option("--quota-vcpus", o.quota_vcpus,
                  "The account's on-demand vCPU quotas in the region: 384 for every family, or p=384,g=192,inf=96,trn=128 "
                  "(Service Quotas: Running On-Demand P / G and VT / Inf / Trn instances); options that need more on demand, "
                  "reserved or under a commitment are left out, naming the quota to raise (training and RL)")
      ->group("Constraints");
  const char* g = "Interruptions (spot reclaims, hardware failures) and checkpoints";
  cmd->add_option("--checkpoint-storage", o.checkpoint_storage, "auto (default: s3 on one instance, fsx-lustre on several) | s3 | fsx-lustre | efs | local-nvme")->group(g);
  cmd->add_option("--checkpoint-gb-per-s", o.checkpoint_gb_per_s, "Override the storage's write bandwidth for the whole job, GB/s")->group(g);
  cmd->add_option("--restart-minutes", o.restart_minutes, "Time to restart after an interruption (default 10)")->group(g);
  cmd->add_option("--chart", o.chart, "Also write an SVG chart of time against cost, the pick marked, to this file (name it .svg)")
      ->check(svg_file_name)
      ->group("Output");
}

// ---------------------------------------------------------------------------
// Builders

namespace {

ModelSpec preset_model(const std::string& name) {
  const ModelSpec* p = find_model_preset(name);
  if (p) return *p;
  std::vector<std::string> names;
  for (const auto& x : model_presets()) names.push_back(x.name);
  std::string near;
  for (const auto& n : nearest_names(name, names)) near += (near.empty() ? "" : ", ") + n;
  throw InputError(fmt::format("--model: unknown model '{}'; did you mean: {}? (`gpuadvisor models` lists them all)", name, near));
}

}  // namespace

ModelSpec build_model(const ModelOptions& o) {
  int sources = !o.params.empty() + !o.model.empty() + !o.model_config.empty();
  if (sources == 0) throw InputError("give the model: --params 13B, --model NAME (see `gpuadvisor models`) or --model-config config.json");
  if (sources > 1) throw InputError("give only one of --params, --model and --model-config");
  ModelSpec m;
  if (!o.model.empty()) {
    m = preset_model(o.model);
  } else if (!o.model_config.empty()) {
    std::vector<std::string> ws;
    m = model_from_hf_config(o.model_config, ws);
    for (const auto& w : ws) warn(w);
  } else {
    double params = parse_count(o.params, "--params");
    // As typed: 999999 rounded to 3 digits read "1e+06 is too small ... (at least 1M)" (a hostile review).
    if (params < 1e6) throw InputError(fmt::format("--params: {} is too small for a transformer (at least 1M)", shortened(o.params, 40)));
    if (params > kMaxParams) throw InputError(fmt::format("--params: {} exceeds the supported {:.0e}", shortened(o.params, 40), kMaxParams));
    m = model_from_param_count(params);
    // One layer over the nearest preset's vocabulary is the smallest shape: a
    // count far below it is priced at it, which the user should not miss.
    const bool overridden = o.layers || o.hidden || o.heads || o.kv_heads || o.vocab;
    if (!overridden && m.total_params() > 1.25 * params)
      warn(fmt::format("--params {}: the smallest shape built has {:.3g}M parameters ({:.3g}M of them the {}-token vocabulary's embeddings), "
                       "and is what is priced; --vocab and --hidden build a smaller one",
                       o.params, m.total_params() / 1e6, m.embedding_params() / 1e6, m.vocab));
  }
  ShapeOverrides ov{o.layers, o.hidden, o.heads, o.kv_heads, o.vocab};
  for (int v : {o.layers, o.hidden, o.heads, o.kv_heads, o.vocab})
    if (v < 0) throw InputError("shape overrides (--layers, --hidden, --heads, --kv-heads, --vocab) must be positive");
  apply_overrides(m, ov);
  return m;
}

namespace {
// A whole count with an optional suffix; for sequence lengths "k" is 1,024
// as context windows are named ("8k" is 8,192 tokens).
int parse_length(const std::string& text, const char* flag, bool binary_k) {
  const bool k = binary_k && !text.empty() && (text.back() == 'k' || text.back() == 'K');
  const double v = k ? parse_count(text.substr(0, text.size() - 1), flag) * 1024 : parse_whole_count(text, flag);
  if (v != std::floor(v)) throw InputError(fmt::format("{}: '{}' is not a whole number", flag, text));
  return static_cast<int>(std::min(v, double(1 << 30)));
}
}  // namespace

namespace {
// Profile names (engines, training stacks) are lower case; --engine VLLM is vllm.
// "; did you mean: vllm, tgi, hf?": the nearest of `names` to `given`, case
// aside, as --model lists them.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& names) {
  return fmt::format("; did you mean: {}?", fmt::join(nearest_names(given, names), ", "));
}

// What the user called the task, where the name is a common one for a task
// under another name; else the nearest names.
std::string task_hint(const std::string& given) {
  const std::string t = lower_case(given);
  if (t == "sft" || t == "fine-tune" || t == "fine-tuning" || t == "finetuning" || t == "full")
    return "; supervised fine-tuning (SFT) of every weight is --task finetune";
  if (t == "grpo" || t == "ppo" || t == "dpo" || t == "rlhf") return "; RL post-training is --task rl (--algorithm grpo, ppo or dpo)";
  if (t == "serve" || t == "serving") return "; serving is --task inference";
  return did_you_mean(given, {"pretrain", "finetune", "lora", "qlora", "inference", "rl"});
}

// A positive whole number for an int setting: one beyond int's range is
// refused here as typed (the setting's own range is checked with the workload).
int positive_int(const std::string& text, const char* flag) {
  const long long v = parse_positive_integer(text, flag);
  if (v > std::numeric_limits<int>::max()) throw InputError(fmt::format("{}: {} is too large", flag, v));
  return static_cast<int>(v);
}
}  // namespace

TrainingWorkload build_workload(const WorkloadOptions& o, const ModelSpec& m) {
  WorkloadRequest r;
  const std::string task_text = o.task.empty() ? "pretrain" : o.task;
  auto task = task_from_string(task_text);
  if (!task)
    throw InputError(fmt::format("--task: '{}' is not one of pretrain, finetune, lora, qlora, inference, rl{}", o.task,
                                 task_hint(o.task)));
  if (o.task.empty()) warn("no --task given: pre-training assumed (--task pretrain | finetune | lora | qlora | inference | rl)");
  r.task = *task;
  if (!o.tokens.empty()) {
    r.tokens = parse_whole_count(o.tokens, "--tokens");
    if (*r.tokens < kSuspiciousTokens)
      warn(fmt::format("--tokens {}: only {:g} tokens; did you mean {:g}M or {:g}B?", o.tokens, *r.tokens, *r.tokens, *r.tokens));
  }
  if (!o.epochs.empty()) r.epochs = parse_number(o.epochs, "--epochs", 1e-6, 1e6);
  if (!o.seq_len.empty()) r.seq_len = parse_length(o.seq_len, "--seq-len", true);
  if (!o.global_batch.empty()) r.global_batch = parse_length(o.global_batch, "--global-batch", false);
  auto p = precision_from_string(o.precision.empty() ? "bf16" : o.precision);
  if (!p || (*p != Precision::bf16 && *p != Precision::fp8 && *p != Precision::fp4 && *p != Precision::fp16))
    throw InputError(fmt::format("--precision: '{}' is not one of bf16, fp16, fp8, fp4", o.precision));
  r.precision = *p;
  r.lora_rank = o.lora_rank;
  auto t = lora_targets_from_string(o.lora_targets);
  if (!t) throw InputError(fmt::format("--lora-targets: '{}' is not one of attention, attention+mlp", o.lora_targets));
  r.lora_targets = *t;
  r.flash_attention = !o.no_flash_attention;
  if (!o.framework.empty()) {
    r.framework = find_framework(lower_case(o.framework));
    if (!r.framework)
      throw InputError(fmt::format("--framework: '{}' is not one of {}{}", o.framework, framework_names(), did_you_mean(o.framework, names_of(framework_profiles()))));
  }
  TrainingWorkload w = make_workload(r, m);
  const bool tokens_warned = r.tokens && *r.tokens < kSuspiciousTokens;  // that warning already covers it
  if (!tokens_warned && w.tokens_per_step() > w.total_tokens())
    warn(fmt::format("one step (global batch {} x sequence {} = {:.3g} tokens) is more than the {:.3g} tokens to train on: the job runs 1 step, "
                     "{:.2g}x the data; lower --global-batch or --seq-len, or raise --tokens",
                     w.global_batch, w.seq_len, w.tokens_per_step(), w.total_tokens(), w.tokens_per_step() / w.total_tokens()));
  if (!r.framework)
    w.assumptions.push_back("trained with megatron (Megatron-Core/NeMo) on GPUs and neuron (NxD Training) on Trainium (default; --framework to choose)");
  if (o.precision.empty()) w.assumptions.push_back("precision bf16 (default; --precision fp8 on H100 and newer, fp4 on Blackwell)");
  // The time is predicted; whether 4-bit training converges is not (docs/methodology.md §Precision).
  if (w.precision == Precision::fp4)
    warn("--precision fp4: training in 4 bits (NVFP4) is recent; NVIDIA's published recipe (arXiv:2509.25149, a 12B model on 10T tokens "
         "matching FP8) needs Random Hadamard transforms, stochastic rounding and some layers kept in higher precision. The time and cost are "
         "predicted; whether this model and data converge in fp4 is not: check on a short run, or plan in fp8");
  return w;
}

namespace {
// "80%" or "0.8".
double parse_fraction(const std::string& text, const char* flag, double lo, double hi) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  const double v = parse_number(t, flag, percent ? lo * 100 : lo, percent ? hi * 100 : hi);
  return percent ? v / 100 : v;
}
}  // namespace

namespace {
// A model named by --reward-model or --verifier-model: a preset, or a size with the nearest preset's shape.
ModelSpec named_model(const std::string& text, const char* flag) {
  if (find_model_preset(text)) return *find_model_preset(text);
  if (!text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.')) {
    const double params = parse_count(text, flag);
    if (params < 1e6 || params > kMaxParams) throw InputError(fmt::format("{}: {:.3g} parameters is outside [1M, {:.0e}]", flag, params, kMaxParams));
    return model_from_param_count(params);
  }
  try {
    return preset_model(text);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()).replace(0, 7, flag));  // "--model: ..." names the flag given
  }
}

// --slo-percentile: 50, 90, 99 (p90 too), or mean (0).
int slo_percentile_from_string(const std::string& text) {
  const std::string v = lower_case(text);
  if (v == "mean") return 0;
  for (int p : {50, 90, 99})
    if (v == std::to_string(p) || v == fmt::format("p{}", p)) return p;
  throw InputError(fmt::format("--slo-percentile: '{}' is not one of 50, 90, 99, mean", text.substr(0, 40)));
}

}  // namespace

void refuse_clients_for_sizing(const InferenceOptions& o, const std::string& command) {
  if (o.clients.empty()) return;
  throw InputError(fmt::format("--clients: a closed loop of clients is a benchmark of one replica (`estimate --task inference --clients N`); {} sizes "
                               "a service from the load it is offered: give --requests-per-second (or --tokens-per-day, --trace), with "
                               "--arrival gamma:CV for bursts",
                               command));
}

void refuse_unused_slo_percentile(const InferenceOptions& o, const InferenceWorkload& w, const std::string& command) {
  if (o.slo_percentile.empty() || w.sizes_replicas_by_simulation()) return;
  throw InputError(fmt::format("--slo-percentile binds the targets at a percentile of the simulated latencies, and {} sizes an offline "
                               "service by its analytic means (--mode offline is not simulated): leave --slo-percentile out, or serve "
                               "online",
                               command));
}

void limit_sizing_simulations(const InferenceOptions& o, const std::string& command) {
  if (o.simulated_requests.empty()) return;
  const int n = positive_int(o.simulated_requests, "--simulated-requests");
  if (n > kMostSizingSimulatedRequests)
    throw InputError(fmt::format("--simulated-requests {}: {} simulates every candidate layout at several replica counts, so it takes at "
                                 "most {}; `estimate --task inference` simulates one replica with up to 1000000",
                                 n, command, kMostSizingSimulatedRequests));
}

// The size from which a bf16 service is said to have an fp8 option (a judgement: 70B-class models and larger are
// mostly deployed in fp8 on Hopper and newer; smaller ones often in bf16).
constexpr double kFp8HintParams = 60e9;

InferenceWorkload build_inference_workload(const InferenceOptions& o, const ModelSpec& m) {
  InferenceRequest r;
  auto count = [](const std::string& v, const char* flag) { return v.empty() ? std::optional<double>() : std::optional<double>(parse_count(v, flag)); };
  auto whole = [](const std::string& v, const char* flag) { return v.empty() ? std::optional<double>() : std::optional<double>(parse_whole_count(v, flag)); };
  r.prompt_tokens = whole(o.prompt_tokens, "--prompt-tokens");
  r.prompt_tokens_p95 = whole(o.prompt_tokens_p95, "--prompt-tokens-p95");
  r.output_tokens = whole(o.output_tokens, "--output-tokens");
  r.output_tokens_p95 = whole(o.output_tokens_p95, "--output-tokens-p95");
  if (!o.reasoning_tokens.empty() && o.reasoning_tokens != "0") {
    r.reasoning_tokens = parse_whole_count(o.reasoning_tokens, "--reasoning-tokens");
    check_range(r.reasoning_tokens, "--reasoning-tokens", 0, 1e7);
  }
  if (!o.samples.empty()) r.samples = positive_int(o.samples, "--samples");
  if (!o.requests_per_second.empty()) r.requests_per_second = parse_number(o.requests_per_second, "--requests-per-second", kLeastRequestsPerSecond, kMostRequestsPerSecond);
  r.output_tokens_per_day = count(o.tokens_per_day, "--tokens-per-day");
  if (!o.clients.empty()) r.clients = positive_int(o.clients, "--clients");
  if (!o.arrival.empty()) {
    r.arrival_cv = arrival_cv_from_string(o.arrival);
    if (!r.arrival_cv) throw InputError(fmt::format("--arrival: '{}' is not poisson or gamma:CV with CV a positive number (gamma:2)", o.arrival));
  }
  if (!o.length_spread.empty()) r.length_spread = parse_fraction(o.length_spread, "--length-spread", 0, 0.99);
  if (!o.simulated_requests.empty())
    r.simulated_requests = positive_int(o.simulated_requests, "--simulated-requests");
  if (!o.target_utilisation.empty()) r.target_utilisation = parse_fraction(o.target_utilisation, "--target-utilisation", 0.05, 1);
  if (!o.prefix_share.empty()) r.prefix_share = parse_fraction(o.prefix_share, "--prefix-share", 0, 0.99);
  if (!o.speculative.empty()) r.speculative = parse_speculative(o.speculative, "--speculative");
  if (!o.trace.empty()) r.trace = std::make_shared<const RequestTrace>(parse_request_trace(read_input_file(o.trace, "--trace"), o.trace));
  if (!o.concurrency.empty()) r.concurrency = positive_int(o.concurrency, "--concurrency");
  if (!o.compiled_batch.empty())
    r.compiled_batch = positive_int(o.compiled_batch, "--compiled-batch");
  if (!o.scheduler_recv_interval.empty())
    r.scheduler_recv_interval = positive_int(o.scheduler_recv_interval, "--scheduler-recv-interval");
  if (!o.max_waiting_tokens.empty()) r.max_waiting_tokens = positive_int(o.max_waiting_tokens, "--max-waiting-tokens");
  if (!o.max_batched_tokens.empty()) {
    // A token count as the other token flags read it (8k, 32768), whole and in the engines' range.
    const double tokens = parse_count(o.max_batched_tokens, "--max-batched-tokens");
    if (tokens != std::floor(tokens) || tokens < kFewestBatchedTokens || tokens > kMostBatchedTokens)
      throw InputError(fmt::format("--max-batched-tokens: '{}' is not a whole number of tokens in [{}, {}]", o.max_batched_tokens.substr(0, 40),
                                   kFewestBatchedTokens, kMostBatchedTokens));
    r.max_batched_tokens = static_cast<int>(tokens);
  }
  if (!o.attention_dp_balance.empty())
    r.attention_dp_balance_iters = positive_int(o.attention_dp_balance, "--attention-dp-balance");
  if (!o.max_ttft.empty()) r.max_ttft_s = parse_latency_s(o.max_ttft, "--max-ttft");
  if (!o.max_tpot.empty()) r.max_tpot_s = parse_latency_s(o.max_tpot, "--max-tpot");
  if (!o.slo_percentile.empty()) r.slo_percentile = slo_percentile_from_string(o.slo_percentile);
  r.model_active_params = m.active_params();
  r.model_reasons = m.reasoning;
  r.model_name = m.name;
  r.reasoning_tokens_given = !o.reasoning_tokens.empty();
  if (!o.min_tokens_per_second_per_user.empty())
    r.min_tokens_per_second_per_user = parse_number(o.min_tokens_per_second_per_user, "--min-tokens-per-second-per-user", 1e-6, 1e7);
  const std::string weights = !o.weights.empty() ? o.weights : !m.native_weights.empty() ? m.native_weights : "bf16";
  auto wf = weight_format_from_string(weights);
  if (!wf) throw InputError(fmt::format("--weights: '{}' is not one of bf16, fp8, int8, int4, fp4", weights));
  r.weights = *wf;
  if (o.kv_cache == "bf16" || o.kv_cache == "fp16") r.kv_cache = Precision::bf16;
  else if (o.kv_cache == "fp8") r.kv_cache = Precision::fp8;
  else if (o.kv_cache != "auto") throw InputError(fmt::format("--kv-cache: '{}' is not one of auto, bf16, fp8", o.kv_cache));
  auto mode = serving_mode_from_string(o.mode);
  if (!mode) throw InputError(fmt::format("--mode: '{}' is not one of online, offline", o.mode));
  r.mode = *mode;
  if (!o.verifier_model.empty()) {
    if (r.samples < 2) throw InputError("--verifier-model picks the best of several samples: give --samples N (N >= 2)");
    r.verifier = named_model(o.verifier_model, "--verifier-model");
  }
  if (!o.engine.empty()) {
    const std::string text = lower_case(o.engine);
    const std::size_t at = text.find('@');
    const std::string name = text.substr(0, at);
    r.engine = find_engine(name);
    if (!r.engine) throw InputError(fmt::format("--engine: '{}' is not one of {}{}", o.engine, engine_names(), did_you_mean(name, names_of(engine_profiles()))));
    if (at != std::string::npos) r.engine = &engine_release(*r.engine, text.substr(at + 1), fmt::format("--engine {}", shortened(o.engine, 60)));
  }
  InferenceWorkload w = make_inference_workload(r);
  // Attention data parallelism is an MoE serving layout (docs/methodology.md §MoE serving layouts): a dense model has no ranks to balance.
  if (w.attention_dp_balance_iters && !m.is_moe())
    throw InputError(fmt::format("--attention-dp-balance: {} is dense, and attention data-parallel layouts are searched for MoE models only: "
                                 "there are no ranks to balance",
                                 m.name));
  // A trace's request longer than the model's context is one the engine rejects: the trace is refused, naming how many.
  if (m.context_length > 0 && w.trace) {
    const auto longer = std::count_if(w.trace->requests.begin(), w.trace->requests.end(), [&](const TraceRequest& q) {
      return q.prompt_tokens + q.output_tokens + w.reasoning_tokens > m.context_length;
    });
    if (longer > 0)
      throw InputError(fmt::format("--trace {}: {} of its {} requests are longer than {}'s context length of {} tokens (prompt + output{}), and "
                                   "the engine rejects them; a model with a longer context, or the trace without them",
                                   w.trace->name, longer, w.trace->requests.size(), m.name, m.context_length,
                                   w.reasoning_tokens > 0 ? " + reasoning" : ""));
  }
  // A mean request longer than the model's context is one no engine serves (vLLM rejects it at admission): refused, never priced.
  const double request_tokens = w.prompt_tokens + w.generated_tokens_per_sequence();
  if (m.context_length > 0 && request_tokens > m.context_length)
    throw InputError(fmt::format("a request of {:.0f} prompt + {:.0f} generated tokens is longer than {}'s context length of {} tokens, so no engine "
                                 "would serve it: shorter --prompt-tokens, --output-tokens{}",
                                 w.prompt_tokens, w.generated_tokens_per_sequence(), m.name, m.context_length,
                                 w.reasoning_tokens > 0 ? " or --reasoning-tokens" : ""));
  // Nor lengths whose p95 request is (5% or more of the requests rejected).
  const double p95_tokens = std::max(w.prompt_tokens_p95 + w.generated_tokens_per_sequence(),
                                     w.prompt_tokens + w.output_tokens_p95 + w.reasoning_tokens);
  if (m.context_length > 0 && !w.trace && p95_tokens > m.context_length)
    throw InputError(fmt::format("a p95 request of {:.0f} tokens is longer than {}'s context length of {} tokens: at least 5% of requests would be "
                                 "rejected by the engine; lower --prompt-tokens-p95 or --output-tokens-p95",
                                 p95_tokens, m.name, m.context_length));
  if (!r.engine)
    w.assumptions.push_back(fmt::format("served with {} on GPUs and {} on Inferentia/Trainium (default; --engine to choose)", kDefaultCudaEngine,
                                        kDefaultNeuronEngine));
  else if (r.engine->earlier_release)  // every output says which
    w.assumptions.push_back(fmt::format("served with {} as an earlier release runs it: {} (--engine {})", r.engine->name, r.engine->title, o.engine));
  else if (o.engine.find('@') != std::string::npos)  // a release at or after the current profile's: said, as the earlier ones are
    w.assumptions.push_back(fmt::format("served with {} at the current profile's figures: {} (--engine {}; every release from the "
                                        "newest profiled on, later ones included, runs these)",
                                        r.engine->name, r.engine->title, shortened(o.engine, 60)));
  if (o.weights.empty() && !m.native_weights.empty())
    w.assumptions.push_back(fmt::format("weights in {}, the checkpoint's own format (--weights bf16 to serve it in 16-bit)", m.native_weights));
  else if (o.weights.empty() && m.total_params() >= kFp8HintParams)  // a blind trial served a 235B MoE in bf16 at twice the price
    w.assumptions.push_back(fmt::format("weights in bf16 (default): --weights fp8 halves their memory and each decode step's weight reads on "
                                        "GPUs with fp8 math (L4, L40S, H100 and newer), which is how a model of {} parameters is usually served{}",
                                        human_params(m.total_params()),
                                        m.fp8_instruct_id.empty() ? std::string() : fmt::format(" (its publisher's fp8 checkpoint: {})", m.fp8_instruct_id)));
  return w;
}


RlWorkload build_rl_workload(const RlOptions& o, const WorkloadOptions& wo, const InferenceOptions& io, const ModelSpec& policy) {
  RlRequest r;
  auto algorithm = rl_algorithm_from_string(o.algorithm);
  if (!algorithm) throw InputError(fmt::format("--algorithm: '{}' is not one of grpo, ppo, dpo", o.algorithm));
  r.algorithm = *algorithm;
  auto whole = [](const std::string& v, const char* flag) {
    return v.empty() ? std::optional<int>() : std::optional<int>(static_cast<int>(std::min<long long>(parse_positive_integer(v, flag), 1 << 30)));
  };
  auto count = [](const std::string& v, const char* flag) { return v.empty() ? std::optional<double>() : std::optional<double>(parse_whole_count(v, flag)); };
  r.prompts_per_step = whole(o.prompts_per_step, "--prompts-per-step");
  r.samples_per_prompt = whole(o.samples_per_prompt, "--samples-per-prompt");
  r.prompt_tokens = count(io.prompt_tokens, "--prompt-tokens");
  r.response_tokens = count(o.response_tokens, "--response-tokens");
  r.response_tokens_max = count(o.response_tokens_max, "--response-tokens-max");
  r.steps = count(o.steps, "--steps");
  r.prompts = count(o.prompts, "--prompts");
  if (!wo.epochs.empty()) r.epochs = parse_number(wo.epochs, "--epochs", 1e-6, 1e6);
  if (!o.reward.empty() && o.reward != "rule" && o.reward != "model")
    throw InputError(fmt::format("--reward: '{}' is not one of rule, model", o.reward));
  if (o.reward == "model" && o.reward_model.empty()) throw InputError("--reward model needs --reward-model: a preset (`gpuadvisor models`) or a size such as 7B");
  if (o.reward == "rule" && !o.reward_model.empty())
    throw InputError("--reward-model with --reward rule: a rule-based reward runs no model; give --reward model, or leave --reward-model out");
  if (!o.reward_model.empty()) r.reward_model = named_model(o.reward_model, "--reward-model");
  if (!o.placement.empty()) {
    auto p = rl_placement_from_string(o.placement);
    if (!p) throw InputError(fmt::format("--placement: '{}' is not one of colocated, split", o.placement));
    r.placement = *p;
  }
  r.async = o.async;
  r.no_reference = o.no_reference;
  if (o.policy_update != "full" && o.policy_update != "lora")
    throw InputError(fmt::format("--policy-update: '{}' is not one of full, lora", o.policy_update));
  r.lora = o.policy_update == "lora";
  if (wo.lora_rank < 1 || wo.lora_rank > 65536) throw InputError("--lora-rank: must be in [1, 65536]");
  r.lora_rank = wo.lora_rank;
  auto t = lora_targets_from_string(wo.lora_targets);
  if (!t) throw InputError(fmt::format("--lora-targets: '{}' is not one of attention, attention+mlp", wo.lora_targets));
  r.lora_targets = *t;
  auto p = precision_from_string(wo.precision.empty() ? "bf16" : wo.precision);
  if (!p || (*p != Precision::bf16 && *p != Precision::fp8 && *p != Precision::fp16))
    throw InputError(fmt::format("--precision: '{}' is not one of bf16, fp16, fp8 for --task rl", wo.precision));
  r.precision = *p;
  RlWorkload w = make_rl_workload(r, policy);
  // A rollout longer than the policy's context is one the engine that
  // generates it rejects (vLLM's max_model_len), as a served request is.
  if (const double longest = w.prompt_tokens + w.response_tokens_max; policy.context_length > 0 && longest > policy.context_length)
    throw InputError(fmt::format("a rollout of {:.0f} prompt + {:.0f} response tokens (the longest, --response-tokens-max) is longer than {}'s "
                                 "context length of {} tokens, so no engine would generate it: shorter --prompt-tokens, --response-tokens or "
                                 "--response-tokens-max",
                                 w.prompt_tokens, w.response_tokens_max, policy.name, policy.context_length));
  return w;
}

OverheadSettings build_overheads(const OverheadOptions& o) {
  // The steps alone leave no overhead to set: a flag that sets one would be ignored.
  if (o.no_overheads) {
    std::vector<std::string> ignored;
    if (!o.provision_minutes.empty()) ignored.push_back("--provision-minutes");
    if (!o.image_gb.empty()) ignored.push_back("--image-gb");
    if (!o.load_gb_per_s.empty()) ignored.push_back("--load-gb-per-s");
    if (!o.neuron_compile_minutes.empty()) ignored.push_back("--neuron-compile-minutes");
    if (o.resume) ignored.push_back("--resume");
    if (!ignored.empty())
      throw InputError(fmt::format("--no-overheads counts the training steps only, so {} would be ignored: give one or the other",
                                   fmt::join(ignored, ", ")));
  }
  OverheadSettings s;
  s.enabled = !o.no_overheads;
  s.resume = o.resume;
  if (!o.provision_minutes.empty()) s.provision_s = parse_number(o.provision_minutes, "--provision-minutes", 0, 1e5) * 60;
  if (!o.image_gb.empty()) s.image_gb = parse_number(o.image_gb, "--image-gb", 0, 1e4);
  if (!o.load_gb_per_s.empty()) s.load_gb_per_s = parse_number(o.load_gb_per_s, "--load-gb-per-s", 1e-3, 1e4);
  if (!o.neuron_compile_minutes.empty()) s.neuron_compile_s = parse_number(o.neuron_compile_minutes, "--neuron-compile-minutes", 0, 1e5) * 60;
  return s;
}

namespace {

void apply_storage_options(const RankingOptions& o, RecommendRequest& r) {
  r.overheads.storage = parse_storage(o.checkpoint_storage);
  if (!o.checkpoint_gb_per_s.empty()) r.overheads.checkpoint_write_gb_per_s = parse_number(o.checkpoint_gb_per_s, "--checkpoint-gb-per-s", 1e-3, 1e6);
  if (!o.restart_minutes.empty()) r.restart_s = parse_number(o.restart_minutes, "--restart-minutes", 0, 1e5) * 60;
}

}  // namespace

std::string commitment_rates_note(const Catalog& catalog, const std::string& region, std::string_view columns) {
  for (const Instance& i : catalog.instances)
    if (const RegionPrices* rp = i.prices_in(region); rp && !rp->commitments.empty()) return "";
  return fmt::format(" The catalog has no Savings Plan or Reserved Instance rate in {}, so {} are unknown: `gpuadvisor prices fetch` "
                     "(AWS's public price files, no credentials) or `gpuadvisor prices import --offer-file ... --savings-plans-file ...` adds them.",
                     region, columns);
}

namespace {

// A pricing model with no data in the region: every cost under it would be unknown.
void warn_if_pricing_empty(const Catalog& catalog, const RecommendRequest& r) {
  if (r.pricing == Pricing::on_demand || r.pricing == Pricing::best) return;
  for (const Instance& i : catalog.instances)
    if (!excluded(i, r) && hourly_rate(i, r.region, r.pricing)) return;
  const bool commitment = r.pricing == Pricing::savings_1y || r.pricing == Pricing::savings_3y;
  warn(fmt::format("--pricing {}: the catalog has no {} price in {}, so every cost under it is unknown{}", to_string(r.pricing),
                   commitment ? "commitment" : "spot", r.region,
                   commitment ? "; import them with `gpuadvisor prices import --offer-file ... --savings-plans-file ...`" : ""));
}

}  // namespace

namespace {

// "384" (every family) or "p=384,g=192": vCPUs per on-demand quota (VcpuQuota keys).
std::map<std::string, int> parse_quota_vcpus(const std::string& text) {
  std::map<std::string, int> out;
  std::vector<std::string> parts;
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  for (const auto& part : parts) {
    const auto eq = part.find('=');
    const std::string key = eq == std::string::npos ? "all" : part.substr(0, eq);
    const std::string value = eq == std::string::npos ? part : part.substr(eq + 1);
    if (key != "all" && key != "p" && key != "g" && key != "inf" && key != "trn")
      throw InputError(fmt::format("--quota-vcpus: '{}' is not one of p, g, inf, trn (the EC2 on-demand quotas of accelerator families)", key));
    char* end = nullptr;
    const long v = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || v < 0 || v > 10'000'000)
      throw InputError(fmt::format("--quota-vcpus: '{}' is not a whole number of vCPUs in [0, 10000000]", value));
    if (!out.emplace(key, static_cast<int>(v)).second) throw InputError(fmt::format("--quota-vcpus: '{}' given twice", key));
  }
  if (out.empty()) throw InputError("--quota-vcpus: empty value");
  return out;
}

}  // namespace

void refuse_empty_item(std::string_view flag, std::string_view list) {
  if (!list.empty() && (list.front() == ',' || list.back() == ',' || list.find(",,") != std::string_view::npos))
    throw InputError(fmt::format("{}: empty item in '{}' (give names separated by single commas, e.g. {} a,b)", flag, list, flag));
}

namespace {
// "a,b,c" -> a, b, c (empty items dropped: callers refuse them first).
std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}
}  // namespace

void check_priced_region(const Catalog& catalog, const std::string& region) {
  const auto known = priced_regions(catalog);
  if (std::find(known.begin(), known.end(), region) == known.end())
    throw InputError(fmt::format("--region: '{}' has no prices in this catalog (it prices {}; `gpuadvisor prices` imports or fetches a "
                                 "region's)", region, fmt::join(known, ", ")));
}

void refuse_region_list(const RecommendRequest& r, std::string_view what) {
  if (r.regions.size() > 1)
    throw InputError(fmt::format("--region: any or a list ranks a training job in `recommend`; {} prices one region (--region {})", what, r.region));
}

RecommendRequest build_request(const RankingOptions& o, const OverheadOptions& oo, const Catalog& catalog) {
  RecommendRequest r;
  r.region = o.region;
  if (o.region == "any" || o.region.find(',') != std::string::npos) {
    const std::vector<std::string> known = priced_regions(catalog);
    if (o.region == "any") {
      r.regions = known;
    } else {
      refuse_empty_item("--region", o.region);
      for (const auto& name : comma_items(o.region)) {
        if (std::find(known.begin(), known.end(), name) == known.end())
          throw InputError(fmt::format("--region: '{}' has no prices in this catalog (it prices {}; any for all)", name, fmt::join(known, ", ")));
        if (std::find(r.regions.begin(), r.regions.end(), name) != r.regions.end())
          throw InputError(fmt::format("--region: '{}' given twice", name));
        r.regions.push_back(name);
      }
    }
    r.region = r.regions.front();
  } else {
    check_priced_region(catalog, o.region);
  }
  if (!o.data_region.empty()) {
    static const std::regex kRegionName("[a-z]{2}(-[a-z]+)+-[0-9]{1,2}");  // us-west-2, ap-southeast-1, us-gov-west-1
    if (o.data_region.size() > 32 || !std::regex_match(o.data_region, kRegionName))
      throw InputError(fmt::format("--data-region: '{}' is not a region name such as us-west-2", o.data_region));
    r.data_region = o.data_region;
  }
  auto pricing = pricing_from_string(o.pricing);
  if (!pricing) throw InputError(fmt::format("--pricing: '{}' is not one of on-demand, spot, savings-1y, savings-3y, best", o.pricing));
  r.pricing = *pricing;
  if (!o.sort_by.empty()) {
    auto sort = sort_by_from_string(o.sort_by);
    if (!sort) throw InputError(fmt::format("--sort-by: '{}' is not one of recommended, pareto, time, cost, cost-per-token", o.sort_by));
    r.sort_by = *sort;
  }
  if (!o.cost_slack.empty()) {
    // A bare number is a fraction (0.2 is 20%); above 1 it is more likely meant as percent: said, as --discount says it.
    const std::string& t = o.cost_slack;
    if (!t.empty() && t.back() != '%') {
      const double bare = parse_number(t, "--cost-slack", 0, 1e6);
      if (bare > 1)
        throw InputError(fmt::format("--cost-slack: '{0}' is read as a fraction of the cheapest price (0.2 is 20%), and {0} would be {1:g}%; "
                                     "write {0}% for {0} percent",
                                     shortened(t, 20), bare * 100));
    }
    r.cost_slack = parse_fraction(o.cost_slack, "--cost-slack", 0, 10);
  }
  r.cost_slack_given = !o.cost_slack.empty();
  if (!o.horizon.empty()) r.horizon_hours = parse_duration_hours(o.horizon, "--horizon");
  if (!o.value_of_time.empty()) {
    const bool zero = o.value_of_time.find_first_not_of("$0.") == std::string::npos && o.value_of_time.find('0') != std::string::npos;
    r.value_of_time_usd_per_hour = zero ? 0 : parse_usd(o.value_of_time, "--value-of-time");  // 0: by money alone
  }
  r.value_of_time_given = !o.value_of_time.empty();
  if (!o.max_cost_multiple.empty()) {
    r.max_cost_multiple = parse_number(o.max_cost_multiple, "--max-cost-multiple", 0, 1000);
    if (r.max_cost_multiple != 0 && !(r.max_cost_multiple >= 1 && r.max_cost_multiple <= 1000))
      throw InputError(fmt::format("--max-cost-multiple: '{}' must be 0 (no ceiling) or in [1, 1000]", o.max_cost_multiple));
  }
  constexpr int kEveryRow = 100000;  // --all-counts without --top: every row (more than a search yields)
  if (o.top && *o.top < 1) throw InputError("--top: must be at least 1");
  if (o.max_instances < 1 || o.max_instances > 4096) throw InputError("--max-instances: must be in [1, 4096]");
  r.top = o.top ? *o.top : o.all_counts ? kEveryRow : 10;
  r.max_instances = o.max_instances;
  r.all_counts = o.all_counts;
  r.families = o.families;
  r.exclude = o.exclude;
  check_families(catalog, o.families);
  for (const auto& x : o.exclude)
    if (std::none_of(catalog.instances.begin(), catalog.instances.end(), [&](const Instance& i) { return i.name == x || i.family == x; }))
      throw InputError(fmt::format("--exclude: '{}' is neither an instance type nor a family in the catalog", x));
  if (!o.deadline.empty()) r.deadline_hours = parse_duration_hours(o.deadline, "--deadline");
  if (!o.budget.empty()) r.budget_usd = parse_usd(o.budget, "--budget");
  if (!o.quota_vcpus.empty()) r.quota_vcpus = parse_quota_vcpus(o.quota_vcpus);
  const bool neuron_ranked = o.families.empty() || std::any_of(catalog.instances.begin(), catalog.instances.end(), [&](const Instance& i) {
    return std::find(o.families.begin(), o.families.end(), i.family) != o.families.end() && catalog.accelerator_of(i).software == "neuron";
  });
  if (!oo.neuron_compile_minutes.empty() && !neuron_ranked)
    throw InputError(fmt::format("--neuron-compile-minutes applies to Inferentia and Trainium; --family {} holds none", fmt::join(o.families, ",")));
  r.overheads = build_overheads(oo);
  apply_storage_options(o, r);
  warn_if_pricing_empty(catalog, r);
  return r;
}

void check_families(const Catalog& catalog, const std::vector<std::string>& families) {
  std::vector<std::string> known;
  for (const auto& i : catalog.instances)
    if (std::find(known.begin(), known.end(), i.family) == known.end()) known.push_back(i.family);
  for (const auto& f : families)
    if (std::find(known.begin(), known.end(), f) == known.end())
      throw InputError(fmt::format("--family: no instance family '{}' in the catalog (it has: {})", f, fmt::join(known, ", ")));
}

const Instance& instance_named(const Catalog& catalog, const std::string& name, const char* flag) {
  if (const Instance* i = catalog.find_instance(name)) return *i;
  throw InputError(fmt::format("{}: unknown instance '{}'; did you mean: {}?", flag, name, fmt::join(catalog.nearest_instance_names(name), ", ")));
}

CheckpointStorage parse_storage(const std::string& text) {
  auto s = checkpoint_storage_from_string(text);
  if (!s) throw InputError(fmt::format("--checkpoint-storage: '{}' is not one of auto, s3, fsx-lustre, efs, local-nvme", text));
  return *s;
}

std::ostream& explain_stream(Format f) { return f == Format::table ? std::cout : std::cerr; }

std::string notes_list(const std::vector<std::string>& notes, bool wide) {
  std::string out = notes.empty() ? "" : "\nNotes:\n";
  const size_t limit = wide ? notes.size() : 6;
  for (size_t i = 0; i < notes.size() && i < limit; ++i) out += "  " + notes[i] + "\n";
  if (notes.size() > limit) out += fmt::format("  ... {} more (--wide or --format json for all)\n", notes.size() - limit);
  return out;
}

void print_before_refusal(const std::function<Table()>& table, const Catalog& c, std::string_view command, const GlobalOptions& g,
                          const std::vector<Rejection>* rejections) {
  const Format format = parse_format(g);
  if (format == Format::csv) print_table(table(), c, command, "options", g);
  if (rejections && format != Format::json) std::cerr << render_rejections_text(*rejections, 100);
}

void throw_no_price(const RecommendRequest& r, const std::vector<std::string>& options, const std::string& fastest) {
  const bool commitment = r.pricing == Pricing::savings_1y || r.pricing == Pricing::savings_3y;
  if (!options.empty() && r.pricing == Pricing::on_demand)
    throw NothingFitsError(fmt::format("only {} can run it under these constraints, and {} no known on-demand price in {}, so there is "
                                       "no pick{}; relax the constraints ({}) or add a price with --catalog-add (docs/catalog.md; "
                                       "a Capacity Block rate for types sold that way)",
                                       fmt::join(options, ", "), options.size() > 1 ? "they have" : "it has", r.region,
                                       fastest.empty() ? "" : fmt::format(" (the fastest, unpriced: {})", fastest),
                                       fastest.empty() ? "e.g. --family, or a service's latency targets" : "e.g. --family"));
  throw NothingFitsError(fmt::format("no option has a known {} price in {}, so there is no pick{}", to_string(r.pricing), r.region,
                                     commitment ? "; import commitment prices with `gpuadvisor prices import`, or use --pricing on-demand"
                                                : "; try --pricing on-demand or another --region"));
}

void throw_no_pick(const Recommendation& result, const RecommendRequest& r, const std::string& fastest) {
  // Under --pricing spot, options above the usual spot count are listed unpriced: say so, or more instances reads as the way out.
  const bool spot_capped = r.pricing == Pricing::spot &&
                           std::any_of(result.rows.begin(), result.rows.end(), [](const RecommendRow& x) { return !x.spot_offered; });
  const std::string spot_note = spot_capped ? "; spot is not offered above the count one usually holds at once (about 2 of a P-family "
                                              "type), so --pricing on-demand or best ranks the larger options at the Capacity Block "
                                              "that holds them"
                                            : "";
  if (const auto& f = result.fastest_beyond_horizon) {  // set by the search only when no priced option is within the horizon
    // Only the hints that would change the answer: a horizon --horizon takes, more instances where the fastest is at the cap.
    const double days = std::ceil(f->estimate.total_hours / 24);
    std::vector<std::string> hints;
    if (days * 24 <= kLongestDurationHours) hints.push_back(fmt::format("--horizon {:.0f}d accepts it", days));
    if (f->count >= r.max_instances) hints.push_back("give more --max-instances");
    hints.push_back("fewer --tokens or a smaller model");
    throw NothingFitsError(fmt::format("no priced option finishes within the {} horizon (--horizon); the fastest is {} x {}, {}, ${} {} ({}): "
                                       "{}{}",
                                       format_duration(r.horizon_hours), f->count, f->instance->name, format_duration(f->estimate.total_hours),
                                       format_thousands(*f->ranked_cost_usd, 0), f->ranked_pricing, f->capacity.column(),
                                       fmt::join(hints, "; "), spot_note),
                           rejections_json(result.rejections));
  }
  if (spot_capped && std::none_of(result.rows.begin(), result.rows.end(), [](const RecommendRow& x) { return x.ranked_cost_usd.has_value(); }))
    throw NothingFitsError(fmt::format("no option has a known spot price in {} at a count spot offers{}", r.region, spot_note),
                           rejections_json(result.rejections));
  throw_no_price(r, row_instances(result.rows), fastest);
}

std::string nothing_fits_hint(Task task, const std::vector<Rejection>& rejections) {
  const std::string shape = std::any_of(rejections.begin(), rejections.end(), [](const Rejection& x) { return x.shape_does_not_divide; })
                                ? "some types hold it in memory, but no layout divides its heads, layers and global batch: set --heads, "
                                  "--layers or --global-batch; else "
                                : "";
  if (task == Task::lora || task == Task::finetune)
    return fmt::format("{}try --task {}, a larger --max-instances, a later --deadline or a bigger --budget", shape, task == Task::lora ? "qlora" : "lora");
  return shape + "try a later --deadline, a bigger --budget, a larger --max-instances or fewer --tokens";
}

void refuse_neuron_flags_off_neuron(const CLI::App* cmd, const Accelerator& acc, const std::string& instance) {
  if (acc.software != "neuron" && given(cmd, "--neuron-compile-minutes"))
    throw InputError(fmt::format("--neuron-compile-minutes applies to Inferentia and Trainium; {} runs CUDA", instance));
}

void check_task_flags(const CLI::App* cmd, const WorkloadOptions& wo) {
  static constexpr const char* kTrainingOnly[] = {"--tokens", "--seq-len", "--global-batch", "--no-flash-attention", "--data-region"};
  static constexpr const char* kTrainingAndRl[] = {"--epochs", "--precision", "--lora-rank", "--lora-targets", "--deadline", "--horizon", "--value-of-time", "--quota-vcpus",
                                                   "--provision-minutes", "--image-gb", "--load-gb-per-s", "--neuron-compile-minutes",
                                                   "--resume", "--no-overheads"};
  static constexpr const char* kInferenceOnly[] = {"--prompt-tokens-p95", "--output-tokens", "--output-tokens-p95",
                                                   "--reasoning-tokens", "--samples", "--requests-per-second", "--tokens-per-day",
                                                   "--clients", "--arrival", "--length-spread", "--simulated-requests",
                                                   "--concurrency", "--compiled-batch", "--scheduler-recv-interval", "--max-waiting-tokens", "--max-batched-tokens", "--attention-dp-balance", "--max-ttft", "--max-tpot", "--min-tokens-per-second-per-user", "--slo-percentile", "--trace", "--prefix-share",
                                                   "--speculative", "--weights", "--kv-cache", "--mode", "--target-utilisation",
                                                   "--verifier-model", "--engine"};
  static constexpr const char* kRlOnly[] = {"--algorithm", "--prompts-per-step", "--samples-per-prompt", "--response-tokens",
                                            "--response-tokens-max", "--steps", "--prompts", "--reward", "--reward-model",
                                            "--placement", "--async", "--policy-update", "--no-reference"};
  static constexpr const char* kCheckpointFlags[] = {"--checkpoint-storage", "--checkpoint-gb-per-s", "--restart-minutes"};
  auto refuse = [&](const auto& flags, const std::string& why) {
    for (const char* f : flags)
      if (given(cmd, f)) throw InputError(fmt::format("{} {}", f, why));
  };
  const std::string rl_hint = "applies to --task rl only";
  const bool lora = wo.task == "lora" || wo.task == "qlora" || (wo.rl() && given(cmd, "--policy-update") && cmd->get_option("--policy-update")->as<std::string>() == "lora");
  if (!lora && !wo.inference())
    for (const char* f : {"--lora-rank", "--lora-targets"})
      if (given(cmd, f)) throw InputError(fmt::format("{} applies to --task lora and qlora (and --task rl --policy-update lora)", f));
  if ((wo.inference() || wo.rl()) && given(cmd, "--framework"))
    throw InputError("--framework applies to pretrain, finetune, lora and qlora (an RL step's trainer and a serving replica use the defaults)");
  if (wo.inference()) {
    refuse(kTrainingOnly, "applies to training; --task inference takes --prompt-tokens, --output-tokens, --weights ... (see --help)");
    refuse(kTrainingAndRl, "applies to training; --task inference takes --prompt-tokens, --output-tokens, --weights ... (see --help)");
    refuse(kRlOnly, rl_hint);
    refuse(kCheckpointFlags, "applies to training and RL jobs (their checkpoints and restarts); a service keeps no training state");
  } else if (wo.rl()) {
    static constexpr const char* kStepTokens[] = {"--tokens", "--seq-len", "--global-batch"};
    refuse(kStepTokens, "does not apply to --task rl: the step's tokens follow from --prompts-per-step, --samples-per-prompt, --prompt-tokens and --response-tokens");
    refuse(kTrainingOnly, "applies to pretrain, finetune, lora and qlora (an RL step's trainer and rollouts use the defaults)");
    refuse(kInferenceOnly, "applies to --task inference only (--task rl takes --prompt-tokens and --response-tokens)");
  } else {
    refuse(kInferenceOnly, "applies to --task inference only");
    if (given(cmd, "--prompt-tokens")) throw InputError("--prompt-tokens applies to --task inference and --task rl");
    refuse(kRlOnly, rl_hint);
  }
}

}  // namespace gpuadvisor::cli
