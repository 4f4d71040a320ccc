// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// cost: the per-pricing table, the reservation table and its JSON.
#include "gpuadvisor/report/report.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

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

namespace {

// The snapshot's lowest and highest zone prices behind spot's typical-zone rate
// (docs/methodology.md §Spot's typical zone); "not offered" above the usual spot count.
struct SpotZones {
  Cell text, low, high;
};
SpotZones spot_zones(const RecommendRow& r, const std::string& region) {
  const RegionPrices* rp = r.instance->prices_in(region);
  if (!r.spot_offered) return {spot_money(r, std::nullopt), spot_money(r, std::nullopt), spot_money(r, std::nullopt)};
  if (!rp || !rp->spot.usd_per_hour) return {Cell{"unknown", std::monostate{}}, rate(std::nullopt), rate(std::nullopt)};
  const double low = *rp->spot.usd_per_hour, high = rp->spot.max_usd_per_hour.value_or(low);
  return {text(fmt::format("{:.4g}-{:.4g}", low, high)), rate(low), rate(high)};
}

}  // namespace

Table cost_table(const Recommendation& rec, const RecommendContext& ctx) {
  Table t;
  t.columns = {{"instance", "INSTANCE"},
               {"count", "N", true},
               {"hours", "HOURS", true},
               {"ranked_cost_usd", "COST", true},
               {"channel", "VIA"},
               {"setup_hours", "SETUP H", true, true},
               {"on_demand_usd_per_hour", "OD $/H", true, true},
               {"on_demand_cost_usd", "ON-DEMAND", true, true},
               {"on_demand_expected_hours", "OD EXP H", true, true},
               {"on_demand_expected_cost_usd", "OD EXP", true},
               {"spot_usd_per_hour", "SPOT $/H", true, true},
               {"spot_zone_range", "SPOT ZONES $/H", false, true},
               {"spot_lowest_zone_usd_per_hour", "SPOT LOWEST ZONE", true, true, true},
               {"spot_highest_zone_usd_per_hour", "SPOT HIGHEST ZONE", true, true, true},
               {"spot_cost_usd", "SPOT (NO INT.)", true, true},
               {"spot_interruption_bucket", "INTERRUPT", false},
               {"spot_mtti_hours", "MTTI H", true, true},
               {"checkpoint_interval_hours", "CKPT H", true, true},
               {"spot_overhead_fraction", "TIME LOST", true, true},
               {"spot_expected_hours", "SPOT EXP H", true, true},
               {"spot_expected_cost_usd", "SPOT EXP", true},
               {"spot_savings_usd", "SAVES", true},
               {"spot_savings_fraction", "SAVES %", true, true},
               {"break_even_monthly_interruption", "BREAK-EVEN", true},
               {"savings_1y_usd_per_hour", "1Y $/H", true, true},
               {"savings_1y_cost_usd", "1Y (TERM USED)", true, true},
               {"savings_1y_commitment_usd_per_month", "1Y COMMIT/MO", true, true},
               {"savings_1y_break_even_utilisation", "1Y UTIL>", true, true},
               {"savings_3y_usd_per_hour", "3Y $/H", true, true},
               {"savings_3y_cost_usd", "3Y (TERM USED)", true, true},
               {"savings_3y_commitment_usd_per_month", "3Y COMMIT/MO", true, true},
               {"savings_3y_break_even_utilisation", "3Y UTIL>", true, true}};
  for (auto& c : channel_columns()) t.columns.push_back(c);
  for (auto& c : provenance_columns(true, false)) t.columns.push_back(c);
  auto monthly = [](const RecommendRow& x, std::optional<double> rate) {
    return money(rate ? std::optional<double>(*rate * x.count * kHoursPerMonth) : std::nullopt);
  };
  // A commitment pays off when the covered capacity is used more than
  // effective rate / on-demand rate of the time.
  auto break_even_utilisation = [](std::optional<double> commit, std::optional<double> od) {
    if (!commit || !od || *od <= 0) return Cell{"unknown", std::monostate{}};
    return pct(*commit / *od);
  };
  int rank = 0;
  for (const auto& r : rec.rows) {
    if (rank++ >= ctx.request->top) break;
    std::optional<double> saves, saves_pct;
    if (r.spot_expected_cost_usd && r.on_demand_expected_cost_usd) {
      saves = *r.on_demand_expected_cost_usd - *r.spot_expected_cost_usd;
      saves_pct = *saves / *r.on_demand_expected_cost_usd;
    }
    const SpotZones zones = spot_zones(r, ctx.request->region);
    const auto& si = r.spot_interruptions;
    auto opt_num = [](std::optional<double> v, int d) { return v ? num(*v, d) : Cell{"unknown", std::monostate{}}; };
    t.rows.push_back({text(r.instance->name), integer(r.count), num(r.estimate.total_hours, 1), money(r.ranked_cost_usd), channel_cell(r),
                      num(r.estimate.setup.hours(), 2),
                      rate(r.on_demand_usd_per_hour),
                      money(r.on_demand_cost_usd), num(r.on_demand_interruptions.expected_hours, 1), money(r.on_demand_expected_cost_usd),
                      r.spot_offered ? rate(r.spot_usd_per_hour) : spot_money(r, std::nullopt), zones.text, zones.low, zones.high,
                      spot_money(r, r.spot_cost_usd),
                      spot_bucket_cell(r),
                      opt_num(si ? std::optional<double>(si->mtti_hours) : std::nullopt, 1),
                      opt_num(si ? std::optional<double>(si->interval_hours) : std::nullopt, 2),
                      si ? pct(si->waste_fraction) : Cell{"unknown", std::monostate{}},
                      opt_num(si ? std::optional<double>(si->expected_hours) : std::nullopt, 1), spot_money(r, r.spot_expected_cost_usd),
                      saves ? Cell{"$" + thousands(round_cents(*saves), 0), round_cents(*saves)} : spot_money(r, std::nullopt),
                      saves_pct ? pct(*saves_pct) : spot_money(r, std::nullopt), break_even_cell(r),
                      rate(r.savings_1y_usd_per_hour), money(r.savings_1y_cost_usd), monthly(r, r.savings_1y_usd_per_hour),
                      break_even_utilisation(r.savings_1y_usd_per_hour, r.on_demand_usd_per_hour), rate(r.savings_3y_usd_per_hour),
                      money(r.savings_3y_cost_usd), monthly(r, r.savings_3y_usd_per_hour),
                      break_even_utilisation(r.savings_3y_usd_per_hour, r.on_demand_usd_per_hour)});
    append_channel(t.rows.back(), r, *ctx.request);
    append_provenance(t.rows.back(), *r.instance, ctx.request->region, "", is_pick(r, rec), r.channel);
  }
  return t;
}

Table reservation_table(const Recommendation& rec, const RecommendRequest& request) {
  Table t;
  t.columns = {{"instance", "INSTANCE"},
               {"count", "N", true},
               {"hours", "HOURS", true},
               {"ranked_cost_usd", "COST", true},
               {"channel", "VIA"},
               {"on_demand_usd_per_hour", "OD $/H", true},
               {"on_demand_cost_usd", "ON-DEMAND", true},
               {"spot_cost_usd", "SPOT", true},
               {"savings_1y_commitment_usd_per_month", "1Y COMMIT/MO", true, true},
               {"savings_3y_commitment_usd_per_month", "3Y COMMIT/MO", true, true},
               {"capacity_block_usd", "CAP. BLOCK", true, true},
               {"capacity", "CAPACITY", false}};
  for (auto& c : channel_columns()) t.columns.push_back(c);
  for (auto& c : provenance_columns(true, false)) t.columns.push_back(c);
  auto monthly = [&](const RecommendRow& x, std::optional<double> rate) {
    return money(rate ? std::optional<double>(*rate * x.count * kHoursPerMonth) : std::nullopt);
  };
  for (const auto& x : rec.rows) {
    t.rows.push_back({text(x.instance->name), integer(x.count), num(x.estimate.total_hours, 1), money(x.ranked_cost_usd), channel_cell(x),
                      rate(x.on_demand_usd_per_hour), money(x.on_demand_cost_usd), spot_money(x, x.spot_cost_usd), monthly(x, x.savings_1y_usd_per_hour),
                      monthly(x, x.savings_3y_usd_per_hour), money(x.capacity.block_cost_usd),
                      text(x.capacity.note.empty() ? "on demand" : x.capacity.note)});
    append_channel(t.rows.back(), x, request);
    append_provenance(t.rows.back(), *x.instance, request.region, "", is_pick(x, rec), x.channel);
  }
  return t;
}

std::string reservation_json_extra(const Recommendation& rec, const RecommendRequest& r) {
  ordered_json j;
  j["request"] = {{"region", r.region}, {"pricing", std::string(to_string(r.pricing))}};
  j["assumptions"] = ordered_json::array({"no model given: the instances alone are priced for the hours, billed per second with a 60 s minimum"});
  j["options_found"] = rec.options_found;
  if (rec.pick) {
    const RecommendRow& p = *rec.pick;
    j["recommendation"] = {{"instance", p.instance->name}, {"count", p.count}, {"accelerators", p.count * p.instance->accelerator_count},
                           {"total_hours", sig6(p.estimate.total_hours)},
                           {"channel", std::string(to_string(p.channel))}, {"channel_cost_usd", money_json(p.channel_cost_usd)},
                           {"channel_rate_unknown", p.channel_rate_unknown},
                           {"channel_note", p.channel_note.empty() ? ordered_json(nullptr) : ordered_json(p.channel_note)},
                           {"spot_offered", p.spot_offered},
                           {"costs", {{"ranked_usd", money_json(p.ranked_cost_usd)}, {"ranked_pricing", p.ranked_pricing},
                                      {"on_demand_usd", money_json(p.on_demand_cost_usd)}, {"spot_usd", money_json(p.spot_cost_usd)}}},
                           {"capacity", capacity_json(p.capacity)}, {"why", rec.why}};
  }
  return json_text(j);
}

}  // namespace gpuadvisor
