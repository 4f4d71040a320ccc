// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
// Prices: hourly rates per region and pricing model, negotiated discounts, and
// money rounding (docs/methodology.md §Cost). An unknown price stays unknown,
// never zero.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "gpuadvisor/catalog/catalog.hpp"

namespace gpuadvisor {

// on-demand; spot (snapshot); savings-1y / savings-3y: the cheapest known
// commitment of that term (Savings Plan or RI, any payment option) as an
// effective hourly rate; best: the cheapest of all known.
enum class Pricing { on_demand, spot, savings_1y, savings_3y, best };
std::string_view to_string(Pricing p);
std::optional<Pricing> pricing_from_string(std::string_view s);

// Spot at the region's typical zone: a job that needs its nodes in one zone
// (a placement group, one EFA fabric) cannot choose the cheapest one. The
// snapshot keeps the lowest and the highest zone's price only, so the typical
// zone is their midpoint (docs/methodology.md §Spot's typical zone); the
// lowest where no highest is known.
std::optional<double> typical_zone_usd_per_hour(const PriceQuote& spot);

// USD per instance-hour (spot: the typical zone's), or nullopt with `why` filled. For savings-1y/3y,
// `which` names the commitment chosen.
std::optional<double> hourly_rate(const Instance& instance, std::string_view region, Pricing pricing, std::string* why = nullptr,
                                  std::string* which = nullptr);

// The cheapest commitment of a term (1 or 3 years) in a region, by effective rate.
const CommitmentQuote* cheapest_commitment(const Instance& instance, std::string_view region, int term_years, std::string* name = nullptr);

// Negotiated discounts (EDP, private pricing): a fraction off on-demand and
// commitment prices, for all families or per family (the family wins). Spot
// prices are market prices and are not discounted.
struct Discounts {
  std::optional<double> all;
  std::map<std::string, double> by_family;
  bool empty() const { return !all && by_family.empty(); }
};
// Parses "15%", "0.15", "p5=20%"; InputError naming --discount.
void add_discount(Discounts& d, std::string_view text);
void apply_discounts(Catalog& catalog, const Discounts& d);

}  // namespace gpuadvisor
