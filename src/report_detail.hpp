// Internal to the report files: cell formatting and JSON pieces shared by the
// training and inference reports. Not part of the public headers.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gpuadvisor/report.hpp"

namespace gpuadvisor::report_detail {

using ordered_json = nlohmann::ordered_json;

double sig6(double v);                          // 6 significant digits; throws on NaN/infinity
std::string thousands(double v, int decimals);  // 12,345.6
Cell money(std::optional<double> usd);          // "$1,234" / "unknown"
Cell rate(std::optional<double> usd);           // hourly rate, 4 significant digits
Cell num(double v, int decimals);
Cell integer(long long v);
Cell text(std::string s);
Cell pct(double fraction);
Cell hours_cell(double hours);
ordered_json envelope(const Catalog& catalog, std::string_view command);
ordered_json model_json(const ModelSpec& m);
ordered_json money_json(std::optional<double> usd);     // cents, or null
ordered_json capacity_json(const CapacityAdvice& a);
std::string money_text(double usd);                     // "$21.58", "$1,234"

}  // namespace gpuadvisor::report_detail
