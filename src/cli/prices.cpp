// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// `gpuadvisor prices import`: AWS price files to a catalog overlay.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <cmath>
#include <fmt/ranges.h>

#include "cli.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/base/files.hpp"
#include "gpuadvisor/catalog/capacity_block_fetch.hpp"
#include "gpuadvisor/catalog/price_fetch.hpp"
#include "gpuadvisor/catalog/price_import.hpp"

namespace gpuadvisor::cli {

namespace {

class PricesCommand : public Command {
 public:
  explicit PricesCommand(CLI::App& parent) {
    app = parent.add_subcommand("prices", "Price files: `prices fetch` downloads AWS's, `prices import` reads them offline");
    app->require_subcommand(1);
    add_fetch();
    import = app->add_subcommand("import", "Read AWS price files offline and write a catalog overlay for --catalog-add");
    import->footer("Offer and Savings Plans files are streamed (any size, bounded memory). Spot price history needs AWS credentials:\n"
                   "  aws ec2 describe-spot-price-history --instance-types p5.48xlarge --product-descriptions Linux/UNIX \\\n"
                   "      --start-time $(date -u -d '30 days ago' +%Y-%m-%dT%H:%M:%SZ) --region us-east-1 --output json > spot.json");
    import->add_option("--offer-file", offer_files, "AWS Price List EC2 offer file (JSON): on-demand and reserved rates (repeatable)");
    import->add_option("--savings-plans-file", sp_files, "AWS Savings Plans offer file (JSON) (repeatable)");
    import->add_option("--spot-history", spot_files, "Output of `aws ec2 describe-spot-price-history --output json` (repeatable)");
    import->add_option("--spot-advisor", advisor_files, "The Spot Instance Advisor's spot-advisor-data.json (repeatable)");
    import->add_option("--output", output, "The overlay to write (replaced atomically)")->required();
    import->add_option("--as-of", as_of, "Date for files that carry none, YYYY-MM-DD (default today)");
    import->add_option("--region", region, "Region of Savings Plans rates whose usage type names none");
  }

  int run(const GlobalOptions& g) override {
    if (!fetch->parsed()) return run_import(g);
    return capacity_blocks ? run_capacity_blocks(g) : run_fetch(g);
  }

 private:
  CLI::App* import = nullptr;
  CLI::App* fetch = nullptr;
  std::vector<std::string> fetch_regions;
  std::string base_url = kPriceListBaseUrl, spot_advisor_url = kSpotAdvisorUrl, fetch_output, download_dir;
  long timeout_s = 60, deadline_s = 3600;
  int retries = 3;
  std::vector<std::string> allowed_hosts;
  bool no_savings_plans = false, no_spot_advisor = false;
  // --capacity-blocks: live offerings from EC2 with the user's credentials.
  bool capacity_blocks = false;
  int block_count = 0, block_days = 0;
  std::vector<std::string> block_types;
  std::string endpoint_url, start_date_range, end_date_range;

  void add_fetch() {
    fetch = app->add_subcommand("fetch", "Download AWS's public price files (no credentials) and write the prices every command then uses");
    fetch->footer(
        "Downloads the EC2 region index and offer files, the Savings Plans index and files, and the Spot Instance Advisor data;\n"
        "an unchanged file (ETag / Last-Modified) is not downloaded again, and a download replaces the cached copy only once it is\n"
        "checked. Files already downloaded but not fetched this run (other regions, --no-spot-advisor ...) are kept and imported too.\n"
        "The overlay goes to the cache (see --output), and every command loads it unless --no-cache-prices.\n"
        "Example: gpuadvisor prices fetch --region us-east-1");
    fetch->add_option("--region", fetch_regions, "Region to fetch (repeatable; default: the catalog's regions)");
    fetch->add_option("--output", fetch_output, "Write the overlay here instead of the cache ($XDG_CACHE_HOME/gpuadvisor/prices.json)");
    fetch->add_option("--download-dir", download_dir, "Keep the downloaded files here (default: the cache's downloads/)");
    fetch->add_option("--base-url", base_url, "Price List endpoint or a mirror (default https://pricing.us-east-1.amazonaws.com)");
    fetch->add_option("--spot-advisor-url", spot_advisor_url, "Spot Instance Advisor data URL or a mirror");
    fetch->add_option("--timeout", timeout_s, "Seconds below 1000 bytes/s (a stall) before a download is retried (default 60)");
    fetch->add_option("--deadline", deadline_s, "Seconds the whole fetch may take, retries included; then it stops, keeping the cache (default 3600)");
    fetch->add_option("--allow-host", allowed_hosts, "HOST or HOST:PORT that index URLs and redirects may lead to besides --base-url's (repeatable)");
    fetch->add_option("--retries", retries, "Retries of a failed download, 1 s, 2 s, 4 s ... apart (default 3)");
    fetch->add_flag("--no-savings-plans", no_savings_plans, "Skip the Savings Plans files");
    fetch->add_flag("--no-spot-advisor", no_spot_advisor, "Skip the Spot Instance Advisor data");
    add_capacity_block_flags();
  }

  void add_capacity_block_flags() {
    fetch->footer(std::string(fetch->get_footer()) +
                  "\n\nWith --capacity-blocks it instead asks EC2 (DescribeCapacityBlockOfferings, your AWS credentials from AWS_ACCESS_KEY_ID /\n"
                  "AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN or ~/.aws/credentials with AWS_PROFILE) what a block of --count instances for\n"
                  "--days costs now, and caches the cheapest offering of each type as its Capacity Block rate\n"
                  "(UpfrontFee / (InstanceCount x hours)), merged into the cached prices; a failed fetch changes nothing.\n"
                  "Example: gpuadvisor prices fetch --capacity-blocks --region us-east-1 --count 4 --days 7");
    fetch->add_flag("--capacity-blocks", capacity_blocks,
                    "Fetch live Capacity Block offerings from EC2 with your AWS credentials instead of the public price files");
    fetch->add_option("--count", block_count, "--capacity-blocks: instances in the block, 1-64 (required)");
    fetch->add_option("--days", block_days, "--capacity-blocks: the block's length, 1-14 days or a multiple of 7 up to 182 (required)");
    fetch->add_option("--instance-type", block_types,
                      "--capacity-blocks: instance type to price (repeatable; default: the catalog's types that Capacity Blocks sell)");
    fetch->add_option("--endpoint-url", endpoint_url,
                      "--capacity-blocks: EC2 endpoint (default https://ec2.REGION.amazonaws.com; https, or http://127.0.0.1 for tests)");
    fetch->add_option("--start-date-range", start_date_range, "--capacity-blocks: earliest start, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)");
    fetch->add_option("--end-date-range", end_date_range, "--capacity-blocks: latest end, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)");
  }

  int run_fetch(const GlobalOptions& g);
  int run_capacity_blocks(const GlobalOptions& g);
  void check_capacity_block_flags() const;
  CapacityBlockFetchOptions capacity_block_options(const Catalog& catalog, const std::string& region) const;
  std::vector<CapacityBlockFetchOptions> capacity_block_requests(const Catalog& catalog) const;
  FetchOptions fetch_options(const GlobalOptions& g, const Catalog& catalog, const std::string& output) const;

  // The overlay written over one of the files it was read from would lose that file.
  static void refuse_output_over_input(const std::string& output, std::initializer_list<const std::vector<std::string>*> inputs) {
    std::error_code ec;
    for (const auto* paths : inputs)
      for (const auto& p : *paths)
        if (std::filesystem::equivalent(output, p, ec) && !ec)
          throw InputError(fmt::format("--output {}: it is the input file {}; write the overlay to another file", output, p));
  }

  int run_import(const GlobalOptions& g) {
    auto [base, overlays] = catalog_sources(g);
    ImportInputs in;
    in.as_of = as_of.empty() ? today() : as_of;
    if (!days_between(in.as_of, in.as_of)) throw InputError(fmt::format("--as-of: '{}' is not a YYYY-MM-DD date", in.as_of));
    if (!region.empty()) in.region = region;
    refuse_output_over_input(output, {&offer_files, &sp_files, &spot_files, &advisor_files});
    // Offer and Savings Plans files are streamed from disk at any size; spot files are read whole.
    auto stream = [](const std::vector<std::string>& paths, std::vector<PriceFile>& out) {
      for (const auto& p : paths) out.push_back({p, "", checked_input_path(p, "a price file")});
    };
    auto read = [](const std::vector<std::string>& paths, std::vector<PriceFile>& out) {
      for (const auto& p : paths) out.push_back({p, read_input_file(p, "a spot price file"), ""});
    };
    stream(offer_files, in.offer_files);
    stream(sp_files, in.savings_plan_files);
    read(spot_files, in.spot_histories);
    read(advisor_files, in.spot_advisors);
    if (in.offer_files.empty() && in.savings_plan_files.empty() && in.spot_histories.empty() && in.spot_advisors.empty())
      throw InputError("give at least one of --offer-file, --savings-plans-file, --spot-history, --spot-advisor");
    ImportResult result = import_prices(base, overlays, in);
    if (result.prices_written == 0) throw NothingFitsError("no price in these files matches an instance type of the catalog; nothing written");
    refuse_future_import(result.merged);
    write_file_atomically(output, result.overlay_json);
    print_table(import_report_table(result.report), result.matched, "prices import", "report", g);
    spdlog::info("wrote {} prices to {}; use it with --catalog-add {}", result.prices_written, output, output);
    return 0;
  }

  std::vector<std::string> offer_files, sp_files, spot_files, advisor_files;
  std::string output, as_of, region;
};

// The regions the catalog prices, for a fetch without --region.
std::vector<std::string> catalog_regions(const Catalog& c) {
  std::set<std::string> regions;
  for (const auto& i : c.instances)
    for (const auto& [r, p] : i.prices) regions.insert(r);
  return {regions.begin(), regions.end()};
}

// The fetched files as import inputs: offer and Savings Plans files streamed from disk.
ImportInputs import_inputs(const std::vector<FetchedFile>& files, const std::string& date) {
  ImportInputs in;
  in.as_of = date;
  for (const auto& f : files) {
    if (f.kind == "offer file") in.offer_files.push_back({f.url, "", f.path});
    if (f.kind == "savings plans file") in.savings_plan_files.push_back({f.url, "", f.path});
    if (f.kind == "spot advisor") in.spot_advisors.push_back({f.url, read_input_file(f.path, "a spot advisor file"), ""});
  }
  return in;
}

std::string fetch_outcome(const FetchedFile& f, bool for_json) {
  if (f.kept) return for_json ? "kept" : "kept (cached)";
  if (f.unchanged) return for_json ? "unchanged" : "unchanged (cached)";
  return "downloaded";
}

Table fetch_table(const std::vector<FetchedFile>& files) {
  Table t;
  t.columns = {{"kind", "FILE"}, {"region", "REGION"}, {"outcome", "OUTCOME"}, {"megabytes", "MB", true}, {"url", "URL", false, true}};
  for (const auto& f : files)
    t.rows.push_back({{f.kind, f.kind}, {f.region, f.region},
                      {fetch_outcome(f, false), fetch_outcome(f, true)},
                      {fmt::format("{:.1f}", f.bytes / 1e6), double(f.bytes) / 1e6}, {f.url, f.url}});
  return t;
}

// A fresh price-file overlay with the Capacity Block rates the previous one
// had fetched from EC2 carried over, so refreshing the price files keeps them
// (unless the result would not load: then they are dropped, with a warning).
std::string keep_capacity_block_rates(const std::string& output, const std::string& fresh, const CatalogSource& base,
                                      const std::vector<CatalogSource>& overlays) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(output, ec)) return fresh;
  std::string previous;
  try {
    previous = read_input_file(output, "the cached prices");
  } catch (const InputError&) {
    return fresh;
  }
  const std::string carried = carry_capacity_block_rates(previous, fresh);
  if (carried == fresh) return fresh;
  std::vector<CatalogSource> with{{output, carried}};
  with.insert(with.end(), overlays.begin(), overlays.end());
  try {
    load_catalog(base, with);
    return carried;
  } catch (const InputError& e) {
    spdlog::warn("the Capacity Block rates fetched earlier could not be kept ({}); fetch them again with --capacity-blocks", e.what());
    return fresh;
  }
}

// --start-date-range / --end-date-range as EC2 takes them: YYYY-MM-DD is that day's 00:00 UTC.
std::string iso_utc(const std::string& flag, const std::string& value) {
  if (value.empty()) return value;
  const std::string day = value.substr(0, 10);
  const bool date_only = value.size() == 10;
  const bool full = value.size() == 20 && value[10] == 'T' && value[13] == ':' && value[16] == ':' && value[19] == 'Z' &&
                    std::all_of(value.begin() + 11, value.begin() + 19, [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == ':'; });
  if (!days_between(day, day) || (!date_only && !full))
    throw InputError(fmt::format("{}: '{}' is not YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)", flag, value));
  return date_only ? day + "T00:00:00Z" : value;
}

// One row per region and type: the cheapest offering, or why there is none.
Table offerings_table(const std::vector<std::pair<std::string, std::vector<TypeOfferings>>>& by_region) {
  Table t;
  t.columns = {{"region", "REGION"}, {"instance", "INSTANCE"}, {"offering_count", "OFFERINGS", true}, {"usd_per_hour", "$/H", true},
               {"upfront_usd", "UPFRONT", true}, {"availability_zone", "ZONE"}, {"start_date", "START"}, {"end_date", "END"},
               {"outcome", "OUTCOME"}};
  auto text = [](const std::string& s) { return Cell{s, s}; };
  for (const auto& [region, types] : by_region)
    for (const auto& ty : types) {
      std::vector<Cell> row{text(region), text(ty.instance_type), {std::to_string(ty.offerings.size()), static_cast<long long>(ty.offerings.size())}};
      const auto cheapest = std::min_element(ty.offerings.begin(), ty.offerings.end(), [](const auto& a, const auto& b) {
        return a.usd_per_instance_hour() < b.usd_per_instance_hour();
      });
      if (cheapest != ty.offerings.end()) {
        const double rate = std::round(cheapest->usd_per_instance_hour() * 1e4) / 1e4;
        row.push_back({fmt::format("${:.4f}", rate), rate});
        row.push_back({fmt::format("${:.2f}", cheapest->upfront_fee), cheapest->upfront_fee});
        for (const auto* s : {&cheapest->availability_zone, &cheapest->start_date, &cheapest->end_date}) row.push_back(text(*s));
        row.push_back(text("cached"));
      } else {
        for (int i = 0; i < 5; ++i) row.push_back({"", Value{}});
        row.push_back(ty.not_offered.empty() ? Cell{"no offerings (rate kept)", "no_offerings"}
                                             : Cell{"not offered (" + ty.not_offered + ")", "not_offered: " + ty.not_offered});
      }
      t.rows.push_back(std::move(row));
    }
  return t;
}

FetchOptions PricesCommand::fetch_options(const GlobalOptions& g, const Catalog& catalog, const std::string& output) const {
  FetchOptions o;
  o.base_url = base_url;
  o.spot_advisor_url = spot_advisor_url;
  o.regions = fetch_regions.empty() ? catalog_regions(catalog) : fetch_regions;
  o.download_dir = !download_dir.empty() ? download_dir : cache_dir().empty() ? output + ".downloads" : cache_dir() + "/downloads";
  if (timeout_s < 1 || timeout_s > 3600) throw InputError("--timeout: must be in [1, 3600] seconds");
  o.timeout_s = timeout_s;
  if (retries < 0 || retries > 10) throw InputError("--retries: must be in [0, 10]");
  o.attempts = retries + 1;
  o.savings_plans = !no_savings_plans;
  o.spot_advisor = !no_spot_advisor;
  if (deadline_s < 1 || deadline_s > 7 * 86400) throw InputError("--deadline: must be in [1, 604800] seconds");
  o.deadline_s = deadline_s;
  o.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(deadline_s);
  o.allowed_hosts = allowed_hosts;
  o.progress = !g.quiet && isatty(STDERR_FILENO) && !std::getenv("CI");
  return o;
}

int PricesCommand::run_fetch(const GlobalOptions& g) {
  for (const char* f : {"--count", "--days", "--instance-type", "--endpoint-url", "--start-date-range", "--end-date-range"})
    if (given(fetch, f)) throw InputError(fmt::format("{} is a --capacity-blocks option; add --capacity-blocks", f));
  GlobalOptions without_cache = g;
  without_cache.no_cache_prices = true;  // the fetch replaces the cached prices; match against the rest
  auto [base, overlays] = catalog_sources(without_cache);
  const Catalog catalog = load_catalog(base, overlays);
  const std::string output = fetch_output.empty() ? cached_prices_path() : fetch_output;
  if (output.empty()) throw InputError("no cache directory (neither XDG_CACHE_HOME nor HOME is set): give --output FILE");
  const FetchOptions o = fetch_options(g, catalog, output);
  const DownloadLock lock(o.download_dir, o.deadline);  // held until the overlay is written: concurrent fetches run in turn
  std::vector<FetchedFile> files = fetch_price_files(o);
  for (auto& f : kept_price_files(o, files)) files.push_back(std::move(f));
  if (fetch_output.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(cache_dir(), ec);
    if (ec) throw InputError(fmt::format("{}: cannot create the cache directory: {}", cache_dir(), ec.message()));
  }
  const std::string date = today();
  ImportResult result = import_prices(base, overlays, import_inputs(files, date));
  if (result.prices_written == 0) throw NothingFitsError("no price in the fetched files matches an instance type of the catalog; nothing written");
  nlohmann::ordered_json overlay = nlohmann::ordered_json::parse(result.overlay_json);
  overlay["prices_as_of"] = date;
  overlay["description"] = fmt::format("prices fetched by `gpuadvisor prices fetch` on {} from {}", date, o.base_url);
  write_file_atomically(output, keep_capacity_block_rates(output, json_text(overlay, 1) + "\n", base, overlays));
  if (parse_format(g) == Format::json) {
    nlohmann::ordered_json report = nlohmann::ordered_json::array();
    for (const auto& l : result.report)
      report.push_back({{"file", l.file}, {"kind", l.kind}, {"outcome", l.outcome}, {"detail", l.detail}, {"count", l.count}});
    const nlohmann::ordered_json extra{{"output", output}, {"prices_as_of", date}, {"prices_written", result.prices_written}, {"report", report}};
    print_table(fetch_table(files), catalog, "prices fetch", "files", g, json_text(extra));
  } else {
    print_table(fetch_table(files), catalog, "prices fetch", "files", g);
    std::cout << "\n";
    print_table(import_report_table(result.report), catalog, "prices fetch", "report", g);
  }
  spdlog::info("wrote {} prices as of {} to {}{}", result.prices_written, date, output,
               fetch_output.empty() ? "; every command now uses them (--no-cache-prices to ignore)" : fmt::format("; use it with --catalog-add {}", output));
  return 0;
}

void PricesCommand::check_capacity_block_flags() const {
  for (const char* f : {"--base-url", "--spot-advisor-url", "--allow-host", "--no-savings-plans", "--no-spot-advisor"})
    if (given(fetch, f)) throw InputError(fmt::format("{} is for the public price files, not --capacity-blocks", f));
  if (!given(fetch, "--count") || !given(fetch, "--days"))
    throw InputError("--capacity-blocks needs --count N and --days D: the block you would buy (its rate depends on both)");
  if (block_count < 1 || block_count > kBlockOfferingMaxInstances)
    throw InputError(fmt::format("--count: {} is not 1-{} (instances in one Capacity Block)", block_count, kBlockOfferingMaxInstances));
  if (block_days < 1 || block_days > kBlockOfferingMaxDays || (block_days > 14 && block_days % 7 != 0))
    throw InputError(fmt::format("--days: {} is not a Capacity Block length (1-14 days, then multiples of 7 up to {})", block_days, kBlockOfferingMaxDays));
  if (timeout_s < 1 || timeout_s > 3600) throw InputError("--timeout: must be in [1, 3600] seconds");
  if (retries < 0 || retries > 10) throw InputError("--retries: must be in [0, 10]");
  if (deadline_s < 1 || deadline_s > 7 * 86400) throw InputError("--deadline: must be in [1, 604800] seconds");
}

CapacityBlockFetchOptions PricesCommand::capacity_block_options(const Catalog& catalog, const std::string& region) const {
  CapacityBlockFetchOptions o;
  o.region = region;
  o.endpoint_url = endpoint_url;
  o.instance_types = block_types.empty() ? capacity_block_instance_types(catalog) : block_types;
  for (const auto& t : o.instance_types)
    if (!catalog.find_instance(t))
      throw InputError(fmt::format("--instance-type: '{}' is not in the catalog (did you mean {}?)", t, fmt::join(catalog.nearest_instance_names(t), ", ")));
  o.instance_count = block_count;
  o.days = block_days;
  o.start_date_range = iso_utc("--start-date-range", start_date_range);
  o.end_date_range = iso_utc("--end-date-range", end_date_range);
  o.timeout_s = timeout_s;
  o.attempts = retries + 1;
  o.deadline_s = deadline_s;
  return o;
}

std::vector<CapacityBlockFetchOptions> PricesCommand::capacity_block_requests(const Catalog& catalog) const {
  std::vector<CapacityBlockFetchOptions> requests;
  for (const auto& r : fetch_regions.empty() ? catalog_regions(catalog) : fetch_regions) {
    if (r.empty() || r.size() > 32 || r.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      throw InputError(fmt::format("--region: '{}' is not an AWS region name (e.g. us-east-1)", r.substr(0, 40)));
    requests.push_back(capacity_block_options(catalog, r));
    ec2_endpoint(requests.back());  // a refused --endpoint-url before any credentials are read
  }
  return requests;
}

// The fetched rates merged into `output` (created if missing), under the lock a
// price-file fetch takes; nothing is written when no type had an offering.
// Returns the number of rates written and the catalog with them.
std::pair<int, Catalog> write_capacity_block_rates(const std::vector<std::pair<std::string, std::vector<TypeOfferings>>>& by_region,
                                                   const CatalogSource& base, const std::vector<CatalogSource>& overlays,
                                                   const std::string& output, const std::string& date, const std::string& lock_dir,
                                                   std::chrono::steady_clock::time_point deadline) {
  const DownloadLock lock(lock_dir, deadline);
  // The catalog as it would be with `overlay` as the cached prices (checked by loading).
  auto catalog_with = [&](const std::string& overlay) {
    std::vector<CatalogSource> with;
    if (!overlay.empty()) with.push_back({output, overlay});
    with.insert(with.end(), overlays.begin(), overlays.end());
    return load_catalog(base, with);
  };
  std::error_code ec;
  std::string merged = std::filesystem::exists(output, ec) ? read_input_file(output, "the cached prices") : "";
  int rates = 0;
  for (const auto& [region, types] : by_region) {
    merged = merge_capacity_block_rates(merged, output, catalog_with(merged), region, types, date);
    rates += static_cast<int>(std::count_if(types.begin(), types.end(), [](const TypeOfferings& t) { return !t.offerings.empty(); }));
  }
  Catalog updated = catalog_with(merged);  // the overlay must load, or nothing is written
  if (rates > 0) write_file_atomically(output, merged);
  return {rates, std::move(updated)};
}

int PricesCommand::run_capacity_blocks(const GlobalOptions& g) {
  check_capacity_block_flags();
  GlobalOptions without_cache = g;
  without_cache.no_cache_prices = true;  // the cached overlay is what gets merged into: read it under the lock
  auto [base, overlays] = catalog_sources(without_cache);
  const Catalog catalog = load_catalog(base, overlays);
  const std::string output = fetch_output.empty() ? cached_prices_path() : fetch_output;
  if (output.empty()) throw InputError("no cache directory (neither XDG_CACHE_HOME nor HOME is set): give --output FILE");
  std::vector<CapacityBlockFetchOptions> requests = capacity_block_requests(catalog);
  const auto credentials = find_aws_credentials();
  if (!credentials) throw InputError(missing_credentials_message());
  // Ask EC2 first; nothing on disk is touched until every answer is in.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(deadline_s);
  std::vector<std::pair<std::string, std::vector<TypeOfferings>>> by_region;
  for (auto& o : requests) {
    o.deadline = deadline;
    by_region.emplace_back(o.region, fetch_capacity_block_offerings(o, *credentials));
  }
  std::error_code ec;
  if (fetch_output.empty()) std::filesystem::create_directories(cache_dir(), ec);  // --output's directory must exist, as elsewhere
  const std::string lock_dir = !download_dir.empty() ? download_dir : cache_dir().empty() ? output + ".downloads" : cache_dir() + "/downloads";
  const std::string date = today();
  const auto [rates, updated] = write_capacity_block_rates(by_region, base, overlays, output, date, lock_dir, deadline);
  const nlohmann::ordered_json extra{{"output", output}, {"prices_as_of", date}, {"rates_written", rates}};
  print_table(offerings_table(by_region), rates > 0 ? updated : catalog, "prices fetch", "offerings", g, json_text(extra));
  if (rates == 0)
    warn(fmt::format("no Capacity Block offerings of {} instance(s) for {} days in {}; the cached prices are unchanged (try other --days, "
                     "--count or dates)", block_count, block_days, fmt::join(fetch_regions.empty() ? catalog_regions(catalog) : fetch_regions, ", ")));
  else
    spdlog::info("wrote {} Capacity Block rate(s) as of {} to {}{}", rates, date, output,
                 fetch_output.empty() ? "; every command now ranks by them (--no-cache-prices to ignore)" : fmt::format("; use it with --catalog-add {}", output));
  return 0;
}

}  // namespace

std::unique_ptr<Command> add_prices_command(CLI::App& parent) { return std::make_unique<PricesCommand>(parent); }

}  // namespace gpuadvisor::cli
