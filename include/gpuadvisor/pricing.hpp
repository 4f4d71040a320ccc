// Prices: hourly rates per region and pricing model, and job costs
// (docs/methodology.md §Cost). An unknown price stays unknown, never zero.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "gpuadvisor/catalog.hpp"

namespace gpuadvisor {

enum class Pricing { on_demand, spot };
std::string_view to_string(Pricing p);
std::optional<Pricing> pricing_from_string(std::string_view s);

// USD per instance-hour, or nullopt with `why` filled.
std::optional<double> hourly_rate(const Instance& instance, std::string_view region, Pricing pricing, std::string* why = nullptr);

// Money in the output is rounded to cents (docs/json.md §Money).
double round_cents(double usd);

}  // namespace gpuadvisor
