// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
// `gpuadvisor prices import`: reads AWS price files offline and writes a
// catalog overlay (docs/catalog.md §Importing prices). Formats: the Price List
// bulk offer file for EC2 (JSON; on-demand and reserved terms), a Savings Plans
// offer file, `aws ec2 describe-spot-price-history --output json`, and the
// Spot Instance Advisor data file.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"

namespace gpuadvisor {

// A price file: in memory (`text`), or on disk (`path`), which offer and
// Savings Plans files are streamed from whatever their size (spot files are
// small and read whole).
struct PriceFile {
  std::string origin;  // for messages
  std::string text;
  std::string path;    // when set, read from here instead of `text`
};

struct ImportInputs {
  std::vector<PriceFile> offer_files, savings_plan_files, spot_histories, spot_advisors;
  std::string as_of;                  // date for files that carry none (YYYY-MM-DD)
  std::optional<std::string> region;  // for Savings Plans rates without a region
};

// One line per file and outcome: what matched, what was skipped and why.
struct ImportLine {
  std::string file, kind, outcome, detail;
  long count = 0;
};

struct ImportResult {
  std::string overlay_json;  // a catalog overlay, validated against `catalog`
  Catalog matched;           // the catalog the files were matched against (base and overlays)
  Catalog merged;            // the catalog with the overlay applied, as it was validated
  std::vector<ImportLine> report;
  long prices_written = 0;
};

// Offer and Savings Plans files are streamed: memory holds the rows that match
// the catalog, not the file (a regional EC2 offer file is ~0.5 GB, the global
// one ~3 GB). Matches the files against the catalog built from `base` and `overlays` and
// checks that the overlay loads on it. Throws InputError naming the file, the
// position and what was expected.
ImportResult import_prices(const CatalogSource& base, const std::vector<CatalogSource>& overlays, const ImportInputs& in);

// Time-weighted average of a step function given by change points
// (epoch seconds, price), each price holding until the next point and the
// last until `end_s`.
double time_weighted_average(std::vector<std::pair<long long, double>> points, long long end_s);

// "2026-11-29T10:00:00Z" / "2026-11-29T10:00:00.000Z" / "+00:00" -> epoch seconds (UTC).
std::optional<long long> parse_utc_timestamp(std::string_view s);

}  // namespace gpuadvisor
