// `gpuadvisor prices import`: AWS price files to a catalog overlay.
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "gpuadvisor/errors.hpp"
#include "gpuadvisor/files.hpp"
#include "gpuadvisor/price_import.hpp"

namespace gpuadvisor::cli {

namespace {

class PricesCommand : public Command {
 public:
  explicit PricesCommand(CLI::App& parent) {
    app = parent.add_subcommand("prices", "Price files: `prices import` writes a catalog overlay from AWS price files");
    app->require_subcommand(1);
    CLI::App* import = app->add_subcommand("import", "Read AWS price files offline and write a catalog overlay for --catalog-add");
    import->add_option("--offer-file", offer_files, "AWS Price List EC2 offer file (JSON): on-demand and reserved rates (repeatable)");
    import->add_option("--savings-plans-file", sp_files, "AWS Savings Plans offer file (JSON) (repeatable)");
    import->add_option("--spot-history", spot_files, "Output of `aws ec2 describe-spot-price-history --output json` (repeatable)");
    import->add_option("--spot-advisor", advisor_files, "The Spot Instance Advisor's spot-advisor-data.json (repeatable)");
    import->add_option("--output", output, "The overlay to write (replaced atomically)")->required();
    import->add_option("--as-of", as_of, "Date for files that carry none, YYYY-MM-DD (default today)");
    import->add_option("--region", region, "Region of Savings Plans rates whose usage type names none");
  }

  int run(const GlobalOptions& g) override {
    auto [base, overlays] = catalog_sources(g);
    ImportInputs in;
    in.as_of = as_of.empty() ? today() : as_of;
    if (!days_between(in.as_of, in.as_of)) throw InputError(fmt::format("--as-of: '{}' is not a YYYY-MM-DD date", in.as_of));
    if (!region.empty()) in.region = region;
    auto read = [](const std::vector<std::string>& paths, std::vector<PriceFile>& out) {
      for (const auto& p : paths) out.push_back({p, read_input_file(p, "a price file")});
    };
    read(offer_files, in.offer_files);
    read(sp_files, in.savings_plan_files);
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

 private:
  std::vector<std::string> offer_files, sp_files, spot_files, advisor_files;
  std::string output, as_of, region;
};

}  // namespace

std::unique_ptr<Command> add_prices_command(CLI::App& parent) { return std::make_unique<PricesCommand>(parent); }

}  // namespace gpuadvisor::cli
