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

#include "cli.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/files.hpp"
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

  int run(const GlobalOptions& g) override { return fetch->parsed() ? run_fetch(g) : run_import(g); }

 private:
  CLI::App* import = nullptr;
  CLI::App* fetch = nullptr;
  std::vector<std::string> fetch_regions;
  std::string base_url = kPriceListBaseUrl, spot_advisor_url = kSpotAdvisorUrl, fetch_output, download_dir;
  long timeout_s = 60, deadline_s = 3600;
  int retries = 3;
  std::vector<std::string> allowed_hosts;
  bool no_savings_plans = false, no_spot_advisor = false;

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
  }

  int run_fetch(const GlobalOptions& g);
  FetchOptions fetch_options(const GlobalOptions& g, const Catalog& catalog, const std::string& output) const;

  int run_import(const GlobalOptions& g) {
    auto [base, overlays] = catalog_sources(g);
    ImportInputs in;
    in.as_of = as_of.empty() ? today() : as_of;
    if (!days_between(in.as_of, in.as_of)) throw InputError(fmt::format("--as-of: '{}' is not a YYYY-MM-DD date", in.as_of));
    if (!region.empty()) in.region = region;
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
    write_file_atomically(output, result.overlay_json);
    print_table(import_report_table(result.report), load_catalog(base, overlays), "prices import", "report", g);
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
  write_file_atomically(output, overlay.dump(1) + "\n");
  if (parse_format(g) == Format::json) {
    nlohmann::ordered_json report = nlohmann::ordered_json::array();
    for (const auto& l : result.report)
      report.push_back({{"file", l.file}, {"kind", l.kind}, {"outcome", l.outcome}, {"detail", l.detail}, {"count", l.count}});
    const nlohmann::ordered_json extra{{"output", output}, {"prices_as_of", date}, {"prices_written", result.prices_written}, {"report", report}};
    print_table(fetch_table(files), catalog, "prices fetch", "files", g, extra.dump());
  } else {
    print_table(fetch_table(files), catalog, "prices fetch", "files", g);
    std::cout << "\n";
    print_table(import_report_table(result.report), catalog, "prices fetch", "report", g);
  }
  spdlog::info("wrote {} prices as of {} to {}{}", result.prices_written, date, output,
               fetch_output.empty() ? "; every command now uses them (--no-cache-prices to ignore)" : fmt::format("; use it with --catalog-add {}", output));
  return 0;
}

}  // namespace

std::unique_ptr<Command> add_prices_command(CLI::App& parent) { return std::make_unique<PricesCommand>(parent); }

}  // namespace gpuadvisor::cli
