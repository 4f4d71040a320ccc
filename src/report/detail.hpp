// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// Internal to the report files: cell formatting and JSON pieces shared by the
// training and inference reports. Not part of the public headers.
#pragma once
#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <string>

#include "gpuadvisor/report/report.hpp"

namespace gpuadvisor::report_detail {

using ordered_json = nlohmann::ordered_json;

using gpuadvisor::sig6;
std::string thousands(double v, int decimals);  // 12,345.6
// The fastest alternative's price against the pick's, where it is 2x or more:
// " (9.4x the pick's price)"; "" below that or where either price is unknown.
std::string price_multiple_text(std::optional<double> cost, std::optional<double> pick_cost);
// The fastest line under --max-cost-multiple, training's and a service's:
// "<within> (the fastest within 2x the cheapest price, --max-cost-multiple); at any price: <any_price>".
std::string cost_ceiling_fastest_text(const std::string& within, double max_cost_multiple, const std::string& any_price);
Cell money(std::optional<double> usd);          // "$1,234" / "unknown"
Cell rate(std::optional<double> usd);           // hourly rate, 4 significant digits
Cell num(double v, int decimals);
Cell integer(long long v);
Cell text(std::string s);
Cell pct(double fraction);
Cell pick_cell(bool is_pick);                   // "yes" / "" (a bool for programs)
Cell hours_cell(double hours);
// The columns every costed row carries for spreadsheets (CSV and JSON, never
// the text table): the region and the dates its prices and Spot Advisor range
// are from, the pricing channel its ranked cost is at, and, where the table has
// no PICK column of its own (`with_pick`), whether it is the pick.
// Without `with_channel` the table shows the channel itself (channel_cell).
std::vector<Column> provenance_columns(bool with_pick, bool with_channel = true);
// The channel a training row is bought through ("on-demand", "capacity-block", ...).
std::string_view channel_of(const RecommendRow& r, const RecommendRequest& request);
// The channel for the text table: "on demand" ("on demand?" where the family's
// usual count is unknown), "block", "block*" (its rate unknown: the row is at
// the on-demand rate), "reserved", "spot" ("no spot" above the usual spot
// count: not ranked), "1y plan", "3y plan"; its JSON/CSV value is the channel's name.
Cell channel_cell(const RecommendRow& r);
// The CAPACITY cell, agreeing with the channel: a row bought in Capacity
// Blocks reads "capacity block" even within the usual on-demand count.
Cell capacity_cell(const RecommendRow& r);
// A spot figure of a training row, or "not offered" above the usual spot count (null in JSON).
Cell spot_money(const RecommendRow& r, std::optional<double> usd);
// The Spot Advisor range of a training row: "not offered", the range, or "unknown".
Cell spot_bucket_cell(const RecommendRow& r);
// The channel's cost, whether its rate is unknown, its note, and whether spot
// is offered at the row's count (CSV and JSON only).
// With them, `beyond_horizon`: the option takes longer than --horizon (listed last, never the pick),
// `misses_deadline_at_p90` (--deadline only, else null): it meets the deadline at the prediction but
// not at its p90 error (listed last, never the pick while an option meets it there),
// and `bf16_lora_fits` (--task qlora only, else null): bf16 LoRA fits the same instances.
std::vector<Column> channel_columns();
void append_channel(std::vector<Cell>& row, const RecommendRow& r, const RecommendRequest& request);
// What the ranked cost is, after the figure: "on-demand", "in Capacity Blocks",
// "at the on-demand rate (Capacity Block rate unknown)", "reserved at the on-demand rate", ...
std::string channel_words(const RecommendRow& r);
// Whether a training row is the recommendation's pick.
bool is_pick(const RecommendRow& r, const Recommendation& rec);
// A catalog entry's sources joined for a table cell.
std::string join_sources(const std::vector<std::string>& s);
// An empty `channel` leaves the channel cell out (provenance_columns without it).
// `priced_by`: the channel a training row is ranked at, whose rate's date is
// prices_as_of (a Capacity Block's rate, spot's); else the on-demand rate's.
void append_provenance(std::vector<Cell>& row, const Instance& i, const std::string& region, std::string_view channel,
                       std::optional<bool> pick = std::nullopt, std::optional<Channel> priced_by = std::nullopt);
ordered_json envelope(const Catalog& catalog, std::string_view command);
ordered_json model_json(const ModelSpec& m);
ordered_json money_json(std::optional<double> usd);     // cents, or null
ordered_json capacity_json(const CapacityAdvice& a);
std::string money_text(double usd);                     // "$21.58", "$1,234"
std::string money_text_not_free(double usd);            // money_text, but "under $0.01" for an amount above 0 that rounds to $0.00
std::string layout_text(const Layout& l);               // "tp 8 pp 2 dp 4 zero 1 mb 1 ..."
ordered_json layout_json(const Layout& l);
ordered_json layout_json(const ServingLayout& l);       // {tp, pp, ep, attention_dp, text}
ordered_json workload_json(const TrainingWorkload& w);
// The request's region, pricing, order, top, instance limit and cost slack (the JSON `request`).
ordered_json request_json(const RecommendRequest& r);
ordered_json assumptions_json(const ModelSpec& m, const TrainingWorkload& w);
// The monthly interruption rate at which spot stops paying, "spot always", or unknown.
Cell break_even_cell(const RecommendRow& r);
// The error band of predictions on `accelerator` for `task` (accuracy.hpp):
// {group, cases, median_abs_error, p90_abs_error, out_of_sample, note}, or null.
ordered_json accuracy_json(std::string_view accelerator, std::string_view task, std::string_view engine = {}, bool moe = false);
// The bands of the simulated serving figures under a load, by metric
// ({ttft_s, tpot_s, e2e_s}: each as accuracy_json's), or null without any.
ordered_json accuracy_at_load_json(std::string_view accelerator);
// The estimate's SECTION / ITEM / VALUE / UNIT table, and a function that adds one row to it.
using ItemAdder = std::function<void(std::string section, std::string item, Cell value, std::string unit)>;
Table items_table();
ItemAdder item_adder(Table& t);
// The estimate's table with its accuracy band and notes: lines after the table
// in text, rows of it (section `accuracy` / `note`) in CSV, markdown and HTML,
// so a parser reads one table and nothing after it.
std::string render_items(Table t, const Catalog& catalog, const RenderOptions& o, const std::string& accuracy,
                         const std::vector<std::string>& notes = {});
// --task rl (src/report/rl.cpp)
ordered_json rl_json(const RlEstimate& e);              // the step's stages, pools and layouts
ordered_json rl_workload_json(const RlWorkload& w);
std::string rl_placement_text(const RlEstimate& e);     // "colocated", "split 2+2", "split 2+2 async"
Table rl_recommendation_table(const Recommendation& rec, const RecommendContext& ctx);

}  // namespace gpuadvisor::report_detail
