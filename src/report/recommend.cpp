// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// recommend: the ranked table, the chart, the pick in words, the rejections.
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

// "pick", "cheapest", "fastest" (joined) for the option a row is, or "".
// "fastest" is the text's: the fastest within the cost ceiling where there is
// one, and then it says so (faster points beyond the ceiling are drawn too).
std::string chart_role(const RecommendRow& r, const Recommendation& rec, double max_cost_multiple) {
  auto same = [&](const std::optional<RecommendRow>& x) { return x && x->instance == r.instance && x->count == r.count; };
  const std::optional<RecommendRow>& fastest = rec.fastest_within_cost_ceiling ? rec.fastest_within_cost_ceiling : rec.fastest;
  const std::string fastest_name =
      rec.fastest_within_cost_ceiling ? fmt::format("fastest within {:g}x the cheapest price", max_cost_multiple) : "fastest";
  std::string role;
  for (auto [name, x] : {std::pair{std::string("pick"), &rec.pick}, std::pair{std::string("cheapest"), &rec.cheapest}, std::pair{fastest_name, &fastest}})
    if (same(*x)) role += (role.empty() ? "" : ", ") + name;
  return role;
}

// The chart series of a row ranked at a channel other than on demand and spot
// (their series are drawn for every row); none for those two.
std::optional<std::string> chart_series_of_channel(std::string_view ranked_pricing) {
  if (ranked_pricing == to_string(Channel::capacity_block)) return "Capacity Block, whole days billed";
  if (ranked_pricing == to_string(Channel::reservation)) return "reserved at the on-demand rate";
  if (ranked_pricing == to_string(Channel::savings_1y)) return "1-year savings plan";
  if (ranked_pricing == to_string(Channel::savings_3y)) return "3-year savings plan";
  return std::nullopt;
}

}  // namespace

Chart recommendation_chart(const Recommendation& rec, const RecommendContext& ctx) {
  Chart c;
  // A reservation (no model): the instances for the hours given.
  const std::string job = !ctx.model ? (rec.pick ? fmt::format("reservation of {} x {}", rec.pick->instance->name, rec.pick->count) : "reservation")
                          : ctx.rl   ? fmt::format("{} RL ({})", ctx.model->name, to_string(ctx.rl->algorithm))
                                     : fmt::format("{} {}", ctx.model->name, to_string(ctx.workload->task));
  c.title = job + ": total time against total cost";
  c.x_label = "total time (hours)";
  c.y_label = "total cost (USD)";
  c.x_unit = "h";
  c.y_unit = "USD";
  c.region = ctx.request->region;
  // The rows shown, plus the alternatives where another count is cheapest or fastest.
  std::vector<RecommendRow> rows = rec.rows;
  for (const auto* x : {&rec.cheapest, &rec.fastest, &rec.fastest_within_cost_ceiling}) {
    const bool shown = std::any_of(rows.begin(), rows.end(), [&](const RecommendRow& r) {
      return *x && r.instance == (*x)->instance && r.count == (*x)->count;
    });
    if (*x && !shown) rows.push_back(**x);
  }
  // A job's spot point is its expected time and cost with interruptions; where
  // the catalog has no interruption rate for the family, the table says
  // "unknown" and no point is drawn (a weeks-long job on many instances never
  // runs uninterrupted, so its no-interruption price is no total a buyer can
  // have). A reservation (hours given, no model) has no interruption figures:
  // its spot is the snapshot price, as its table ranks it.
  // A row ranked at another channel (a Capacity Block, a savings plan) is drawn at
  // that price too, and carries its role there, as the table does.
  // A job longer than the horizon is never the pick and is listed last: not
  // drawn (a 4-year run would set the chart's scale). Nor is an on-demand
  // price above the count one usually starts on demand: no rate one can have.
  for (const auto& r : rows) {
    if (ctx.model && r.estimate.total_hours > ctx.request->horizon_hours) continue;
    const std::string label = fmt::format("{} x {}", r.instance->name, r.count);
    const std::string role = chart_role(r, rec, ctx.request->max_cost_multiple);
    const bool spot_ranked = r.ranked_pricing == "spot";
    const std::optional<std::string> other = r.ranked_cost_usd ? chart_series_of_channel(r.ranked_pricing) : std::nullopt;
    if (r.on_demand_cost_usd && !beyond_usual_on_demand(*r.instance, r.count))
      c.points.push_back({label, r.estimate.total_hours, *r.on_demand_cost_usd, "on-demand", spot_ranked || other ? "" : role});
    if (other) c.points.push_back({label, r.estimate.total_hours, *r.ranked_cost_usd, *other, role});
    if (!r.spot_offered) continue;  // above the usual spot count: the table says "no spot", so no spot point
    if (r.spot_expected_cost_usd)
      c.points.push_back({label, r.spot_interruptions->expected_hours, *r.spot_expected_cost_usd, "spot, expected with interruptions",
                          spot_ranked ? role : ""});
    else if (r.spot_cost_usd && (spot_ranked || !ctx.model))  // a reservation's hours have no interruption figures at all
      c.points.push_back({label, r.estimate.total_hours, *r.spot_cost_usd, "spot, no interruptions", spot_ranked ? role : ""});
  }
  return c;
}

Table recommendation_table(const Recommendation& rec, const RecommendContext& ctx) {
  if (ctx.rl) return rl_recommendation_table(rec, ctx);
  Table t;
  t.columns = {{"rank", "#", true},
               {"instance", "INSTANCE"},
               {"count", "N", true},
               {"accelerators", "ACC", true, true},
               {"layout", "LAYOUT", false, true},
               {"memory_per_accelerator_gb", "MEM GB", true, true},
               {"memory_percent", "MEM", true},
               {"bound", "BOUND", false, true},
               {"step_time_s", "STEP S", true, true},
               {"tokens_per_second", "TOK/S", true, true},
               {"mfu", "MFU", true},
               {"total_hours", "TIME", true},
               {"ranked_cost_usd", "COST", true},
               {"channel", "VIA"},
               {"on_demand_cost_usd", "ON-DEMAND", true, true},
               {"spot_cost_usd", "SPOT", true, true},
               {"usd_per_million_tokens", "$/MTOK", true, true},
               {"spot_interruption_bucket", "INTERRUPT", false, true},
               {"spot_expected_cost_usd", "SPOT EXP", true, true},
               {"break_even_monthly_interruption", "BREAK-EVEN", true, true},
               {"setup_hours", "SETUP", true, true},
               {"capacity", "CAPACITY", false, true},
               {"pareto", "PARETO", false, true},
               {"pick", "PICK", false, true}};
  for (auto& c : channel_columns()) t.columns.push_back(c);
  for (auto& c : provenance_columns(false, false)) t.columns.push_back(c);
  const int top = ctx.request->top;
  int rank = 0;
  for (const auto& r : rec.rows) {
    if (rank >= top) break;
    ++rank;
    const auto& e = r.estimate;
    t.rows.push_back({integer(rank), text(r.instance->name), integer(r.count), integer(r.count * r.instance->accelerator_count),
                      text(layout_text(e.layout)), num(e.memory.total_gb(), 1), pct(e.memory.total_gb() / e.memory.capacity_gb),
                      text(e.step.bound()), num(e.step.total_s(), 2), num(e.tokens_per_second, 0), pct(e.mfu),
                      hours_cell(e.total_hours), money(r.ranked_cost_usd), channel_cell(r), money(r.on_demand_cost_usd),
                      spot_money(r, r.spot_cost_usd),
                      r.usd_per_million_tokens ? Cell{fmt::format("{:.3g}", *r.usd_per_million_tokens), sig6(*r.usd_per_million_tokens)} : Cell{"unknown", std::monostate{}},
                      spot_bucket_cell(r), spot_money(r, r.spot_expected_cost_usd), break_even_cell(r), hours_cell(e.setup.hours()),
                      capacity_cell(r),
                      {r.pareto ? "yes" : "", r.pareto}, pick_cell(is_pick(r, rec))});
    append_channel(t.rows.back(), r, *ctx.request);
    append_provenance(t.rows.back(), *r.instance, ctx.request->region, "", std::nullopt, r.channel);
  }
  return t;
}

namespace {

// The training stack a row's accuracy band is grouped by.
std::string stack_of(const RecommendRow& r) { return r.estimate.framework ? r.estimate.framework->name : std::string(); }

ordered_json rate_json(const std::optional<StorageRate>& rate) {
  if (!rate) return nullptr;
  return {{"usd", sig6(rate->usd)}, {"unit", rate->unit}, {"as_of", rate->as_of}, {"source", rate->source}};
}

// The rest of the bill (docs/methodology.md §The rest of the bill).
ordered_json bill_json(const JobBill& b) {
  return {{"dataset_gb", sig6(b.dataset_gb)},
          {"model_in_gb", sig6(b.model_in_gb)},
          {"checkpoints_gb", sig6(b.checkpoints_gb)},
          {"final_weights_gb", sig6(b.final_weights_gb)},
          {"s3_gb", sig6(b.s3_gb)},
          {"s3_usd", money_json(b.s3_usd)},
          {"s3_rate", rate_json(b.s3_rate)},
          {"working_store", b.working_store.empty() ? ordered_json(nullptr) : ordered_json(b.working_store)},
          {"working_gb", sig6(b.working_gb)},
          {"working_usd", money_json(b.working_usd)},
          {"working_rate", rate_json(b.working_rate)},
          {"s3_only_storage_usd", money_json(b.s3_only_storage_usd)},
          {"data_region", b.data_region.empty() ? ordered_json(nullptr) : ordered_json(b.data_region)},
          {"transfer_gb", sig6(b.transfer_gb)},
          {"transfer_usd", money_json(b.transfer_usd)},
          {"transfer_rate", rate_json(b.transfer_rate)},
          {"storage_usd", money_json(b.storage_usd)},
          {"total_usd", money_json(b.total_usd)}};
}

ordered_json option_json(const RecommendRow& r, const TrainingWorkload& w, const ModelSpec& m) {
  const std::string task(to_string(w.task));
  const auto& e = r.estimate;
  return {{"instance", r.instance->name},
          {"count", r.count},
          {"accelerators", r.count * r.instance->accelerator_count},
          {"accelerator", r.instance->accelerator_name},
          {"layout", layout_json(e.layout)},
          {"precision", std::string(to_string(e.precision))},
          {"framework", stack_of(r)},
          {"total_hours", sig6(e.total_hours)},
          {"train_hours", sig6(e.train_hours)},
          {"setup_hours", sig6(e.setup.hours())},
          {"channel", std::string(to_string(r.channel))},
          {"channel_cost_usd", money_json(r.channel_cost_usd)},
          {"channel_rate_unknown", r.channel_rate_unknown},
          {"channel_note", r.channel_note.empty() ? ordered_json(nullptr) : ordered_json(r.channel_note)},
          {"spot_offered", r.spot_offered},
          {"costs", {{"ranked_usd", money_json(r.ranked_cost_usd)}, {"ranked_pricing", r.ranked_pricing},
                     {"on_demand_usd", money_json(r.on_demand_cost_usd)}, {"spot_usd", money_json(r.spot_cost_usd)},
                     {"spot_expected_usd", money_json(r.spot_expected_cost_usd)},
                     {"on_demand_expected_usd", money_json(r.on_demand_expected_cost_usd)}}},
          {"capacity", capacity_json(r.capacity)},
          {"accuracy", r.rl ? accuracy_json(r.instance->accelerator_name, "rl")
                            : accuracy_json(r.instance->accelerator_name, task, stack_of(r), m.is_moe())},
          {"rl", r.rl ? rl_json(*r.rl) : ordered_json(nullptr)},
          {"bill", r.bill ? bill_json(*r.bill) : ordered_json(nullptr)}};
}

// A spot row's time is the expected one with reclaims (what its cost pays
// for), the uninterrupted prediction beside it where they read differently.
std::string hours_text(const RecommendRow& r) {
  const std::string expected = format_duration(ranked_hours(r)), uninterrupted = format_duration(r.estimate.total_hours);
  return expected == uninterrupted ? uninterrupted : fmt::format("{} expected with reclaims ({} uninterrupted)", expected, uninterrupted);
}

std::string option_line(const RecommendRow& r) {
  return fmt::format("{} x {} ({} {}{}), {}, {}{}", r.count, r.instance->name, r.count * r.instance->accelerator_count,
                     r.instance->accelerator_name, r.rl ? ", " + rl_placement_text(*r.rl) : "", hours_text(r),
                     r.ranked_cost_usd ? money_text(*r.ranked_cost_usd) : "cost unknown",
                     r.ranked_pricing.empty() ? "" : " " + channel_words(r));
}

}  // namespace

// A pick that fills its accelerators' memory under the model leaves no room for
// a stack that keeps more than the reserve: name the first row with room.
std::string tight_memory_text(const Recommendation& rec) {
  // A row priced for hours given (cost --hours) has no memory estimate.
  const auto estimated = [](const RecommendRow& x) { return x.estimate.memory.capacity_gb > 0; };
  const auto share = [](const RecommendRow& x) { return x.estimate.memory.total_gb() / x.estimate.memory.capacity_gb; };
  if (!estimated(*rec.pick) || share(*rec.pick) < kTightMemoryShare) return "";
  std::string out = fmt::format("  memory: {:.0f}% of each accelerator's under the model (its reserve of 1 GB + 5% included); a stack that keeps "
                                "more (allocator fragmentation, larger communication buffers) may not fit",
                                share(*rec.pick) * 100);
  if (const auto& x = rec.roomier_micro_batch)
    out += fmt::format(": the same {} x {} at micro-batch {} (not {}) is at {:.0f}% in {} ({:+.0f}%)", rec.pick->count, rec.pick->instance->name,
                       x->micro_batch, rec.pick->estimate.layout.micro_batch, x->memory_share * 100, format_duration(x->total_hours),
                       (x->total_hours / rec.pick->estimate.total_hours - 1) * 100);
  for (const auto& x : rec.rows)
    if (x.ranked_cost_usd && estimated(x) && share(x) <= kRoomyMemoryShare && !set_aside_for_lora(x, rec))
      return out + fmt::format("{} the first option with room is {} at {:.0f}%\n", rec.roomier_micro_batch ? "; or" : ":", option_line(x),
                               share(x) * 100);
  return out + "\n";
}

// At scale, hardware failures and checkpoints add materially to the headline
// (which counts the steps and job overheads only): say what `cost` adds.
std::string failures_text(const RecommendRow& pick) {
  if (pick.channel == Channel::spot && pick.spot_interruptions && !pick.rl) {
    if (pick.spot_interruptions->expected_hours < pick.estimate.total_hours * (1 + kFailuresNoteAbove)) return "";
    // Its price is already the expected one: say what it counts, not an on-demand figure beside a spot pick.
    const InterruptionCost& s = *pick.spot_interruptions;
    return fmt::format("  interruptions: the spot price is the expected cost with reclaims and hardware failures (one per {} at this size) "
                       "and checkpoints every {}: expect about {} of wall time (`gpuadvisor cost`)\n",
                       format_duration(s.mtti_hours), format_duration(s.interval_hours), format_duration(s.expected_hours));
  }
  const InterruptionCost& f = pick.on_demand_interruptions;
  if (pick.rl || !pick.on_demand_expected_cost_usd || !pick.on_demand_cost_usd || f.expected_hours <= 0 ||
      *pick.on_demand_expected_cost_usd < *pick.on_demand_cost_usd * (1 + kFailuresNoteAbove))
    return "";
  if (pick.channel == Channel::capacity_block && pick.capacity.block_days) {
    // A block bills its whole days: failures cost time, and money only past the block's end.
    const double block_hours = *pick.capacity.block_days * 24.0;
    return fmt::format("  failures: with hardware failures (one per {} at this size) and checkpoints every {}, expect about {}, {} the "
                       "{}-day block{} (`gpuadvisor cost`; faster checkpoint storage lowers it: --checkpoint-storage, --checkpoint-gb-per-s)\n",
                       format_duration(f.mtti_hours), format_duration(f.interval_hours), format_duration(f.expected_hours),
                       f.expected_hours <= block_hours ? "within" : "longer than", *pick.capacity.block_days,
                       f.expected_hours <= block_hours ? ", so its price stands" : ": buy a longer one");
  }
  return fmt::format("  failures: with hardware failures (one per {} at this size) and checkpoints every {}, expect about {} and ${} at "
                     "the on-demand rate, {:.0f}% more (`gpuadvisor cost`; faster checkpoint storage lowers it: --checkpoint-storage, "
                     "--checkpoint-gb-per-s)\n",
                     format_duration(f.mtti_hours), format_duration(f.interval_hours), format_duration(f.expected_hours),
                     format_thousands(*pick.on_demand_expected_cost_usd, 0),
                     (*pick.on_demand_expected_cost_usd / *pick.on_demand_cost_usd - 1) * 100);
}

// --task qlora: the same job as bf16 LoRA where that is cheaper or faster than the pick.
std::string lora_alternative_text(const Recommendation& rec) {
  if (!rec.lora_alternative || !rec.pick) return "";
  const RecommendRow &lora = *rec.lora_alternative, &p = *rec.pick;
  // By more than 1%: a tie shown as the same figures is neither.
  const bool cheaper = lora.ranked_cost_usd && p.ranked_cost_usd && *lora.ranked_cost_usd < 0.99 * *p.ranked_cost_usd;
  const bool faster = lora.estimate.total_hours < 0.99 * p.estimate.total_hours;
  if (!cheaper && !faster) return "";
  return fmt::format("  bf16 LoRA: {} (--task lora; {} than this QLoRA pick, where its memory fits)\n", option_line(lora),
                     cheaper && faster ? "cheaper and faster" : cheaper ? "cheaper" : "faster");
}

// The fastest one would weigh: within --max-cost-multiple of the cheapest, with
// the fastest at any price after it where that costs more than the ceiling
// (its price as a multiple of the pick's: a 13-minute run for $32,348 beside
// a $36 pick reads as what it is).
template <class Alternative>
std::string fastest_text(const Recommendation& rec, const Alternative& alternative, const RecommendRequest& r) {
  const std::string any_price = alternative(*rec.fastest) + price_multiple_text(rec.fastest->ranked_cost_usd, rec.pick->ranked_cost_usd);
  if (!rec.fastest_within_cost_ceiling) return any_price;
  const RecommendRow& x = *rec.fastest_within_cost_ceiling;
  const bool count_unknown = x.capacity.limit_unknown && x.channel == Channel::on_demand;
  return cost_ceiling_fastest_text(alternative(x) + (count_unknown ? ", no usual count known" : ""), r.max_cost_multiple, any_price);
}

// "26.4 GB", "4.10 TB", "1.2 PB": three significant figures.
std::string gb_text(double gb) {
  if (gb < 0.01) return "under 0.01 GB";
  if (gb >= 1e6) return fmt::format("{:.3g} PB", gb / 1e6);
  if (gb >= 1e3) return fmt::format("{:.3g} TB", gb / 1e3);
  return fmt::format("{:.3g} GB", gb);
}

std::string usd_text(std::optional<double> usd) { return usd ? money_text(*usd) : std::string("unknown"); }

// Storage is often a fraction of a cent (28 GB for 35 minutes): "under $0.01",
// never a "$0.00" that reads as free. `exact` is the unrounded amount.
std::string storage_usd_text(std::optional<double> usd, std::optional<double> exact) {
  if (usd && exact && *exact < 0.005) return money_text_not_free(*exact);
  return usd_text(usd);
}

std::string store_text(const std::string& what, const std::optional<double>& usd, const std::optional<StorageRate>& rate) {
  if (!rate) return what + ": rate not captured";
  // $0.30, $0.023, $0.145: cents always shown, more digits where the rate has them.
  const std::string amount = std::abs(rate->usd * 100 - std::round(rate->usd * 100)) < 1e-9 ? fmt::format("{:.2f}", rate->usd) : fmt::format("{:g}", rate->usd);
  return fmt::format("{}, {} at ${}/{}", what, storage_usd_text(usd, usd), amount, rate->unit);
}

// The pick's storage and transfer beside its compute, and the job's total.
// A commitment's rate prices the run's hours as if the rest of its term were
// used by other work: the headline's cost is that share, and the term is what
// is signed (docs/methodology.md §Cost and ranking).
std::string commitment_text(const RecommendRow& p) {
  const bool one_year = p.channel == Channel::savings_1y;
  if (!one_year && p.channel != Channel::savings_3y) return "";
  const auto rate = one_year ? p.savings_1y_usd_per_hour : p.savings_3y_usd_per_hour;
  if (!rate) return "";
  return fmt::format("  commitment: the cost is the run's hours at the {}-year rate ({}/h an instance), as if the rest of the term is used "
                     "by other work; {} x {} commits {} a month for {} months whatever runs (`gpuadvisor cost --wide` sets the terms side "
                     "by side)\n",
                     one_year ? 1 : 3, money_text(*rate), p.count, p.instance->name, money_text(*rate * p.count * kHoursPerMonth),
                     one_year ? 12 : 36);
}

std::string bill_text(const RecommendRow& p, const RecommendRequest& r) {
  if (!p.bill) return "";
  const JobBill& b = *p.bill;
  std::vector<std::string> parts;
  if (b.working_store == "fsx-lustre")
    parts.push_back(store_text(fmt::format("FSx for Lustre {} TiB (the {:g} GB/s the checkpoint times assume, {:g} MB/s/TiB)",
                                           format_thousands(b.working_gb * 1e9 / kBytesPerGib / 1024, 1), b.working_gb_per_s,
                                           kFsxThroughputMbPerSPerTib),
                               b.working_usd, b.working_rate));
  else if (b.working_store == "efs")
    parts.push_back(store_text(fmt::format("EFS {} (Elastic throughput not included)", gb_text(b.working_gb)), b.working_usd, b.working_rate));
  parts.push_back(store_text(fmt::format("S3 {} (the dataset {}{}{})", gb_text(b.s3_gb), gb_text(b.dataset_gb),
                                         b.model_in_gb > 0 ? ", the weights in and out" : ", the weights out",
                                         b.working_store.empty() ? ", " + std::to_string(kCheckpointsKept) + " checkpoints" : ""),
                             b.s3_usd, b.s3_rate));
  const std::optional<double> exact_storage_usd =
      b.s3_usd && b.working_usd ? std::optional<double>(*b.s3_usd + *b.working_usd) : std::nullopt;  // before rounding to cents
  const std::string storage = storage_usd_text(b.storage_usd, exact_storage_usd);
  std::string out = fmt::format("  storage: {} over the run{}: {}", storage,
                                b.storage_usd ? "" : fmt::format(" (a storage rate for {} is not in the catalog)", r.region), fmt::join(parts, "; "));
  if (b.s3_only_storage_usd && b.storage_usd && p.ranked_cost_usd && *b.storage_usd > 0.05 * *p.ranked_cost_usd)
    out += fmt::format(" (checkpoints in S3 instead: {}, --checkpoint-storage s3)", money_text(*b.s3_only_storage_usd));
  out += "\n";
  const std::string moved = b.model_in_gb > 0 ? "the data and the weights" : "the data";
  if (!b.data_region.empty())
    out += b.transfer_rate ? fmt::format("  transfer: {} ({}) in from {}, {} at ${:g}/GB (charged by the source region)\n", moved,
                                         gb_text(b.transfer_gb), b.data_region, usd_text(b.transfer_usd), b.transfer_rate->usd)
                           : fmt::format("  transfer: {} ({}) in from {}: its inter-region rate is not in the catalog (unknown)\n", moved,
                                         gb_text(b.transfer_gb), b.data_region);
  return out + fmt::format("  job total: {} (compute {}, storage {}{})\n", usd_text(b.total_usd), usd_text(p.ranked_cost_usd), storage,
                           b.data_region.empty() ? "" : ", transfer " + usd_text(b.transfer_usd));
}

// --region any or a list: each region's pick beside this one (methodology §Regions).
std::string regions_text(const Recommendation& rec, const RecommendRequest& r) {
  if (rec.across_regions.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& x : rec.across_regions) {
    std::string part = x.region + (x.region == r.data_region ? " (the data's)" : "") + ": ";
    if (x.chosen) part += "the pick";
    else if (!x.pick) part += "no pick";
    else part += option_line(*x.pick);
    if (x.pick && !x.region.empty() && !r.data_region.empty() && x.region != r.data_region)
      part += x.transfer_usd ? " + " + money_text(*x.transfer_usd) + " moving the data in" : " + moving the data in (rate unknown)";
    parts.push_back(part);
  }
  std::string out = fmt::format("  regions ({} ranked): {}", rec.across_regions.size(), fmt::join(parts, "; "));
  if (r.data_region.empty()) out += " (where the data is was not given: --data-region adds moving it in)";
  return out + "\n";
}

std::string render_pick_text(const Recommendation& rec, const RecommendContext& ctx) {
  if (!rec.pick) return "No option has a known price, so there is no pick; the options below are by time.\n\n";
  std::string out = fmt::format("Recommended: {}\n  why: {}\n", option_line(*rec.pick), rec.why);
  out += fmt::format("  accuracy: {}\n", rec.pick->rl ? accuracy_line(rec.pick->instance->accelerator_name, "rl")
                                                      : accuracy_line(rec.pick->instance->accelerator_name, to_string(ctx.workload->task),
                                                                      stack_of(*rec.pick), ctx.model->is_moe()));
  out += tight_memory_text(rec);
  out += failures_text(*rec.pick);
  out += commitment_text(*rec.pick);
  out += bill_text(*rec.pick, *ctx.request);
  out += regions_text(rec, *ctx.request);
  if (!rec.pick->capacity.note.empty()) out += fmt::format("  capacity: {}\n", rec.pick->capacity.note);
  if (rec.pick->capacity.beyond_on_demand)
    // The usual count's option is labelled "on demand" only where it is bought so (a type without an on-demand rate is priced at its block).
    out += rec.on_demand_pick ? fmt::format("  {}: {} (about {} is the most one usually starts at once{})\n",
                                            rec.on_demand_pick->channel == Channel::on_demand ? "on demand" : "at the usual count",
                                            option_line(*rec.on_demand_pick), *rec.pick->instance->on_demand_max_instances,
                                            rec.on_demand_pick->channel == Channel::on_demand ? "" : "; the catalog has no on-demand rate for it")
                              : fmt::format("  on demand: about {} x {} is the most one usually starts at once, and no option that small "
                                            "fits or meets the constraints\n",
                                            *rec.pick->instance->on_demand_max_instances, rec.pick->instance->name);
  if (const auto& o = rec.other_channels_pick)
    out += fmt::format("  bought another way: {} ({:.1f}x less money{}; --pricing best weighs spot with on demand, Capacity Blocks and "
                       "reservations)\n", option_line(*o), *rec.pick->ranked_cost_usd / *o->ranked_cost_usd,
                       ranked_hours(*o) < ranked_hours(*rec.pick)
                           ? fmt::format(" and {:.1f}x sooner than this spot pick", ranked_hours(*rec.pick) / ranked_hours(*o))
                           : " than this spot pick");
  // An alternative at a count its type's row does not show (each type's row is its own pick): said, so a
  // table pasted without this line still lets a reader find it.
  auto off_table = [&](const RecommendRow& x) {
    const int shown = std::min<int>(ctx.request->top, static_cast<int>(rec.rows.size()));
    const auto row = std::find_if(rec.rows.begin(), rec.rows.begin() + shown, [&](const RecommendRow& y) { return y.instance == x.instance; });
    return !ctx.request->all_counts && row != rec.rows.begin() + shown && row->count != x.count
               ? fmt::format(" (not the count of the table's {} row; --all-counts lists every count)", x.instance->name)
               : std::string();
  };
  auto alternative = [&](const RecommendRow& x) {
    return x.instance == rec.pick->instance && x.count == rec.pick->count ? std::string("the pick") : option_line(x) + off_table(x);
  };
  // QLoRA: the references are among the options that need it, as the pick is.
  const std::string among =
      rec.options_set_aside_for_lora > 0 ? fmt::format(" (bf16 LoRA options on more than {} accelerator{} set aside)", rec.qlora_fewest_accelerators,
                                              rec.qlora_fewest_accelerators > 1 ? "s" : "")
                                : "";
  const auto& u = rec.fastest_unpriced;
  const std::string sooner = u ? fmt::format("; sooner at a price the catalog lacks: {} x {}, {}", u->count, u->instance->name,
                                             format_duration(u->estimate.total_hours))
                               : "";
  out += fmt::format("  cheapest: {}{}\n  fastest:  {}{}{}\n", alternative(*rec.cheapest), among, fastest_text(rec, alternative, *ctx.request), among, sooner);
  out += lora_alternative_text(rec);
  return out + "\n";
}

TrainingWorkload as_lora(TrainingWorkload w) {
  w.task = Task::lora;
  return w;
}

std::string recommendation_json_extra(const Recommendation& rec, const RecommendContext& ctx) {
  ordered_json j;
  j["model"] = model_json(*ctx.model);
  j["workload"] = workload_json(*ctx.workload);
  j["request"] = request_json(*ctx.request);
  j["request"]["all_counts"] = ctx.request->all_counts;
  j["request"]["horizon_hours"] = sig6(ctx.request->horizon_hours);
  j["request"]["value_of_time_usd_per_hour"] = sig6(ctx.request->value_of_time_usd_per_hour);
  j["request"]["max_cost_multiple"] = sig6(ctx.request->max_cost_multiple);
  j["request"]["data_region"] = ctx.request->data_region.empty() ? ordered_json(nullptr) : ordered_json(ctx.request->data_region);
  j["request"]["regions"] = ctx.request->regions.empty() ? std::vector<std::string>{ctx.request->region} : ctx.request->regions;
  ordered_json regions = ordered_json::array();
  for (const auto& x : rec.across_regions)
    regions.push_back({{"region", x.region},
                       {"chosen", x.chosen},
                       {"instance", x.pick ? ordered_json(x.pick->instance->name) : ordered_json(nullptr)},
                       {"count", x.pick ? ordered_json(x.pick->count) : ordered_json(nullptr)},
                       {"total_hours", x.pick ? ordered_json(sig6(x.pick->estimate.total_hours)) : ordered_json(nullptr)},
                       {"ranked_cost_usd", x.pick ? money_json(x.pick->ranked_cost_usd) : ordered_json(nullptr)},
                       {"transfer_usd", money_json(x.transfer_usd)}});
  if (!rec.across_regions.empty()) j["regions"] = regions;  // only with --region any or a list
  j["request"]["deadline_hours"] = ctx.request->deadline_hours ? ordered_json(sig6(*ctx.request->deadline_hours)) : ordered_json(nullptr);
  j["request"]["pick_rule"] = std::string(pick_rule_name(*ctx.request));
  j["request"]["quota_vcpus"] = ctx.request->quota_vcpus;  // {} without --quota-vcpus
  j["options_beyond_horizon"] = rec.beyond_horizon;
  if (ctx.rl) {
    j["workload"]["task"] = "rl";
    j["workload"]["policy_update"] = ctx.workload->task == Task::lora ? "lora" : "full";
    j["rl_workload"] = rl_workload_json(*ctx.rl);
  }
  j["assumptions"] = assumptions_json(*ctx.model, *ctx.workload);
  if (ctx.rl)
    for (const auto& a : ctx.rl->assumptions) j["assumptions"].push_back(a);
  j["options_found"] = rec.options_found;
  if (rec.pick) {
    j["recommendation"] = option_json(*rec.pick, *ctx.workload, *ctx.model);
    j["recommendation"]["why"] = rec.why;
    const auto d = deadline_margin(*rec.pick, *ctx.request);
    j["recommendation"]["deadline_margin"] =
        d ? ordered_json{{"deadline_hours", sig6(d->deadline_hours)}, {"predicted_hours", sig6(d->predicted_hours)},
                         {"p90_abs_error", sig6(d->p90_abs_error)}, {"hours_at_p90", sig6(d->hours_at_p90)},
                         {"exceeds_deadline_at_p90", d->exceeds_deadline_at_p90}}
          : ordered_json(nullptr);
    const auto& roomier = rec.roomier_micro_batch;
    j["recommendation"]["roomier_micro_batch"] =
        roomier ? ordered_json{{"micro_batch", roomier->micro_batch}, {"memory_share", sig6(roomier->memory_share)},
                               {"total_hours", sig6(roomier->total_hours)}}
                : ordered_json(nullptr);
    j["alternatives"] = {{"cheapest", option_json(*rec.cheapest, *ctx.workload, *ctx.model)}, {"fastest", option_json(*rec.fastest, *ctx.workload, *ctx.model)},
                         {"on_demand", rec.on_demand_pick ? option_json(*rec.on_demand_pick, *ctx.workload, *ctx.model) : ordered_json(nullptr)},
                         {"lora", rec.lora_alternative ? option_json(*rec.lora_alternative, as_lora(*ctx.workload), *ctx.model) : ordered_json(nullptr)},
                         {"fastest_unpriced", rec.fastest_unpriced ? option_json(*rec.fastest_unpriced, *ctx.workload, *ctx.model) : ordered_json(nullptr)},
                         {"fastest_within_cost_ceiling", rec.fastest_within_cost_ceiling ? option_json(*rec.fastest_within_cost_ceiling, *ctx.workload, *ctx.model) : ordered_json(nullptr)},
                         {"other_channels", rec.other_channels_pick ? option_json(*rec.other_channels_pick, *ctx.workload, *ctx.model) : ordered_json(nullptr)}};
  } else {
    j["recommendation"] = nullptr;
    j["alternatives"] = {{"cheapest", nullptr}, {"fastest", nullptr}, {"on_demand", nullptr}, {"lora", nullptr}, {"fastest_unpriced", nullptr},
                         {"fastest_within_cost_ceiling", nullptr}, {"other_channels", nullptr}};
  }
  ordered_json details = ordered_json::array();
  int rank = 0;
  for (const auto& r : rec.rows) {
    if (rank++ >= ctx.request->top) break;
    const auto& e = r.estimate;
    details.push_back({{"instance", r.instance->name}, {"count", r.count}, {"layout", layout_json(e.layout)},
                       {"precision", std::string(to_string(e.precision))}});
  }
  j["layouts"] = details;
  ordered_json rej = ordered_json::array();
  for (const auto& x : rec.rejections) rej.push_back({{"instance", x.instance}, {"reason", x.reason}});
  j["cannot_run"] = rej;
  return json_text(j);
}

std::string rejections_json(const std::vector<Rejection>& rejections) {
  ordered_json rej = ordered_json::array();
  for (const auto& x : rejections) rej.push_back({{"instance", x.instance}, {"reason", x.reason}});
  return json_text(ordered_json{{"cannot_run", rej}});
}

std::string render_rejections_text(const std::vector<Rejection>& rejections, size_t limit) {
  if (rejections.empty()) return "";
  std::string out = fmt::format("\nCannot run it ({} instance types):\n", rejections.size());
  size_t n = 0;
  for (const auto& r : rejections) {
    if (n++ >= limit) {
      out += fmt::format("  ... {} more (use --format json for all)\n", rejections.size() - limit);
      break;
    }
    out += fmt::format("  {}: {}\n", r.instance, r.reason);
  }
  return out;
}

}  // namespace gpuadvisor
