// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// JSON and text pieces the training reports share: layout, model, workload, capacity, accuracy band.
#include "gpuadvisor/report/report.hpp"
#include "gpuadvisor/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/workload/framework.hpp"
#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/physics/overheads.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "report/detail.hpp"


namespace gpuadvisor {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;
using namespace report_detail;

namespace report_detail {
std::string layout_text(const Layout& l) {
  std::string s = fmt::format("TP{}", l.tp);
  if (l.cp > 1) s += fmt::format(" CP{}", l.cp);
  s += fmt::format(" PP{} DP{}", l.pp, l.dp);
  if (l.vp > 1) s += fmt::format(" VP{}", l.vp);
  if (l.ep > 1) s += fmt::format(" EP{}", l.ep);
  if (l.experts_folded()) s += fmt::format(" ETP{}", l.expert_tp());
  s += fmt::format(" Z{} mb{}", l.zero_stage, l.micro_batch);
  if (l.recompute == Recompute::selective) s += " src";
  if (l.recompute == Recompute::full) s += l.recompute_layers > 0 ? fmt::format(" rc{}", l.recompute_layers) : " rc";
  return s;
}

Cell hours_cell(double h) { return {format_duration(h), sig6(h)}; }

ordered_json money_json(std::optional<double> usd) { return usd ? ordered_json(round_cents(*usd)) : ordered_json(nullptr); }

std::string money_text(double usd) { return format_usd(usd); }

// A fraction of a cent reads "under $0.01", never a "$0.00" that reads as free.
std::string money_text_not_free(double usd) { return usd > 0 && usd < 0.005 ? "under $0.01" : money_text(usd); }

ordered_json capacity_json(const CapacityAdvice& a) {
  return {{"beyond_on_demand", a.beyond_on_demand},
          {"capacity_block_days", a.block_days ? ordered_json(*a.block_days) : ordered_json(nullptr)},
          {"capacity_blocks", a.blocks},
          {"capacity_block_margin", sig6(a.margin)},
          {"capacity_block_usd", money_json(a.block_cost_usd)},
          {"note", a.note.empty() ? ordered_json(nullptr) : ordered_json(a.note)}};
}

ordered_json model_json(const ModelSpec& m) {
  ordered_json j;
  j["name"] = m.name;
  j["params"] = sig6(m.total_params());
  j["active_params"] = sig6(m.active_params());
  j["layers"] = m.layers;
  j["hidden"] = m.hidden;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["ffn"] = m.ffn;
  j["vocab"] = m.vocab;
  j["experts"] = m.experts;
  j["active_experts"] = m.active_experts;
  j["source"] = m.source;
  return j;
}

ordered_json workload_json(const TrainingWorkload& w) {
  ordered_json j;
  j["task"] = to_string(w.task);
  j["tokens"] = sig6(w.tokens);
  j["epochs"] = w.epochs;
  j["seq_len"] = w.seq_len;
  j["global_batch"] = w.global_batch;
  j["precision"] = to_string(w.precision);
  if (is_adapter_task(w.task)) {
    j["lora_rank"] = w.lora_rank;
    j["lora_targets"] = to_string(w.lora_targets);
  }
  j["flash_attention"] = w.flash_attention;
  return j;
}

namespace {

// One band as JSON: accuracy_json's shape, the bands at a load's too.
ordered_json band_json(const AccuracyBand& b) {
  return {{"group", b.group}, {"cases", b.cases}, {"median_abs_error", sig6(b.median_abs_error)},
          {"p90_abs_error", sig6(b.p90_abs_error)}, {"median_signed_error", sig6(b.median_signed_error)}, {"out_of_sample", true},
          {"note", b.note}};
}

}  // namespace

ordered_json accuracy_json(std::string_view accelerator, std::string_view task, std::string_view engine, bool moe) {
  const auto b = accuracy_band(accelerator, accuracy_task(task), engine, moe);
  return b ? band_json(*b) : ordered_json(nullptr);
}

ordered_json accuracy_at_load_json(std::string_view accelerator) {
  ordered_json j = ordered_json::object();
  for (const char* metric : {"ttft_s", "tpot_s", "e2e_s"})
    if (const auto b = accuracy_at_load_band(accelerator, metric)) j[metric] = band_json(*b);
  return j.empty() ? ordered_json(nullptr) : j;
}

ordered_json layout_json(const Layout& l) {
  return {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"ep", l.ep}, {"etp", l.expert_tp()}, {"vp", l.vp}, {"cp", l.cp}, {"recompute_layers", l.recompute_layers}, {"zero_stage", l.zero_stage}, {"micro_batch", l.micro_batch},
          {"recompute", std::string(to_string(l.recompute))}};
}

ordered_json assumptions_json(const ModelSpec& m, const TrainingWorkload& w) {
  ordered_json a = ordered_json::array();
  for (const auto& s : m.assumptions) a.push_back(s);
  for (const auto& s : w.assumptions) a.push_back(s);
  return a;
}

ordered_json request_json(const RecommendRequest& r) {
  ordered_json j = {{"region", r.region}, {"pricing", std::string(to_string(r.pricing))},
                    {"sort_by", std::string(to_string(r.sort_by))}, {"top", r.top}, {"max_instances", r.max_instances}};
  j["cost_slack"] = r.cost_slack;
  return j;
}

Table items_table() {
  Table t;
  t.columns = {{"section", "SECTION"}, {"item", "ITEM"}, {"value", "VALUE", true}, {"unit", "UNIT"}};
  return t;
}

ItemAdder item_adder(Table& t) {
  return [&t](std::string s, std::string i, Cell v, std::string u) { t.rows.push_back({text(s), text(i), v, text(u)}); };
}

std::string render_items(Table t, const Catalog& catalog, const RenderOptions& o, const std::string& accuracy, const std::vector<std::string>& notes) {
  RenderOptions wide = o;
  wide.wide = true;
  if (o.format == Format::table) {
    std::string out = render_table(t, catalog, "estimate", "items", wide) + fmt::format("accuracy: {}\n", accuracy);
    for (const auto& n : notes) out += fmt::format("note: {}\n", n);
    return out;
  }
  const ItemAdder add = item_adder(t);
  add("accuracy", "error band", text(accuracy), "");
  for (const auto& n : notes) add("note", "", text(n), "");
  return render_table(t, catalog, "estimate", "items", wide);
}

Cell break_even_cell(const RecommendRow& r) {
  if (!r.spot_offered) return {"not offered", std::monostate{}};
  if (r.break_even_monthly_interruption) return pct(*r.break_even_monthly_interruption);
  // Spot is cheaper at any monthly rate: for programs 1 (100%), apart from unknown (null).
  if (r.spot_expected_cost_usd && r.on_demand_expected_cost_usd) return {"spot always", 1.0};
  return {"unknown", std::monostate{}};
}
// JSON "layout": tp, pp, ep (1: experts tensor-sliced) and attention_dp, and its text ("DP8 EP8").
ordered_json layout_json(const ServingLayout& l) {
  return {{"tp", l.tp}, {"pp", l.pp}, {"ep", l.ep}, {"attention_dp", l.attention_dp}, {"text", layout_text(l)}};
}

}  // namespace report_detail

std::string workload_json_text(const TrainingWorkload& w) { return json_text(report_detail::workload_json(w)); }

// "TP8", "TP8 PP2", "TP8 EP8" (attention TP8, experts EP8), "DP8 EP8"
// (attention data parallel over 8 ranks, experts EP8: TensorRT-LLM's DEP8),
// "DP4 TP2 EP8" (attention DP4 at TP2).
std::string layout_text(const ServingLayout& l) {
  std::string s = l.attention_dp > 1 ? fmt::format("DP{}", l.attention_dp) : "";
  if (l.attention_tp() > 1 || l.attention_dp == 1) s += fmt::format("{}TP{}", s.empty() ? "" : " ", l.attention_tp());
  if (l.ep > 1) s += fmt::format(" EP{}", l.ep);
  if (l.pp > 1) s += fmt::format(" PP{}", l.pp);
  return s;
}


}  // namespace gpuadvisor
