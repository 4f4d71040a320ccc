// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// Reports: every command's output in table, JSON, CSV and Markdown
// (docs/json.md for the JSON documents, docs/cli.md for the rest).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/report/chart.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/serving/simulate.hpp"
#include "gpuadvisor/catalog/price_import.hpp"
#include "gpuadvisor/search/search.hpp"
#include "gpuadvisor/validation/validation.hpp"

namespace gpuadvisor {

// Numbers in JSON keep 6 significant digits (money keeps cents): the same
// inputs give the same bytes. Throws on NaN and infinity (a bug, exit 1).
double sig6(double v);
// An hourly rate for JSON and CSV: the catalog's precision, without float noise.
double rate_json_value(double usd_per_hour);

// A training pick whose expected on-demand cost with hardware failures and
// checkpoints is this much above its headline gets a "failures:" line.
inline constexpr double kFailuresNoteAbove = 0.10;

// html: recommend and cost only (src/report/html.cpp); every other command refuses it.
enum class Format { table, json, csv, markdown, html };
std::optional<Format> format_from_string(std::string_view s);

// 2: on_demand_usd_per_hour is per instance in every document (a service's
// bill is service_on_demand_usd_per_hour); docs/json.md §Changes.
inline constexpr int kJsonSchemaVersion = 2;
// Baselines of these versions compare (the keys a comparison reads are the same).
inline constexpr int kOldestComparableSchemaVersion = 1;
std::string_view tool_version();
// `--version --format json`: the tool's version in the envelope every
// document shares (docs/json.md §version).
std::string render_version_json(const Catalog& catalog);
// The "workload" object a document writes, as JSON text: --compare-to holds a
// baseline's against it to say when a comparison is across two workloads.
std::string workload_json_text(const TrainingWorkload& w);
std::string workload_json_text(const InferenceWorkload& w);

// A cell: what a person reads, and the typed value programs get.
using Value = std::variant<std::monostate, double, long long, bool, std::string>;
struct Cell {
  std::string text;
  Value value;
};
struct Column {
  std::string key;     // JSON/CSV name, with units (e.g. "on_demand_usd_per_hour")
  std::string header;  // table header
  bool right_align = false;
  bool wide_only = false;  // hidden from the 80-column table unless --wide
  bool data_only = false;  // CSV and JSON only: never in the text or markdown table
};
struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

struct RenderOptions {
  Format format = Format::table;
  bool wide = false;
};

// Renders a table; for JSON, the rows become objects under `rows_key` inside
// the standard envelope, with `extra_json` (a serialized object) merged in.
// Returns the text; `hidden_columns` reports columns left out of a narrow table.
std::string render_table(const Table& t, const Catalog& catalog, std::string_view command, std::string_view rows_key,
                         const RenderOptions& o, int* hidden_columns = nullptr, std::string_view extra_json = {});

// The text around a table as markdown: a headline or note line is a
// paragraph of its own, an indented "  why: ..." line a list item, so a
// renderer does not run them together into one paragraph.
std::string markdown_text(std::string_view text);

Table catalog_table(const Catalog& catalog, const std::vector<const Instance*>& instances, std::string_view region);
std::string render_instance_details(const Catalog& catalog, const Instance& instance, const RenderOptions& o);
// `catalog validate FILE`: the file is valid, with its counts and price date (a line, or the JSON document).
std::string render_catalog_check(const Catalog& checked, const std::string& file, Format f);
Table models_table();

struct RecommendContext {
  const ModelSpec* model;
  const TrainingWorkload* workload;  // --task rl: the policy update's
  const RecommendRequest* request;
  const RlWorkload* rl = nullptr;    // --task rl: the step's workload (rows carry RecommendRow::rl)
};
Table recommendation_table(const Recommendation& rec, const RecommendContext& ctx);
// The finance view of the same rows (`gpuadvisor cost`): on-demand and spot,
// with expected interruptions, savings and the break-even interruption rate.
Table cost_table(const Recommendation& rec, const RecommendContext& ctx);
// A reservation priced without a model (`cost --instance X --count N --hours H`).
Table reservation_table(const Recommendation& rec, const RecommendRequest& request);
std::string reservation_json_extra(const Recommendation& rec, const RecommendRequest& r);
// Time against cost for every option, on-demand and spot (--chart); a
// reservation (cost --instance --count --hours) has no model: ctx.model null.
Chart recommendation_chart(const Recommendation& rec, const RecommendContext& ctx);
std::string recommendation_json_extra(const Recommendation& rec, const RecommendContext& ctx);
// The lines that lead the table: what to rent and why, the capacity note, the
// cheapest and the fastest option.
std::string render_pick_text(const Recommendation& rec, const RecommendContext& ctx);
std::string render_rejections_text(const std::vector<Rejection>& rejections, size_t limit);
// {"cannot_run": [{"instance", "reason"}...]}, for the JSON error document.
std::string rejections_json(const std::vector<Rejection>& rejections);

struct EstimateContext {
  const ModelSpec* model;
  const TrainingWorkload* workload;
  const Cluster* cluster;
  const TrainingEstimate* estimate;
  std::optional<double> on_demand_usd_per_hour;
  std::optional<double> spot_usd_per_hour;
  std::string region;
};
std::string render_estimate(const Catalog& catalog, const EstimateContext& ctx, const RenderOptions& o);

// The formulas behind an estimate with its numbers filled in (--explain).
std::string explain_estimate(const EstimateContext& ctx);

// One RL step on a given cluster (src/report/rl.cpp): the stages, the pools,
// the update's layout, the run's hours and cost.
struct RlEstimateContext {
  const ModelSpec* model;
  const RlWorkload* workload;
  const Cluster* cluster;
  const RecommendRow* row;  // the priced row; row->rl is the step
  std::string region;
};
std::string render_rl_estimate(const Catalog& catalog, const RlEstimateContext& ctx, const RenderOptions& o);
// The step's formulas with the numbers filled in (--explain; docs/methodology.md §RL post-training).
std::string explain_rl(const RlEstimateContext& ctx);

// ---------------------------------------------------------------------------
// Validation, calibration and price import (src/report/validation.cpp)

// One row per case (usable ones, or all with `all`): measured, predicted, signed error, source.
Table validation_table(const std::vector<CaseResult>& results, bool all);
Table error_summary_table(const std::vector<ErrorSummary>& summary);
// RL cases: each measured stage beside its prediction, and the errors by stage.
Table rl_stage_table(const std::vector<CaseResult>& results);
std::vector<ErrorSummary> rl_stage_summary(const std::vector<CaseResult>& results);
// The JSON members `summary`, `cases_total`, `cases_usable`, `cases_predicted`, `disagreements`.
std::string validation_json_extra(const std::vector<CaseResult>& results, const std::vector<ErrorSummary>& summary);
Table calibration_table(const std::vector<FittedParameter>& fitted);
Table source_check_table(const std::vector<SourceCheck>& checks, HeldOutBy by = HeldOutBy::source);
// Pooled over every case, each predicted by the fit made without its own
// source (or family), beside the in-sample fit: all cases, then by task.
Table loso_summary_table(const LeaveOneSourceOut& l);
// The JSON member `leave_one_source_out_summary` {cases, median_abs_error,
// p90_abs_error, by_task {task: {cases, median_abs_error, p90_abs_error}}, in_sample {...}}
// and `leave_one_source_out_cases`; `leave_one_family_out_...` when families were held out.
std::string loso_json_extra(const LeaveOneSourceOut& l);
Table import_report_table(const std::vector<ImportLine>& report);

// ---------------------------------------------------------------------------
// Inference (src/report/inference.cpp)

struct InferenceContext {
  const ModelSpec* model;
  const InferenceWorkload* workload;
  const RecommendRequest* request;
};
Table inference_table(const ServingRecommendation& rec, const InferenceContext& ctx);
// The finance view of a service (`gpuadvisor cost --task inference`): per option,
// hourly and 30-day-month cost under each pricing model, savings against
// on-demand and the break-even utilisation of commitments.
Table inference_cost_table(const ServingRecommendation& rec, const InferenceContext& ctx);
// Time per output token against monthly cost, on-demand and spot (--chart).
Chart inference_chart(const ServingRecommendation& rec, const InferenceContext& ctx);
std::string inference_json_extra(const ServingRecommendation& rec, const InferenceContext& ctx);
std::string render_serving_pick_text(const ServingRecommendation& rec, const InferenceContext& ctx);
// A serving layout as the tables print it: "TP8", "TP8 PP2", "TP8 EP8" (attention TP8, experts EP8), "DP8 EP8".
std::string layout_text(const ServingLayout& l);

struct InferenceEstimateContext {
  const ModelSpec* model;
  const InferenceWorkload* workload;
  const Cluster* cluster;  // one replica's instances
  const ServingRow* row;   // estimate plus replicas for the load
  std::optional<double> on_demand_usd_per_hour;  // per instance
  std::optional<double> spot_usd_per_hour;
  std::string region;
  bool fixed_batch = false;  // the batch was given (--batch), not searched
  // One replica simulated under the load (--clients, or --requests-per-second
  // spread over the replicas): the "at load" figures come from it.
  const SimulatedService* simulated = nullptr;
  std::string targets_missed;  // default targets the estimate misses (reported, not refused)
};
std::string render_inference_estimate(const Catalog& catalog, const InferenceEstimateContext& ctx, const RenderOptions& o);
std::string explain_inference(const InferenceEstimateContext& ctx);

}  // namespace gpuadvisor
