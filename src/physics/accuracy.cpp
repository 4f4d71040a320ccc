// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/accuracy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace gpuadvisor {

extern const char* const embedded_validation_accuracy_json;
extern const std::size_t embedded_validation_accuracy_json_size;
extern const char* const embedded_validation_accuracy_at_load_json;
extern const std::size_t embedded_validation_accuracy_at_load_json_size;

using ordered_json = nlohmann::ordered_json;

std::string_view embedded_accuracy_text() { return {embedded_validation_accuracy_json, embedded_validation_accuracy_json_size}; }

std::string_view embedded_accuracy_at_load_text() {
  return {embedded_validation_accuracy_at_load_json, embedded_validation_accuracy_at_load_json_size};
}

std::string accuracy_task(std::string_view task) {
  if (task == "finetune" || task == "lora" || task == "qlora") return "fine-tuning";
  return std::string(task);
}

namespace {

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
      if (task == "rl") b.held_out = "never fitted";
      out.groups[{acc, task}] = b;
    }
    return out;
  }();
  return t;
}

}  // namespace

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

namespace {

// Which way the typical error runs: a time predicted too short is optimistic.
std::string lean_text(const AccuracyBand& b) {
  const double s = b.median_signed_error;
  return std::fabs(s) < 0.05 ? "no lean" : s > 0 ? "typically optimistic: faster than measured" : "typically pessimistic: slower than measured";
}

}  // namespace

std::string accuracy_text(const AccuracyBand& b) {
  return fmt::format("+-{:.0f}% (p90 |error|, median {:.0f}%, {}, over {} published {} cases, {}{})", b.p90_abs_error * 100,
                     b.median_abs_error * 100, lean_text(b), b.cases, b.group, b.held_out, b.note.empty() ? "" : "; " + b.note);
}

namespace {

const std::map<std::pair<std::string, std::string>, AccuracyBand>& at_load_groups() {
  static const auto groups = [] {
    std::map<std::pair<std::string, std::string>, AccuracyBand> out;  // (accelerator or "*", metric)
    const auto j = nlohmann::json::parse(embedded_accuracy_at_load_text());
    for (const auto& g : j.at("groups")) {
      AccuracyBand b;
      const std::string acc = g.at("accelerator"), metric = g.at("metric");
      b.group = acc == "*" ? "every accelerator" : acc;
      b.cases = g.at("cases");
      b.median_abs_error = g.at("median_abs_error");
      b.p90_abs_error = g.at("p90_abs_error");
      b.median_signed_error = g.at("median_signed_error");
      out[{acc, metric}] = b;
    }
    return out;
  }();
  return groups;
}

}  // namespace

std::optional<AccuracyBand> accuracy_at_load_band(std::string_view accelerator, std::string_view metric) {
  const auto& g = at_load_groups();
  const auto own = g.find({std::string(accelerator), std::string(metric)});
  if (own != g.end() && own->second.cases >= kMinAccuracyCases) return own->second;
  const auto all = g.find({"*", std::string(metric)});
  if (all == g.end()) return std::nullopt;
  AccuracyBand b = all->second;
  const int n = own == g.end() ? 0 : own->second.cases;
  b.note = fmt::format("{} on {}", n == 0 ? std::string("none") : fmt::format("only {}", n), accelerator);  // "none on L4"
  return b;
}

std::string accuracy_at_load_line(std::string_view accelerator) {
  std::vector<std::pair<std::string, AccuracyBand>> bands;
  for (const auto& [metric, name] : {std::pair{"ttft_s", "TTFT"}, std::pair{"tpot_s", "TPOT"}})
    if (auto b = accuracy_at_load_band(accelerator, metric)) bands.emplace_back(name, *b);
  auto over = [](const AccuracyBand& b) {
    return fmt::format("{} published measurements under load on {}{}", b.cases, b.group, b.note.empty() ? "" : " (" + b.note + ")");
  };
  const bool shared = bands.size() == 2 && over(bands[0].second) == over(bands[1].second);
  std::vector<std::string> parts;
  for (const auto& [name, b] : bands)
    parts.push_back(fmt::format("{} +-{:.0f}% (median {:.0f}%, {}{})", name, b.p90_abs_error * 100, b.median_abs_error * 100, lean_text(b),
                                shared ? "" : "; over " + over(b)));
  if (parts.empty()) return "";
  return fmt::format("{}, p90 |error|{}", fmt::join(parts, ", "), shared ? " over " + over(bands[0].second) : "");
}

}  // namespace gpuadvisor
