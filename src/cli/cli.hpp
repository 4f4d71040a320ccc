// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// The command line: the only part of gpuadvisor that knows about flags.
// Each command lives in its own file (src/cli/<command>.cpp) and registers its
// flags and its run function; this header holds what they share: the global
// options, the option groups several commands take, and the builders that turn
// flag text into the core's requests.
#pragma once
#include <algorithm>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/report/chart.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/physics/overheads.hpp"
#include "gpuadvisor/report/report.hpp"
#include "gpuadvisor/search/search.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor::cli {

struct GlobalOptions {
  std::string catalog_file;
  std::vector<std::string> catalog_add;
  std::string format = "table";
  bool wide = false;
  int verbose = 0;
  bool quiet = false;
  std::vector<std::string> discounts;
  bool no_cache_prices = false;
  std::string command_line;  // as typed, for the files --emit writes
};

// A command: registers its flags on construction, runs when chosen.
class Command {
 public:
  virtual ~Command() = default;
  CLI::App* app = nullptr;
  bool chosen() const { return app && app->parsed(); }
  virtual int run(const GlobalOptions& g) = 0;
};
std::unique_ptr<Command> add_catalog_command(CLI::App& parent);
std::unique_ptr<Command> add_models_command(CLI::App& parent);
std::unique_ptr<Command> add_validate_command(CLI::App& parent);
std::unique_ptr<Command> add_calibrate_command(CLI::App& parent);
std::unique_ptr<Command> add_prices_command(CLI::App& parent);
std::unique_ptr<Command> add_recommend_command(CLI::App& parent);
std::unique_ptr<Command> add_cost_command(CLI::App& parent);
std::unique_ptr<Command> add_estimate_command(CLI::App& parent);

// ---------------------------------------------------------------------------
// Catalog, output and warnings

std::string today();
// $XDG_CACHE_HOME/gpuadvisor, else ~/.cache/gpuadvisor; empty when neither is set.
std::string cache_dir();
// The overlay `prices fetch` writes by default and every command loads.
std::string cached_prices_path();
// "prices as of 2026-11-29, embedded snapshot" for table footers.
std::string prices_note(const Catalog& c);
// The catalog's files: the base (built in, --catalog or GPUADVISOR_CATALOG) and the overlays.
std::pair<CatalogSource, std::vector<CatalogSource>> catalog_sources(const GlobalOptions& g);
Catalog load(const GlobalOptions& g);
Format parse_format(const GlobalOptions& g);
// Prints a table in the chosen format; JSON gets `extra_json` and the warnings merged in.
void print_table(const Table& t, const Catalog& c, std::string_view command, std::string_view rows_key, const GlobalOptions& g,
                 std::string_view extra_json = {});
// Before `prices import` writes its overlay: a price dated after today (by
// --as-of or a spot Timestamp) would make every later command refuse the
// catalog, so the import is refused instead, saying which date did it.
void refuse_future_import(const Catalog& merged);

// A comma list with an empty item ("a,", ",a", "a,,b") is refused, naming the
// flag; the parser would drop the item (and, left with none, take the next flag).
void refuse_empty_item(std::string_view flag, std::string_view list);
// A sentence for cost's notes where no type has a commitment rate in the
// region (its 1Y and 3Y columns are then all unknown); "" where one has.
std::string commitment_rates_note(const Catalog& catalog, const std::string& region, std::string_view columns);
// Where --explain writes: stdout under the text table, else stderr, so that
// stdout stays one JSON, CSV, markdown or HTML document.
std::ostream& explain_stream(Format f);
// The search's notes as a text list, "Notes:" first; six unless --wide.
std::string notes_list(const std::vector<std::string>& notes, bool wide);
// Before a refusal (no option, or none priced): a CSV sheet still gets its
// rows, or its header, on stdout (a sheet keeps its columns), and, where
// `rejections` is given, a person reads why each type was left out on stderr
// (JSON carries them in its error document). `table` is built only for CSV.
void print_before_refusal(const std::function<Table()>& table, const Catalog& c, std::string_view command, const GlobalOptions& g,
                          const std::vector<Rejection>* rejections = nullptr);
// Writes the chart (nothing when `path` is empty), the catalog's price date and source on it.
void write_chart(const std::string& path, Chart chart, const Catalog& catalog);
// Prints a document a renderer made (estimate, catalog show); JSON gets the warnings.
void print_document(const std::string& text, Format f);

// A warning about input that may not be what the user meant: on stderr at
// once, and in the JSON document's `warnings`.
void warn(const std::string& message);
const std::vector<std::string>& warnings();
// The model's and workload's assumptions on stderr (info).
void log_assumptions(const std::vector<std::string>& a);

// An option given with an empty value ("--deadline ''") is an error.
void refuse_empty_values(const CLI::App* cmd);
bool given(const CLI::App* cmd, const char* flag);

// ---------------------------------------------------------------------------
// Launch files (--emit, src/cli/emit.cpp) and CI gates (--compare-to, src/cli/gates.cpp)

struct EmitOptions {
  std::string target, dir = ".", entrypoint = "YOUR_TRAIN_SCRIPT.py", image = "YOUR_IMAGE";
  int rank = 0;  // recommend: the row to emit (0: the pick)
  std::string hf_model;         // --hf-model: the checkpoint served (and the tokenizer trained with)
  int max_request_tokens = 0;   // --max-request-tokens: serving's --max-model-len below the context length (0: the context length)
};
void add_emit_options(CLI::App* cmd, EmitOptions& o, bool with_rank);
// Launch files are Megatron-LM, torchtitan and DeepSpeed: CUDA stacks. For a
// training row on Inferentia/Trainium, --emit is refused before any output.
void refuse_neuron_training_emit(const EmitOptions& o, const Instance& inst, const Accelerator& acc);
// `row`: the recommended row, whose channel and capacity the files reference
// (a Capacity Block or reservation as a required placeholder); with `rl` and
// row->rl, the RL run's verl files instead of Megatron's.
void emit_training_files(const EmitOptions& o, const GlobalOptions& g, const ModelSpec& m, const TrainingWorkload& w,
                         const Cluster& c, const TrainingEstimate& e, std::optional<double> cost_usd, const std::string& pricing,
                         const std::string& region, const RecommendRow* row = nullptr, const RlWorkload* rl = nullptr);
void emit_serving_files(const EmitOptions& o, const GlobalOptions& g, const ModelSpec& m, const InferenceWorkload& w,
                        const ServingRow& row, const std::string& pricing, const std::string& region);

struct GateOptions {
  std::string compare_to, fail_if_over, fail_if_increase;
  bool fail_if_pick_changes = false;
};
// What a gate compares: the pick's instance, count and cost (a job's total, a service's month).
struct PickSummary {
  std::string instance;
  int count = 0;
  std::optional<double> cost_usd;
  double time = 0;          // total hours, or seconds per output token
  std::string cost_key;     // "ranked_usd" or "ranked_usd_per_month"
  std::string job;          // the model and task ("llama-3-70b pretrain"), to warn when a baseline is another job's
  std::string terms;        // the pricing and region ("on-demand in us-east-1"), to warn when a baseline's cost is at others
  nlohmann::json workload;  // the document's "workload" object (null: none), to warn when a baseline's differs
};
// "on-demand in us-east-1": the terms a request's costs are at.
std::string pricing_terms(std::string_view pricing, std::string_view region);
// The job a pick is for, as PickSummary::job and the JSON's model.name and workload.task give it.
std::string job_of(const std::string& model_name, std::string_view task);
// The "workload" object a document writes, as PickSummary::workload holds it.
template <class Workload>
nlohmann::json workload_summary(const Workload& w) {
  return nlohmann::json::parse(workload_json_text(w));
}
void add_gate_options(CLI::App* cmd, GateOptions& o);
// What a gate compares for a service: its pick's instances and month, recommend's and cost's alike.
PickSummary serving_summary(const ServingRow& pick, const std::string& model_name);
// The `comparison` JSON object against --compare-to (null without it).
nlohmann::ordered_json comparison(const GateOptions& o, const PickSummary& now, const RecommendRequest& r);
// Prints the comparison for people, the gates' verdict first (table: one line; markdown: a short diff).
void print_comparison(const nlohmann::ordered_json& cmp, const nlohmann::ordered_json& gates, Format f);
// The JSON `gates`: each threshold given (--fail-if-over, --fail-if-increase)
// with its limit, the value it was checked against and whether it passed; an
// empty list without them.
nlohmann::ordered_json gate_results(const GateOptions& o, const PickSummary& now, const nlohmann::ordered_json& cmp);
// The document's JSON tail: `comparison` and `gates` added to a command's extra fields.
std::string with_gates(const std::string& extra, const nlohmann::ordered_json& cmp, const nlohmann::ordered_json& gates);
// 4 when a gate failed (each with its reason on stderr), else 0.
int gate_exit(const nlohmann::ordered_json& gates);

// ---------------------------------------------------------------------------
// Option groups several commands share

struct ModelOptions {
  std::string params, model, model_config;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, vocab = 0;
  bool given() const { return !params.empty() || !model.empty() || !model_config.empty(); }
};

struct WorkloadOptions {
  std::string task;  // empty: pretrain, with a warning
  std::string tokens, epochs, seq_len, global_batch;
  std::string precision;  // empty: bf16, said as an assumption
  int lora_rank = 16;
  std::string lora_targets = "attention+mlp";
  bool no_flash_attention = false;
  std::string framework;  // empty: megatron on GPUs, neuron on Trainium
  bool inference() const { return task == "inference"; }
  bool rl() const { return task == "rl"; }
};

// --task rl (docs/cli.md §RL post-training); --prompt-tokens is the inference group's.
struct RlOptions {
  std::string algorithm = "grpo";
  std::string prompts_per_step, samples_per_prompt, response_tokens, response_tokens_max, steps, prompts;
  std::string reward, reward_model, placement, policy_update = "full";  // reward: empty = rule, or model with --reward-model
  bool async = false, no_reference = false;
};

struct InferenceOptions {
  std::string prompt_tokens, prompt_tokens_p95, output_tokens, output_tokens_p95, reasoning_tokens, samples;
  std::string requests_per_second, tokens_per_day, concurrency, compiled_batch, scheduler_recv_interval, max_waiting_tokens, max_batched_tokens,
      attention_dp_balance;
  std::string clients, arrival, length_spread, simulated_requests, trace, prefix_share, speculative;
  std::string max_ttft, max_tpot, min_tokens_per_second_per_user, slo_percentile;
  std::string weights, kv_cache = "auto", mode = "online", target_utilisation;  // weights: empty = the model's own format, else bf16
  std::string verifier_model;
  std::string engine;  // empty: vllm on CUDA, neuron on Neuron
};

// Job overheads (docs/methodology.md §Job overheads): recommend, cost and estimate.
struct OverheadOptions {
  std::string provision_minutes, image_gb, load_gb_per_s, neuron_compile_minutes;
  bool resume = false, no_overheads = false;
};

struct RankingOptions {
  std::string sort_by, deadline, budget, region = "us-east-1", data_region, pricing = "on-demand", cost_slack, horizon, value_of_time, max_cost_multiple;
  std::string checkpoint_storage = "auto", checkpoint_gb_per_s, restart_minutes, chart, quota_vcpus;
  std::optional<int> top;  // default 10, every row with --all-counts
  int max_instances = 512;
  bool all_counts = false;
  std::vector<std::string> families, exclude;
};

void add_model_options(CLI::App* cmd, ModelOptions& o);
void add_workload_options(CLI::App* cmd, WorkloadOptions& o);
void add_inference_options(CLI::App* cmd, InferenceOptions& o);
void add_rl_options(CLI::App* cmd, RlOptions& o);
void add_overhead_options(CLI::App* cmd, OverheadOptions& o);
void add_ranking_options(CLI::App* cmd, RankingOptions& o);

ModelSpec build_model(const ModelOptions& o);
TrainingWorkload build_workload(const WorkloadOptions& o, const ModelSpec& m);
InferenceWorkload build_inference_workload(const InferenceOptions& o, const ModelSpec& m);
// recommend and cost size a service from its offered load; --clients (a
// benchmark's closed loop on one replica) is estimate's alone: InputError.
void refuse_clients_for_sizing(const InferenceOptions& o, const std::string& command);
// --slo-percentile where recommend or cost would not use it: a service not
// sized by simulation (offline) has only analytic means to bind.
void refuse_unused_slo_percentile(const InferenceOptions& o, const InferenceWorkload& w, const std::string& command);
// recommend and cost simulate every candidate at several replica counts:
// --simulated-requests above this would run for minutes (exit 2).
inline constexpr int kMostSizingSimulatedRequests = 20000;
void limit_sizing_simulations(const InferenceOptions& o, const std::string& command);
RlWorkload build_rl_workload(const RlOptions& o, const WorkloadOptions& wo, const InferenceOptions& io, const ModelSpec& policy);
OverheadSettings build_overheads(const OverheadOptions& o);
// The ranking request of recommend and cost, checked against the catalog.
// A region the catalog prices any instance in; else InputError naming the ones it does.
void check_priced_region(const Catalog& catalog, const std::string& region);
// --region any or a list is for recommend's training search: refused elsewhere, naming `what`.
void refuse_region_list(const RecommendRequest& r, std::string_view what);
RecommendRequest build_request(const RankingOptions& o, const OverheadOptions& oo, const Catalog& catalog);
// Exit 3 when options exist but none has a price under --pricing: there is no pick.
// `options`: the instance types that can run it (all unpriced), named in the message.
// `fastest`: the fastest unpriced option in words, for a training job.
[[noreturn]] void throw_no_price(const RecommendRequest& r, const std::vector<std::string>& options = {}, const std::string& fastest = {});
// A training or RL ranking with no pick: nothing within the horizon (exit 3,
// the fastest option named with what buying it takes), else no known price.
[[noreturn]] void throw_no_pick(const Recommendation& result, const RecommendRequest& r, const std::string& fastest = {});
// The instance types of a result's rows, each once, for that message.
template <class Rows>
std::vector<std::string> row_instances(const Rows& rows) {
  std::vector<std::string> out;
  for (const auto& x : rows)
    if (std::find(out.begin(), out.end(), x.instance->name) == out.end()) out.push_back(x.instance->name);
  return out;
}
// What to try when no instance type can run a training job.
// What to try when nothing fits; where a type fits in memory but no layout
// divides the model, the shape flags first.
std::string nothing_fits_hint(Task task, const std::vector<Rejection>& rejections);
// The instance type named by `flag`, or InputError with the nearest names.
// Refuses a --family value that names no instance family of the catalog,
// listing the families it has.
void check_families(const Catalog& catalog, const std::vector<std::string>& families);
const Instance& instance_named(const Catalog& catalog, const std::string& name, const char* flag);
// --checkpoint-storage: s3 | fsx-lustre | efs | local-nvme, or InputError.
CheckpointStorage parse_storage(const std::string& text);
// Flags of another kind of task (training, inference, rl) are refused rather than ignored.
void check_task_flags(const CLI::App* cmd, const WorkloadOptions& wo);
// --neuron-compile-minutes on a job that runs on CUDA is refused (it would change nothing).
void refuse_neuron_flags_off_neuron(const CLI::App* cmd, const Accelerator& acc, const std::string& instance);

}  // namespace gpuadvisor::cli
