// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// catalog list, catalog show, catalog validate and models: their tables and documents.
#include "gpuadvisor/report/report.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
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

namespace {

// catalog show: one instance type, every figure with its sources.
ordered_json accelerator_json(const Accelerator& a) {
  ordered_json acc;
  acc["name"] = a.name;
  acc["vendor"] = a.vendor;
  acc["memory"] = {{"vendor_figure", a.memory_vendor_figure}, {"ec2_reported_gib", a.memory_ec2_reported_gib},
                   {"usable_gib", a.memory_usable_gib}, {"type", a.memory_type}, {"sources", a.memory_sources}};
  acc["memory_bandwidth"] = {{"gb_per_s", a.memory_bandwidth_gb_per_s}, {"sources", a.memory_bandwidth_sources}};
  ordered_json tf;
  for (const auto& [p, v] : a.dense_tflops.entries()) tf[std::string(to_string(p))] = v;
  tf["sources"] = a.dense_tflops_sources;
  acc["dense_tflops"] = tf;
  acc["vector_tflops"] = {{"fp32", a.vector_fp32_tflops ? ordered_json(*a.vector_fp32_tflops) : ordered_json(nullptr)},
                          {"sources", a.vector_tflops_sources}};
  acc["intra_node_link"] = {{"kind", a.link_kind}, {"generation", a.link_generation},
                            {"gb_per_s_per_accelerator", a.link_gb_per_s ? ordered_json(*a.link_gb_per_s) : ordered_json(nullptr)},
                            {"sources", a.link_sources}};
  acc["software"] = a.software;
  acc["note"] = a.note;
  return acc;
}

ordered_json quote_json(const PriceQuote& q) {
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
}

ordered_json instance_json(const Instance& i) {
  ordered_json prices;
  for (const auto& [region, rp] : i.prices)
    prices[region] = {{"on_demand", quote_json(rp.on_demand)}, {"spot", quote_json(rp.spot)}, {"capacity_block", quote_json(rp.capacity_block)}};
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
  return inst;
}

// Every source key the instance, its accelerator and its prices cite.
std::set<std::string> cited_sources(const Instance& i, const Accelerator& a) {
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
  return keys;
}

// What follows a quote's rate: its note and, for spot, the interruption range.
std::string quote_tail(const PriceQuote& q) {
  std::string s;
  if (!q.note.empty()) s += "; " + q.note;
  if (!q.interruption_bucket.empty())
    s += fmt::format("; interruptions {} a month (Spot Advisor as of {})", q.interruption_bucket, q.interruption_as_of);
  return s;
}

std::string quote_text(const PriceQuote& q) {
  if (!q.usd_per_hour) return fmt::format("unknown ({}: {})", q.status, q.note);
  std::string s = fmt::format("${}/h as of {}", *q.usd_per_hour, q.as_of);
  if (q.max_usd_per_hour && *q.max_usd_per_hour != *q.usd_per_hour) s += fmt::format(" (AZ range up to ${})", *q.max_usd_per_hour);
  return s + quote_tail(q);
}

// Spot as every cost uses it: the typical zone (the midpoint of the zones'
// range, docs/methodology.md §Spot's typical zone), with the range beside it.
std::string spot_quote_text(const PriceQuote& q) {
  const std::optional<double> typical = typical_zone_usd_per_hour(q);
  if (!typical || !q.max_usd_per_hour || *q.max_usd_per_hour == *q.usd_per_hour) return quote_text(q);
  return fmt::format("${:.2f}/h in a typical zone (zones ${}-${}) as of {}", *typical, *q.usd_per_hour, *q.max_usd_per_hour, q.as_of) + quote_tail(q);
}

using AddField = std::function<void(std::string, std::string, std::string)>;

void add_instance_fields(const Instance& i, const Accelerator& a, const AddField& add) {
  add("instance", i.name, "");
  add("family", i.family, "");
  add("purchase", i.purchase, "");
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
}

void add_accelerator_fields(const Accelerator& a, const AddField& add) {
  add("accelerator memory", fmt::format("{} (EC2 reports {} GiB; {} GiB used for fit checks)", a.memory_vendor_figure, a.memory_ec2_reported_gib, a.memory_usable_gib), join_sources(a.memory_sources));
  add("memory bandwidth", fmt::format("{} GB/s", a.memory_bandwidth_gb_per_s), join_sources(a.memory_bandwidth_sources));
  std::string tflops;
  for (const auto& [p, v] : a.dense_tflops.entries()) tflops += fmt::format("{}{} {}", tflops.empty() ? "" : ", ", to_string(p), v);
  add("dense TFLOPS", tflops, join_sources(a.dense_tflops_sources));
  add("vector FP32 TFLOPS", a.vector_fp32_tflops ? fmt::format("{}", *a.vector_fp32_tflops) : "not published", join_sources(a.vector_tflops_sources));
  add("intra-node link", a.link_generation + (a.link_gb_per_s ? fmt::format(", {} GB/s per accelerator", *a.link_gb_per_s) : ", bandwidth not published"), join_sources(a.link_sources));
  add("software", a.software == "neuron" ? "AWS Neuron SDK" : "CUDA", "");
}

// Key/value listing for people (table, markdown) and for spreadsheets (csv).
Table instance_fields_table(const Catalog& catalog, const Instance& i, const Accelerator& a, const std::set<std::string>& keys) {
  Table t;
  t.columns = {{"field", "FIELD"}, {"value", "VALUE"}, {"sources", "SOURCES"}};
  const AddField add = [&](std::string f, std::string v, std::string s) { t.rows.push_back({text(f), text(v), text(s)}); };
  add_instance_fields(i, a, add);
  add_accelerator_fields(a, add);
  for (const auto& [region, rp] : i.prices) {
    add(region + " on-demand", quote_text(rp.on_demand), rp.on_demand.source);
    add(region + " spot", spot_quote_text(rp.spot), rp.spot.source);
    if (rp.capacity_block.usd_per_hour) add(region + " capacity block", quote_text(rp.capacity_block), rp.capacity_block.source);
  }
  add("prices", fmt::format("as of {}, {}", catalog.prices_as_of, catalog.prices_origin), "");
  if (!a.note.empty()) add("accelerator note", a.note, "");
  if (!i.note.empty()) add("instance note", i.note, "");
  for (const auto& k : keys) {
    auto it = catalog.sources.find(k);
    if (it != catalog.sources.end()) add("source " + k, it->second.title + " <" + it->second.url + ">", "");
  }
  return t;
}

}  // namespace

std::string render_instance_details(const Catalog& catalog, const Instance& i, const RenderOptions& o) {
  const Accelerator& a = catalog.accelerator_of(i);
  const std::set<std::string> keys = cited_sources(i, a);
  if (o.format == Format::json) {
    ordered_json sources;
    for (const auto& k : keys) {
      auto it = catalog.sources.find(k);
      if (it != catalog.sources.end()) sources[k] = {{"title", it->second.title}, {"url", it->second.url}};
    }
    ordered_json j = envelope(catalog, "catalog show");
    j["instance"] = instance_json(i);
    j["accelerator"] = accelerator_json(a);
    j["sources"] = sources;
    return json_text(j, 2) + "\n";
  }
  RenderOptions wide = o;
  wide.wide = true;
  return render_table(instance_fields_table(catalog, i, a, keys), catalog, "catalog show", "fields", wide);
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
  return json_text(j, 2) + "\n";
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

}  // namespace gpuadvisor
