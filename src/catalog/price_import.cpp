// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
#include "gpuadvisor/catalog/price_import.hpp"
#include "gpuadvisor/base/json_text.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "gpuadvisor/base/errors.hpp"
#include "base/json_input.hpp"
#include "catalog/json_stream.hpp"

namespace gpuadvisor {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

std::optional<long long> parse_utc_timestamp(std::string_view s) {
  int y, mo, d, h, mi, sec;
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':') return std::nullopt;
  auto num = [&](size_t pos, size_t len, int& out) {
    auto r = std::from_chars(s.data() + pos, s.data() + pos + len, out);
    return r.ec == std::errc() && r.ptr == s.data() + pos + len;
  };
  if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) || !num(17, 2, sec)) return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  std::string_view rest = s.substr(19);
  if (!rest.empty() && rest[0] == '.') {
    size_t i = 1;
    while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) ++i;
    rest = rest.substr(i);
  }
  if (rest != "Z" && rest != "+00:00" && !rest.empty()) return std::nullopt;
  // Days from civil (Howard Hinnant).
  const int yy = y - (mo <= 2);
  const long era = (yy >= 0 ? yy : yy - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(yy - era * 400);
  const unsigned doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const long long days = era * 146097LL + doe - 719468;
  return days * 86400 + h * 3600 + mi * 60 + sec;
}

double time_weighted_average(std::vector<std::pair<long long, double>> points, long long end_s) {
  if (points.empty()) return 0;
  std::sort(points.begin(), points.end());
  double weighted = 0, total = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const long long until = i + 1 < points.size() ? points[i + 1].first : std::max(end_s, points[i].first);
    const double span = static_cast<double>(until - points[i].first);
    weighted += span * points[i].second;
    total += span;
  }
  return total > 0 ? weighted / total : points.back().second;
}

namespace {

[[noreturn]] void fail(const PriceFile& f, const std::string& where, const std::string& what) {
  throw InputError(fmt::format("{}: {}{}{}", f.origin, where, where.empty() ? "" : ": ", what));
}

json parse(const PriceFile& f) { return parse_json_input(f.text, f.origin); }

const json& member(const PriceFile& f, const json& j, const char* key, const std::string& where, json::value_t type) {
  if (!j.is_object() || !j.contains(key)) fail(f, where, fmt::format("expected a field '{}'", key));
  const json& v = j[key];
  if (v.type() != type && !(type == json::value_t::number_float && v.is_number())) {
    static const std::map<json::value_t, const char*> names{{json::value_t::object, "an object"}, {json::value_t::array, "a list"},
                                                            {json::value_t::string, "a string"}, {json::value_t::number_float, "a number"}};
    fail(f, where.empty() ? key : where + "." + key, fmt::format("expected {}", names.count(type) ? names.at(type) : "another type"));
  }
  return v;
}

std::string str(const json& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : ""; }

// Prices in AWS files are strings ("55.0400000000").
std::optional<double> price(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  double d = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), d);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(d) || d < 0) return std::nullopt;
  return d;
}

std::string payment(std::string_view option) {
  if (option == "No Upfront") return "no-upfront";
  if (option == "Partial Upfront") return "partial-upfront";
  if (option == "All Upfront") return "all-upfront";
  return "";
}

// Usage-type prefixes of the regions gpuadvisor's users run in most.
std::optional<std::string> region_from_usage_prefix(std::string_view usage) {
  static const std::map<std::string, std::string> prefixes{
      {"USE1", "us-east-1"}, {"USE2", "us-east-2"}, {"USW1", "us-west-1"}, {"USW2", "us-west-2"}, {"EUW1", "eu-west-1"},
      {"EUC1", "eu-central-1"}, {"EUN1", "eu-north-1"}, {"APN1", "ap-northeast-1"}, {"APS2", "ap-southeast-2"}, {"CAN1", "ca-central-1"}};
  const auto dash = usage.find('-');
  if (dash == std::string_view::npos || usage.substr(dash + 1).rfind("BoxUsage", 0) != 0) return std::nullopt;
  auto it = prefixes.find(std::string(usage.substr(0, dash)));
  if (it == prefixes.end()) return std::nullopt;
  return it->second;
}

struct Collected {
  // instance -> region -> JSON pieces of the overlay
  std::map<std::string, std::map<std::string, ordered_json>> prices;
  long written = 0;
};

struct Tally {
  std::map<std::pair<std::string, std::string>, long> counts;  // (outcome, detail) -> n
  void add(const std::string& outcome, const std::string& detail) { ++counts[{outcome, detail}]; }
  void flush(std::vector<ImportLine>& out, const std::string& file, const std::string& kind) {
    for (const auto& [k, n] : counts) out.push_back({file, kind, k.first, k.second, n});
    counts.clear();
  }
};

std::string date_of(const std::string& iso, const std::string& fallback, const std::string& origin) {
  const std::string date = iso.size() >= 10 && parse_utc_timestamp(iso.substr(0, 10) + "T00:00:00Z") ? iso.substr(0, 10) : fallback;
  // A file dated after the import (beyond a day's time-zone grace) would make every later command refuse its prices.
  if (auto ahead = days_between(fallback, date); ahead && *ahead > kFutureDateGraceDays)
    throw InputError(fmt::format("{}: publicationDate {} is after the import date {}: not a current price file", origin, date, fallback));
  return date;
}

// One rate of a Savings Plan: the plan's key from `products`, the instance
// type and region from the discounted usage type.
void import_savings_plan_rate(const Catalog& catalog, const PriceFile& f, const ImportInputs& in, const std::string& where,
                              const std::map<std::string, std::string>& plan_key, const std::string& plan_sku, const json& rate,
                              const std::string& date, Collected& c, Tally& t) {
  if (plan_sku.empty()) fail(f, where, "expected the plan's sku before its rates");
  auto key = plan_key.find(plan_sku);
  if (key == plan_key.end()) { t.add("skipped", "plan not in the products list (or not an EC2/Compute plan)"); return; }
  const std::string usage = str(rate, "discountedUsageType"), op = str(rate, "discountedOperation");
  if (op != "RunInstances" || usage.find("BoxUsage:") == std::string::npos) { t.add("skipped", "not a Linux shared-tenancy rate"); return; }
  const std::string type = usage.substr(usage.find("BoxUsage:") + 9);
  if (!catalog.find_instance(type)) { t.add("skipped", "instance type not in the catalog"); return; }
  std::string region = str(rate, "discountedRegionCode");
  if (region.empty()) region = usage.rfind("BoxUsage:", 0) == 0 ? in.region.value_or("us-east-1") : region_from_usage_prefix(usage).value_or("");
  if (region.empty()) { t.add("skipped", "region not known for this usage type (pass --region)"); return; }
  const json& dr = member(f, rate, "discountedRate", where, json::value_t::object);
  auto usd = dr.contains("price") ? price(dr["price"]) : std::nullopt;
  if (!usd) fail(f, where, "expected discountedRate.price as a number string of a price of 0 or more");
  if (*usd <= 0) { t.add("skipped", "zero rate"); return; }
  // Savings Plans rates are effective hourly rates (any upfront payment is part of the commitment).
  c.prices[type][region]["commitments"][key->second] = {{"usd_per_hour", *usd}, {"as_of", date}, {"source", "IMPORT-SP"}};
  ++c.written;
  t.add("matched", "savings-plan rate");
}

// The type a JSON value must have, for "expected an object" messages.
void expect_type(const PriceFile& f, const std::string& where, json::value_t got, json::value_t want) {
  if (got == want) return;
  fail(f, where, want == json::value_t::object ? "expected an object" : want == json::value_t::array ? "expected a list" : "expected a string");
}

// Streams a price file from disk (`path`) or from memory (`text`).
void stream_price_file(const PriceFile& f, const JsonStreamReader& reader) {
  if (!f.path.empty()) {
    std::ifstream in;
    std::vector<char> buffer(1 << 20);
    in.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    in.open(f.path, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot be read", f.origin));
    stream_json(in, f.origin, reader);
    return;
  }
  std::istringstream in(f.text);
  stream_json(in, f.origin, reader);
}

// What an offer-file product is to the import: the rate it carries and where.
struct OfferSku {
  std::string instance, region;
  bool capacity_block = false;
};

// The plain Linux, shared-tenancy, no-software, used-capacity box-usage SKU,
// or a Capacity Block SKU; anything else is a look-alike that never wins.
std::optional<OfferSku> classify_product(const Catalog& catalog, const json& product, Tally& t) {
  if (str(product, "productFamily").rfind("Compute Instance", 0) != 0) { t.add("skipped", "not a compute instance"); return std::nullopt; }
  const json& attrs = product.contains("attributes") ? product["attributes"] : json();
  const std::string type = str(attrs, "instanceType");
  if (!catalog.find_instance(type)) { t.add("skipped", "instance type not in the catalog"); return std::nullopt; }
  const bool block = str(attrs, "marketoption") == "CapacityBlock";
  const std::string os = str(attrs, "operatingSystem");
  if (os != "Linux") { t.add("skipped", fmt::format("operating system {}", os.empty() ? "missing" : os)); return std::nullopt; }
  if (str(attrs, "tenancy") != "Shared") { t.add("skipped", "not shared tenancy (dedicated or host)"); return std::nullopt; }
  if (str(attrs, "preInstalledSw") != "NA") { t.add("skipped", "pre-installed software (e.g. SQL Server)"); return std::nullopt; }
  if (str(attrs, "licenseModel") != "No License required") { t.add("skipped", "bring-your-own-license"); return std::nullopt; }
  if (!block && str(attrs, "capacitystatus") != "Used") { t.add("skipped", "capacity reservation look-alike (not capacitystatus=Used)"); return std::nullopt; }
  if (!block && str(attrs, "usagetype").find("BoxUsage") == std::string::npos) { t.add("skipped", "not a BoxUsage SKU"); return std::nullopt; }
  const std::string region = str(attrs, "regionCode");
  if (region.empty()) { t.add("skipped", "no regionCode attribute"); return std::nullopt; }
  return OfferSku{type, region, block};
}

void import_on_demand_terms(const PriceFile& f, const std::string& sku, const json& terms, const OfferSku& o, const std::string& date,
                            Collected& c, Tally& t) {
  for (const auto& term : terms) {
    const json& dims = member(f, term, "priceDimensions", "terms.OnDemand." + sku, json::value_t::object);
    for (const auto& dim : dims) {
      if (str(dim, "unit") != "Hrs") continue;
      auto usd = dim.contains("pricePerUnit") && dim["pricePerUnit"].is_object() ? price(dim["pricePerUnit"].value("USD", json())) : std::nullopt;
      if (!usd) fail(f, "terms.OnDemand." + sku, "expected pricePerUnit.USD as a number string of a price of 0 or more");
      if (*usd <= 0) { t.add("skipped", "zero on-demand rate"); continue; }
      // Two SKUs that both pass the filters but disagree: which is the rate is unknowable, so neither is taken silently.
      const json& earlier = c.prices[o.instance][o.region][o.capacity_block ? "capacity_block" : "on_demand"];
      if (earlier.is_object() && earlier.contains("usd_per_hour") && earlier["usd_per_hour"].get<double>() != *usd)
        fail(f, "terms.OnDemand." + sku, fmt::format("a second on-demand rate for {} in {} (${} against ${}); the file is ambiguous", o.instance,
                                                     o.region, *usd, earlier["usd_per_hour"].get<double>()));
      // status and note null: an overlay replaces a "not captured" entry (RFC 7386 removes null keys).
      c.prices[o.instance][o.region][o.capacity_block ? "capacity_block" : "on_demand"] = {
          {"usd_per_hour", *usd}, {"as_of", date}, {"source", "IMPORT-OFFER"}, {"status", nullptr}, {"note", nullptr}};
      ++c.written;
      t.add("matched", o.capacity_block ? "Capacity Block rate (its own field, not on-demand)" : "on-demand rate");
    }
  }
}

void import_reserved_terms(const PriceFile& f, const std::string& sku, const json& terms, const OfferSku& o, const std::string& date,
                           Collected& c, Tally& t) {
  for (const auto& term : terms) {
    const json& ta = member(f, term, "termAttributes", "terms.Reserved." + sku, json::value_t::object);
    const std::string length = str(ta, "LeaseContractLength"), cls = str(ta, "OfferingClass"), pay = payment(str(ta, "PurchaseOption"));
    if ((length != "1yr" && length != "3yr") || (cls != "standard" && cls != "convertible") || pay.empty()) {
      t.add("skipped", "reserved term with unknown attributes");
      continue;
    }
    double hourly = 0, upfront = 0;
    for (const auto& dim : member(f, term, "priceDimensions", "terms.Reserved." + sku, json::value_t::object)) {
      auto usd = dim.contains("pricePerUnit") && dim["pricePerUnit"].is_object() ? price(dim["pricePerUnit"].value("USD", json())) : std::nullopt;
      if (!usd) fail(f, "terms.Reserved." + sku, "expected pricePerUnit.USD as a number string of a price of 0 or more");
      (str(dim, "unit") == "Hrs" ? hourly : upfront) += *usd;
    }
    if (hourly + upfront <= 0) { t.add("skipped", "reserved term with no price"); continue; }
    // The upfront fee stays separate; the catalog spreads it over the term's hours (effective rate).
    c.prices[o.instance][o.region]["commitments"][fmt::format("reserved-{}-{}-{}", cls, length, pay)] = {
        {"usd_per_hour", hourly}, {"upfront_usd", upfront}, {"as_of", date}, {"source", "IMPORT-OFFER"}};
    ++c.written;
    t.add("matched", "reserved-instance rate");
  }
}

// One pass over an offer file (products, then terms). Returns false when the
// terms came before the products, so their records were not matched yet.
bool offer_pass(const Catalog& catalog, const PriceFile& f, const std::string& as_of, std::map<std::string, OfferSku>& skus, bool terms_only,
                Collected& c, Tally& t) {
  std::string offer_code, date = as_of;
  bool products_seen = false, terms_before_products = false;
  JsonStreamReader r;
  r.is_record = [](const JsonPath& p) {
    return (p.size() == 1 && (p[0] == "offerCode" || p[0] == "publicationDate")) || (p.size() == 2 && p[0] == "products") ||
           (p.size() == 3 && p[0] == "terms" && (p[1] == "OnDemand" || p[1] == "Reserved"));
  };
  r.on_shallow = [&](const JsonPath& p, json::value_t type) {
    if (p.size() == 1 && p[0] == "products") {
      expect_type(f, "products", type, json::value_t::object);
      products_seen = true;
    }
    if (p.size() == 1 && p[0] == "terms") {
      expect_type(f, "terms", type, json::value_t::object);
      terms_before_products = !products_seen;
    }
    if (p.size() == 2 && p[0] == "terms" && (p[1] == "OnDemand" || p[1] == "Reserved")) expect_type(f, "terms." + p[1], type, json::value_t::object);
  };
  r.on_record = [&](const JsonPath& p, json&& v) {
    if (p.size() == 1) {
      if (p[0] == "offerCode") offer_code = v.is_string() ? v.get<std::string>() : "";
      if (p[0] == "offerCode" && offer_code != "AmazonEC2") fail(f, "offerCode", "expected \"AmazonEC2\" (an EC2 offer file)");
      if (p[0] == "publicationDate" && v.is_string()) date = date_of(v.get<std::string>(), as_of, f.origin);
      return;
    }
    if (p[0] == "products") {
      if (terms_only) return;
      if (!v.is_object() || !v.contains("attributes") || !v["attributes"].is_object()) fail(f, "products." + p[1], "expected a field 'attributes'");
      if (auto o = classify_product(catalog, v, t)) skus[p[1]] = *o;
      return;
    }
    if (terms_before_products && !terms_only) return;  // matched in a second pass
    auto it = skus.find(p[2]);
    if (it == skus.end()) return;  // a product already counted as skipped
    if (!v.is_object()) fail(f, "terms." + p[1] + "." + p[2], "expected an object");
    if (p[1] == "OnDemand") import_on_demand_terms(f, p[2], v, it->second, date, c, t);
    else if (!it->second.capacity_block) import_reserved_terms(f, p[2], v, it->second, date, c, t);
  };
  stream_price_file(f, r);
  if (offer_code.empty()) fail(f, "offerCode", "expected \"AmazonEC2\" (an EC2 offer file)");
  if (!products_seen) fail(f, "", "expected a field 'products'");
  return !terms_before_products;
}

// Streams the offer file: memory holds the matching SKUs, not the file.
void import_offer(const Catalog& catalog, const PriceFile& f, const std::string& as_of, Collected& c, std::vector<ImportLine>& report) {
  std::map<std::string, OfferSku> skus;
  Tally t;
  if (!offer_pass(catalog, f, as_of, skus, false, c, t)) offer_pass(catalog, f, as_of, skus, true, c, t);
  t.flush(report, f.origin, "offer file");
}

// Streams a Savings Plans file: the plans from `products`, then each rate of
// `terms.savingsPlan[i].rates` as a record of its own (a plan has thousands).
void import_savings_plans(const Catalog& catalog, const PriceFile& f, const ImportInputs& in, const std::string& as_of, Collected& c,
                          std::vector<ImportLine>& report) {
  std::string date = as_of, plan_sku;
  std::map<std::string, std::string> plan_key;  // sku -> "compute-savings-plan-1yr-no-upfront"
  bool products_seen = false, terms_seen = false;
  Tally t;
  JsonStreamReader r;
  r.shallow_depth = 3;
  r.is_record = [](const JsonPath& p) {
    return (p.size() == 1 && p[0] == "publicationDate") || (p.size() == 2 && p[0] == "products") ||
           (p.size() == 4 && p[0] == "terms" && p[1] == "savingsPlan" && p[3] == "sku") ||
           (p.size() == 5 && p[0] == "terms" && p[1] == "savingsPlan" && p[3] == "rates");
  };
  r.on_shallow = [&](const JsonPath& p, json::value_t type) {
    if (p.size() == 1 && p[0] == "products") products_seen = true, expect_type(f, "products", type, json::value_t::array);
    if (p.size() == 1 && p[0] == "terms") expect_type(f, "terms", type, json::value_t::object);
    if (p.size() == 2 && p[0] == "terms" && p[1] == "savingsPlan") terms_seen = true, expect_type(f, "terms.savingsPlan", type, json::value_t::array);
    if (p.size() == 3 && p[1] == "savingsPlan") plan_sku.clear();  // a new plan starts
  };
  r.on_record = [&](const JsonPath& p, json&& v) {
    if (p.size() == 1) {
      if (v.is_string()) date = date_of(v.get<std::string>(), as_of, f.origin);
    } else if (p.size() == 2) {
      if (!v.is_object() || !v.contains("attributes") || !v["attributes"].is_object()) fail(f, "products[" + p[1] + "]", "expected a field 'attributes'");
      const std::string fam = str(v, "productFamily");
      const std::string kind = fam == "ComputeSavingsPlans" ? "compute-savings-plan" : fam == "EC2InstanceSavingsPlans" ? "ec2-savings-plan" : "";
      const std::string term = str(v["attributes"], "purchaseTerm"), pay = payment(str(v["attributes"], "purchaseOption"));
      if (!kind.empty() && (term == "1yr" || term == "3yr") && !pay.empty()) plan_key[str(v, "sku")] = fmt::format("{}-{}-{}", kind, term, pay);
    } else if (p.size() == 4) {
      plan_sku = v.is_string() ? v.get<std::string>() : "";
    } else {
      import_savings_plan_rate(catalog, f, in, fmt::format("terms.savingsPlan[{}].rates", p[2]), plan_key, plan_sku, v, date, c, t);
    }
  };
  stream_price_file(f, r);
  if (!products_seen) fail(f, "", "expected a field 'products'");
  if (!terms_seen) fail(f, "terms", "expected a field 'savingsPlan'");
  t.flush(report, f.origin, "savings plans file");
}

void import_spot_history(const Catalog& catalog, const PriceFile& f, Collected& c, std::vector<ImportLine>& report) {
  const json doc = parse(f);
  if (!doc.is_object()) fail(f, "", "expected a JSON object (describe-spot-price-history --output json)");
  const json& rows = member(f, doc, "SpotPriceHistory", "", json::value_t::array);
  Tally t;
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<long long, double>>> series;  // (type, AZ)
  long long newest = 0;
  std::string newest_text;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string where = fmt::format("SpotPriceHistory[{}]", i);
    const json& r = rows[i];
    if (!r.is_object()) fail(f, where, "expected an object");
    const std::string type = str(r, "InstanceType"), az = str(r, "AvailabilityZone"), desc = str(r, "ProductDescription");
    const std::string ts = str(r, "Timestamp");
    auto when = parse_utc_timestamp(ts);
    auto usd = r.contains("SpotPrice") ? price(r["SpotPrice"]) : std::nullopt;
    if (type.empty() || az.empty() || !when || !usd) fail(f, where, "expected InstanceType, AvailabilityZone, SpotPrice (a number string) and Timestamp (UTC)");
    if (desc.rfind("Linux/UNIX", 0) != 0) { t.add("skipped", "not Linux/UNIX"); continue; }
    if (!catalog.find_instance(type)) { t.add("skipped", "instance type not in the catalog"); continue; }
    auto& points = series[{type, az}];
    // Two prices for one zone at one instant: the file is ambiguous, as a second on-demand rate is.
    if (const auto same = std::find_if(points.begin(), points.end(), [&](const auto& x) { return x.first == *when && x.second != *usd; });
        same != points.end())
      fail(f, where, fmt::format("a second spot price for {} in {} at {} (${:g} against ${:g}); the file is ambiguous", type, az, ts, *usd,
                                 same->second));
    points.push_back({*when, *usd});
    if (*when > newest) {
      newest = *when;
      newest_text = ts;
    }
  }
  // Per region: the time-weighted average of each AZ; the lowest is the price, the highest the max.
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> by_region;  // (type, region) -> (min, max)
  std::map<std::pair<std::string, std::string>, long long> first_seen;
  for (const auto& [key, points] : series) {
    const std::string& az = key.second;
    std::string region = az;
    while (!region.empty() && std::isalpha(static_cast<unsigned char>(region.back()))) region.pop_back();
    if (std::count(region.begin(), region.end(), '-') != 2) { t.add("skipped", "a Local Zone or Wavelength zone"); continue; }
    const double avg = time_weighted_average(points, newest);
    auto& mm = by_region.try_emplace({key.first, region}, avg, avg).first->second;
    mm.first = std::min(mm.first, avg);
    mm.second = std::max(mm.second, avg);
    auto start = std::min_element(points.begin(), points.end())->first;
    auto [fs, inserted] = first_seen.try_emplace({key.first, region}, start);
    if (!inserted) fs->second = std::min(fs->second, start);
  }
  const std::string date = newest_text.substr(0, 10);
  for (const auto& [key, mm] : by_region) {
    const auto start = first_seen[key];
    c.prices[key.first][key.second]["spot"] = {
        {"usd_per_hour", std::round(mm.first * 1e4) / 1e4},
        {"max_usd_per_hour", std::round(mm.second * 1e4) / 1e4},
        {"statistic", fmt::format("time-weighted average over {:.1f} days of describe-spot-price-history, lowest AZ (max: highest AZ)",
                                  (newest - start) / 86400.0)},
        {"as_of", date},
        {"source", "IMPORT-SPOT-HISTORY"},
        {"status", nullptr},
        {"note", nullptr}};
    ++c.written;
    t.add("matched", "spot price (time-weighted, per region)");
  }
  t.flush(report, f.origin, "spot price history");
}

void import_spot_advisor(const Catalog& catalog, const PriceFile& f, const std::string& as_of, Collected& c, std::vector<ImportLine>& report) {
  const json doc = parse(f);
  if (!doc.is_object()) fail(f, "", "expected a JSON object (spot-advisor-data.json)");
  const json& advisor = member(f, doc, "spot_advisor", "", json::value_t::object);
  std::map<int, std::string> labels{{0, "<5%"}, {1, "5-10%"}, {2, "10-15%"}, {3, "15-20%"}, {4, ">20%"}};
  Tally t;
  for (auto reg = advisor.begin(); reg != advisor.end(); ++reg) {
    if (!reg->is_object()) fail(f, "spot_advisor." + reg.key(), "expected an object");
    if (!reg->contains("Linux")) continue;
    const json& linux_types = member(f, *reg, "Linux", "spot_advisor." + reg.key(), json::value_t::object);
    for (auto it = linux_types.begin(); it != linux_types.end(); ++it) {
      if (!catalog.find_instance(it.key())) { t.add("skipped", "instance type not in the catalog"); continue; }
      const std::string where = fmt::format("spot_advisor.{}.Linux.{}", reg.key(), it.key());
      if (!it->is_object() || !(*it).contains("r") || !(*it)["r"].is_number_integer()) fail(f, where, "expected an object with an integer 'r'");
      auto label = labels.find((*it)["r"].get<int>());
      if (label == labels.end()) fail(f, where + ".r", "expected a range index 0-4");
      c.prices[it.key()][reg.key()]["spot"]["interruption"] = {{"bucket", label->second}, {"as_of", as_of}, {"source", "IMPORT-SPOT-ADVISOR"}};
      ++c.written;
      t.add("matched", "interruption range");
    }
  }
  t.flush(report, f.origin, "spot advisor");
}

}  // namespace

// The overlay being built, named by the files it comes from in its errors
// (a rate the catalog refuses is in one of them, not in a file of its own).
static std::string joined_origins(std::initializer_list<const std::vector<PriceFile>*> lists) {
  std::vector<std::string> origins;
  for (const auto* list : lists)
    for (const auto& f : *list) origins.push_back(f.origin);
  return fmt::format("{}", fmt::join(origins, ", "));
}

static std::string imported_overlay_name(const ImportInputs& in) {
  return "the prices imported from " +
         joined_origins({&in.offer_files, &in.savings_plan_files, &in.spot_histories, &in.spot_advisors});
}

ImportResult import_prices(const CatalogSource& base, const std::vector<CatalogSource>& overlays, const ImportInputs& in) {
  const Catalog catalog = load_catalog(base, overlays);
  ImportResult result;
  Collected c;
  for (const auto& f : in.offer_files) import_offer(catalog, f, in.as_of, c, result.report);
  for (const auto& f : in.savings_plan_files) import_savings_plans(catalog, f, in, in.as_of, c, result.report);
  for (const auto& f : in.spot_histories) import_spot_history(catalog, f, c, result.report);
  for (const auto& f : in.spot_advisors) import_spot_advisor(catalog, f, in.as_of, c, result.report);

  ordered_json overlay;
  overlay["description"] = "prices imported by `gpuadvisor prices import`";
  ordered_json sources;
  auto add_source = [&](const char* key, const std::vector<PriceFile>& files, const char* what) {
    if (files.empty()) return;
    sources[key] = {{"title", fmt::format("{} imported from {}", what, joined_origins({&files}))}, {"url", "file:" + files.front().origin}};
  };
  add_source("IMPORT-OFFER", in.offer_files, "AWS Price List EC2 offer file");
  add_source("IMPORT-SP", in.savings_plan_files, "AWS Savings Plans offer file");
  add_source("IMPORT-SPOT-HISTORY", in.spot_histories, "aws ec2 describe-spot-price-history output");
  add_source("IMPORT-SPOT-ADVISOR", in.spot_advisors, "AWS Spot Instance Advisor data file");
  overlay["sources"] = sources;
  ordered_json instances = ordered_json::array();
  for (auto& [name, regions] : c.prices) {
    const Instance* inst = catalog.find_instance(name);
    ordered_json prices = ordered_json::object();
    for (auto& [region, p] : regions) {
      // A region new to this instance needs both quotes; the missing one is not captured.
      if (!inst->prices_in(region)) {
        if (!p.contains("on_demand")) p["on_demand"] = {{"status", "not_captured"}, {"note", "not in the imported files"}};
        if (!p.contains("spot") || !p["spot"].contains("usd_per_hour")) {
          ordered_json spot = {{"status", "not_captured"}, {"note", "not in the imported files"}};
          if (p.contains("spot") && p["spot"].contains("interruption")) spot["interruption"] = p["spot"]["interruption"];
          p["spot"] = spot;
        }
      }
      prices[region] = p;
    }
    instances.push_back({{"name", name}, {"prices", prices}});
  }
  overlay["instances"] = instances;
  result.overlay_json = json_text(overlay, 1) + "\n";
  result.prices_written = c.written;
  // The overlay must load on this catalog, or nothing is written.
  std::vector<CatalogSource> with = overlays;
  with.push_back({imported_overlay_name(in), result.overlay_json});
  result.merged = load_catalog(base, with);
  result.matched = catalog;
  return result;
}

}  // namespace gpuadvisor
