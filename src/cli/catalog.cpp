// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// `gpuadvisor catalog` (list with filters), `catalog show NAME`, `catalog validate FILE`.
#include <iostream>

#include "cli.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/catalog/pricing.hpp"
#include "gpuadvisor/base/quantity.hpp"

namespace gpuadvisor::cli {

namespace {

struct CatalogListOptions {
  std::vector<std::string> families, accelerators;
  std::string min_memory, max_price, region = "us-east-1", sort_by = "instance";
  int min_accelerators = 0;
  bool efa = false;
};

class CatalogCommand : public Command {
 public:
  explicit CatalogCommand(CLI::App& parent) {
    app = parent.add_subcommand("catalog", "List the instance catalog; `catalog show NAME`, `catalog validate FILE`");
    app->add_option("--family", cl.families, "Only these families: p5,p4d or repeated")->delimiter(',');
    app->add_option("--accelerator", cl.accelerators, "Only these accelerators (repeatable), e.g. H100-SXM");
    app->add_option("--min-accelerator-memory", cl.min_memory, "At least this much memory per accelerator: 40GB, 80GiB");
    app->add_option("--min-accelerators", cl.min_accelerators, "At least this many accelerators per instance");
    app->add_option("--max-price", cl.max_price, "At most this on-demand USD per hour");
    app->add_option("--region", cl.region, "Region for prices (default us-east-1)");
    app->add_flag("--efa", cl.efa, "Only instances with EFA");
    app->add_option("--sort-by", cl.sort_by, "Any column key, e.g. on_demand_usd_per_hour, accelerator_memory_gib");
    show = app->add_subcommand("show", "One instance with its accelerator's specs and sources");
    show->add_option("name", show_name, "Instance type, e.g. p5.48xlarge")->required();
    validate = app->add_subcommand("validate", "Check a catalog or overlay file");
    validate->add_option("file", validate_file, "Catalog JSON file")->required();
    validate->add_flag("--overlay", validate_overlay, "Validate FILE as an overlay on the built-in catalog");
  }

  int run(const GlobalOptions& g) override {
    if (validate->parsed()) return run_validate(g);
    const Catalog catalog = load(g);
    if (show->parsed()) return run_show(catalog, g);
    return run_list(catalog, g);
  }

 private:
  CatalogListOptions cl;
  CLI::App* show = nullptr;
  CLI::App* validate = nullptr;
  std::string show_name, validate_file;
  bool validate_overlay = false;

  int run_validate(const GlobalOptions& g) const {
    CatalogSource file = read_catalog_file(validate_file);
    Catalog c = validate_overlay ? load_catalog(embedded_catalog_source(), {file}) : load_catalog(file);
    print_document(render_catalog_check(c, validate_file, parse_format(g)), parse_format(g));
    return 0;
  }

  int run_show(const Catalog& catalog, const GlobalOptions& g) const {
    const Instance* i = &instance_named(catalog, show_name, "catalog show");
    print_document(render_instance_details(catalog, *i, RenderOptions{parse_format(g), g.wide}), parse_format(g));
    return 0;
  }

  bool keep(const Catalog& catalog, const Instance& i, std::optional<double> min_mem, std::optional<double> max_price) const {
    const Accelerator& a = catalog.accelerator_of(i);
    if (!cl.families.empty() && std::find(cl.families.begin(), cl.families.end(), i.family) == cl.families.end()) return false;
    if (!cl.accelerators.empty() && std::find(cl.accelerators.begin(), cl.accelerators.end(), a.name) == cl.accelerators.end()) return false;
    if (min_mem && a.memory_usable_gb() < *min_mem) return false;
    if (i.accelerator_count < cl.min_accelerators) return false;
    if (cl.efa && !i.efa_supported) return false;
    if (max_price) {
      auto od = hourly_rate(i, cl.region, Pricing::on_demand);
      if (!od || *od > *max_price) return false;
    }
    return true;
  }

  int run_list(const Catalog& catalog, const GlobalOptions& g) const {
    std::optional<double> min_mem, max_price;
    if (!cl.min_memory.empty()) min_mem = parse_memory_gb(cl.min_memory, "--min-accelerator-memory");
    if (!cl.max_price.empty()) max_price = parse_usd(cl.max_price, "--max-price");
    if (cl.min_accelerators < 0) throw InputError("--min-accelerators: must be at least 0");
    check_families(catalog, cl.families);
    check_priced_region(catalog, cl.region);
    for (const auto& a : cl.accelerators)
      if (!catalog.find_accelerator(a)) throw InputError(fmt::format("--accelerator: unknown accelerator '{}'", a));
    std::vector<const Instance*> list;
    for (const auto& i : catalog.instances)
      if (keep(catalog, i, min_mem, max_price)) list.push_back(&i);
    Table t = catalog_table(catalog, list, cl.region);
    auto col = std::find_if(t.columns.begin(), t.columns.end(), [&](const Column& c) { return c.key == cl.sort_by; });
    if (col == t.columns.end()) {
      std::string keys;
      for (const auto& c : t.columns) keys += (keys.empty() ? "" : ", ") + c.key;
      throw InputError(fmt::format("--sort-by: '{}' is not a column (use one of: {})", cl.sort_by, keys));
    }
    const size_t k = static_cast<size_t>(col - t.columns.begin());
    std::stable_sort(t.rows.begin(), t.rows.end(), [&](const auto& a, const auto& b) {
      const Value &va = a[k].value, &vb = b[k].value;
      if (va.index() != vb.index()) return vb.index() == 0;  // unknown values sort last
      return va < vb;
    });
    print_table(t, catalog, "catalog", "instances", g);
    if (parse_format(g) == Format::table) std::cout << fmt::format("\n{} instance types; {}.\n", t.rows.size(), prices_note(catalog));
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> add_catalog_command(CLI::App& parent) { return std::make_unique<CatalogCommand>(parent); }

}  // namespace gpuadvisor::cli
