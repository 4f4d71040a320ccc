// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// --emit TARGET --emit-dir DIR: launch files for a pick (docs/launch.md).
#include <spdlog/spdlog.h>

#include <filesystem>

#include "cli.hpp"
#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/workload/framework.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/files.hpp"
#include "gpuadvisor/report/launch.hpp"
#include "gpuadvisor/workload/neuron.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/validation/validation.hpp"

namespace gpuadvisor::cli {

namespace {

LaunchTarget target_of(const EmitOptions& o) {
  auto t = launch_target_from_string(o.target);
  if (!t) throw InputError(fmt::format("--emit: '{}' is not one of skypilot, slurm, k8s", o.target));
  return *t;
}


LaunchContext context(const EmitOptions& o, const GlobalOptions& g, const std::string& region, const std::string& pricing) {
  LaunchContext c;
  c.command = g.command_line;
  c.entrypoint = o.entrypoint;
  c.image = o.image;
  c.region = region;
  c.spot = pricing == "spot";
  return c;
}

void write_files(const EmitOptions& o, const std::vector<EmittedFile>& files) {
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) throw InputError(fmt::format("--emit-dir: cannot create '{}': {}", o.dir, ec.message()));
  std::vector<std::pair<std::string, std::string>> set;  // all or nothing: a failure leaves the previous set whole
  for (const auto& f : files) set.emplace_back(o.dir + "/" + f.name, f.text);
  write_files_atomically(set);
  std::string names;
  for (const auto& f : files) names += (names.empty() ? "" : ", ") + f.name;
  spdlog::info("wrote {} to {}", names, o.dir);
}

}  // namespace

void add_emit_options(CLI::App* cmd, EmitOptions& o, bool with_rank) {
  const char* g = "Launch files (--emit; docs/launch.md)";
  CLI::Option* emit = cmd->add_option("--emit", o.target, "Write launch files for the pick: skypilot | slurm | k8s (with framework flags beside them)")->group(g);
  // Each of these shapes the launch files, so without --emit it is refused rather than ignored.
  cmd->add_option("--emit-dir", o.dir, "Directory for the launch files (default: the current one)")->group(g)->needs(emit);
  if (with_rank) cmd->add_option("--rank", o.rank, "Emit row N of the table instead of the pick")->group(g)->needs(emit);
  cmd->add_option("--entrypoint", o.entrypoint, "Your training script, as the launcher runs it (default: the placeholder YOUR_TRAIN_SCRIPT.py)")
      ->group(g)->needs(emit);
  cmd->add_option("--image", o.image, "Your container image (default: the placeholder YOUR_IMAGE)")->group(g)->needs(emit);
}

void refuse_neuron_training_emit(const EmitOptions& o, const Instance& inst, const Accelerator& acc) {
  if (o.target.empty() || acc.software != "neuron") return;
  throw InputError(fmt::format("--emit: the row to write runs on {} ({}), and the launch files are for CUDA stacks (Megatron-LM, torchtitan, "
                               "DeepSpeed); Neuron training (NxD Training) is not written: take the layout from the table (TP in chips, "
                               "{} NeuronCores each), or --family / --rank for a GPU row",
                               acc.name, inst.name, neuron_cores_per_chip(acc)));
}

void emit_training_files(const EmitOptions& o, const GlobalOptions& g, const ModelSpec& m, const TrainingWorkload& w,
                         const Cluster& c, const TrainingEstimate& e, std::optional<double> cost_usd, const std::string& pricing,
                         const std::string& region) {
  if (o.target.empty()) return;
  const LaunchTarget target = target_of(o);
  LaunchContext ctx = context(o, g, region, pricing);
  ctx.hours = e.total_hours;
  ctx.predicted = {
      fmt::format("{} x {} ({} {}), layout TP{} CP{} PP{} DP{} VP{} EP{}, ZeRO-{}, micro-batch {}, recompute {}", c.count, c.instance->name,
                  c.accelerators(), c.accelerator->name, e.layout.tp, e.layout.cp, e.layout.pp, e.layout.dp, e.layout.vp, e.layout.ep,
                  e.layout.zero_stage, e.layout.micro_batch, to_string(e.layout.recompute)),
      fmt::format("{} ({} training + {} setup), {:.0f}% MFU", format_duration(e.total_hours), format_duration(e.train_hours),
                  format_duration(e.setup.hours()), e.mfu * 100),
      fmt::format("{} {}", cost_usd ? "$" + format_thousands(*cost_usd, *cost_usd < 1000 ? 2 : 0) : "cost unknown", pricing),
      fmt::format("{:.1f} GB of {:.1f} GB per accelerator", e.memory.total_gb(), e.memory.capacity_gb)};
  ctx.error_band = accuracy_line(c.accelerator->name, to_string(w.task), framework_for(*c.accelerator, w.framework).name, m.is_moe());
  TrainingLaunch t{&m, &w, c.instance, c.accelerator, c.count, e.layout, e.precision};
  write_files(o, emit_training(t, ctx, target));
}

void emit_serving_files(const EmitOptions& o, const GlobalOptions& g, const ModelSpec& m, const InferenceWorkload& w,
                        const ServingRow& row, const std::string& pricing, const std::string& region) {
  if (o.target.empty()) return;
  const LaunchTarget target = target_of(o);
  LaunchContext ctx = context(o, g, region, pricing);
  const std::string hf = hugging_face_id(m);
  ctx.model_id = hf.empty() ? "YOUR_MODEL" : hf;
  const auto& e = row.at_load;
  ctx.predicted = {fmt::format("{} replica(s) of TP{} PP{} on {} x {}", row.replicas, e.layout.tp, e.layout.pp, row.instances, row.instance->name),
                   row.simulated ? fmt::format("{0}TTFT {1:.0f} ms, {0}{2:.0f} ms per output token (simulated at the load)",
                                               row.slo_percentile ? fmt::format("p{} ", row.slo_percentile) : "mean ",
                                               row.ttft_seen_s() * 1e3, row.tpot_seen_s() * 1e3)
                                 : fmt::format("TTFT {:.0f} ms, {:.0f} ms per output token at {:.0f}% utilisation", e.ttft_s * 1e3,
                                               e.tpot_s * 1e3, row.utilisation * 100),
                   row.ranked_usd_per_hour ? fmt::format("${}/month {}", format_thousands(*row.ranked_usd_per_hour * kHoursPerMonth), pricing)
                                           : "cost unknown",
                   fmt::format("{:.1f} GB of {:.1f} GB per accelerator at the capacity batch", row.estimate.memory.total_gb(),
                               row.estimate.memory.capacity_gb)};
  ctx.error_band = accuracy_line(row.instance->accelerator_name, "inference", row.estimate.engine->name, m.is_moe());
  ServingLaunch s{&m, &w, row.instance, row.accelerator, row.estimate.layout, row.replicas, row.instances, row.estimate.batch,
                  static_cast<int>(w.prompt_tokens_p95 + w.output_tokens_p95 + w.reasoning_tokens)};
  write_files(o, emit_serving(s, ctx, target));
}

}  // namespace gpuadvisor::cli
