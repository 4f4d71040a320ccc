// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// CI gates: --compare-to BASE.json, --fail-if-over USD, --fail-if-increase PCT (exit 4).
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <iostream>

#include "cli.hpp"
#include "gpuadvisor/base/names.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/base/files.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "base/json_input.hpp"

namespace gpuadvisor::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

// A baseline is another run's JSON, perhaps edited by hand: each field it gives is checked for its type and range.
constexpr double kMaxBaselineUsd = 1e12;  // more than any cloud bill: a corrupted or hand-edited baseline

[[noreturn]] void bad_field(const std::string& path, const char* key, const char* expected) {
  throw InputError(fmt::format("{}: recommendation.{}: expected {} (give an earlier --format json output of the same command)", path, key,
                               expected));
}

std::string text_field(const nlohmann::json& r, const char* key, const std::string& path) {
  if (!r.contains(key)) return "";
  if (!r[key].is_string()) bad_field(path, key, "a string");
  return r[key].get<std::string>();
}

double number_field(const nlohmann::json& r, const char* key, const std::string& path, double min_value, double max_value) {
  const auto& v = r[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < min_value || v.get<double>() > max_value)
    bad_field(path, key, fmt::format("a number in [{:g}, {:g}]", min_value, max_value).c_str());
  return v.get<double>();
}

// The baseline must be a document of this version from a costed command, or its fields may mean something else.
void check_document(const nlohmann::json& doc, const std::string& path) {
  const bool comparable = doc.contains("schema_version") && doc["schema_version"].is_number_integer() &&
                          doc["schema_version"].get<int>() >= kOldestComparableSchemaVersion && doc["schema_version"].get<int>() <= kJsonSchemaVersion;
  if (!comparable)
    throw InputError(fmt::format("{}: schema_version {} is not this gpuadvisor's {} (make the baseline again with this version)", path,
                                 doc.contains("schema_version") ? json_excerpt(doc["schema_version"]) : "missing", kJsonSchemaVersion));
  const std::string command = doc.contains("command") && doc["command"].is_string() ? doc["command"].get<std::string>() : "";
  if (command != "recommend" && command != "cost")
    throw InputError(fmt::format("{}: the output of '{}', not of recommend or cost: nothing to compare a cost with", path, command.substr(0, 40)));
}

PickSummary base_pick(const std::string& path, const std::string& cost_key) {
  const auto doc = parse_json_input(read_input_file(path, "a --compare-to file"), path);
  if (!doc.is_object() || !doc.contains("recommendation") || !doc["recommendation"].is_object())
    throw InputError(fmt::format("{}: no 'recommendation' (give an earlier --format json output of the same command)", path));
  check_document(doc, path);
  const auto& r = doc["recommendation"];
  // A service's month and a job's total are not comparable.
  if (!r.contains("costs") || !r["costs"].is_object() || !r["costs"].contains(cost_key))
    throw InputError(fmt::format("{}: a different kind of request (it has no '{}': compare a training job with a training job, a service "
                                 "with a service)",
                                 path, cost_key));
  PickSummary p;
  if (doc.contains("model") && doc["model"].is_object() && doc.contains("workload") && doc["workload"].is_object())
    p.job = one_line(job_of(text_field(doc["model"], "name", path), text_field(doc["workload"], "task", path)));
  if (doc.contains("workload") && doc["workload"].is_object()) p.workload = doc["workload"];
  p.instance = text_field(r, "instance", path);
  // It is printed to the terminal: a newline or a bidirectional control in it would rewrite what the reader sees.
  if (p.instance.empty() || p.instance.size() > 64 ||
      p.instance.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != std::string::npos)
    throw InputError(fmt::format("{}: recommendation.instance: {} is not an instance type name (letters, digits, '.', '-', '_')", path,
                                 json_excerpt(r["instance"])));
  if (r.contains("count")) {
    if (!r["count"].is_number_integer() || r["count"].get<long long>() < 1 || r["count"].get<long long>() > 1000000)
      bad_field(path, "count", "a whole number of instances");
    p.count = r["count"].get<int>();
  }
  // In cents, as the tool writes them: 0 (a cost under half a cent, which must read back) or at least a cent; 1e-300 is no cost.
  if (!r["costs"][cost_key].is_null()) {
    p.cost_usd = number_field(r["costs"], cost_key.c_str(), path, 0, kMaxBaselineUsd);
    if (*p.cost_usd > 0 && *p.cost_usd < 0.01)
      throw InputError(fmt::format("{}: recommendation.costs.{}: {:g} is not a cost in cents (the tool writes 0 or at least 0.01)", path,
                                   cost_key, *p.cost_usd));
  }
  if (doc.contains("request") && doc["request"].is_object()) {
    const auto& q = doc["request"];
    if (q.contains("pricing") && q["pricing"].is_string() && q.contains("region") && q["region"].is_string())
      p.terms = pricing_terms(q["pricing"].get<std::string>(), q["region"].get<std::string>());
  }
  const char* time_key = r.contains("total_hours") ? "total_hours" : "tpot_s";
  p.time = r.contains(time_key) ? number_field(r, time_key, path, 0, 1e9) : 0.0;
  return p;
}

ordered_json summary_json(const PickSummary& p) {
  return {{"instance", p.instance}, {"count", p.count}, {"cost_usd", p.cost_usd ? ordered_json(round_cents(*p.cost_usd)) : ordered_json(nullptr)},
          {"time", p.time}};
}

// The workload keys both documents give with different values (the task is the job's, warned apart):
// "tokens 2e+10 -> 4e+10". A key one side lacks (a newer version's) is no difference.
std::vector<std::string> workload_differences(const nlohmann::json& base, const nlohmann::json& now) {
  std::vector<std::string> out;
  if (!base.is_object() || !now.is_object()) return out;
  auto text = [](const nlohmann::json& v) { return v.is_number() ? fmt::format("{:g}", v.get<double>()) : json_excerpt(v); };  // 1e+12, not 1000000000000.0
  for (auto it = now.begin(); it != now.end(); ++it)
    if (it.key() != "task" && base.contains(it.key()) && base[it.key()] != it.value())
      out.push_back(fmt::format("{} {} -> {}", it.key(), text(base[it.key()]), text(it.value())));
  return out;
}

double parse_percent(const std::string& text, const char* flag) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  const double v = parse_number(t, flag, 0, 1e6);
  // A bare 0.05 could mean 5% (a fraction, as --cost-slack reads it) or 0.05%.
  if (!percent && v > 0 && v < 1)
    throw InputError(fmt::format("{}: '{}' is ambiguous: write {:g}% for a fraction of {:g}, or {:g}% for {:g} percent", flag, text, v * 100, v, v, v));
  return v / 100;
}

}  // namespace

void add_gate_options(CLI::App* cmd, GateOptions& o) {
  const char* g = "CI gates (exit 4 after writing the output)";
  cmd->add_option("--compare-to", o.compare_to, "An earlier --format json output of the same command: adds a comparison")->group(g);
  cmd->add_option("--fail-if-over", o.fail_if_over, "Exit 4 when the pick costs more than this (USD; per month for a service)")->group(g);
  cmd->add_option("--fail-if-increase", o.fail_if_increase, "Exit 4 when the pick costs more than this much over --compare-to: 10%")->group(g);
  cmd->add_flag("--fail-if-pick-changes", o.fail_if_pick_changes,
                "Exit 4 when the pick (instance type or count) differs from --compare-to's, whatever it costs")
      ->group(g);
}

std::string job_of(const std::string& model_name, std::string_view task) { return fmt::format("{} {}", model_name, task); }

PickSummary serving_summary(const ServingRow& pick, const std::string& model_name) {
  return {pick.instance->name, pick.instances,
          pick.ranked_usd_per_hour ? std::optional<double>(*pick.ranked_usd_per_hour * kHoursPerMonth) : std::nullopt, pick.tpot_mean_s(),
          "ranked_usd_per_month", job_of(model_name, "inference"), {}};
}

std::string pricing_terms(std::string_view pricing, std::string_view region) { return fmt::format("{} in {}", pricing, region); }

ordered_json comparison(const GateOptions& o, const PickSummary& now, const RecommendRequest& r) {
  if (!o.fail_if_increase.empty() && o.compare_to.empty()) throw InputError("--fail-if-increase needs --compare-to BASE.json");
  if (o.fail_if_pick_changes && o.compare_to.empty()) throw InputError("--fail-if-pick-changes needs --compare-to BASE.json");
  if (o.compare_to.empty()) return nullptr;
  PickSummary base;
  try {
    base = base_pick(o.compare_to, now.cost_key);
  } catch (const InputError& e) {
    throw InputError(fmt::format("--compare-to {}", e.what()));  // every baseline problem names the flag
  }
  if (!base.job.empty() && !now.job.empty() && base.job != now.job)
    warn(fmt::format("--compare-to: the baseline is for {}, this run for {}: the comparison is across two jobs", base.job, now.job));
  if (const auto d = workload_differences(base.workload, now.workload); !d.empty())
    warn(fmt::format("--compare-to: the baseline's workload differs ({}): the comparison is across two workloads", fmt::join(d, "; ")));
  // A spot baseline against an on-demand run (or another region) reads as a rise the job never had.
  if (const std::string terms = pricing_terms(to_string(r.pricing), r.region); !base.terms.empty() && base.terms != terms)
    warn(fmt::format("--compare-to: the baseline's costs are {}, this run's {}: the cost change is across two pricings", base.terms.substr(0, 80), terms));
  // The baseline holds cents: compare like with like, or an unchanged pick
  // would read as a rise of a hundredth of a cent.
  PickSummary current = now;
  if (current.cost_usd) current.cost_usd = round_cents(*current.cost_usd);
  current.time = sig6(current.time);  // as the baseline's JSON holds it
  ordered_json c{{"base_file", o.compare_to}, {"pick_changed", base.instance != current.instance || base.count != current.count},
                 {"base", summary_json(base)}, {"current", summary_json(current)}};
  if (base.cost_usd && current.cost_usd) {
    c["cost_delta_usd"] = round_cents(*current.cost_usd - *base.cost_usd);
    c["cost_delta_fraction"] = *base.cost_usd > 0 ? ordered_json(sig6((*current.cost_usd - *base.cost_usd) / *base.cost_usd)) : ordered_json(nullptr);
  } else {
    c["cost_delta_usd"] = nullptr;
    c["cost_delta_fraction"] = nullptr;
  }
  c["time_delta"] = sig6(current.time - base.time);
  // Training picks compare total hours, services their seconds per output token.
  c["time_unit"] = current.cost_key == "ranked_usd_per_month" ? "seconds per output token" : "hours";
  return c;
}

namespace {

std::string usd_text(const ordered_json& v) { return v.is_null() ? std::string("unknown") : "$" + format_thousands(v.get<double>(), 2); }

// "pass", or "FAIL: --fail-if-over ...; --fail-if-increase ..." naming each failed gate; "no gates set".
std::string gate_verdict(const ordered_json& gates) {
  if (gates.empty()) return "no gates set";
  std::string failed;
  for (const auto& g : gates)
    if (!g["passed"].get<bool>()) failed += (failed.empty() ? "" : "; ") + g["message"].get<std::string>();
  return failed.empty() ? fmt::format("pass ({} gate{})", gates.size(), gates.size() == 1 ? "" : "s") : "FAIL: " + failed;
}

std::string cost_change_text(const ordered_json& cmp) {
  if (cmp["cost_delta_fraction"].is_null()) return "cost change unknown";
  const double usd = cmp["cost_delta_usd"].get<double>();
  return fmt::format("cost {:+.1f}% ({}{})", cmp["cost_delta_fraction"].get<double>() * 100, usd >= 0 ? "+" : "-",
                     usd_text(std::abs(usd)));
}

// A training pick's hours, or a service's time per output token in ms.
std::string time_text(const ordered_json& cmp, double time) {
  return cmp["time_unit"] == "hours" ? format_duration(time) : fmt::format("{:.1f} ms/token", time * 1000);
}

std::string time_change_text(const ordered_json& cmp) {
  return fmt::format("time {} -> {}", time_text(cmp, cmp["base"]["time"].get<double>()), time_text(cmp, cmp["current"]["time"].get<double>()));
}

}  // namespace

void print_comparison(const ordered_json& cmp, const ordered_json& gates, Format f) {
  if (cmp.is_null() || f == Format::json || f == Format::csv) return;
  const auto& b = cmp["base"];
  const auto& n = cmp["current"];
  const std::string pick = cmp["pick_changed"].get<bool>() ? "changed" : "unchanged";
  if (f == Format::markdown) {
    std::cout << fmt::format("\n**Verdict: {}**\n\n{}; {}; pick {}.\n\n| | pick | cost | time |\n|---|---|---|---|\n"
                             "| base | {} x {} | {} | {} |\n| now | {} x {} | {} | {} |\n\n",
                             gate_verdict(gates), cost_change_text(cmp), time_change_text(cmp), pick, b["count"].get<int>(),
                             b["instance"].get<std::string>(), usd_text(b["cost_usd"]), time_text(cmp, b["time"].get<double>()),
                             n["count"].get<int>(), n["instance"].get<std::string>(), usd_text(n["cost_usd"]),
                             time_text(cmp, n["time"].get<double>()));
    return;
  }
  std::cout << fmt::format("Compared with {}: {}; pick {} ({} x {} -> {} x {}), {}, {}\n\n", cmp["base_file"].get<std::string>(),
                           gate_verdict(gates), pick, b["count"].get<int>(), b["instance"].get<std::string>(), n["count"].get<int>(),
                           n["instance"].get<std::string>(), cost_change_text(cmp), time_change_text(cmp));
}

ordered_json gate_results(const GateOptions& o, const PickSummary& now, const ordered_json& cmp) {
  ordered_json gates = ordered_json::array();
  auto money = [](std::optional<double> v) { return v ? ordered_json(round_cents(*v)) : ordered_json(nullptr); };
  if (!o.fail_if_over.empty()) {
    const double limit = parse_usd(o.fail_if_over, "--fail-if-over");
    // In cents, as both are printed (and as --budget compares): a pick at $36.40 passes a $36.40 limit.
    const bool passed = now.cost_usd && round_cents(*now.cost_usd) <= round_cents(limit);
    gates.push_back({{"gate", "fail_if_over"}, {"limit_usd", round_cents(limit)}, {"cost_usd", money(now.cost_usd)}, {"passed", passed},
                     {"message", passed ? std::string() : fmt::format("--fail-if-over: the pick costs {}{}, over the ${} limit",
                                                                    now.cost_usd ? "$" + format_thousands(*now.cost_usd, 2) : "an unknown amount",
                                                                    now.cost_key == "ranked_usd_per_month" ? " per month" : "",
                                                                    format_thousands(limit, 2))}});
  }
  if (!o.fail_if_increase.empty()) {
    const double limit = parse_percent(o.fail_if_increase, "--fail-if-increase");
    const auto& f = cmp["cost_delta_fraction"];
    const bool passed = !f.is_null() && f.get<double>() <= limit;
    gates.push_back({{"gate", "fail_if_increase"}, {"limit_fraction", limit}, {"cost_delta_fraction", f}, {"passed", passed},
                     {"message", passed ? std::string() : fmt::format("--fail-if-increase: the pick's cost rose {} over {}, above the {:.1f}% limit",
                                                                    f.is_null() ? "by an unknown amount" : fmt::format("{:.1f}%", f.get<double>() * 100),
                                                                    o.compare_to, limit * 100)}});
  }
  if (o.fail_if_pick_changes) {
    // A plan re-sized (8 -> 16 instances at a similar cost) passes a cost gate; this one names the change.
    const auto& b = cmp["base"];
    const std::string base_pick = fmt::format("{} x {}", b["count"].get<int>(), b["instance"].get<std::string>());
    const std::string pick = fmt::format("{} x {}", now.count, now.instance);
    const bool passed = !cmp["pick_changed"].get<bool>();
    gates.push_back({{"gate", "fail_if_pick_changes"}, {"base_pick", base_pick}, {"pick", pick}, {"passed", passed},
                     {"message", passed ? std::string()
                                        : fmt::format("--fail-if-pick-changes: the pick is {}, {}'s was {}", pick, o.compare_to, base_pick)}});
  }
  return gates;
}

std::string with_gates(const std::string& extra, const ordered_json& cmp, const ordered_json& gates) {
  ordered_json j = ordered_json::parse(extra);
  j["comparison"] = cmp;
  j["gates"] = gates;
  return json_text(j);
}

int gate_exit(const ordered_json& gates) {
  int code = 0;
  for (const auto& g : gates)
    if (!g["passed"].get<bool>()) {
      spdlog::error("{}", g["message"].get<std::string>());
      code = static_cast<int>(ExitCode::gate_failed);
    }
  return code;
}

}  // namespace gpuadvisor::cli
