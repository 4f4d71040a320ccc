// Layer validation: published measurements predicted and scored (cases, calibration, accuracy bands); includes search and below.
#include "gpuadvisor/validation/accuracy_table.hpp"
#include "gpuadvisor/base/json_text.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "gpuadvisor/physics/accuracy.hpp"

namespace gpuadvisor {

using ordered_json = nlohmann::ordered_json;

namespace {

// One group: |error| of the published metric, and the error signed as speed.
struct GroupErrors {
  std::vector<double> abs, speed;
};

// `kind`: what the group is of ("task", or "metric" for the bands at a load).
ordered_json group_json(const std::string& accelerator, const std::string& group, const GroupErrors& e, const char* kind = "task") {
  auto r6 = [](double v) { return std::round(v * 1e6) / 1e6; };
  return {{"accelerator", accelerator}, {kind, group}, {"cases", e.abs.size()},
          {"median_abs_error", r6(percentile(e.abs, 0.5))}, {"p90_abs_error", r6(percentile(e.abs, 0.9))},
          {"median_signed_error", r6(percentile(e.speed, 0.5))}};
}

// A time predicted short of the measurement is a prediction faster than it.
double speed_error_of_time(double error) { return 1 / (1 + error) - 1; }

}  // namespace

std::string accuracy_at_load_json(const std::vector<CaseResult>& results, const std::string& cases_file) {
  std::map<std::pair<std::string, std::string>, GroupErrors> groups;  // (accelerator or "*", metric)
  for (const CaseResult& r : results) {
    const ValidationCase& c = *r.c;
    const bool under_load = c.clients || c.inference.requests_per_second;
    if (!c.usable || !r.predicted || !c.is_inference() || !under_load || c.metric == Metric::output_tokens_per_second) continue;
    for (const std::string& acc : {r.accelerator, std::string("*")}) {
      GroupErrors& g = groups[{acc, std::string(to_string(c.metric))}];
      g.abs.push_back(std::fabs(r.error));
      g.speed.push_back(speed_error_of_time(r.error));
    }
  }
  ordered_json j;
  j["generated_by"] = fmt::format("gpuadvisor validate --cases {} --write-accuracy-at-load (scripts/validation_report.sh)", cases_file);
  j["note"] = "|error| of the simulated serving figures against measurements taken under a load, per metric, by accelerator and over all; "
              "out of sample where the cases were never fitted (data/validation/under_load.json); docs/validation.md, Under load";
  j["groups"] = ordered_json::array();
  for (const auto& [key, errors] : groups) j["groups"].push_back(group_json(key.first, key.second, errors, "metric"));
  return json_text(j, 1) + "\n";
}

std::string accuracy_table_json(const LeaveOneSourceOut& l, const std::vector<CaseResult>& rl_results) {
  std::map<std::pair<std::string, std::string>, GroupErrors> groups;
  auto add = [&](const CaseResult& r) {
    if (!r.c->usable || !r.predicted) return;
    const std::string task = accuracy_task(r.c->task);
    // Signed as speed: positive when the prediction is faster than measured
    // (throughput over, or a time under, the measurement).
    const bool time_metric = (is_serving_metric(r.c->metric) && r.c->metric != Metric::output_tokens_per_second) || r.c->metric == Metric::rl_step_time_s;
    const double speed_error = time_metric ? speed_error_of_time(r.error) : r.error;
    // Dense models' cases by task, and serving cases also by engine, training
    // cases by stack: "inference/trtllm", "pretrain/fsdp". MoE models' cases
    // only in "<task>/moe" (every engine and stack): a dense prediction's band
    // is not widened by the MoE rows' misses. RL steps: one group.
    std::vector<std::string> tasks;
    const std::string& variant = r.c->is_inference() ? r.c->engine : r.c->framework;
    if (r.c->is_rl() || !r.c->model.is_moe()) tasks.push_back(task);
    if (!r.c->is_rl() && !r.c->model.is_moe() && !variant.empty()) tasks.push_back(task + "/" + variant);
    if (!r.c->is_rl() && r.c->model.is_moe()) tasks.push_back(task + "/" + kMoeVariant);
    for (const std::string& t : tasks)
      for (const std::string& acc : {r.accelerator, std::string("*")}) {
        groups[{acc, t}].abs.push_back(std::fabs(r.error));
        groups[{acc, t}].speed.push_back(speed_error);
      }
  };
  for (const auto& r : l.held_out) add(r);
  for (const auto& r : rl_results)
    if (r.c->is_rl()) add(r);
  ordered_json j;
  const bool families = l.held_out_by == HeldOutBy::family;
  j["generated_by"] = fmt::format("gpuadvisor calibrate --leave-one-{}-out --write-accuracy (scripts/validation_report.sh)", families ? "family" : "source");
  j["note"] = fmt::format("out-of-sample |error| of the cases by accelerator and task: each case predicted by the fit made without {}; RL "
                          "cases are never fitted. docs/validation.md",
                          families ? "every source of its family (one publisher's stack, cases.json source_families)" : "its own source");
  j["groups"] = ordered_json::array();
  for (const auto& [key, errors] : groups) j["groups"].push_back(group_json(key.first, key.second, errors));
  return json_text(j, 1) + "\n";
}

}  // namespace gpuadvisor
