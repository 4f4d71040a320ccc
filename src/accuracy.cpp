#include "gpuadvisor/accuracy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace gpuadvisor {

extern const char* const embedded_validation_accuracy_json;
extern const std::size_t embedded_validation_accuracy_json_size;

using ordered_json = nlohmann::ordered_json;

std::string_view embedded_accuracy_text() { return {embedded_validation_accuracy_json, embedded_validation_accuracy_json_size}; }

std::string accuracy_task(std::string_view task) {
  if (task == "finetune" || task == "lora" || task == "qlora") return "fine-tuning";
  return std::string(task);
}

namespace {

// One group: |error| of the published metric, and the error signed as speed.
struct GroupErrors {
  std::vector<double> abs, speed;
};

ordered_json group_json(const std::string& accelerator, const std::string& task, const GroupErrors& e) {
  auto r6 = [](double v) { return std::round(v * 1e6) / 1e6; };
  return {{"accelerator", accelerator}, {"task", task}, {"cases", e.abs.size()},
          {"median_abs_error", r6(percentile(e.abs, 0.5))}, {"p90_abs_error", r6(percentile(e.abs, 0.9))},
          {"median_signed_error", r6(percentile(e.speed, 0.5))}};
}

struct Table {
  std::map<std::pair<std::string, std::string>, AccuracyBand> groups;  // (accelerator or "*", task)
};

const Table& table() {
  static const Table t = [] {
    Table out;
    const auto j = nlohmann::json::parse(std::string_view(embedded_validation_accuracy_json, embedded_validation_accuracy_json_size));
    for (const auto& g : j.at("groups")) {
      AccuracyBand b;
      const std::string acc = g.at("accelerator"), task = g.at("task");
      // Serving groups by engine are stored as "inference/<engine>", MoE models' as "<task>/moe".
      const auto slash = task.find('/');
      const std::string variant = slash == std::string::npos ? "" : task.substr(slash + 1);
      const std::string kind = task == "rl" ? "" : "dense-model ";
      const std::string shown = variant.empty()       ? kind + task
                                : variant == kMoeVariant ? task.substr(0, slash) + ", MoE models"
                                                         : kind + task.substr(0, slash) + " with " + variant;
      b.group = acc == "*" ? shown + " (all accelerators)" : acc + " " + shown;
      b.cases = g.at("cases");
      b.median_abs_error = g.at("median_abs_error");
      b.p90_abs_error = g.at("p90_abs_error");
      b.median_signed_error = g.at("median_signed_error");
      out.groups[{acc, task}] = b;
    }
    return out;
  }();
  return t;
}

}  // namespace

std::string accuracy_table_json(const LeaveOneSourceOut& l, const std::vector<CaseResult>& rl_results) {
  std::map<std::pair<std::string, std::string>, GroupErrors> groups;
  auto add = [&](const CaseResult& r) {
    if (!r.c->usable || !r.predicted) return;
    const std::string task = accuracy_task(r.c->task);
    // Signed as speed: positive when the prediction is faster than measured
    // (throughput over, or a time under, the measurement).
    const bool time_metric = r.c->metric == Metric::tpot_s || r.c->metric == Metric::ttft_s || r.c->metric == Metric::rl_step_time_s;
    const double speed_error = time_metric ? 1 / (1 + r.error) - 1 : r.error;
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
  j["generated_by"] = "gpuadvisor calibrate --leave-one-source-out --write-accuracy (scripts/validation_report.sh)";
  j["note"] = "out-of-sample |error| of the bundled cases by accelerator and task: each case predicted by the fit made without its own "
              "source; RL cases are never fitted. docs/validation.md";
  j["groups"] = ordered_json::array();
  for (const auto& [key, errors] : groups) j["groups"].push_back(group_json(key.first, key.second, errors));
  return j.dump(1) + "\n";
}

std::optional<AccuracyBand> accuracy_band(std::string_view accelerator, std::string_view task, std::string_view engine, bool moe) {
  const auto& g = table().groups;
  if (moe) {
    // MoE predictions carry the MoE cases' band: on the accelerator, else every
    // accelerator's. Fine-tuning has no MoE cases of its own: it takes the MoE
    // pre-training cases' band (the same training physics), and says so.
    auto moe_group = [&](const std::string& t, const std::string& acc) {
      auto it = g.find({acc, t + "/" + kMoeVariant});
      return it == g.end() ? std::optional<AccuracyBand>() : std::optional<AccuracyBand>(it->second);
    };
    const std::string own_task(task);
    const auto own = moe_group(own_task, std::string(accelerator));
    if (own && own->cases >= kMinAccuracyCases) return own;
    const int n = own ? own->cases : 0;
    const std::string few = fmt::format("{} published MoE {} case{} on {}", n == 0 ? "no" : fmt::format("only {}", n), task, n == 1 ? "" : "s", accelerator);
    if (auto all = moe_group(own_task, "*"); all && all->cases >= kMinAccuracyCases) {
      all->note = few + ": every accelerator's MoE cases";
      return all;
    }
    if (task == "fine-tuning") {
      for (const std::string acc : {std::string(accelerator), std::string("*")})
        if (auto pre = moe_group("pretrain", acc); pre && pre->cases >= kMinAccuracyCases) {
          pre->note = "no published MoE fine-tuning cases: the MoE pre-training cases' band";
          return pre;
        }
    }
    auto b = accuracy_band(accelerator, task, engine);
    if (b) b->note = few + (b->note.empty() ? ": the dense models' band" : "; the dense models' band, " + b->note);
    return b;
  }
  if (!engine.empty()) {
    auto own = g.find({std::string(accelerator), std::string(task) + "/" + std::string(engine)});
    if (own != g.end() && own->second.cases >= kMinAccuracyCases) return own->second;
    auto b = accuracy_band(accelerator, task);
    if (b && b->note.empty()) {  // the accelerator's own band: say its engines are pooled
      const int n = own == g.end() ? 0 : own->second.cases;
      const std::string pooled = fmt::format("{} published case{} with {} on {}: pooled with other {}", n == 0 ? "no" : fmt::format("only {}", n),
                                             n == 1 ? "" : "s", engine, accelerator, task == "inference" ? "engines" : "stacks");
      b->note = pooled;
    }
    return b;
  }
  auto all = g.find({"*", std::string(task)});
  if (all == g.end()) return std::nullopt;
  auto own = g.find({std::string(accelerator), std::string(task)});
  if (own != g.end() && own->second.cases >= kMinAccuracyCases) return own->second;
  AccuracyBand b = all->second;
  const int n = own == g.end() ? 0 : own->second.cases;
  b.note = n == 0 ? fmt::format("no published {} case on {}", task, accelerator)
                  : fmt::format("only {} published {} case{} on {}", n, task, n == 1 ? "" : "s", accelerator);
  return b;
}

std::string accuracy_line(std::string_view accelerator, std::string_view task, std::string_view engine, bool moe) {
  auto b = accuracy_band(accelerator, accuracy_task(task), engine, moe);
  return b ? accuracy_text(*b) : "unknown (no published cases for this task)";
}

std::string accuracy_text(const AccuracyBand& b) {
  // Which way the typical error runs: a time predicted too short is optimistic.
  const double s = b.median_signed_error;
  const std::string lean = std::fabs(s) < 0.05 ? "no lean" : s > 0 ? "typically optimistic: faster than measured"
                                                                : "typically pessimistic: slower than measured";
  return fmt::format("+-{:.0f}% (p90 |error|, median {:.0f}%, {}, out of sample over {} published {} cases{})", b.p90_abs_error * 100,
                     b.median_abs_error * 100, lean, b.cases, b.group, b.note.empty() ? "" : "; " + b.note);
}

}  // namespace gpuadvisor
