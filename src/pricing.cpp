#include "gpuadvisor/pricing.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gpuadvisor {

std::string_view to_string(Pricing p) { return p == Pricing::spot ? "spot" : "on-demand"; }

std::optional<Pricing> pricing_from_string(std::string_view s) {
  if (s == "on-demand" || s == "ondemand" || s == "od") return Pricing::on_demand;
  if (s == "spot") return Pricing::spot;
  return std::nullopt;
}

std::optional<double> hourly_rate(const Instance& instance, std::string_view region, Pricing pricing, std::string* why) {
  const RegionPrices* rp = instance.prices_in(region);
  if (!rp) {
    if (why) *why = fmt::format("no prices for {} in {}", instance.name, region);
    return std::nullopt;
  }
  const PriceQuote& q = pricing == Pricing::spot ? rp->spot : rp->on_demand;
  if (!q.usd_per_hour && why) *why = fmt::format("{} price unknown: {}", to_string(pricing), q.note);
  return q.usd_per_hour;
}

double round_cents(double usd) { return std::round(usd * 100.0) / 100.0; }

}  // namespace gpuadvisor
