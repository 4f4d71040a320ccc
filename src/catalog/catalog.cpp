// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
#include "gpuadvisor/catalog/catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include <fmt/ranges.h>
#include <sstream>

#include "gpuadvisor/base/errors.hpp"
#include "base/json_input.hpp"
#include "gpuadvisor/base/files.hpp"

namespace gpuadvisor {

namespace {
const std::set<std::string> kTopLevelKeys{"schema_version", "catalog_version", "prices_as_of", "currency", "description",
                                          "sources", "accelerators", "instances", "storage_prices", "notes", "$comment"};
}

extern const char* const embedded_catalog_json;
extern const std::size_t embedded_catalog_json_size;

using nlohmann::json;

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    case Precision::fp8: return "fp8";
    case Precision::fp4: return "fp4";
    case Precision::int8: return "int8";
  }
  return "?";
}

std::optional<Precision> precision_from_string(std::string_view s) {
  for (Precision p : {Precision::bf16, Precision::fp16, Precision::fp8, Precision::fp4, Precision::int8})
    if (to_string(p) == s) return p;
  return std::nullopt;
}

const RegionPrices* Instance::prices_in(std::string_view region) const {
  auto it = prices.find(std::string(region));
  return it == prices.end() ? nullptr : &it->second;
}

const Accelerator* Catalog::find_accelerator(std::string_view name) const {
  for (const auto& a : accelerators)
    if (a.name == name) return &a;
  return nullptr;
}

const Instance* Catalog::find_instance(std::string_view name) const {
  for (const auto& i : instances)
    if (i.name == name) return &i;
  return nullptr;
}

const StorageRate* Catalog::storage_rate(std::string_view region, std::string_view key) const {
  const auto r = storage_prices.find(std::string(region));
  if (r == storage_prices.end()) return nullptr;
  const auto k = r->second.find(std::string(key));
  return k == r->second.end() ? nullptr : &k->second;
}

const Accelerator& Catalog::accelerator_of(const Instance& instance) const {
  const Accelerator* a = find_accelerator(instance.accelerator_name);
  if (!a) throw InputError(fmt::format("instance {} names unknown accelerator {}", instance.name, instance.accelerator_name));
  return *a;
}

std::vector<std::string> Catalog::nearest_instance_names(std::string_view name, size_t limit) const {
  std::vector<std::string> names;
  for (const auto& i : instances) names.push_back(i.name);
  return nearest_names(name, names, limit);
}

std::string Catalog::spot_advisor_as_of() const {
  std::string oldest;
  for (const auto& i : instances)
    for (const auto& [region, p] : i.prices)
      if (!p.spot.interruption_as_of.empty() && (oldest.empty() || p.spot.interruption_as_of < oldest)) oldest = p.spot.interruption_as_of;
  return oldest;
}

std::string_view embedded_catalog_text() {
  return std::string_view(embedded_catalog_json, embedded_catalog_json_size);
}

CatalogSource embedded_catalog_source() { return {"<embedded catalog>", std::string(embedded_catalog_text()), true}; }

CatalogSource read_catalog_file(const std::string& path) { return {path, read_input_file(path, "a catalog file")}; }

bool valid_commitment_name(std::string_view name) {
  for (const char* kind : {"compute-savings-plan-", "ec2-savings-plan-", "reserved-standard-", "reserved-convertible-"}) {
    if (name.rfind(kind, 0) != 0) continue;
    std::string_view rest = name.substr(std::string_view(kind).size());
    for (const char* term : {"1yr-", "3yr-"})
      for (const char* pay : {"no-upfront", "partial-upfront", "all-upfront"})
        if (rest == std::string(term) + pay) return true;
  }
  return false;
}

std::optional<double> interruption_bucket_monthly_fraction(std::string_view bucket) {
  // The upper edge of each Spot Instance Advisor range (">20%" taken as 30%).
  if (bucket == "<5%") return 0.05;
  if (bucket == "5-10%") return 0.10;
  if (bucket == "10-15%") return 0.15;
  if (bucket == "15-20%") return 0.20;
  if (bucket == ">20%") return 0.30;
  return std::nullopt;
}

std::optional<long> days_between(std::string_view a, std::string_view b) {
  auto parse = [](std::string_view s) -> std::optional<long> {
    int y, m, d;
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
    if (std::sscanf(std::string(s).c_str(), "%4d-%2d-%2d", &y, &m, &d) != 3) return std::nullopt;
    static constexpr int kDaysInMonth[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m < 1 || m > 12 || d < 1 || d > kDaysInMonth[m - 1] || (m == 2 && d == 29 && !leap)) return std::nullopt;
    // Days from civil (Howard Hinnant's algorithm).
    y -= m <= 2;
    const long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long>(doe) - 719468;
  };
  auto da = parse(a), db = parse(b);
  if (!da || !db) return std::nullopt;
  return *db - *da;
}

// ---------------------------------------------------------------------------
// Validation. Every error names the file, the entry and the field.
namespace {

struct Ctx {
  const std::string& origin;
  std::string entry;  // e.g. "instances[3] 'g5.xlarge'"

  [[noreturn]] void fail(std::string_view field, std::string_view problem) const {
    if (entry.empty()) throw InputError(fmt::format("{}: field '{}': {}", origin, field, problem));
    throw InputError(fmt::format("{}: {}: field '{}': {}", origin, entry, field, problem));
  }
};

std::string describe(const json& v) { return json_excerpt(v); }

// Every key of `obj` must be one the reader knows: a misspelt key ("price" for
// "prices") would otherwise change nothing while the overlay reads as applied.
void refuse_unknown_keys(const json& obj, std::initializer_list<const char*> known, const Ctx& ctx) {
  if (auto u = unknown_key(obj, std::vector<std::string>(known.begin(), known.end()))) ctx.fail(u->key, u->message);
}

const json& require(const json& obj, const char* key, const Ctx& ctx) {
  auto it = obj.find(key);
  if (it == obj.end()) ctx.fail(key, "is missing");
  return *it;
}

std::string req_string(const json& obj, const char* key, const Ctx& ctx) {
  const json& v = require(obj, key, ctx);
  if (!v.is_string()) ctx.fail(key, fmt::format("expected a string, got {}", describe(v)));
  std::string s = v.get<std::string>();
  if (s.empty()) ctx.fail(key, "must not be empty");
  return s;
}

// A name that reaches scripts, manifests and terminals as it is (an instance
// type, its family, an accelerator, a region): letters, digits and ._- only,
// starting with a letter or digit, as every AWS name is. Anything else in a
// catalog or an overlay is refused, never quoted: an overlay's instance named
// 'x$(cmd)' would otherwise run cmd from the launch files' EFA check.
void check_catalog_name(const std::string& name, const char* key, const Ctx& ctx) {
  const bool plain = !name.empty() && std::isalnum(static_cast<unsigned char>(name[0])) &&
                     std::all_of(name.begin(), name.end(), [](char ch) {
                       return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-';
                     });
  if (plain) return;
  std::string shown;
  for (const char ch : name) shown += std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
  ctx.fail(key, fmt::format("'{}': a name holds letters, digits and . _ - only, and starts with a letter or digit", shown));
}

std::string req_name(const json& obj, const char* key, const Ctx& ctx) {
  std::string s = req_string(obj, key, ctx);
  check_catalog_name(s, key, ctx);
  return s;
}

std::string opt_string(const json& obj, const char* key, const Ctx& ctx) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) ctx.fail(key, fmt::format("expected a string, got {}", describe(*it)));
  return it->get<std::string>();
}

double as_number(const json& v, std::string_view field, const Ctx& ctx, double min_value, bool allow_equal_min) {
  if (!v.is_number()) ctx.fail(field, fmt::format("expected a number, got {}", describe(v)));
  double d = v.get<double>();
  if (!std::isfinite(d)) ctx.fail(field, "must be finite");
  if (allow_equal_min ? d < min_value : d <= min_value)
    ctx.fail(field, fmt::format("must be {} {}, got {}", allow_equal_min ? ">=" : ">", min_value, d));
  if (d > 1e12) ctx.fail(field, fmt::format("is implausibly large ({})", d));
  return d;
}

double req_positive(const json& obj, const char* key, const Ctx& ctx) {
  return as_number(require(obj, key, ctx), key, ctx, 0, false);
}
double req_nonnegative(const json& obj, const char* key, const Ctx& ctx) {
  return as_number(require(obj, key, ctx), key, ctx, 0, true);
}

int req_positive_int(const json& obj, const char* key, const Ctx& ctx) {
  const json& v = require(obj, key, ctx);
  if (!v.is_number_integer() || v.get<long long>() <= 0 || v.get<long long>() > 1000000)
    ctx.fail(key, fmt::format("expected a positive integer, got {}", describe(v)));
  return v.get<int>();
}

const json& req_object(const json& obj, const char* key, const Ctx& ctx) {
  const json& v = require(obj, key, ctx);
  if (!v.is_object()) ctx.fail(key, fmt::format("expected an object, got {}", describe(v)));
  return v;
}

std::vector<std::string> req_sources(const json& obj, const char* key, const Ctx& ctx,
                                     const std::map<std::string, Source>& known) {
  const json& v = require(obj, key, ctx);
  if (!v.is_array() || v.empty()) ctx.fail(key, "expected a non-empty list of source keys");
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.is_string()) ctx.fail(key, fmt::format("expected source keys (strings), got {}", describe(s)));
    std::string k = s.get<std::string>();
    if (!known.count(k)) ctx.fail(key, fmt::format("unknown source key '{}' (define it under 'sources')", k));
    out.push_back(k);
  }
  return out;
}

void check_date(const std::string& date, std::string_view field, const Ctx& ctx) {
  if (!days_between("2000-01-01", date)) ctx.fail(field, fmt::format("expected a date YYYY-MM-DD, got '{}'", date));
}

// storage_prices: {region: {key: {usd_per_gb_month | usd_per_gb, as_of, source, note}}}.
std::map<std::string, std::map<std::string, StorageRate>> parse_storage_prices(const json& j, const Ctx& top,
                                                                                const std::map<std::string, Source>& sources) {
  std::map<std::string, std::map<std::string, StorageRate>> out;
  if (!j.is_object()) top.fail("storage_prices", "expected an object of regions");
  for (auto region = j.begin(); region != j.end(); ++region) {
    if (!region->is_object()) top.fail("storage_prices." + region.key(), "expected an object of rates");
    for (auto it = region->begin(); it != region->end(); ++it) {
      Ctx ctx{top.origin, "storage_prices." + region.key() + "." + it.key()};
      const bool transfer = it.key() == kInterRegionTransferRate;
      if (it.key() != kS3StandardRate && it.key() != kEfsStandardRate && it.key() != kFsxLustrePersistent2Rate && !transfer)
        ctx.fail(it.key(), fmt::format("unknown rate (use {}, {}, {} or {})", kS3StandardRate, kEfsStandardRate, kFsxLustrePersistent2Rate,
                                       kInterRegionTransferRate));
      if (!it->is_object()) ctx.fail(it.key(), "expected an object");
      const char* amount = transfer ? "usd_per_gb" : "usd_per_gb_month";
      refuse_unknown_keys(*it, {amount, "as_of", "source", "note"}, ctx);
      StorageRate r;
      r.usd = req_positive(*it, amount, ctx);
      r.unit = transfer ? "GB" : "GB-month";
      r.as_of = req_string(*it, "as_of", ctx);
      check_date(r.as_of, "as_of", ctx);
      r.source = req_string(*it, "source", ctx);
      if (!sources.count(r.source)) ctx.fail("source", fmt::format("unknown source key '{}'", r.source));
      r.note = opt_string(*it, "note", ctx);
      out[region.key()][it.key()] = r;
    }
  }
  return out;
}

Accelerator parse_accelerator(const json& j, const Ctx& ctx, const std::map<std::string, Source>& sources) {
  Accelerator a;
  refuse_unknown_keys(j, {"name", "vendor", "memory", "memory_bandwidth", "dense_tflops", "vector_tflops", "intra_node_link", "software",
                          "note", "same_silicon_as", "efficiency"}, ctx);
  a.name = req_name(j, "name", ctx);
  a.vendor = req_string(j, "vendor", ctx);
  const json& mem = req_object(j, "memory", ctx);
  Ctx mctx{ctx.origin, ctx.entry + " memory"};
  refuse_unknown_keys(mem, {"vendor_figure", "ec2_reported_gib", "usable_gib", "type", "sources", "note"}, mctx);
  a.memory_vendor_figure = req_string(mem, "vendor_figure", mctx);
  a.memory_ec2_reported_gib = req_positive(mem, "ec2_reported_gib", mctx);
  a.memory_usable_gib = req_positive(mem, "usable_gib", mctx);
  a.memory_type = opt_string(mem, "type", mctx);
  a.memory_sources = req_sources(mem, "sources", mctx, sources);

  const json& bw = req_object(j, "memory_bandwidth", ctx);
  Ctx bctx{ctx.origin, ctx.entry + " memory_bandwidth"};
  refuse_unknown_keys(bw, {"gb_per_s", "sources", "note"}, bctx);
  a.memory_bandwidth_gb_per_s = req_positive(bw, "gb_per_s", bctx);
  a.memory_bandwidth_sources = req_sources(bw, "sources", bctx, sources);

  const json& tf = req_object(j, "dense_tflops", ctx);
  Ctx tctx{ctx.origin, ctx.entry + " dense_tflops"};
  for (auto it = tf.begin(); it != tf.end(); ++it) {
    if (it.key() == "sources") continue;
    auto p = precision_from_string(it.key());
    if (!p) tctx.fail(it.key(), "unknown precision (use bf16, fp16, fp8, fp4, int8)");
    a.dense_tflops.set(*p, as_number(it.value(), it.key(), tctx, 0, false));
  }
  if (a.dense_tflops.empty()) tctx.fail("bf16", "at least one precision is required");
  a.dense_tflops_sources = req_sources(tf, "sources", tctx, sources);

  if (auto it = j.find("vector_tflops"); it != j.end()) {
    if (!it->is_object()) ctx.fail("vector_tflops", "expected an object {\"fp32\": number or null, \"sources\": [...]}");
    Ctx vctx{ctx.origin, ctx.entry + " vector_tflops"};
    for (auto v = it->begin(); v != it->end(); ++v)
      if (v.key() != "fp32" && v.key() != "sources" && v.key() != "note") vctx.fail(v.key(), "unknown key (use fp32, sources, note)");
    if (auto f = it->find("fp32"); f != it->end() && !f->is_null()) a.vector_fp32_tflops = as_number(*f, "fp32", vctx, 0, false);
    a.vector_tflops_sources = req_sources(*it, "sources", vctx, sources);
  }

  const json& link = req_object(j, "intra_node_link", ctx);
  Ctx lctx{ctx.origin, ctx.entry + " intra_node_link"};
  refuse_unknown_keys(link, {"kind", "generation", "gb_per_s_per_accelerator", "sources", "note"}, lctx);
  a.link_kind = req_string(link, "kind", lctx);
  static const std::set<std::string> kinds{"pcie", "nvlink", "nvswitch", "neuronlink"};
  if (!kinds.count(a.link_kind)) lctx.fail("kind", fmt::format("'{}' is not one of pcie, nvlink, nvswitch, neuronlink", a.link_kind));
  a.link_generation = req_string(link, "generation", lctx);
  if (auto it = link.find("gb_per_s_per_accelerator"); it != link.end() && !it->is_null())
    a.link_gb_per_s = as_number(*it, "gb_per_s_per_accelerator", lctx, 0, false);
  a.link_sources = req_sources(link, "sources", lctx, sources);

  a.software = req_string(j, "software", ctx);
  if (a.software != "cuda" && a.software != "neuron") ctx.fail("software", "must be 'cuda' or 'neuron'");
  a.note = opt_string(j, "note", ctx);
  a.same_silicon_as = opt_string(j, "same_silicon_as", ctx);

  if (auto it = j.find("efficiency"); it != j.end()) {
    if (!it->is_object()) ctx.fail("efficiency", "expected an object");
    Ctx ectx{ctx.origin, ctx.entry + " efficiency"};
    for (auto e = it->begin(); e != it->end(); ++e) {
      if (e.key() == "source") {
        a.efficiency.source = opt_string(*it, "source", ectx);
      } else if (e.key() == "memory_bandwidth") {
        a.efficiency.memory_bandwidth_fraction = as_number(e.value(), e.key(), ectx, 0, false);
      } else if (e.key() == "link") {
        a.efficiency.link_fraction = as_number(e.value(), e.key(), ectx, 0, false);
      } else if (e.key() == "all_reduce_latency_us") {
        a.efficiency.all_reduce_latency_us = as_number(e.value(), e.key(), ectx, 0, false);
        if (a.efficiency.all_reduce_latency_us > 10000) ectx.fail(e.key(), "at most 10000 us");
        continue;
      } else if (e.key() == "sequence_layer_us") {
        a.efficiency.sequence_layer_us = as_number(e.value(), e.key(), ectx, 0, false);
        if (a.efficiency.sequence_layer_us > 1000) ectx.fail(e.key(), "at most 1000 us");
        continue;
      } else if (auto p = precision_from_string(e.key())) {
        a.efficiency.compute_max_fraction[*p] = as_number(e.value(), e.key(), ectx, 0, false);
      } else {
        ectx.fail(e.key(), "unknown key (use a precision, memory_bandwidth, link, all_reduce_latency_us, sequence_layer_us or source)");
      }
      if (e.key() != "source" && e.value().get<double>() > 1.0) ectx.fail(e.key(), "a fraction must be at most 1");
    }
  }
  return a;
}

PriceQuote parse_quote(const json& j, const Ctx& ctx, const std::map<std::string, Source>& sources, bool spot) {
  PriceQuote q;
  if (!j.is_object()) ctx.fail("price", fmt::format("expected an object, got {}", describe(j)));
  refuse_unknown_keys(j, {"usd_per_hour", "as_of", "source", "max_usd_per_hour", "statistic", "status", "note", "interruption"}, ctx);
  if (j.contains("usd_per_hour")) {
    q.usd_per_hour = as_number(j["usd_per_hour"], "usd_per_hour", ctx, 0, false);
    if (*q.usd_per_hour < kMinUsdPerHour)
      ctx.fail("usd_per_hour", fmt::format("{:g} is below ${:g} an hour, less than any EC2 instance costs", *q.usd_per_hour, kMinUsdPerHour));
    q.status = "listed";
    q.as_of = req_string(j, "as_of", ctx);
    check_date(q.as_of, "as_of", ctx);
    q.source = req_string(j, "source", ctx);
    if (!sources.count(q.source)) ctx.fail("source", fmt::format("unknown source key '{}'", q.source));
    if (j.contains("max_usd_per_hour")) {
      q.max_usd_per_hour = as_number(j["max_usd_per_hour"], "max_usd_per_hour", ctx, 0, false);
      if (*q.max_usd_per_hour < *q.usd_per_hour) ctx.fail("max_usd_per_hour", "is below usd_per_hour");
    }
    q.statistic = opt_string(j, "statistic", ctx);
    if (spot && q.statistic.empty()) ctx.fail("statistic", "a spot price must say what statistic it is");
  } else {
    q.status = req_string(j, "status", ctx);
    if (q.status != "not_listed" && q.status != "not_captured")
      ctx.fail("status", fmt::format("without usd_per_hour, status must be 'not_listed' or 'not_captured', got '{}'", q.status));
    if (j.contains("as_of")) q.as_of = req_string(j, "as_of", ctx);
  }
  q.note = opt_string(j, "note", ctx);
  if (q.status != "listed" && q.note.empty()) ctx.fail("note", "a missing price must say why");
  if (j.contains("interruption")) {
    if (!spot) ctx.fail("interruption", "only a spot price has an interruption frequency");
    const json& r = j["interruption"];
    if (!r.is_object()) ctx.fail("interruption", "expected an object with bucket, as_of and source");
    refuse_unknown_keys(r, {"bucket", "as_of", "source", "note"}, Ctx{ctx.origin, ctx.entry + " interruption"});
    q.interruption_bucket = req_string(r, "bucket", ctx);
    if (!interruption_bucket_monthly_fraction(q.interruption_bucket))
      ctx.fail("interruption", fmt::format("bucket '{}' is not one of <5%, 5-10%, 10-15%, 15-20%, >20%", q.interruption_bucket));
    q.interruption_as_of = req_string(r, "as_of", ctx);
    check_date(q.interruption_as_of, "interruption.as_of", ctx);
    q.interruption_source = req_string(r, "source", ctx);
    if (!sources.count(q.interruption_source)) ctx.fail("interruption", fmt::format("unknown source key '{}'", q.interruption_source));
  }
  return q;
}

// "capacity": {"capacity_blocks": true, "on_demand_max_instances": 2, "source": KEY, "note": "..."}
void parse_capacity(Instance& i, const json& j, const Ctx& ctx, const std::map<std::string, Source>& sources) {
  if (!j.is_object()) ctx.fail("capacity", fmt::format("expected an object, got {}", describe(j)));
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "capacity_blocks" && it.key() != "on_demand_max_instances" && it.key() != "source" && it.key() != "note")
      ctx.fail(it.key(), "unknown key (use capacity_blocks, on_demand_max_instances, source, note)");
  if (j.contains("capacity_blocks")) {
    if (!j["capacity_blocks"].is_boolean()) ctx.fail("capacity_blocks", "expected true or false");
    i.capacity_blocks = j["capacity_blocks"].get<bool>();
  }
  if (j.contains("on_demand_max_instances")) i.on_demand_max_instances = req_positive_int(j, "on_demand_max_instances", ctx);
  i.capacity_source = req_string(j, "source", ctx);
  if (!sources.count(i.capacity_source)) ctx.fail("source", fmt::format("unknown source key '{}'", i.capacity_source));
  i.capacity_note = opt_string(j, "note", ctx);
}

Instance parse_instance(const json& j, const Ctx& ctx, const std::map<std::string, Source>& sources,
                        const std::vector<Accelerator>& accelerators) {
  Instance i;
  refuse_unknown_keys(j, {"name", "family", "accelerator", "accelerator_count", "vcpus", "memory_gib", "local_nvme_gb", "local_nvme",
                          "network_gbps", "nvlink_domain_accelerators", "efa", "purchase", "sources", "note", "capacity", "prices"}, ctx);
  i.name = req_name(j, "name", ctx);
  i.family = req_name(j, "family", ctx);
  i.accelerator_name = req_string(j, "accelerator", ctx);
  if (std::none_of(accelerators.begin(), accelerators.end(), [&](const Accelerator& a) { return a.name == i.accelerator_name; }))
    ctx.fail("accelerator", fmt::format("unknown accelerator '{}'", i.accelerator_name));
  i.accelerator_count = req_positive_int(j, "accelerator_count", ctx);
  i.vcpus = req_positive_int(j, "vcpus", ctx);
  i.memory_gib = req_positive(j, "memory_gib", ctx);
  i.local_nvme_gb = req_nonnegative(j, "local_nvme_gb", ctx);
  i.local_nvme = opt_string(j, "local_nvme", ctx);
  i.network_gbps = req_positive(j, "network_gbps", ctx);
  if (j.contains("nvlink_domain_accelerators")) {
    i.nvlink_domain_accelerators = req_positive_int(j, "nvlink_domain_accelerators", ctx);
    if (i.nvlink_domain_accelerators % i.accelerator_count != 0)
      ctx.fail("nvlink_domain_accelerators", fmt::format("{} is not a whole number of instances of {} accelerators", i.nvlink_domain_accelerators,
                                                         i.accelerator_count));
  }
  const json& efa = req_object(j, "efa", ctx);
  {
    Ctx ectx{ctx.origin, ctx.entry + " efa"};
    refuse_unknown_keys(efa, {"supported", "version", "interfaces", "note"}, ectx);
    const json& sup = require(efa, "supported", ectx);
    if (!sup.is_boolean()) ectx.fail("supported", "expected true or false");
    i.efa_supported = sup.get<bool>();
    if (i.efa_supported) i.efa_version = req_positive_int(efa, "version", ectx);
    if (efa.contains("interfaces")) i.efa_interfaces = req_positive_int(efa, "interfaces", ectx);
  }
  i.purchase = req_string(j, "purchase", ctx);
  static const std::set<std::string> purchases{"on_demand_and_spot", "capacity_blocks", "ultraserver_capacity_blocks"};
  if (!purchases.count(i.purchase)) ctx.fail("purchase", fmt::format("'{}' is not one of on_demand_and_spot, capacity_blocks, ultraserver_capacity_blocks", i.purchase));
  i.sources = req_sources(j, "sources", ctx, sources);
  i.note = opt_string(j, "note", ctx);
  if (j.contains("capacity")) parse_capacity(i, j["capacity"], Ctx{ctx.origin, ctx.entry + " capacity"}, sources);
  const json& prices = req_object(j, "prices", ctx);
  if (prices.empty()) ctx.fail("prices", "at least one region is required");
  for (auto it = prices.begin(); it != prices.end(); ++it) {
    Ctx pctx{ctx.origin, ctx.entry + " prices." + it.key()};
    check_catalog_name(it.key(), "prices", ctx);
    if (!it->is_object()) pctx.fail(it.key(), "expected an object with on_demand and spot");
    refuse_unknown_keys(*it, {"on_demand", "spot", "capacity_block", "commitments", "note"}, pctx);
    RegionPrices rp;
    Ctx octx{ctx.origin, pctx.entry + ".on_demand"};
    rp.on_demand = parse_quote(require(*it, "on_demand", pctx), octx, sources, false);
    Ctx sctx{ctx.origin, pctx.entry + ".spot"};
    rp.spot = parse_quote(require(*it, "spot", pctx), sctx, sources, true);
    rp.capacity_block.status = "not_captured";
    rp.capacity_block.note = "no Capacity Block rate in the catalog";
    if (it->contains("capacity_block"))
      rp.capacity_block = parse_quote((*it)["capacity_block"], Ctx{ctx.origin, pctx.entry + ".capacity_block"}, sources, false);
    if (it->contains("commitments")) {
      const json& cs = (*it)["commitments"];
      Ctx cctx{ctx.origin, pctx.entry + ".commitments"};
      if (!cs.is_object()) cctx.fail("commitments", "expected an object keyed by commitment name");
      for (auto c = cs.begin(); c != cs.end(); ++c) {
        Ctx qctx{ctx.origin, cctx.entry + "." + c.key()};
        if (!valid_commitment_name(c.key()))
          qctx.fail("name", "expected <compute-savings-plan|ec2-savings-plan|reserved-standard|reserved-convertible>-<1yr|3yr>-<no|partial|all>-upfront");
        if (!c->is_object()) qctx.fail("name", "expected an object");
        refuse_unknown_keys(*c, {"usd_per_hour", "upfront_usd", "as_of", "source", "note"}, qctx);
        CommitmentQuote q;
        q.usd_per_hour = req_nonnegative(*c, "usd_per_hour", qctx);
        q.upfront_usd = c->contains("upfront_usd") ? req_nonnegative(*c, "upfront_usd", qctx) : 0;
        q.term_years = c.key().find("-3yr-") != std::string::npos ? 3 : 1;
        q.as_of = req_string(*c, "as_of", qctx);
        check_date(q.as_of, "as_of", qctx);
        q.source = req_string(*c, "source", qctx);
        if (!sources.count(q.source)) qctx.fail("source", fmt::format("unknown source key '{}'", q.source));
        if (q.effective_usd_per_hour() <= 0) qctx.fail("usd_per_hour", "a commitment with no cost");
        rp.commitments[c.key()] = q;
      }
    }
    i.prices[it.key()] = rp;
  }
  return i;
}

json parse_json_document(const CatalogSource& src) {
  json j = src.built_in ? json::parse(src.text) : parse_json_input(src.text, src.origin);
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object at the top level", src.origin));
  return j;
}

// Adds or overrides entries of `base[key]` (a list of objects named by "name")
// with the overlay's entries: an entry with a known name is merged field by
// field (RFC 7386 merge patch); a new name is appended.
void apply_overlay_list(json& base, const json& overlay, const char* key, const std::string& origin) {
  auto it = overlay.find(key);
  if (it == overlay.end()) return;
  if (!it->is_array()) throw InputError(fmt::format("{}: field '{}': expected a list", origin, key));
  json& list = base[key];
  size_t index = 0;
  std::set<std::string> named;
  for (const auto& entry : *it) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string())
      throw InputError(fmt::format("{}: {}[{}]: field 'name': is missing (every overlay entry needs a name)", origin, key, index));
    if (!named.insert(entry["name"].get<std::string>()).second)  // the last would silently win
      throw InputError(fmt::format("{}: {}[{}]: '{}' appears twice in this overlay; merge the two entries", origin, key, index,
                                   entry["name"].get<std::string>()));
    auto match = std::find_if(list.begin(), list.end(), [&](const json& e) { return e.value("name", "") == entry["name"]; });
    if (match != list.end()) match->merge_patch(entry);
    else list.push_back(entry);
    ++index;
  }
}

}  // namespace

Catalog load_catalog(const CatalogSource& base, const std::vector<CatalogSource>& overlays) {
  json doc = parse_json_document(base);
  std::vector<std::string> origins{base.origin};
  // Remember which file each entry finally came from, and its index there, for error messages.
  std::map<std::string, std::pair<std::string, size_t>> entry_origin;
  auto note_origins = [&](const json& d, const std::string& origin) {
    for (const char* key : {"accelerators", "instances"})
      if (d.contains(key) && d[key].is_array())
        for (size_t i = 0; i < d[key].size(); ++i)
          if (const json& e = d[key][i]; e.is_object() && e.contains("name") && e["name"].is_string())
            entry_origin[std::string(key) + ":" + e["name"].get<std::string>()] = {origin, i};
  };
  note_origins(doc, base.origin);
  for (const auto& ov : overlays) {
    json o = parse_json_document(ov);
    origins.push_back(ov.origin);
    for (auto it = o.begin(); it != o.end(); ++it) {
      const std::string& k = it.key();
      if (k != "accelerators" && k != "instances" && k != "sources" && k != "prices_as_of" && k != "description" && k != "overlay_version")
        throw InputError(fmt::format("{}: field '{}': not allowed in an overlay (use accelerators, instances, sources, prices_as_of)", ov.origin, k));
    }
    if (o.contains("sources")) {
      if (!o["sources"].is_object()) throw InputError(fmt::format("{}: field 'sources': expected an object", ov.origin));
      doc["sources"].merge_patch(o["sources"]);
    }
    if (o.contains("prices_as_of")) doc["prices_as_of"] = o["prices_as_of"];
    apply_overlay_list(doc, o, "accelerators", ov.origin);
    apply_overlay_list(doc, o, "instances", ov.origin);
    note_origins(o, ov.origin);
  }

  Catalog cat;
  cat.origins = origins;
  Ctx top{base.origin, ""};
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (!kTopLevelKeys.count(it.key())) top.fail(it.key(), "unknown top-level key");
  const json& sv = require(doc, "schema_version", top);
  if (!sv.is_number_integer()) top.fail("schema_version", "expected an integer");
  cat.schema_version = sv.get<int>();
  if (cat.schema_version != kCatalogSchemaVersion)
    top.fail("schema_version", fmt::format("version {} is not supported (this gpuadvisor reads version {})", cat.schema_version, kCatalogSchemaVersion));
  cat.catalog_version = req_string(doc, "catalog_version", top);
  cat.prices_as_of = req_string(doc, "prices_as_of", top);
  check_date(cat.prices_as_of, "prices_as_of", top);
  cat.currency = req_string(doc, "currency", top);
  if (cat.currency != "USD") top.fail("currency", "only USD is supported");

  const json& srcs = req_object(doc, "sources", top);
  for (auto it = srcs.begin(); it != srcs.end(); ++it) {
    Ctx sctx{base.origin, "sources." + it.key()};
    if (!it->is_object()) sctx.fail("title", "expected an object with title and url");
    refuse_unknown_keys(*it, {"title", "url", "note"}, sctx);
    cat.sources[it.key()] = Source{req_string(*it, "title", sctx), req_string(*it, "url", sctx)};
  }

  if (doc.contains("storage_prices")) cat.storage_prices = parse_storage_prices(doc["storage_prices"], top, cat.sources);

  auto list = [&](const char* key) -> const json& {
    const json& v = require(doc, key, top);
    if (!v.is_array() || v.empty()) top.fail(key, "expected a non-empty list");
    return v;
  };
  auto noted = [&](const char* key, const json& e) -> const std::pair<std::string, size_t>* {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) return nullptr;
    auto it = entry_origin.find(std::string(key) + ":" + e["name"].get<std::string>());
    return it == entry_origin.end() ? nullptr : &it->second;
  };
  auto origin_of = [&](const char* key, const json& e) -> const std::string& {
    const auto* n = noted(key, e);
    return n ? n->first : base.origin;
  };
  // Named by its index in the file it came from (an overlay's instances[0], not the merged list's 47th).
  auto entry_name = [&](const char* key, size_t i, const json& e) {
    std::string n = (e.is_object() && e.contains("name") && e["name"].is_string()) ? " '" + e["name"].get<std::string>() + "'" : "";
    const auto* at = noted(key, e);
    return fmt::format("{}[{}]{}", key, at ? at->second : i, n);
  };

  const json& accs = list("accelerators");
  std::set<std::string> seen;
  for (size_t i = 0; i < accs.size(); ++i) {
    Ctx ctx{origin_of("accelerators", accs[i]), entry_name("accelerators", i, accs[i])};
    if (!accs[i].is_object()) ctx.fail("name", "expected an object");
    Accelerator a = parse_accelerator(accs[i], ctx, cat.sources);
    if (!seen.insert(a.name).second) ctx.fail("name", fmt::format("duplicate accelerator '{}'", a.name));
    cat.accelerators.push_back(std::move(a));
  }
  for (size_t i = 0; i < accs.size(); ++i) {
    const Accelerator& a = cat.accelerators[i];
    const Accelerator* base = a.same_silicon_as.empty() ? nullptr : cat.find_accelerator(a.same_silicon_as);
    if (!a.same_silicon_as.empty() && (!base || !base->same_silicon_as.empty() || base == &a))
      Ctx{origin_of("accelerators", accs[i]), entry_name("accelerators", i, accs[i])}.fail(
          "same_silicon_as", fmt::format("'{}' is not another accelerator with its own silicon", a.same_silicon_as));
  }
  const json& insts = list("instances");
  seen.clear();
  for (size_t i = 0; i < insts.size(); ++i) {
    Ctx ctx{origin_of("instances", insts[i]), entry_name("instances", i, insts[i])};
    if (!insts[i].is_object()) ctx.fail("name", "expected an object");
    Instance in = parse_instance(insts[i], ctx, cat.sources, cat.accelerators);
    if (!seen.insert(in.name).second) ctx.fail("name", fmt::format("duplicate instance '{}'", in.name));
    cat.instances.push_back(std::move(in));
  }
  return cat;
}

}  // namespace gpuadvisor
