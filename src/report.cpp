#include "gpuadvisor/report.hpp"
#include "gpuadvisor/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "gpuadvisor/accuracy.hpp"
#include "gpuadvisor/framework.hpp"
#include "gpuadvisor/communication.hpp"
#include "gpuadvisor/compute.hpp"
#include "gpuadvisor/model.hpp"
#include "gpuadvisor/overheads.hpp"
#include "gpuadvisor/quantity.hpp"
#include "report_detail.hpp"

namespace gpuadvisor {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

std::optional<Format> format_from_string(std::string_view s) {
  if (s == "table") return Format::table;
  if (s == "json") return Format::json;
  if (s == "csv") return Format::csv;
  if (s == "markdown" || s == "md") return Format::markdown;
  if (s == "html") return Format::html;
  return std::nullopt;
}

std::string_view tool_version() { return GPUADVISOR_VERSION; }

// Numbers in JSON keep 6 significant digits (money keeps cents) so that the
// same inputs always give the same bytes and no spurious precision.
double sig6(double v) {
  // JSON cannot carry NaN or infinity, and a 0 in their place would be a
  // silent wrong answer: a non-finite result is a bug, reported as one (exit 1).
  if (!std::isfinite(v)) throw std::runtime_error("a computed value is not finite (NaN or infinity)");
  if (v == 0) return 0;
  // Scale by an exact power of ten on the side that keeps it exact: dividing
  // by 1e-5 would print 13015899999.999998 for 1.30159e10.
  const int exponent = 5 - static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (exponent >= 0) {
    const double scale = std::pow(10.0, exponent);
    return std::round(v * scale) / scale;
  }
  const double unit = std::pow(10.0, -exponent);
  return std::round(v / unit) * unit;
}

// Hourly rates keep the catalog's precision (21.957642; AWS lists up to 8
// decimals), only the float noise a discount adds is cut (44.032000000000004 is 44.032).
double rate_json_value(double usd_per_hour) {
  sig6(usd_per_hour);  // refuses NaN and infinity
  return std::round(usd_per_hour * 1e8) / 1e8;
}

namespace report_detail {

std::string thousands(double v, int decimals) { return format_thousands(v, decimals); }

Cell money(std::optional<double> usd) {
  if (!usd) return {"unknown", std::monostate{}};
  sig6(*usd);  // refuses NaN and infinity
  double r = round_cents(*usd);
  return {"$" + thousands(r, r >= 1000 ? 0 : 2), r};
}
Cell rate(std::optional<double> usd) {
  if (!usd) return {"unknown", std::monostate{}};
  return {fmt::format("{:.4g}", *usd), rate_json_value(*usd)};
}
Cell num(double v, int decimals) { return {thousands(v, decimals), sig6(v)}; }
Cell integer(long long v) { return {thousands(double(v), 0), v}; }
Cell text(std::string s) { return {s, s}; }
Cell pct(double fraction) { return {fmt::format("{:.0f}%", fraction * 100), sig6(fraction)}; }
Cell pick_cell(bool is_pick) { return {is_pick ? "yes" : "", is_pick}; }

std::string_view channel_of(const RecommendRow& r, const RecommendRequest& request) {
  return r.ranked_pricing.empty() ? to_string(request.pricing) : std::string_view(r.ranked_pricing);
}

bool is_pick(const RecommendRow& r, const Recommendation& rec) {
  return rec.pick && r.instance == rec.pick->instance && r.count == rec.pick->count;
}

std::vector<Column> provenance_columns(bool with_pick) {
  std::vector<Column> c{{"region", "REGION", false, true, true},
                        {"prices_as_of", "PRICES AS OF", false, true, true},
                        {"spot_advisor_as_of", "SPOT ADVISOR AS OF", false, true, true},
                        {"channel", "CHANNEL", false, true, true}};
  if (with_pick) c.push_back({"pick", "PICK", false, true, true});
  return c;
}

void append_provenance(std::vector<Cell>& row, const Instance& i, const std::string& region, std::string_view channel,
                       std::optional<bool> pick) {
  const auto it = i.prices.find(region);
  auto date = [](const std::string& d) { return d.empty() ? Cell{"unknown", std::monostate{}} : text(d); };
  row.push_back(text(region));
  row.push_back(it == i.prices.end() ? Cell{"unknown", std::monostate{}} : date(it->second.on_demand.as_of));
  row.push_back(it == i.prices.end() ? Cell{"unknown", std::monostate{}} : date(it->second.spot.interruption_as_of));
  row.push_back(text(std::string(channel)));
  if (pick) row.push_back(pick_cell(*pick));
}

ordered_json to_json(const Value& v) {
  return std::visit(
      [](const auto& x) -> ordered_json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else return x;
      },
      v);
}

ordered_json envelope(const Catalog& catalog, std::string_view command) {
  ordered_json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["generated_by"] = fmt::format("gpuadvisor {}", tool_version());
  j["command"] = command;
  j["catalog"] = {{"version", catalog.catalog_version}, {"prices_as_of", catalog.prices_as_of}, {"prices_origin", catalog.prices_origin},
                  {"files", catalog.origins}};
  j["currency"] = catalog.currency;
  return j;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "\"\"";
    else out.push_back(c);
  }
  return out + "\"";
}

std::string csv_value(const Cell& c) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "";
        else if constexpr (std::is_same_v<T, double>) return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, long long>) return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else return csv_field(x);
      },
      c.value);
}

std::string join_sources(const std::vector<std::string>& s) {
  std::string out;
  for (const auto& k : s) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace report_detail
using namespace report_detail;

std::string render_table(const Table& t, const Catalog& catalog, std::string_view command, std::string_view rows_key,
                         const RenderOptions& o, int* hidden_columns, std::string_view extra_json) {
  if (hidden_columns) *hidden_columns = 0;
  if (o.format == Format::html) return html_table(t, o.wide, hidden_columns);
  if (o.format == Format::json) {
    ordered_json j = envelope(catalog, command);
    if (!extra_json.empty()) {
      ordered_json extra = ordered_json::parse(extra_json);
      for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
    }
    ordered_json rows = ordered_json::array();
    for (const auto& r : t.rows) {
      ordered_json row;
      for (size_t c = 0; c < t.columns.size(); ++c) row[t.columns[c].key] = to_json(r[c].value);
      rows.push_back(row);
    }
    j[std::string(rows_key)] = rows;
    return j.dump(2) + "\n";
  }
  if (o.format == Format::csv) {
    std::string out;
    for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + csv_field(t.columns[c].key);
    out += "\n";
    for (const auto& r : t.rows) {
      for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + csv_value(r[c]);
      out += "\n";
    }
    return out;
  }
  std::vector<size_t> shown;
  for (size_t c = 0; c < t.columns.size(); ++c)
    if (!t.columns[c].data_only && (o.wide || !t.columns[c].wide_only || o.format == Format::markdown)) shown.push_back(c);
  const auto data_only = std::count_if(t.columns.begin(), t.columns.end(), [](const Column& c) { return c.data_only; });
  if (hidden_columns) *hidden_columns = static_cast<int>(t.columns.size() - shown.size() - data_only);
  std::vector<size_t> width(t.columns.size(), 0);
  for (size_t c : shown) {
    width[c] = t.columns[c].header.size();
    for (const auto& r : t.rows) width[c] = std::max(width[c], r[c].text.size());
  }
  std::string out;
  if (o.format == Format::markdown) {
    auto md = [](std::string s) {
      std::string o2;
      for (char ch : s) {
        if (ch == '|') o2 += "\\|";
        else o2.push_back(ch);
      }
      return o2;
    };
    out += "|";
    for (size_t c : shown) out += " " + md(t.columns[c].header) + " |";
    out += "\n|";
    for (size_t c : shown) out += t.columns[c].right_align ? " ---: |" : " --- |";
    out += "\n";
    for (const auto& r : t.rows) {
      out += "|";
      for (size_t c : shown) out += " " + md(r[c].text) + " |";
      out += "\n";
    }
    return out;
  }
  auto line = [&](auto get) {
    std::string l;
    for (size_t i = 0; i < shown.size(); ++i) {
      size_t c = shown[i];
      std::string s = get(c);
      const bool last = i + 1 == shown.size();
      if (t.columns[c].right_align) l += std::string(width[c] - s.size(), ' ') + s;
      else l += last ? s : s + std::string(width[c] - s.size(), ' ');
      if (!last) l += "  ";
    }
    return l + "\n";
  };
  out += line([&](size_t c) { return t.columns[c].header; });
  for (const auto& r : t.rows) out += line([&](size_t c) { return r[c].text; });
  return out;
}

// ---------------------------------------------------------------------------
// catalog

Table catalog_table(const Catalog& catalog, const std::vector<const Instance*>& instances, std::string_view region) {
  Table t;
  t.columns = {{"instance", "INSTANCE"},
               {"accelerator", "ACCEL"},
               {"accelerator_count", "N", true},
               {"accelerator_memory_gib", "GIB/ACC", true},
               {"accelerator_bf16_tflops", "BF16 TF", true, true},
               {"accelerator_fp8_tflops", "FP8 TF", true, true},
               {"vcpus", "VCPU", true, true},
               {"memory_gib", "RAM GIB", true, true},
               {"network_gbps", "NET GBPS", true},
               {"efa_version", "EFA", true},
               {"region", "REGION", false, true},
               {"on_demand_usd_per_hour", "OD $/H", true},
               {"spot_usd_per_hour", "SPOT $/H", true},
               {"price_as_of", "PRICE DATE", false, true},
               {"purchase", "PURCHASE", false, true}};
  for (const Instance* i : instances) {
    const Accelerator& a = catalog.accelerator_of(*i);
    auto od = hourly_rate(*i, region, Pricing::on_demand);
    auto spot = hourly_rate(*i, region, Pricing::spot);
    const RegionPrices* rp = i->prices_in(region);
    auto opt_num = [](std::optional<double> v) { return v ? num(*v, 0) : Cell{"-", std::monostate{}}; };
    t.rows.push_back({text(i->name), text(a.name), integer(i->accelerator_count), num(a.memory_usable_gib, 0),
                      opt_num(a.tflops(Precision::bf16)), opt_num(a.tflops(Precision::fp8)), integer(i->vcpus),
                      num(i->memory_gib, 0), num(i->network_gbps, i->network_gbps < 10 ? 1 : 0),
                      i->efa_version ? integer(*i->efa_version) : Cell{"-", std::monostate{}}, text(std::string(region)),
                      od ? rate(od) : Cell{rp ? "n/a" : "-", std::monostate{}},
                      spot ? rate(spot) : Cell{"-", std::monostate{}},
                      text(rp && rp->on_demand.usd_per_hour ? rp->on_demand.as_of : ""), text(i->purchase)});
  }
  return t;
}

std::string render_instance_details(const Catalog& catalog, const Instance& i, const RenderOptions& o) {
  const Accelerator& a = catalog.accelerator_of(i);
  ordered_json acc;
  acc["name"] = a.name;
  acc["vendor"] = a.vendor;
  acc["memory"] = {{"vendor_figure", a.memory_vendor_figure}, {"ec2_reported_gib", a.memory_ec2_reported_gib},
                   {"usable_gib", a.memory_usable_gib}, {"type", a.memory_type}, {"sources", a.memory_sources}};
  acc["memory_bandwidth"] = {{"gb_per_s", a.memory_bandwidth_gb_per_s}, {"sources", a.memory_bandwidth_sources}};
  ordered_json tf;
  for (const auto& [p, v] : a.dense_tflops) tf[std::string(to_string(p))] = v;
  tf["sources"] = a.dense_tflops_sources;
  acc["dense_tflops"] = tf;
  acc["vector_tflops"] = {{"fp32", a.vector_fp32_tflops ? ordered_json(*a.vector_fp32_tflops) : ordered_json(nullptr)},
                          {"sources", a.vector_tflops_sources}};
  acc["intra_node_link"] = {{"kind", a.link_kind}, {"generation", a.link_generation},
                            {"gb_per_s_per_accelerator", a.link_gb_per_s ? ordered_json(*a.link_gb_per_s) : ordered_json(nullptr)},
                            {"sources", a.link_sources}};
  acc["software"] = a.software;
  acc["note"] = a.note;
  ordered_json prices;
  for (const auto& [region, rp] : i.prices) {
    auto quote = [](const PriceQuote& q) {
      ordered_json j;
      j["usd_per_hour"] = q.usd_per_hour ? ordered_json(*q.usd_per_hour) : ordered_json(nullptr);
      if (q.max_usd_per_hour) j["max_usd_per_hour"] = *q.max_usd_per_hour;
      j["status"] = q.status;
      j["as_of"] = q.as_of;
      j["source"] = q.source;
      if (!q.statistic.empty()) j["statistic"] = q.statistic;
      if (!q.note.empty()) j["note"] = q.note;
      if (!q.interruption_bucket.empty())
        j["interruption"] = {{"bucket", q.interruption_bucket}, {"as_of", q.interruption_as_of}, {"source", q.interruption_source}};
      return j;
    };
    prices[region] = {{"on_demand", quote(rp.on_demand)}, {"spot", quote(rp.spot)}, {"capacity_block", quote(rp.capacity_block)}};
  }
  std::set<std::string> keys(i.sources.begin(), i.sources.end());
  for (const auto* v : {&a.memory_sources, &a.memory_bandwidth_sources, &a.dense_tflops_sources, &a.vector_tflops_sources, &a.link_sources})
    keys.insert(v->begin(), v->end());
  for (const auto& [region, rp] : i.prices) {
    if (!rp.on_demand.source.empty()) keys.insert(rp.on_demand.source);
    if (!rp.spot.source.empty()) keys.insert(rp.spot.source);
    if (!rp.spot.interruption_source.empty()) keys.insert(rp.spot.interruption_source);
    if (!rp.capacity_block.source.empty()) keys.insert(rp.capacity_block.source);
  }
  if (!i.capacity_source.empty()) keys.insert(i.capacity_source);
  ordered_json sources;
  for (const auto& k : keys) {
    auto it = catalog.sources.find(k);
    if (it != catalog.sources.end()) sources[k] = {{"title", it->second.title}, {"url", it->second.url}};
  }
  if (o.format == Format::json) {
    ordered_json j = envelope(catalog, "catalog show");
    ordered_json inst;
    inst["name"] = i.name;
    inst["family"] = i.family;
    inst["accelerator_count"] = i.accelerator_count;
    inst["vcpus"] = i.vcpus;
    inst["memory_gib"] = i.memory_gib;
    inst["local_nvme_gb"] = i.local_nvme_gb;
    inst["local_nvme"] = i.local_nvme;
    inst["network_gbps"] = i.network_gbps;
    inst["efa"] = {{"supported", i.efa_supported}, {"version", i.efa_version ? ordered_json(*i.efa_version) : ordered_json(nullptr)}};
    inst["purchase"] = i.purchase;
    inst["capacity"] = {{"capacity_blocks", i.capacity_blocks},
                        {"on_demand_max_instances", i.on_demand_max_instances ? ordered_json(*i.on_demand_max_instances) : ordered_json(nullptr)},
                        {"source", i.capacity_source.empty() ? ordered_json(nullptr) : ordered_json(i.capacity_source)},
                        {"note", i.capacity_note}};
    inst["note"] = i.note;
    inst["sources"] = i.sources;
    inst["prices"] = prices;
    j["instance"] = inst;
    j["accelerator"] = acc;
    j["sources"] = sources;
    return j.dump(2) + "\n";
  }
  // Key/value listing for people (table, markdown) and for spreadsheets (csv).
  Table t;
  t.columns = {{"field", "FIELD"}, {"value", "VALUE"}, {"sources", "SOURCES"}};
  auto add = [&](std::string f, std::string v, std::string s = "") { t.rows.push_back({text(f), text(v), text(s)}); };
  add("instance", i.name);
  add("family", i.family);
  add("purchase", i.purchase);
  const std::string on_demand = i.purchase != "on_demand_and_spot"   ? "not sold"
                                : i.on_demand_max_instances            ? fmt::format("about {} instances at once", *i.on_demand_max_instances)
                                                                       : "no limit known";
  add("capacity", fmt::format("Capacity Blocks: {}; on demand: {}{}", i.capacity_blocks ? "yes" : "no", on_demand,
                              i.capacity_note.empty() ? "" : "; " + i.capacity_note),
      i.capacity_source);
  add("accelerators", fmt::format("{} x {}", i.accelerator_count, a.name), join_sources(i.sources));
  add("vcpus", std::to_string(i.vcpus), join_sources(i.sources));
  add("host memory", fmt::format("{} GiB", i.memory_gib), join_sources(i.sources));
  add("local NVMe", i.local_nvme_gb > 0 ? fmt::format("{} ({} GB)", i.local_nvme, i.local_nvme_gb) : i.local_nvme, join_sources(i.sources));
  add("network", fmt::format("{} Gbps", i.network_gbps), join_sources(i.sources));
  add("EFA", i.efa_supported ? fmt::format("yes, v{}", *i.efa_version) : "no", join_sources(i.sources));
  add("accelerator memory", fmt::format("{} (EC2 reports {} GiB; {} GiB used for fit checks)", a.memory_vendor_figure, a.memory_ec2_reported_gib, a.memory_usable_gib), join_sources(a.memory_sources));
  add("memory bandwidth", fmt::format("{} GB/s", a.memory_bandwidth_gb_per_s), join_sources(a.memory_bandwidth_sources));
  std::string tflops;
  for (const auto& [p, v] : a.dense_tflops) tflops += fmt::format("{}{} {}", tflops.empty() ? "" : ", ", to_string(p), v);
  add("dense TFLOPS", tflops, join_sources(a.dense_tflops_sources));
  add("vector FP32 TFLOPS", a.vector_fp32_tflops ? fmt::format("{}", *a.vector_fp32_tflops) : "not published", join_sources(a.vector_tflops_sources));
  add("intra-node link", a.link_generation + (a.link_gb_per_s ? fmt::format(", {} GB/s per accelerator", *a.link_gb_per_s) : ", bandwidth not published"), join_sources(a.link_sources));
  add("software", a.software == "neuron" ? "AWS Neuron SDK" : "CUDA");
  for (const auto& [region, rp] : i.prices) {
    auto describe = [](const PriceQuote& q) {
      if (!q.usd_per_hour) return fmt::format("unknown ({}: {})", q.status, q.note);
      std::string s = fmt::format("${}/h as of {}", *q.usd_per_hour, q.as_of);
      if (q.max_usd_per_hour && *q.max_usd_per_hour != *q.usd_per_hour) s += fmt::format(" (AZ range up to ${})", *q.max_usd_per_hour);
      if (!q.note.empty()) s += "; " + q.note;
      if (!q.interruption_bucket.empty())
        s += fmt::format("; interruptions {} a month (Spot Advisor as of {})", q.interruption_bucket, q.interruption_as_of);
      return s;
    };
    add(region + " on-demand", describe(rp.on_demand), rp.on_demand.source);
    add(region + " spot", describe(rp.spot), rp.spot.source);
    if (rp.capacity_block.usd_per_hour) add(region + " capacity block", describe(rp.capacity_block), rp.capacity_block.source);
  }
  add("prices", fmt::format("as of {}, {}", catalog.prices_as_of, catalog.prices_origin));
  if (!a.note.empty()) add("accelerator note", a.note);
  if (!i.note.empty()) add("instance note", i.note);
  for (const auto& k : keys) {
    auto it = catalog.sources.find(k);
    if (it != catalog.sources.end()) add("source " + k, it->second.title + " <" + it->second.url + ">");
  }
  RenderOptions wide = o;
  wide.wide = true;
  return render_table(t, catalog, "catalog show", "fields", wide);
}

std::string render_catalog_check(const Catalog& checked, const std::string& file, Format f) {
  if (f != Format::json)
    return fmt::format("{}: valid ({} accelerators, {} instances, catalog {}, prices as of {})\n", file, checked.accelerators.size(),
                       checked.instances.size(), checked.catalog_version, checked.prices_as_of);
  ordered_json j = envelope(checked, "catalog validate");
  j["file"] = file;
  j["valid"] = true;
  j["accelerators"] = checked.accelerators.size();
  j["instances"] = checked.instances.size();
  return j.dump(2) + "\n";
}

Table models_table() {
  Table t;
  t.columns = {{"model", "MODEL"},          {"params_b", "PARAMS (B)", true}, {"active_params_b", "ACTIVE (B)", true},
               {"layers", "LAYERS", true},  {"hidden", "HIDDEN", true},       {"heads", "HEADS", true},
               {"kv_heads", "KV", true},    {"ffn", "FFN", true, true},       {"vocab", "VOCAB", true, true},
               {"experts", "EXPERTS", true, true}, {"source", "SOURCE", false, true}};
  for (const auto& m : model_presets()) {
    t.rows.push_back({text(m.name), num(m.total_params() / 1e9, 2), num(m.active_params() / 1e9, 2), integer(m.layers),
                      integer(m.hidden), integer(m.heads), integer(m.kv_heads), integer(m.ffn), integer(m.vocab),
                      m.is_moe() ? text(fmt::format("{} ({} active)", m.experts, m.active_experts)) : Cell{"-", std::monostate{}},
                      text(m.source)});
  }
  return t;
}

// ---------------------------------------------------------------------------
// recommend

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

std::string money_text(double usd) { return "$" + thousands(round_cents(usd), usd < 1000 ? 2 : 0); }

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

ordered_json accuracy_json(std::string_view accelerator, std::string_view task, std::string_view engine, bool moe) {
  auto b = accuracy_band(accelerator, accuracy_task(task), engine, moe);
  if (!b) return nullptr;
  return {{"group", b->group}, {"cases", b->cases}, {"median_abs_error", sig6(b->median_abs_error)},
          {"p90_abs_error", sig6(b->p90_abs_error)}, {"median_signed_error", sig6(b->median_signed_error)}, {"out_of_sample", true},
          {"note", b->note}};
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
}  // namespace report_detail

namespace {
Cell break_even_cell(const RecommendRow& r) {
  if (r.break_even_monthly_interruption) return pct(*r.break_even_monthly_interruption);
  // Spot is cheaper at any monthly rate: for programs 1 (100%), apart from unknown (null).
  if (r.spot_expected_cost_usd && r.on_demand_expected_cost_usd) return {"spot always", 1.0};
  return {"unknown", std::monostate{}};
}
}  // namespace

Table cost_table(const Recommendation& rec, const RecommendContext& ctx) {
  Table t;
  t.columns = {{"instance", "INSTANCE"},
               {"count", "N", true},
               {"hours", "HOURS", true},
               {"setup_hours", "SETUP H", true, true},
               {"on_demand_usd_per_hour", "OD $/H", true, true},
               {"on_demand_cost_usd", "ON-DEMAND", true},
               {"on_demand_expected_hours", "OD EXP H", true, true},
               {"on_demand_expected_cost_usd", "OD EXP", true, true},
               {"spot_usd_per_hour", "SPOT $/H", true, true},
               {"spot_cost_usd", "SPOT (NO INT.)", true, true},
               {"spot_interruption_bucket", "INTERRUPT", false},
               {"spot_mtti_hours", "MTTI H", true, true},
               {"checkpoint_interval_hours", "CKPT H", true, true},
               {"spot_overhead_fraction", "OVERHEAD", true, true},
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
  for (auto& c : provenance_columns(true)) t.columns.push_back(c);
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
    const auto& si = r.spot_interruptions;
    auto opt_num = [](std::optional<double> v, int d) { return v ? num(*v, d) : Cell{"unknown", std::monostate{}}; };
    t.rows.push_back({text(r.instance->name), integer(r.count), num(r.estimate.total_hours, 1), num(r.estimate.setup.hours(), 2),
                      rate(r.on_demand_usd_per_hour),
                      money(r.on_demand_cost_usd), num(r.on_demand_interruptions.expected_hours, 1), money(r.on_demand_expected_cost_usd),
                      rate(r.spot_usd_per_hour), money(r.spot_cost_usd),
                      r.spot_interruption_bucket.empty() ? Cell{"unknown", std::monostate{}} : text(r.spot_interruption_bucket),
                      opt_num(si ? std::optional<double>(si->mtti_hours) : std::nullopt, 1),
                      opt_num(si ? std::optional<double>(si->interval_hours) : std::nullopt, 2),
                      si ? pct(si->waste_fraction) : Cell{"unknown", std::monostate{}},
                      opt_num(si ? std::optional<double>(si->expected_hours) : std::nullopt, 1), money(r.spot_expected_cost_usd),
                      saves ? Cell{"$" + thousands(round_cents(*saves), 0), round_cents(*saves)} : Cell{"unknown", std::monostate{}},
                      saves_pct ? pct(*saves_pct) : Cell{"unknown", std::monostate{}}, break_even_cell(r),
                      rate(r.savings_1y_usd_per_hour), money(r.savings_1y_cost_usd), monthly(r, r.savings_1y_usd_per_hour),
                      break_even_utilisation(r.savings_1y_usd_per_hour, r.on_demand_usd_per_hour), rate(r.savings_3y_usd_per_hour),
                      money(r.savings_3y_cost_usd), monthly(r, r.savings_3y_usd_per_hour),
                      break_even_utilisation(r.savings_3y_usd_per_hour, r.on_demand_usd_per_hour)});
    append_provenance(t.rows.back(), *r.instance, ctx.request->region, channel_of(r, *ctx.request), is_pick(r, rec));
  }
  return t;
}

Table reservation_table(const Recommendation& rec, const RecommendRequest& request) {
  Table t;
  t.columns = {{"instance", "INSTANCE"},
               {"count", "N", true},
               {"hours", "HOURS", true},
               {"on_demand_usd_per_hour", "OD $/H", true},
               {"on_demand_cost_usd", "ON-DEMAND", true},
               {"spot_cost_usd", "SPOT", true},
               {"savings_1y_commitment_usd_per_month", "1Y COMMIT/MO", true, true},
               {"savings_3y_commitment_usd_per_month", "3Y COMMIT/MO", true, true},
               {"capacity_block_usd", "CAP. BLOCK", true, true},
               {"capacity", "CAPACITY", false}};
  for (auto& c : provenance_columns(true)) t.columns.push_back(c);
  auto monthly = [&](const RecommendRow& x, std::optional<double> rate) {
    return money(rate ? std::optional<double>(*rate * x.count * kHoursPerMonth) : std::nullopt);
  };
  for (const auto& x : rec.rows) {
    t.rows.push_back({text(x.instance->name), integer(x.count), num(x.estimate.total_hours, 1), rate(x.on_demand_usd_per_hour),
                      money(x.on_demand_cost_usd), money(x.spot_cost_usd), monthly(x, x.savings_1y_usd_per_hour),
                      monthly(x, x.savings_3y_usd_per_hour), money(x.capacity.block_cost_usd),
                      text(x.capacity.note.empty() ? "on demand" : x.capacity.note)});
    append_provenance(t.rows.back(), *x.instance, request.region, channel_of(x, request), is_pick(x, rec));
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
                           {"costs", {{"ranked_usd", money_json(p.ranked_cost_usd)}, {"ranked_pricing", p.ranked_pricing},
                                      {"on_demand_usd", money_json(p.on_demand_cost_usd)}, {"spot_usd", money_json(p.spot_cost_usd)}}},
                           {"capacity", capacity_json(p.capacity)}, {"why", rec.why}};
  }
  return j.dump();
}

namespace {

// "pick", "cheapest", "fastest" (joined) for the option a row is, or "".
std::string chart_role(const RecommendRow& r, const Recommendation& rec) {
  auto same = [&](const std::optional<RecommendRow>& x) { return x && x->instance == r.instance && x->count == r.count; };
  std::string role;
  for (auto [name, x] : {std::pair{"pick", &rec.pick}, std::pair{"cheapest", &rec.cheapest}, std::pair{"fastest", &rec.fastest}})
    if (same(*x)) role += (role.empty() ? "" : ", ") + std::string(name);
  return role;
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
  for (const auto* x : {&rec.cheapest, &rec.fastest}) {
    const bool shown = std::any_of(rows.begin(), rows.end(), [&](const RecommendRow& r) {
      return *x && r.instance == (*x)->instance && r.count == (*x)->count;
    });
    if (*x && !shown) rows.push_back(**x);
  }
  // Spot without an interruption estimate is the same series as a service's spot: no interruptions.
  for (const auto& r : rows) {
    const std::string label = fmt::format("{} x {}", r.instance->name, r.count);
    const std::string role = chart_role(r, rec);
    const bool spot_ranked = r.ranked_pricing == "spot";
    if (r.on_demand_cost_usd) c.points.push_back({label, r.estimate.total_hours, *r.on_demand_cost_usd, "on-demand", spot_ranked ? "" : role});
    if (r.spot_expected_cost_usd)
      c.points.push_back({label, r.spot_interruptions->expected_hours, *r.spot_expected_cost_usd, "spot, expected with interruptions",
                          spot_ranked ? role : ""});
    else if (r.spot_cost_usd)
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
               {"on_demand_cost_usd", "ON-DEMAND", true},
               {"spot_cost_usd", "SPOT", true},
               {"usd_per_million_tokens", "$/MTOK", true, true},
               {"spot_interruption_bucket", "INTERRUPT", false, true},
               {"spot_expected_cost_usd", "SPOT EXP", true, true},
               {"break_even_monthly_interruption", "BREAK-EVEN", true, true},
               {"setup_hours", "SETUP", true, true},
               {"capacity", "CAPACITY", false, true},
               {"pareto", "PARETO", false, true},
               {"pick", "PICK", false, true}};
  for (auto& c : provenance_columns(false)) t.columns.push_back(c);
  const int top = ctx.request->top;
  int rank = 0;
  for (const auto& r : rec.rows) {
    if (rank >= top) break;
    ++rank;
    const auto& e = r.estimate;
    t.rows.push_back({integer(rank), text(r.instance->name), integer(r.count), integer(r.count * r.instance->accelerator_count),
                      text(layout_text(e.layout)), num(e.memory.total_gb(), 1), pct(e.memory.total_gb() / e.memory.capacity_gb),
                      text(e.step.bound()), num(e.step.total_s(), 2), num(e.tokens_per_second, 0), pct(e.mfu),
                      hours_cell(e.total_hours), money(r.on_demand_cost_usd), money(r.spot_cost_usd),
                      r.usd_per_million_tokens ? Cell{fmt::format("{:.3g}", *r.usd_per_million_tokens), sig6(*r.usd_per_million_tokens)} : Cell{"unknown", std::monostate{}},
                      r.spot_interruption_bucket.empty() ? Cell{"unknown", std::monostate{}} : text(r.spot_interruption_bucket),
                      money(r.spot_expected_cost_usd), break_even_cell(r), hours_cell(e.setup.hours()),
                      text(r.capacity.column()),
                      {r.pareto ? "yes" : "", r.pareto}, pick_cell(is_pick(r, rec))});
    append_provenance(t.rows.back(), *r.instance, ctx.request->region, channel_of(r, *ctx.request));
  }
  return t;
}

namespace {

// The training stack a row's accuracy band is grouped by.
std::string stack_of(const RecommendRow& r) { return r.estimate.framework ? r.estimate.framework->name : std::string(); }

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
          {"costs", {{"ranked_usd", money_json(r.ranked_cost_usd)}, {"ranked_pricing", r.ranked_pricing},
                     {"on_demand_usd", money_json(r.on_demand_cost_usd)}, {"spot_usd", money_json(r.spot_cost_usd)},
                     {"spot_expected_usd", money_json(r.spot_expected_cost_usd)},
                     {"on_demand_expected_usd", money_json(r.on_demand_expected_cost_usd)}}},
          {"capacity", capacity_json(r.capacity)},
          {"accuracy", r.rl ? accuracy_json(r.instance->accelerator_name, "rl")
                            : accuracy_json(r.instance->accelerator_name, task, stack_of(r), m.is_moe())},
          {"rl", r.rl ? rl_json(*r.rl) : ordered_json(nullptr)}};
}

std::string option_line(const RecommendRow& r) {
  return fmt::format("{} x {} ({} {}{}), {}, {}{}", r.count, r.instance->name, r.count * r.instance->accelerator_count,
                     r.instance->accelerator_name, r.rl ? ", " + rl_placement_text(*r.rl) : "", format_duration(r.estimate.total_hours),
                     r.ranked_cost_usd ? money_text(*r.ranked_cost_usd) : "cost unknown",
                     r.ranked_pricing.empty() ? "" : " " + r.ranked_pricing);
}

}  // namespace

// A pick that fills its accelerators' memory under the model leaves no room for
// a stack that keeps more than the reserve: name the first row with room.
std::string tight_memory_text(const Recommendation& rec) {
  const auto share = [](const RecommendRow& x) { return x.estimate.memory.total_gb() / x.estimate.memory.capacity_gb; };
  if (share(*rec.pick) < kTightMemoryShare) return "";
  std::string out = fmt::format("  memory: {:.0f}% of each accelerator's under the model (its reserve of 1 GB + 5% included); a stack that keeps "
                                "more (allocator fragmentation, larger communication buffers) may not fit",
                                share(*rec.pick) * 100);
  for (const auto& x : rec.rows)
    if (x.ranked_cost_usd && share(x) <= kRoomyMemoryShare)
      return out + fmt::format(": the first option with room is {} at {:.0f}%\n", option_line(x), share(x) * 100);
  return out + "\n";
}

// At scale, hardware failures and checkpoints add materially to the headline
// (which counts the steps and job overheads only): say what `cost` adds.
std::string failures_text(const RecommendRow& pick) {
  const InterruptionCost& f = pick.on_demand_interruptions;
  if (pick.rl || !pick.on_demand_expected_cost_usd || !pick.on_demand_cost_usd || f.expected_hours <= 0 ||
      *pick.on_demand_expected_cost_usd < *pick.on_demand_cost_usd * (1 + kFailuresNoteAbove))
    return "";
  return fmt::format("  failures: with hardware failures (one per {} at this size) and checkpoints every {}, expect about {} and ${} on "
                     "demand, {:.0f}% more (`gpuadvisor cost`; faster checkpoint storage lowers it: --checkpoint-storage, "
                     "--checkpoint-gb-per-s)\n",
                     format_duration(f.mtti_hours), format_duration(f.interval_hours), format_duration(f.expected_hours),
                     format_thousands(*pick.on_demand_expected_cost_usd, 0),
                     (*pick.on_demand_expected_cost_usd / *pick.on_demand_cost_usd - 1) * 100);
}

std::string render_pick_text(const Recommendation& rec, const RecommendContext& ctx) {
  if (!rec.pick) return "No option has a known price, so there is no pick; the options below are by time.\n\n";
  std::string out = fmt::format("Recommended: {}\n  why: {}\n", option_line(*rec.pick), rec.why);
  out += fmt::format("  accuracy: {}\n", rec.pick->rl ? accuracy_line(rec.pick->instance->accelerator_name, "rl")
                                                      : accuracy_line(rec.pick->instance->accelerator_name, to_string(ctx.workload->task),
                                                                      stack_of(*rec.pick), ctx.model->is_moe()));
  out += tight_memory_text(rec);
  out += failures_text(*rec.pick);
  if (!rec.pick->capacity.note.empty()) out += fmt::format("  capacity: {}\n", rec.pick->capacity.note);
  if (rec.pick->capacity.beyond_on_demand)
    out += rec.on_demand_pick ? fmt::format("  on demand: {} (about {} is the most one usually starts at once)\n", option_line(*rec.on_demand_pick),
                                            *rec.pick->instance->on_demand_max_instances)
                              : fmt::format("  on demand: about {} x {} is the most one usually starts at once, and no option that small "
                                            "fits or meets the constraints\n",
                                            *rec.pick->instance->on_demand_max_instances, rec.pick->instance->name);
  auto alternative = [&](const RecommendRow& x) {
    return x.instance == rec.pick->instance && x.count == rec.pick->count ? std::string("the pick") : option_line(x);
  };
  out += fmt::format("  cheapest: {}\n  fastest:  {}\n\n", alternative(*rec.cheapest), alternative(*rec.fastest));
  return out;
}

std::string recommendation_json_extra(const Recommendation& rec, const RecommendContext& ctx) {
  ordered_json j;
  j["model"] = model_json(*ctx.model);
  j["workload"] = workload_json(*ctx.workload);
  j["request"] = {{"region", ctx.request->region}, {"pricing", std::string(to_string(ctx.request->pricing))},
                  {"sort_by", std::string(to_string(ctx.request->sort_by))}, {"top", ctx.request->top},
                  {"max_instances", ctx.request->max_instances}};
  j["request"]["cost_slack"] = ctx.request->cost_slack;
  j["request"]["all_counts"] = ctx.request->all_counts;
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
    j["alternatives"] = {{"cheapest", option_json(*rec.cheapest, *ctx.workload, *ctx.model)}, {"fastest", option_json(*rec.fastest, *ctx.workload, *ctx.model)},
                         {"on_demand", rec.on_demand_pick ? option_json(*rec.on_demand_pick, *ctx.workload, *ctx.model) : ordered_json(nullptr)}};
  } else {
    j["recommendation"] = nullptr;
    j["alternatives"] = {{"cheapest", nullptr}, {"fastest", nullptr}, {"on_demand", nullptr}};
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
  return j.dump();
}

std::string rejections_json(const std::vector<Rejection>& rejections) {
  ordered_json rej = ordered_json::array();
  for (const auto& x : rejections) rej.push_back({{"instance", x.instance}, {"reason", x.reason}});
  return ordered_json{{"cannot_run", rej}}.dump();
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

// ---------------------------------------------------------------------------
// estimate

std::string render_estimate(const Catalog& catalog, const EstimateContext& ctx, const RenderOptions& o) {
  const TrainingEstimate& e = *ctx.estimate;
  const Cluster& c = *ctx.cluster;
  const double hours = e.total_hours;
  std::optional<double> od_cost, spot_cost;
  if (ctx.on_demand_usd_per_hour) od_cost = *ctx.on_demand_usd_per_hour * c.count * billed_hours(hours);
  if (ctx.spot_usd_per_hour) spot_cost = *ctx.spot_usd_per_hour * c.count * billed_hours(hours);
  const JobOverheads& su = e.setup;
  const double mtok = ctx.workload->total_tokens() / 1e6;
  if (o.format == Format::json) {
    ordered_json j = envelope(catalog, "estimate");
    j["model"] = model_json(*ctx.model);
    j["workload"] = workload_json(*ctx.workload);
    j["assumptions"] = assumptions_json(*ctx.model, *ctx.workload);
    j["instance"] = c.instance->name;
    j["count"] = c.count;
    j["accelerators"] = c.accelerators();
    j["region"] = ctx.region;
    j["precision"] = to_string(e.precision);
    j["fits"] = e.fits();
    j["layout"] = layout_json(e.layout);
    const auto& m = e.memory;
    j["memory"] = {{"per_accelerator_gb", sig6(m.total_gb())}, {"capacity_gb", sig6(m.capacity_gb)},
                   {"weights_gb", sig6(m.weights_gb)}, {"gradients_gb", sig6(m.gradients_gb)},
                   {"optimizer_gb", sig6(m.optimizer_gb)}, {"adapters_gb", sig6(m.adapters_gb)},
                   {"activations_gb", sig6(m.activations_gb)}, {"logits_gb", sig6(m.logits_gb)},
                   {"workspace_gb", sig6(m.workspace_gb)}, {"reserve_gb", sig6(m.reserve_gb)}};
    j["step_time_s"] = sig6(e.step.total_s());
    j["time"] = {{"compute_s", sig6(e.step.compute_s)}, {"elementwise_s", sig6(e.step.elementwise_s)},
                 {"tensor_parallel_s", sig6(e.step.tensor_parallel_s)}, {"context_parallel_s", sig6(e.step.context_parallel_s)},
                 {"expert_parallel_s", sig6(e.step.expert_parallel_s)}, {"pipeline_p2p_s", sig6(e.step.pipeline_p2p_s)},
                 {"pipeline_bubble_s", sig6(e.step.bubble_s)}, {"data_parallel_exposed_s", sig6(e.step.data_parallel_s)},
                 {"memory_bound_s", sig6(e.step.memory_bound_s)}, {"bound", e.step.bound()},
                 {"micro_batches", e.micro_batches}, {"steps", e.steps}, {"train_hours", sig6(e.train_hours)},
                 {"setup_hours", sig6(su.hours())},
                 {"setup", {{"provision_s", sig6(su.provision_s)}, {"image_pull_s", sig6(su.image_pull_s)},
                            {"weight_load_s", sig6(su.weight_load_s)}, {"communicator_init_s", sig6(su.communicator_init_s)},
                            {"neuron_compile_s", sig6(su.neuron_compile_s)}, {"final_checkpoint_s", sig6(su.final_checkpoint_s)}}},
                 {"total_hours", sig6(hours)}};
    j["throughput"] = {{"tokens_per_second", sig6(e.tokens_per_second)},
                       {"tokens_per_second_per_accelerator", sig6(e.tokens_per_second_per_accelerator)},
                       {"model_tflops_per_accelerator", sig6(e.model_tflops_per_accelerator)},
                       {"model_flops_per_token", sig6(e.model_flops_per_token)},
                       {"hardware_flops_per_token", sig6(e.hardware_flops_per_token)},
                       {"compute_efficiency", sig6(e.compute_efficiency)}};
    j["mfu"] = sig6(e.mfu);
    j["framework"] = e.framework ? e.framework->name : std::string();
    j["accuracy"] = accuracy_json(c.accelerator->name, to_string(ctx.workload->task), framework_for(*c.accelerator, ctx.workload->framework).name,
                                 ctx.model->is_moe());
    auto m2 = [](std::optional<double> v) { return v ? ordered_json(round_cents(*v)) : ordered_json(nullptr); };
    j["cost"] = {{"on_demand_usd_per_hour_per_instance", ctx.on_demand_usd_per_hour ? ordered_json(rate_json_value(*ctx.on_demand_usd_per_hour)) : ordered_json(nullptr)},
                 {"spot_usd_per_hour_per_instance", ctx.spot_usd_per_hour ? ordered_json(rate_json_value(*ctx.spot_usd_per_hour)) : ordered_json(nullptr)},
                 {"on_demand_usd", m2(od_cost)}, {"spot_usd", m2(spot_cost)},
                 {"on_demand_usd_per_million_tokens", od_cost ? ordered_json(sig6(*od_cost / mtok)) : ordered_json(nullptr)},
                 {"spot_usd_per_million_tokens", spot_cost ? ordered_json(sig6(*spot_cost / mtok)) : ordered_json(nullptr)},
                 {"spot_note", "spot_usd assumes no interruptions; `gpuadvisor cost` gives the expected cost with reclaims and failures"}};
    return j.dump(2) + "\n";
  }
  Table t;
  t.columns = {{"section", "SECTION"}, {"item", "ITEM"}, {"value", "VALUE", true}, {"unit", "UNIT"}};
  auto add = [&](std::string s, std::string i, Cell v, std::string u) { t.rows.push_back({text(s), text(i), v, text(u)}); };
  const auto& m = e.memory;
  add("config", "instance", text(fmt::format("{} x {}", c.count, c.instance->name)), "");
  add("config", "accelerators", integer(c.accelerators()), c.accelerator->name);
  add("config", "layout", text(layout_text(e.layout)), "");
  add("config", "precision", text(std::string(to_string(e.precision))), "");
  if (e.framework)
    add("config", "framework", text(e.framework->name),
        fmt::format("{}; matrices at {:.2f} of Megatron-Core's", e.framework->title, e.framework->compute_factor(e.precision)));
  add("memory", "weights", num(m.weights_gb, 2), "GB");
  add("memory", "gradients", num(m.gradients_gb, 2), "GB");
  add("memory", "optimizer (fp32 master + Adam)", num(m.optimizer_gb, 2), "GB");
  if (m.adapters_gb > 0) add("memory", "LoRA adapters + state", num(m.adapters_gb, 3), "GB");
  add("memory", "activations", num(m.activations_gb, 2), "GB");
  add("memory", "logits (fp32)", num(m.logits_gb, 2), "GB");
  if (m.workspace_gb > 0) add("memory", "workspace", num(m.workspace_gb, 2), "GB");
  add("memory", "runtime reserve", num(m.reserve_gb, 2), "GB");
  add("memory", "total per accelerator", num(m.total_gb(), 2), "GB");
  add("memory", "capacity", num(m.capacity_gb, 2), e.fits() ? "GB (fits)" : "GB (DOES NOT FIT)");
  add("time", "compute (matrices, attention)", num(e.step.compute_s, 3), "s/step");
  add("time", "elementwise (norms, activations)", num(e.step.elementwise_s, 3), "s/step");
  add("time", "tensor-parallel comm (exposed)", num(e.step.tensor_parallel_s, 3), "s/step");
  if (e.layout.cp > 1) add("time", "context-parallel K/V ring (exposed)", num(e.step.context_parallel_s, 3), "s/step");
  if (e.step.expert_parallel_s > 0) add("time", "expert all-to-all", num(e.step.expert_parallel_s, 3), "s/step");
  if (e.step.pipeline_p2p_s > 0) add("time", "pipeline p2p", num(e.step.pipeline_p2p_s, 3), "s/step");
  add("time", "pipeline bubble", num(e.step.bubble_s, 3), "s/step");
  add("time", "data-parallel (exposed)", num(e.step.data_parallel_s, 3), "s/step");
  add("time", "memory-bound (optimizer, dequant)", num(e.step.memory_bound_s, 3), "s/step");
  add("time", "step", num(e.step.total_s(), 3), "s (" + e.step.bound() + "-bound)");
  add("time", "steps", num(e.steps, 0), "");
  add("time", "training (steps x step)", hours_cell(e.train_hours), "");
  add("setup", "provisioning and boot", num(su.provision_s, 0), "s");
  add("setup", "container image pull", num(su.image_pull_s, 0), "s");
  add("setup", "loading weights", num(su.weight_load_s, 0), "s");
  add("setup", "communicator start-up", num(su.communicator_init_s, 0), "s");
  if (su.neuron_compile_s > 0) add("setup", "Neuron compilation", num(su.neuron_compile_s, 0), "s");
  add("setup", "final checkpoint", num(su.final_checkpoint_s, 0), "s");
  add("setup", "total", hours_cell(su.hours()), "");
  add("time", "total (training + setup)", hours_cell(hours), "");
  add("throughput", "tokens/s", num(e.tokens_per_second, 0), "whole job");
  add("throughput", "tokens/s per accelerator", num(e.tokens_per_second_per_accelerator, 1), "");
  add("throughput", "model TFLOP/s per accelerator", num(e.model_tflops_per_accelerator, 1), "");
  add("throughput", "MFU", pct(e.mfu), "of dense " + std::string(to_string(e.precision)) + " peak");
  add("cost", "on-demand", money(od_cost), std::string(ctx.region) + ", billed per second, 60 s minimum");
  add("cost", "spot (no interruptions)", money(spot_cost), ctx.region);
  add("cost", "on-demand per million tokens", od_cost ? num(*od_cost / mtok, 2) : Cell{"unknown", std::monostate{}}, "USD");
  RenderOptions wide = o;
  wide.wide = true;
  return render_table(t, catalog, "estimate", "items", wide) +
         fmt::format("accuracy: {}\n", accuracy_line(c.accelerator->name, to_string(ctx.workload->task),
                                                     framework_for(*c.accelerator, ctx.workload->framework).name, ctx.model->is_moe()));
}

std::string explain_estimate(const EstimateContext& ctx) {
  const TrainingEstimate& e = *ctx.estimate;
  const ModelSpec& m = *ctx.model;
  const TrainingWorkload& w = *ctx.workload;
  const Cluster& c = *ctx.cluster;
  const Layout& l = e.layout;
  const Accelerator& a = *c.accelerator;
  std::string out = "How these numbers were computed (docs/methodology.md):\n";
  out += fmt::format("  parameters N = {:.4g} (active {:.4g}); matmul parameters per token = {:.4g}\n", m.total_params(),
                     m.active_params(), matmul_params_per_token(m));
  out += fmt::format("  model FLOPs/token = {} = {:.4g} (causal: the lower half of the attention matrix; PaLM's whole-matrix count {:.4g});"
                     " hardware count, with recompute and the whole matrix {:.4g}\n",
                     is_adapter_task(w.task) ? "4 x matmul parameters + 6N_adapter + 6 L H Q T" : "6 x matmul parameters per token + 6 L H Q T",
                     e.model_flops_per_token, e.model_flops_per_token_full_attention, e.hardware_flops_per_token);
  const Precision attention_p = attention_precision(a, e.precision);
  out += fmt::format("  matrix efficiency = {:.3f} (max for {} {}) x w/(w+256) x n/(n+256), w = hidden/tp = {}, n = mb x seq / cp = {}"
                     " (MoE experts: w = expert ffn/etp, n = their share of the tokens)\n",
                     max_compute_fraction(a, e.precision), a.name, to_string(e.precision), m.hidden / l.tp, l.micro_batch * w.seq_len / l.cp);
  out += fmt::format("  compute/step = micro-batches {} x tokens/mb / (tp x pp) x [matrix FLOPs/token / (peak {} TFLOPS x eff)"
                     " + attention FLOPs/token x {} / ({} peak {} TFLOPS x {:.3f})] / framework factor {:.2f} ({}) = {:.3f} s"
                     " (overall {:.3f} of the {} peak)\n",
                     e.micro_batches, a.tflops(e.precision).value_or(0),
                     w.flash_attention ? "0.5 executed (causal, fused kernel)" : "1 (full matrix, no fused kernel)", to_string(attention_p),
                     a.tflops(attention_p).value_or(0),
                     max_compute_fraction(a, attention_p), e.framework ? e.framework->compute_factor(e.precision) : 1.0,
                     e.framework ? e.framework->name : "megatron", e.step.compute_s, e.compute_efficiency, to_string(e.precision));
  if (attention_p != e.precision)
    out += fmt::format("  the output projection ({:.4g} FLOPs/token: {} x vocab x hidden) runs at the {} peak, as the attention products:"
                       " fp8/fp4 recipes keep it in 16-bit\n",
                       output_layer_training_flops_per_token(m, is_adapter_task(w.task)), is_adapter_task(w.task) ? 4 : 6, to_string(attention_p));
  const double rebuilt = l.recompute_share(double(m.layers) / l.pp);
  const double expert_extra = expert_mlp_extra_bytes_per_routed_token(m);
  const std::string extras = (e.precision == Precision::fp8 || e.precision == Precision::fp4 ? " + fp8/fp4 casts of the matrix inputs" : "") +
                             (expert_extra > 0 ? fmt::format(" + {:.4g} bytes per routed token and MoE layer: the expert clamp and bias passes", expert_extra)
                                               : std::string());
  out += fmt::format("  elementwise/step = micro-batches x {:.4g} bytes/token ({:.3g} passes over the stored activations x layers/pp{}"
                     " + 4 passes over fp32 logits / pp) x tokens/mb / (cp x tp) / ({:.0f} GB/s x {:.3f}) = {:.3f} s\n",
                     elementwise_bytes_per_token(m, w, l, e.precision), activation_traffic_per_stored_byte(l.recompute, rebuilt), extras,
                     a.memory_bandwidth_gb_per_s, a.efficiency.memory_bandwidth_fraction, e.step.elementwise_s);
  out += fmt::format("  bubble = (pp - 1) x slot / vp = {} x ... / {} = {:.3f} s\n", l.pp - 1, l.vp, e.step.bubble_s);
  out += fmt::format("  tensor parallel exposed = max(0, layers/pp x {:.3g} all-reduces x 2(tp-1)/tp x 2 h tokens_mb/cp / {:.0f} GB/s"
                     " - matrix time) per micro-batch, for the step = {:.3f} s\n",
                     4 + 2 * rebuilt, intra_node_gb_per_s(a), e.step.tensor_parallel_s);
  if (l.cp > 1)
    out += fmt::format("  context parallel exposed = max(0, layers/pp x {:.3g} x (cp-1) x 2 x K/V width {} x tokens_mb/cp / tp / bw - attention time)"
                       " per micro-batch, for the step = {:.3f} s\n",
                       3 + rebuilt, stored_kv_width(m), e.step.context_parallel_s);
  out += fmt::format("  data parallel exposed = max(0, 2(n-1)/n x 2 bytes x trainable params / bw - 2/3 x mb compute), n = dp x cp = {:.3f} s"
                     " (across instances {:.1f} GB/s for each tp-strided data-parallel group: its members' share of the NVLink domain's network)\n",
                     e.step.data_parallel_s, ring_across_domains_gb_per_s(*c.instance, a, std::max(1, c.instance->nvlink_domain() / l.tp)));
  out += fmt::format("  step = {:.3f} s; steps = ceil(tokens x epochs / (global batch x seq)) = {:.0f}; training = {:.2f} h\n",
                     e.step.total_s(), e.steps, e.train_hours);
  const JobOverheads& su = e.setup;
  out += fmt::format("  setup = provisioning {:.0f} s + image pull {:.0f} s (image GB / 0.06 GB/s) + weights {:.0f} s (GB per instance x instances"
                     " / storage read GB/s) + communicators {:.0f} s (15 s + 0.04 s x ranks) + Neuron compile {:.0f} s + final checkpoint"
                     " {:.0f} s (checkpoint GB / write GB/s) = {:.0f} s; total = training + setup = {:.2f} h, billed per second (60 s minimum)\n",
                     su.provision_s, su.image_pull_s, su.weight_load_s, su.communicator_init_s, su.neuron_compile_s, su.final_checkpoint_s,
                     su.total_s(), e.total_hours);
  out += fmt::format("  memory = weights {:.2f} + grads {:.2f} + optimizer {:.2f} + adapters {:.3f} + activations {:.2f} + logits {:.2f}"
                     " + workspace {:.2f} + reserve {:.2f} (1 GB + 5% of capacity) = {:.2f} GB of {:.2f} GB\n",
                     e.memory.weights_gb, e.memory.gradients_gb, e.memory.optimizer_gb, e.memory.adapters_gb, e.memory.activations_gb,
                     e.memory.logits_gb, e.memory.workspace_gb, e.memory.reserve_gb, e.memory.total_gb(), e.memory.capacity_gb);
  out += fmt::format("  MFU = model FLOPs/token x tokens/s per accelerator / peak = {:.4g} x {:.4g} / {} TFLOPS = {:.1f}%\n",
                     e.model_flops_per_token, e.tokens_per_second_per_accelerator, a.tflops(e.precision).value_or(0), e.mfu * 100);
  return out;
}

}  // namespace gpuadvisor
