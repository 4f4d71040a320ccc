// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
#include "gpuadvisor/catalog/pricing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <cmath>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/quantity.hpp"

namespace gpuadvisor {

std::string_view to_string(Pricing p) {
  switch (p) {
    case Pricing::on_demand: return "on-demand";
    case Pricing::spot: return "spot";
    case Pricing::savings_1y: return "savings-1y";
    case Pricing::savings_3y: return "savings-3y";
    case Pricing::best: return "best";
  }
  return "?";
}

std::optional<Pricing> pricing_from_string(std::string_view s) {
  if (s == "ondemand" || s == "od") return Pricing::on_demand;
  for (Pricing p : {Pricing::on_demand, Pricing::spot, Pricing::savings_1y, Pricing::savings_3y, Pricing::best})
    if (to_string(p) == s) return p;
  return std::nullopt;
}

const CommitmentQuote* cheapest_commitment(const Instance& instance, std::string_view region, int term_years, std::string* name) {
  const RegionPrices* rp = instance.prices_in(region);
  if (!rp) return nullptr;
  const CommitmentQuote* best = nullptr;
  for (const auto& [key, q] : rp->commitments) {
    if (q.term_years != term_years) continue;
    if (!best || q.effective_usd_per_hour() < best->effective_usd_per_hour()) {
      best = &q;
      if (name) *name = key;
    }
  }
  return best;
}

std::optional<double> typical_zone_usd_per_hour(const PriceQuote& spot) {
  if (!spot.usd_per_hour || !spot.max_usd_per_hour) return spot.usd_per_hour;
  return (*spot.usd_per_hour + *spot.max_usd_per_hour) / 2;
}

std::optional<double> hourly_rate(const Instance& instance, std::string_view region, Pricing pricing, std::string* why, std::string* which) {
  const RegionPrices* rp = instance.prices_in(region);
  if (!rp) {
    if (why) *why = fmt::format("no prices for {} in {}", instance.name, region);
    return std::nullopt;
  }
  switch (pricing) {
    case Pricing::on_demand:
    case Pricing::spot: {
      const PriceQuote& q = pricing == Pricing::spot ? rp->spot : rp->on_demand;
      if (!q.usd_per_hour && why) *why = fmt::format("{} price unknown: {}", to_string(pricing), q.note);
      if (which) *which = std::string(to_string(pricing));
      return pricing == Pricing::spot ? typical_zone_usd_per_hour(q) : q.usd_per_hour;
    }
    case Pricing::savings_1y:
    case Pricing::savings_3y: {
      const CommitmentQuote* q = cheapest_commitment(instance, region, pricing == Pricing::savings_1y ? 1 : 3, which);
      if (!q) {
        if (why) *why = fmt::format("no {} commitment price in the catalog (import one with `gpuadvisor prices import`)", to_string(pricing));
        return std::nullopt;
      }
      return q->effective_usd_per_hour();
    }
    case Pricing::best: {
      std::optional<double> best;
      for (Pricing p : {Pricing::on_demand, Pricing::spot, Pricing::savings_1y, Pricing::savings_3y}) {
        std::string name;
        auto r = hourly_rate(instance, region, p, nullptr, &name);
        if (r && (!best || *r < *best)) {
          best = r;
          if (which) *which = name;
        }
      }
      if (!best && why) *why = "no price known";
      return best;
    }
  }
  return std::nullopt;
}

namespace {
constexpr double kMaxDiscountFraction = 0.95;
}

void add_discount(Discounts& d, std::string_view text) {
  std::string_view family, amount = text;
  if (auto eq = text.find('='); eq != std::string_view::npos) {
    family = text.substr(0, eq);
    amount = text.substr(eq + 1);
    if (family.empty()) throw InputError(fmt::format("--discount: '{}' has no family before '='", text));
  }
  std::string a(amount);
  const bool percent = !a.empty() && a.back() == '%';
  if (percent) a.pop_back();
  // A bare number is a fraction (0.15 is 15% off): "10" meant as ten percent is said so, not just "outside [0, 1]".
  double v = parse_number(a, "--discount", 0, percent ? 100 : std::numeric_limits<double>::max());
  if (!percent && v > 1 && v <= 100)
    throw InputError(fmt::format("--discount: '{}' is read as a fraction of the price (0.15 is 15% off), and {} would be more than the "
                                 "whole price; for {} percent write '{}%'",
                                 text, a, a, text));
  if (!percent && v > 1) throw InputError(fmt::format("--discount: '{}' is outside [0, 1] (a fraction: 0.15 is 15% off)", text));
  if (percent) v /= 100;
  if (v >= 1) throw InputError(fmt::format("--discount: '{}' would make prices zero or negative", text));
  // No negotiated rate takes 95% off list: a larger figure is a typo, and would price below any real rate.
  if (v > kMaxDiscountFraction)
    throw InputError(fmt::format("--discount: '{}' is more than {:.0f}% off: no negotiated rate is, and it would price below any real rate",
                                 text, kMaxDiscountFraction * 100));
  // Given twice, one would silently override the other.
  if (family.empty() ? d.all.has_value() : d.by_family.count(std::string(family)) > 0)
    throw InputError(fmt::format("--discount: '{}' gives {} a second discount; give each family (and the catch-all) once",
                                 text, family.empty() ? std::string("every family") : fmt::format("family '{}'", family)));
  if (family.empty()) d.all = v;
  else d.by_family[std::string(family)] = v;
}

void apply_discounts(Catalog& catalog, const Discounts& d) {
  if (d.empty()) return;
  for (const auto& entry : d.by_family) {
    const std::string& family = entry.first;  // a named variable: clang 14 cannot capture structured bindings
    if (std::none_of(catalog.instances.begin(), catalog.instances.end(), [&](const Instance& i) { return i.family == family; }))
      throw InputError(fmt::format("--discount: no instance family '{}' in the catalog", family));
  }
  for (Instance& i : catalog.instances) {
    auto it = d.by_family.find(i.family);
    const std::optional<double> off = it != d.by_family.end() ? std::optional<double>(it->second) : d.all;
    if (!off) continue;
    for (auto& [region, rp] : i.prices) {
      if (rp.on_demand.usd_per_hour) *rp.on_demand.usd_per_hour *= 1 - *off;
      for (auto& [name, q] : rp.commitments) {
        q.usd_per_hour *= 1 - *off;
        q.upfront_usd *= 1 - *off;
      }
    }
  }
}

}  // namespace gpuadvisor
