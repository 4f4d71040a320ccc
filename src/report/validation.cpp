// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// Reports of `validate`, `calibrate` and `prices import` (docs/json.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuadvisor/report/report.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "report/detail.hpp"

namespace gpuadvisor {

using namespace report_detail;

namespace {
Cell signed_pct(double f) { return {fmt::format("{:+.1f}%", f * 100), sig6(f)}; }
Cell pct1(double f) { return {fmt::format("{:.1f}%", f * 100), sig6(f)}; }
Cell sig4(double v) { return {fmt::format("{:.4g}", v), sig6(v)}; }
Cell none(const char* shown) { return {shown, std::monostate{}}; }
// Why a case has no prediction, in a word: not used, does not fit in memory,
// or another problem (a layout the model cannot run, a system not loaded) that
// its note gives.
const char* no_prediction_label(const CaseResult& r) {
  if (!r.c->usable) return "not used";
  return r.problem.rfind("does not fit", 0) == 0 ? "no fit" : "no prediction";
}
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
                      r.predicted ? signed_pct(r.error) : none(no_prediction_label(r)), {c.usable ? "yes" : "no", c.usable},
                      text(c.source_key), text(c.source), text(!r.problem.empty() ? r.problem : c.reason)});
  }
  return t;
}

Table rl_stage_table(const std::vector<CaseResult>& results) {
  Table t;
  t.columns = {{"id", "ID"}, {"stage", "STAGE"}, {"measured_s", "MEASURED S", true}, {"predicted_s", "PREDICTED S", true}, {"error", "ERROR", true}};
  for (const auto& r : results)
    for (const auto& s : r.stages) t.rows.push_back({text(r.c->id), text(s.name), sig4(s.measured), sig4(s.predicted), signed_pct(s.error)});
  return t;
}

std::vector<ErrorSummary> rl_stage_summary(const std::vector<CaseResult>& results) {
  std::vector<ErrorSummary> out;
  for (const char* stage : {"generation_s", "scoring_s", "training_s", "weight_sync_s"}) {
    std::vector<double> signed_errors, abs_errors;
    for (const auto& r : results)
      for (const auto& s : r.stages)
        if (s.name == stage) {
          signed_errors.push_back(s.error);
          abs_errors.push_back(std::fabs(s.error));
        }
    if (signed_errors.empty()) continue;
    out.push_back({fmt::format("rl stage: {}", stage), static_cast<int>(signed_errors.size()), percentile(abs_errors, 0.5), percentile(abs_errors, 0.9),
                   percentile(signed_errors, 0.5)});
  }
  return out;
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
  ordered_json stages = ordered_json::array();
  for (const auto& r : results)
    for (const auto& s : r.stages)
      stages.push_back({{"id", r.c->id}, {"stage", s.name}, {"measured_s", sig6(s.measured)}, {"predicted_s", sig6(s.predicted)},
                        {"error", sig6(s.error)}});
  j["rl_stages"] = stages;
  ordered_json by_stage = ordered_json::array();
  for (const auto& s : rl_stage_summary(results))
    by_stage.push_back({{"group", s.group}, {"cases", s.cases}, {"median_abs_error", sig6(s.median_abs)}, {"p90_abs_error", sig6(s.p90_abs)},
                        {"median_signed_error", sig6(s.median_signed)}});
  j["rl_stage_summary"] = by_stage;
  const ResultCounts n = count_results(results);
  j["cases_total"] = n.total;
  j["cases_usable"] = n.usable;
  j["cases_predicted"] = n.predicted;
  j["disagreements"] = n.disagreements;
  return json_text(j);
}

Table calibration_table(const std::vector<FittedParameter>& fitted) {
  Table t;
  t.columns = {{"accelerator", "ACCELERATOR"}, {"parameter", "PARAMETER"}, {"cases", "CASES", true}, {"before", "BEFORE", true}, {"after", "AFTER", true}};
  for (const auto& f : fitted)
    t.rows.push_back({text(f.accelerator), text(f.parameter), integer(f.cases), num(f.before, 3), num(f.after, 3)});
  return t;
}

Table source_check_table(const std::vector<SourceCheck>& checks, HeldOutBy by) {
  Table t;
  t.columns = {{by == HeldOutBy::family ? "family" : "source", "LEFT OUT"}, {"cases", "CASES", true}, {"median_abs_error_fitted_without", "MEDIAN |ERR| (FIT WITHOUT)", true},
               {"median_abs_error_fitted_with", "MEDIAN |ERR| (FIT WITH ALL)", true}, {"median_abs_error_prior", "MEDIAN |ERR| (PRIORS)", true}};
  for (const auto& c : checks) t.rows.push_back({text(c.source), integer(c.cases), pct1(c.fitted_without), pct1(c.fitted_with_all), pct1(c.priors)});
  return t;
}

namespace {
// "all", "task: X" and "metric: X" groups of the results as {cases, median_abs_error, p90_abs_error}, with by_task and by_metric.
ordered_json pooled_json(const std::vector<CaseResult>& results) {
  ordered_json j = ordered_json::object();
  ordered_json by_task = ordered_json::object(), by_metric = ordered_json::object();
  auto figures = [](const ErrorSummary& s) {
    return ordered_json{{"cases", s.cases}, {"median_abs_error", sig6(s.median_abs)}, {"p90_abs_error", sig6(s.p90_abs)}};
  };
  for (const auto& s : summarise(results)) {
    if (s.group == "all") j = figures(s);
    else if (s.group.rfind("task: ", 0) == 0) by_task[s.group.substr(6)] = figures(s);
  }
  for (const auto& s : summarise_by_metric(results)) by_metric[s.group.substr(8)] = figures(s);
  j["by_task"] = by_task;
  j["by_metric"] = by_metric;
  return j;
}
}  // namespace

Table loso_summary_table(const LeaveOneSourceOut& l) {
  Table t;
  t.columns = {{"group", "GROUP"}, {"cases", "CASES", true}, {"median_abs_error", "MEDIAN |ERR| (OUT OF SAMPLE)", true},
               {"p90_abs_error", "P90 |ERR| (OUT OF SAMPLE)", true}, {"in_sample_median_abs_error", "MEDIAN |ERR| (IN SAMPLE)", true},
               {"in_sample_p90_abs_error", "P90 |ERR| (IN SAMPLE)", true}};
  auto held = summarise(l.held_out), fitted = summarise(l.in_sample);
  for (const auto& s : summarise_by_metric(l.held_out)) held.push_back(s);
  for (const auto& s : summarise_by_metric(l.in_sample)) fitted.push_back(s);
  for (const auto& s : held) {
    if (s.group != "all" && s.group.rfind("task: ", 0) != 0 && s.group.rfind("metric: ", 0) != 0) continue;
    auto in = std::find_if(fitted.begin(), fitted.end(), [&](const ErrorSummary& x) { return x.group == s.group; });
    t.rows.push_back({text(s.group), integer(s.cases), pct1(s.median_abs), pct1(s.p90_abs), in != fitted.end() ? pct1(in->median_abs) : none("-"),
                      in != fitted.end() ? pct1(in->p90_abs) : none("-")});
  }
  return t;
}

std::string loso_json_extra(const LeaveOneSourceOut& l) {
  const std::string name = l.held_out_by == HeldOutBy::family ? "leave_one_family_out" : "leave_one_source_out";
  ordered_json j;
  j[name + "_summary"] = pooled_json(l.held_out);
  j[name + "_summary"]["in_sample"] = pooled_json(l.in_sample);
  ordered_json cases = ordered_json::array();
  for (size_t i = 0; i < l.held_out.size(); ++i) {
    const CaseResult &out = l.held_out[i], &in = l.in_sample[i];
    if (!out.c->usable) continue;
    cases.push_back({{"id", out.c->id}, {"source_key", out.c->source_key}, {"family", out.c->family}, {"task", out.c->task}, {"accelerator", out.accelerator},
                     {"error_out_of_sample", out.predicted ? ordered_json(sig6(out.error)) : ordered_json(nullptr)},
                     {"error_in_sample", in.predicted ? ordered_json(sig6(in.error)) : ordered_json(nullptr)}});
  }
  j[name + "_cases"] = cases;
  return json_text(j);
}

Table import_report_table(const std::vector<ImportLine>& report) {
  Table t;
  t.columns = {{"file", "FILE"}, {"kind", "KIND"}, {"outcome", "OUTCOME"}, {"detail", "DETAIL"}, {"count", "COUNT", true}};
  for (const auto& l : report) t.rows.push_back({text(l.file), text(l.kind), text(l.outcome), text(l.detail), integer(l.count)});
  return t;
}

}  // namespace gpuadvisor
