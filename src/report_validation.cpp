// Reports of `validate`, `calibrate` and `prices import` (docs/json.md).
#include <fmt/format.h>

#include "gpuadvisor/report.hpp"
#include "report_detail.hpp"

namespace gpuadvisor {

using namespace report_detail;

namespace {
Cell signed_pct(double f) { return {fmt::format("{:+.1f}%", f * 100), sig6(f)}; }
Cell pct1(double f) { return {fmt::format("{:.1f}%", f * 100), sig6(f)}; }
Cell sig4(double v) { return {fmt::format("{:.4g}", v), sig6(v)}; }
Cell none(const char* shown) { return {shown, std::monostate{}}; }
}  // namespace

Table validation_table(const std::vector<CaseResult>& results, bool all) {
  Table t;
  t.columns = {{"id", "ID"}, {"task", "TASK"}, {"model", "MODEL"}, {"system", "SYSTEM"}, {"accelerator", "ACCEL", false, true},
               {"metric", "METRIC", false, true}, {"measured", "MEASURED", true}, {"predicted", "PREDICTED", true}, {"error", "ERROR", true},
               {"usable", "USABLE", false, true}, {"source_key", "SOURCE"}, {"source", "PRIMARY SOURCE", false, true},
               {"note", "NOTE", false, true}};
  for (const auto& r : results) {
    const ValidationCase& c = *r.c;
    if (!c.usable && !all) continue;
    t.rows.push_back({text(c.id), text(c.task), text(c.model_name),
                      text(c.instances > 1 ? fmt::format("{} x {}", c.instances, c.system) : c.system), text(r.accelerator),
                      text(std::string(to_string(c.metric))), sig4(c.measured), r.predicted ? sig4(*r.predicted) : none("-"),
                      r.predicted ? signed_pct(r.error) : none(c.usable ? "no fit" : "not used"), {c.usable ? "yes" : "no", c.usable},
                      text(c.source_key), text(c.source), text(!r.problem.empty() ? r.problem : c.reason)});
  }
  return t;
}

Table error_summary_table(const std::vector<ErrorSummary>& summary) {
  Table t;
  t.columns = {{"group", "GROUP"}, {"cases", "CASES", true}, {"median_abs_error", "MEDIAN |ERR|", true}, {"p90_abs_error", "P90 |ERR|", true},
               {"median_signed_error", "MEDIAN ERR", true}};
  for (const auto& s : summary)
    t.rows.push_back({text(s.group), integer(s.cases), pct1(s.median_abs), pct1(s.p90_abs), signed_pct(s.median_signed)});
  return t;
}

std::string validation_json_extra(const std::vector<CaseResult>& results, const std::vector<ErrorSummary>& summary) {
  ordered_json j;
  ordered_json rows = ordered_json::array();
  for (const auto& s : summary)
    rows.push_back({{"group", s.group}, {"cases", s.cases}, {"median_abs_error", sig6(s.median_abs)}, {"p90_abs_error", sig6(s.p90_abs)},
                    {"median_signed_error", sig6(s.median_signed)}});
  j["summary"] = rows;
  const ResultCounts n = count_results(results);
  j["cases_total"] = n.total;
  j["cases_usable"] = n.usable;
  j["cases_predicted"] = n.predicted;
  j["disagreements"] = n.disagreements;
  return j.dump();
}

Table calibration_table(const std::vector<FittedParameter>& fitted) {
  Table t;
  t.columns = {{"accelerator", "ACCELERATOR"}, {"parameter", "PARAMETER"}, {"cases", "CASES", true}, {"before", "BEFORE", true}, {"after", "AFTER", true}};
  for (const auto& f : fitted)
    t.rows.push_back({text(f.accelerator), text(f.parameter), integer(f.cases), num(f.before, 3), num(f.after, 3)});
  return t;
}

Table source_check_table(const std::vector<SourceCheck>& checks) {
  Table t;
  t.columns = {{"source", "LEFT OUT"}, {"cases", "CASES", true}, {"median_abs_error_fitted_without", "MEDIAN |ERR| (FIT WITHOUT)", true},
               {"median_abs_error_fitted_with", "MEDIAN |ERR| (FIT WITH ALL)", true}, {"median_abs_error_prior", "MEDIAN |ERR| (PRIORS)", true}};
  for (const auto& c : checks) t.rows.push_back({text(c.source), integer(c.cases), pct1(c.fitted_without), pct1(c.fitted_with_all), pct1(c.priors)});
  return t;
}

Table import_report_table(const std::vector<ImportLine>& report) {
  Table t;
  t.columns = {{"file", "FILE"}, {"kind", "KIND"}, {"outcome", "OUTCOME"}, {"detail", "DETAIL"}, {"count", "COUNT", true}};
  for (const auto& l : report) t.rows.push_back({text(l.file), text(l.kind), text(l.outcome), text(l.detail), integer(l.count)});
  return t;
}

}  // namespace gpuadvisor
