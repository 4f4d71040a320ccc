// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// `gpuadvisor validate` (predictions against published measurements) and
// `gpuadvisor calibrate` (fit the efficiency parameters, write an overlay).
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "cli.hpp"
#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/validation/accuracy_table.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/files.hpp"
#include "gpuadvisor/base/names.hpp"
#include "gpuadvisor/validation/validation.hpp"

namespace gpuadvisor::cli {

namespace {

// A case's system that is no instance type is a typo in the file, refused as
// a mistyped model is (exit 2, the nearest names), not a row without a prediction.
void refuse_unknown_systems(const Catalog& catalog, const std::string& origin, const std::vector<ValidationCase>& cases) {
  std::vector<std::string> names;
  for (const auto& i : catalog.instances) names.push_back(i.name);
  for (const auto& c : cases) {
    if (catalog.find_instance(c.system)) continue;
    const auto near = nearest_names(c.system, names);
    throw InputError(fmt::format("{}: case '{}': field 'system': '{}' is not an instance type of the catalog or data/validation/systems.json{}",
                                 origin, c.id, c.system, near.empty() ? "" : fmt::format("; did you mean: {}?", fmt::join(near, ", "))));
  }
}

// The catalog with the validation systems, and the cases (bundled or a file).
std::pair<Catalog, std::vector<ValidationCase>> validation_inputs(const GlobalOptions& g, const std::string& file) {
  auto [base, overlays] = catalog_sources(g);
  overlays.push_back({"<data/validation/systems.json>", std::string(embedded_validation_systems_text())});
  Catalog catalog = load_catalog(base, overlays);
  const std::string origin = file.empty() ? "<data/validation/cases.json>" : file;
  const std::string text = file.empty() ? std::string(embedded_validation_cases_text()) : read_input_file(file, "a cases file");
  std::vector<ValidationCase> cases = read_cases(origin, text);
  refuse_unknown_systems(catalog, origin, cases);
  return {std::move(catalog), std::move(cases)};
}

class ValidateCommand : public Command {
 public:
  explicit ValidateCommand(CLI::App& parent) {
    app = parent.add_subcommand("validate", "Compare predictions with published measurements (the bundled cases or --cases FILE)");
    app->add_option("--cases", cases_file, "A cases file (format: docs/validation.md); default: the bundled data/validation/cases.json");
    app->add_flag("--all", all, "Also list the cases kept with usable: false");
    app->add_option("--write-accuracy-at-load", accuracy_at_load_file,
                    "With --cases FILE of measurements the fit has never seen (data/validation/under_load.json): write the error bands of the "
                    "simulated serving figures, per metric and accelerator, over its cases measured under a load "
                    "(data/validation/accuracy_at_load.json)");
  }

  int run(const GlobalOptions& g) override {
    if (!accuracy_at_load_file.empty() && cases_file.empty())
      throw InputError("--write-accuracy-at-load needs --cases FILE: the bundled cases are fitted, so their errors are in sample, not a band");
    auto [catalog, cases] = validation_inputs(g, cases_file);
    const Format format = parse_format(g);
    const std::vector<CaseResult> results = run_cases(cases, catalog);
    if (!accuracy_at_load_file.empty()) write_accuracy_at_load(results);
    const auto summary = summarise(results);
    if (format == Format::json) {
      print_table(validation_table(results, all), catalog, "validate", "cases", g, validation_json_extra(results, summary));
      return 0;
    }
    print_table(validation_table(results, all), catalog, "validate", "cases", g);
    if (format == Format::csv) return 0;
    const ResultCounts n = count_results(results);
    std::cout << fmt::format("\n{} cases, {} usable, {} predicted, {} usable without a prediction (disagreements: listed with the reason; "
                             "--all lists the cases kept with usable: false).\n{}\n\n",
                             n.total, n.usable, n.predicted, n.disagreements,
                             cases_file.empty() ? "Errors are in sample: the catalog's efficiency figures were fitted to these cases (not the RL steps). What a new "
                                                  "measurement should expect is out of sample: gpuadvisor calibrate --leave-one-source-out."
                                                : "These cases were not fitted: their errors are out of sample.");
    print_table(error_summary_table(summary), catalog, "validate", "summary", g);
    const Table stages = rl_stage_table(results);
    if (!stages.rows.empty()) {
      std::cout << "\nRL post-training cases, stage by stage:\n\n";
      print_table(stages, catalog, "validate", "rl_stages", g);
      std::cout << "\n";
      print_table(error_summary_table(rl_stage_summary(results)), catalog, "validate", "rl_stage_summary", g);
    }
    return 0;
  }

 private:
  void write_accuracy_at_load(const std::vector<CaseResult>& results) const {
    const bool any = std::any_of(results.begin(), results.end(), [](const CaseResult& r) {
      return r.c->usable && r.predicted && r.c->is_inference() && (r.c->clients || r.c->inference.requests_per_second);
    });
    if (!any) throw InputError(fmt::format("--write-accuracy-at-load: {} holds no usable case measured under a load (clients or requests_per_second) "
                                           "with a prediction, so there is no band to write", cases_file));
    write_file_atomically(accuracy_at_load_file, accuracy_at_load_json(results, cases_file));
    spdlog::info("wrote the error bands at a load to {}", accuracy_at_load_file);
  }

  std::string cases_file, accuracy_at_load_file;
  bool all = false;
};

class CalibrateCommand : public Command {
 public:
  explicit CalibrateCommand(CLI::App& parent) {
    app = parent.add_subcommand("calibrate", "Fit the efficiency parameters to measurements and write a catalog overlay");
    app->add_option("--measurements", measurements, "Cases file with your runs (same format as validate --cases); default: the bundled cases");
    app->add_option("--output", output, "Overlay to write with the fitted parameters (use with --catalog-add)");
    auto* by_source = app->add_flag("--leave-one-source-out", loso, "For each source: fit without it, report the error on it");
    app->add_flag("--leave-one-family-out", lofo,
                  "For each family of sources (one publisher's stack: data/validation/cases.json source_families): fit without all of it, report "
                  "the error on it")
        ->excludes(by_source);
    app->add_option("--write-accuracy", accuracy_file,
                    "With --leave-one-family-out (as the bundled bands are written) or --leave-one-source-out: write the out-of-sample error bands "
                    "by accelerator and task (data/validation/accuracy.json)");
    app->add_flag("--from-priors", priors, "Start the fit from the priors instead of the catalog's values (reproduces the built-in fit)");
    app->add_option("--jobs", jobs,
                    "With --leave-one-source-out or --leave-one-family-out: threads that run the folds (default: the machine's cores; the output is "
                    "the same for any)")
        ->check(CLI::Range(1, 256));
  }

  int run(const GlobalOptions& g) override {
    auto [catalog, cases] = validation_inputs(g, measurements);
    if (priors) reset_to_prior(catalog);
    if (!accuracy_file.empty() && !loso && !lofo)
      throw InputError("--write-accuracy needs --leave-one-family-out or --leave-one-source-out (the bands are out of sample)");
    if (app->count("--jobs") > 0 && !loso && !lofo)
      throw InputError("--jobs needs --leave-one-source-out or --leave-one-family-out (only their folds run in threads)");
    if ((loso || lofo) && !output.empty())
      throw InputError("--output writes a fit to all the cases; --leave-one-source-out and --leave-one-family-out score fits without some: run them apart");
    if (loso || lofo) return run_folds(g, catalog, cases);
    const auto before = summarise(run_cases(cases, catalog));
    const auto fitted = calibrate(catalog, cases);
    const auto after = summarise(run_cases(cases, catalog));
    print_table(calibration_table(fitted), catalog, "calibrate", "parameters", g);
    if (!before.empty() && !after.empty())
      spdlog::info("median |error| {:.1f}% -> {:.1f}%, p90 {:.1f}% -> {:.1f}% over {} cases", before[0].median_abs * 100, after[0].median_abs * 100,
                   before[0].p90_abs * 100, after[0].p90_abs * 100, after[0].cases);
    if (!output.empty()) {
      write_file_atomically(output, efficiency_overlay(catalog, fitted, "efficiency parameters fitted by `gpuadvisor calibrate`"));
      spdlog::info("wrote the fitted parameters to {}; use it with --catalog-add {}", output, output);
    }
    return 0;
  }

 private:
  // Nothing predicted is an error (a bands file written from it would hold no
  // band); cases a fold could not predict are left out of the figures, said once.
  static void check_folds(const LeaveOneSourceOut& l, const std::vector<ValidationCase>& cases) {
    if (l.sources.empty())
      throw InputError("no usable case was predicted, so there is nothing to hold out (gpuadvisor validate --cases FILE says why for each case)");
    long fitted = 0, predicted = 0;
    for (const auto& c : cases) fitted += c.usable && !c.is_rl();
    for (const auto& r : l.held_out) predicted += r.predicted.has_value();
    if (predicted < fitted)
      spdlog::warn("{} of {} usable cases got no prediction in their fold and are not in the figures (gpuadvisor validate --cases FILE says why)",
                   fitted - predicted, fitted);
  }

  // --leave-one-source-out or --leave-one-family-out: the folds' table and summary, and the bands file.
  int run_folds(const GlobalOptions& g, const Catalog& catalog, const std::vector<ValidationCase>& cases) {
    const LeaveOneSourceOut l = lofo ? leave_one_family_out(cases, catalog, jobs) : leave_one_source_out(cases, catalog, jobs);
    check_folds(l, cases);
    if (!accuracy_file.empty()) {
      write_file_atomically(accuracy_file, accuracy_table_json(l, run_cases(cases, catalog)));
      spdlog::info("wrote the error bands to {}", accuracy_file);
    }
    const std::string table = lofo ? "leave_one_family_out" : "leave_one_source_out";
    const Format format = parse_format(g);
    print_table(source_check_table(l.sources, l.held_out_by), catalog, "calibrate", table, g, format == Format::json ? loso_json_extra(l) : std::string());
    if (format == Format::table || format == Format::markdown) {
      std::cout << "\n";
      print_table(loso_summary_table(l), catalog, "calibrate", table + "_summary", g);
    }
    return 0;
  }

  std::string measurements, output, accuracy_file;
  bool loso = false, lofo = false, priors = false;
  int jobs = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 256u));
};

}  // namespace

std::unique_ptr<Command> add_validate_command(CLI::App& parent) { return std::make_unique<ValidateCommand>(parent); }
std::unique_ptr<Command> add_calibrate_command(CLI::App& parent) { return std::make_unique<CalibrateCommand>(parent); }

}  // namespace gpuadvisor::cli
