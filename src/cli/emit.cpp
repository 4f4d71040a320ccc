// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// --emit TARGET --emit-dir DIR: launch files for a pick (docs/launch.md).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "cli.hpp"
#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/workload/framework.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/files.hpp"
#include "gpuadvisor/report/launch.hpp"
#include "gpuadvisor/workload/neuron.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/physics/interruption.hpp"
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
  c.capacity.channel = pricing == "spot" ? "spot" : "on-demand";  // a row's channel replaces it (with_channel)
  return c;
}

// The channel the row is bought through (docs/methodology.md §Channels), and
// a header line naming it where it needs a reservation.
void with_channel(LaunchContext& c, const RecommendRow& row) {
  c.capacity.channel = std::string(to_string(row.channel));
  if (row.channel == Channel::capacity_block) {
    c.capacity.block_days = row.capacity.block_days;
    c.capacity.blocks = row.capacity.blocks;
  }
  if (c.capacity.reserved())
    c.notes.push_back(fmt::format("bought as: {}{}: the files name it YOUR_CAPACITY_RESERVATION_ID (cr-...), a required placeholder", c.capacity.channel,
                                  row.channel_note.empty() ? "" : " (" + row.channel_note + ")"));
}

// A standing service's channel: spot when priced on spot, else a Capacity
// Block for a type sold only in blocks, an On-Demand Capacity Reservation
// above the usual on-demand count (service_capacity_advice), or on demand.
void with_service_channel(LaunchContext& c, const ServingRow& row, const std::string& pricing) {
  if (pricing == "spot") return;
  if (row.capacity.blocks_only) c.capacity.channel = "capacity-block";
  else if (row.capacity.beyond_on_demand) c.capacity.channel = "reservation";
  if (c.capacity.reserved())
    c.notes.push_back(fmt::format("bought as: {} ({}): the files name it YOUR_CAPACITY_RESERVATION_ID (cr-...), a required placeholder",
                                  c.capacity.channel, row.capacity.note));
}

struct CheckpointPlan {
  double save_s = 0;          // one checkpoint write
  double interval_hours = 0;  // between checkpoints
};

// The cost model's checkpoint interval (search.cpp price_interruptions): Daly's
// optimum for the save the job overheads timed (with --no-overheads, the
// default storage's) and the job's mean time to interruption, hardware
// failures and, under spot pricing, reclaims.
CheckpointPlan checkpoint_plan(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const TrainingEstimate& e,
                               const std::string& pricing, const std::string& region) {
  const double save_s = e.setup.final_checkpoint_s > 0
                            ? e.setup.final_checkpoint_s
                            : checkpoint_size_gb(m, w) / checkpoint_write_gb_per_s(CheckpointStorage::automatic, c.count, w.task);
  double mtti_hours = hardware_mtti_hours(c.accelerators());
  const RegionPrices* prices = c.instance->prices_in(region);
  if (pricing == "spot" && prices)
    if (const auto fraction = interruption_bucket_monthly_fraction(prices->spot.interruption_bucket))
      mtti_hours = 1 / (1 / spot_mtti_hours(*fraction, c.count) + 1 / mtti_hours);
  return {save_s, expected_runtime(e.train_hours, mtti_hours, save_s, 0).interval_hours};
}

// Optimizer steps between checkpoints: the interval over the predicted step
// time, at least one and at most the run's steps (0 without a step time).
int steps_between_checkpoints(double interval_hours, double step_hours, double total_steps) {
  if (!(step_hours > 0)) return 0;
  return static_cast<int>(std::clamp(std::floor(interval_hours / step_hours), 1.0, std::max(1.0, total_steps)));
}

// The header's checkpoint line: the steps written and the time they take; a run
// shorter than the cost model's interval saves at its end only, and says so.
std::string checkpoint_note(int steps, double step_hours, double total_steps, const CheckpointPlan& plan) {
  if (steps >= total_steps)
    return fmt::format("checkpoints: at the end only (step {}, about {}): the run is shorter than the interval the cost model chose, Daly's "
                       "optimum of {} for a {:.0f} s save and the job's mean time to interruption",
                       steps, format_duration(steps * step_hours), format_duration(plan.interval_hours), plan.save_s);
  return fmt::format("checkpoints: every {} steps (about {}), the interval the cost model chose: Daly's optimum for a {:.0f} s save and the job's "
                     "mean time to interruption",
                     steps, format_duration(steps * step_hours), plan.save_s);
}

// --emit-dir is created if missing, but not its parents: a typo high in the
// path (run as root, `/nonexistent/...`) is refused, not made into a new tree.
void make_emit_dir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return;
  std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();  // "out/": the directory is "out"
  const std::filesystem::path parent = path.parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    throw InputError(fmt::format("--emit-dir {}: the directory {} does not exist (the last directory of the path is created, not its parents)",
                                 dir, parent.string()));
  std::filesystem::create_directory(dir, ec);
  if (ec) throw InputError(fmt::format("--emit-dir: cannot create '{}': {}", dir, ec.message()));
}

void write_files(const EmitOptions& o, const std::vector<EmittedFile>& files) {
  std::error_code ec;
  make_emit_dir(o.dir);
  std::vector<std::pair<std::string, std::string>> set;  // all or nothing: a failure leaves the previous set whole
  for (const auto& f : files) set.emplace_back(o.dir + "/" + f.name, f.text);
  write_files_atomically(set);
  // A launch or framework file this set does not hold (one an earlier run
  // wrote for another layout or kind of job, or the user's own) is never
  // deleted: it is named, so that it is not taken for part of the new set.
  auto written = [&](std::string_view name) { return std::any_of(files.begin(), files.end(), [&](const EmittedFile& f) { return f.name == name; }); };
  for (const char* other : {"megatron_args.txt", "deepspeed.json", "torchtitan.toml", "verl_args.txt", "job.sbatch", "serve.sbatch", "task.yaml",
                            "service.yaml", "pytorchjob.yaml", "deployment.yaml", "leaderworkerset.yaml", "serve_commands.sh"})
    if (!written(other) && std::filesystem::exists(o.dir + "/" + other, ec))
      spdlog::warn("{}/{} is not part of this set of launch files (left as it is; remove it if an earlier run wrote it)", o.dir, other);
  std::string names;
  for (const auto& f : files) names += (names.empty() ? "" : ", ") + f.name;
  spdlog::info("wrote {} to {}", names, o.dir);
}

// Where the served checkpoint comes from, for the files' headers.
std::string served_checkpoint_note(const EmitOptions& o, const ModelSpec& m, const std::string& id) {
  if (!o.hf_model.empty()) return fmt::format("{} (--hf-model)", id);
  if (id.empty()) return "YOUR_MODEL (no Hugging Face id is known for this model: --hf-model names the checkpoint)";
  if (id == m.fp8_instruct_id)
    return fmt::format("{}, the publisher's fp8 checkpoint of {} for --weights fp8 (the engines read its quantisation from its config; "
                       "--hf-model serves another)", id, m.instruct_id);
  if (!m.instruct_id.empty() && m.instruct_id != hugging_face_id(m))
    return fmt::format("{}, the instruct/chat variant of {} ({}) for a chat service (--hf-model serves another)", id, m.name, hugging_face_id(m));
  return fmt::format("{}, {}'s published checkpoint (--hf-model serves another)", id, m.name);
}

// TensorRT-LLM runs fp8 and fp4 weights only from a checkpoint quantised
// beforehand (NVIDIA Model Optimizer); vLLM and SGLang quantise fp8 at load.
// Nothing to say for a model published in that format (DeepSeek-V3's fp8).
// int4 and int8 weights come from a checkpoint quantised beforehand on every
// engine (AWQ/GPTQ; the lines' --quantization awq reads one, int8 is read from
// the checkpoint's own config): the base checkpoint would load in bf16.
std::optional<std::string> prequantised_note(const EmitOptions& o, const ModelSpec& m, const InferenceWorkload& w, const InferenceEstimate& e) {
  const bool published =
      m.native_weights == to_string(w.weights) || (w.weights == WeightFormat::fp8 && !m.fp8_instruct_id.empty());
  if ((w.weights == WeightFormat::int4 || w.weights == WeightFormat::int8) && !published && o.hf_model.empty())
    return fmt::format("weights: {} is served from a checkpoint quantised beforehand ({}, e.g. a ...-{} repository on Hugging Face or your own "
                       "quantisation run): give it as --hf-model; the base checkpoint holds no such weights, and the lines' quantisation flags expect them",
                       to_string(w.weights), w.weights == WeightFormat::int4 ? "AWQ or GPTQ, 4-bit" : "GPTQ or compressed-tensors W8A16",
                       w.weights == WeightFormat::int4 ? "AWQ" : "W8A16");
  const bool quantised = w.weights == WeightFormat::fp8 || w.weights == WeightFormat::fp4;
  if (!quantised || published || !e.engine->quantised_checkpoint_fp8_kv || !o.hf_model.empty()) return std::nullopt;
  const bool fp8 = w.weights == WeightFormat::fp8;
  return fmt::format("weights: TensorRT-LLM serves {} weights from a checkpoint quantised beforehand with NVIDIA Model Optimizer "
                     "(nvidia/...-{} on Hugging Face, or examples/llm_ptq/hf_ptq.py --qformat {}): give it as --hf-model{}",
                     to_string(w.weights), fp8 ? "FP8" : "FP4", fp8 ? "fp8" : "nvfp4",
                     fp8 ? ", or use the vLLM line, which quantises fp8 at load" : " (the other engines' lines need such a checkpoint too)");
}

// The longest single request the replica's KV cache holds, prompt + output
// tokens: the memory the estimate left for the KV cache at the capacity batch
// over one token's KV per accelerator (local-attention layers keep only their window).
int kv_fit_tokens(const ModelSpec& m, const InferenceEstimate& e, int up_to) {
  const double kv_gb = e.memory.capacity_gb - (e.memory.total_gb() - e.memory.kv_cache_gb);
  const double gb_per_token = kv_gb_per_token_on_rank(m, e.precision.kv_cache, e.layout);
  const double cached_tokens = kv_gb / gb_per_token;
  auto fits = [&](int tokens) { return kv_cached_tokens(m, *e.engine, tokens) <= cached_tokens; };
  if (fits(up_to)) return up_to;
  int lo = 0, hi = up_to;  // fits(lo), !fits(hi): the attended tokens grow with the length
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

struct RequestLimit {
  int tokens = 0;
  std::string note;  // for the headers
};

// vLLM's --max-model-len is the longest request the service accepts: longer
// ones are rejected, so it is the model's context length, or a cap the user
// gives, never a mean or a percentile. It must fit the KV cache the estimate
// sized, and a cap must hold the mean request.
RequestLimit request_limit(const EmitOptions& o, const ModelSpec& m, const InferenceWorkload& w, const InferenceEstimate& e) {
  if (m.context_length <= 0 && o.max_request_tokens <= 0)
    throw InputError(fmt::format("--emit: the context length of {} is not known (config.json max_position_embeddings): give "
                                 "--max-request-tokens, the longest request the service accepts",
                                 m.name));
  const int context = m.context_length > 0 ? m.context_length : o.max_request_tokens;
  const int mean_request = static_cast<int>(std::ceil(w.prompt_tokens + w.generated_tokens_per_sequence()));
  if (o.max_request_tokens > context)
    throw InputError(fmt::format("--max-request-tokens {}: above {}'s context length of {} tokens", o.max_request_tokens, m.name, context));
  if (o.max_request_tokens > 0 && o.max_request_tokens < mean_request)
    throw InputError(fmt::format("--max-request-tokens {}: below the mean request the service was sized for ({} tokens: prompt + output{}), "
                                 "so most requests would be rejected",
                                 o.max_request_tokens, mean_request, w.reasoning_tokens > 0 ? " + reasoning" : ""));
  const int wanted = o.max_request_tokens > 0 ? o.max_request_tokens : context;
  const int fit = kv_fit_tokens(m, e, wanted);
  if (o.max_request_tokens > 0 && fit < wanted)
    throw InputError(fmt::format("--max-request-tokens {}: the KV cache the estimate sized holds one request of at most {} tokens on this replica",
                                 o.max_request_tokens, fit));
  if (fit < mean_request)
    throw InputError(fmt::format("--emit: the KV cache the estimate sized holds one request of at most {} tokens, below the mean request ({})",
                                 fit, mean_request));
  const std::string from = o.max_request_tokens > 0 ? "--max-request-tokens"
                           : fit < context         ? fmt::format("the most one request's KV cache can hold here; {}'s context length is {}", m.name, context)
                                                   : fmt::format("{}'s context length", m.name);
  const double shared = kv_shared_prefix_tokens(*e.engine, w);
  return {fit, fmt::format("accepts requests up to {} tokens, prompt + output ({}); the KV cache was sized for {} sequences in flight of about "
                           "{:.0f} tokens each{}, and longer requests take more of it (the engine queues what does not fit)",
                           fit, from, e.batch, kv_tokens_held(*e.engine, w),
                           shared > 0 ? fmt::format(" ({:.0f} of them the shared prefix, cached once)", shared) : std::string())};
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
  cmd->add_option("--hf-model", o.hf_model,
                  "The Hugging Face checkpoint to serve (default: the preset's instruct/chat variant) and the tokenizer to train with")
      ->group(g)->needs(emit);
  cmd->add_option("--max-request-tokens", o.max_request_tokens,
                  "Serving: the longest request accepted, prompt + output tokens (vLLM's --max-model-len; default: the model's context length)")
      ->group(g)->needs(emit)->check(CLI::Range(1, 100000000));
}

void refuse_neuron_training_emit(const EmitOptions& o, const Instance& inst, const Accelerator& acc) {
  if (o.target.empty() || acc.software != "neuron") return;
  throw InputError(fmt::format("--emit: the row to write runs on {} ({}), and the launch files are for CUDA stacks (Megatron-LM, torchtitan, "
                               "DeepSpeed); Neuron training (NxD Training) is not written: take the layout from the table (run without --emit to print it; TP in chips, "
                               "{} NeuronCores each), or --family / --rank for a GPU row",
                               acc.name, inst.name, neuron_cores_per_chip(acc)));
}

namespace {

// verl files for an RL run (docs/launch.md §RL): the prediction of the row the
// pick is, the estimate's placement, pools and layouts.
void emit_rl_files(const EmitOptions& o, const GlobalOptions& g, const ModelSpec& m, const RlWorkload& rl, const Cluster& c,
                   const RecommendRow& row, const std::string& pricing, const std::string& region) {
  const LaunchTarget target = target_of(o);
  const RlEstimate& e = *row.rl;
  LaunchContext ctx = context(o, g, region, pricing);
  with_channel(ctx, row);
  ctx.hours = row.estimate.total_hours;
  const Layout& l = e.trainer.layout;
  ctx.predicted = {
      fmt::format("{} x {} ({} {}), {} {}{}: generation TP{} x {} generator(s), {} in flight each; update TP{} PP{} DP{}, ZeRO-{}, "
                  "micro-batch {}",
                  c.count, c.instance->name, c.accelerators(), c.accelerator->name, to_string(rl.algorithm), to_string(e.placement),
                  e.placement == RlPlacement::split ? fmt::format(" ({} instance(s) generate, {} train{})", e.rollout_instances,
                                                                  e.trainer_instances, e.async ? ", async" : "")
                                                    : std::string(),
                  e.rollout_layout.tp, e.generators, e.batch, l.tp, l.pp, l.dp, l.zero_stage, l.micro_batch),
      fmt::format("step {:.0f} s (generation {:.0f} s, scoring {:.0f} s, training {:.0f} s, weight sync {:.0f} s) x {:.0f} steps: {} ({} "
                  "training + {} setup)",
                  e.step_time_s, e.generation.seconds, e.scoring.seconds, e.training.seconds, e.weight_sync_s, rl.steps,
                  format_duration(row.estimate.total_hours), format_duration(row.estimate.train_hours), format_duration(row.estimate.setup.hours())),
      fmt::format("{} {}", row.ranked_cost_usd ? "$" + format_thousands(*row.ranked_cost_usd, *row.ranked_cost_usd < 1000 ? 2 : 0) : "cost unknown",
                  pricing)};
  ctx.error_band = accuracy_line(c.accelerator->name, "rl");
  if (o.max_request_tokens > 0) throw InputError("--max-request-tokens: serving only (the longest request a service accepts)");
  ctx.model_id = !o.hf_model.empty() ? o.hf_model : hugging_face_id(m);  // the policy's checkpoint; empty: a placeholder
  RlLaunch r{&m, &rl, &e, c.instance, c.accelerator, c.count};
  const CheckpointPlan plan = checkpoint_plan(m, rl.update, c, row.estimate, pricing, region);
  const double step_hours = e.step_time_s / 3600;
  r.save_interval_steps = steps_between_checkpoints(plan.interval_hours, step_hours, rl.steps);
  ctx.notes.push_back(checkpoint_note(r.save_interval_steps, step_hours, rl.steps, plan));
  write_files(o, emit_rl(r, ctx, target));
}

}  // namespace

void emit_training_files(const EmitOptions& o, const GlobalOptions& g, const ModelSpec& m, const TrainingWorkload& w,
                         const Cluster& c, const TrainingEstimate& e, std::optional<double> cost_usd, const std::string& pricing,
                         const std::string& region, const RecommendRow* row, const RlWorkload* rl) {
  if (o.target.empty()) return;
  if (rl) {
    if (!row || !row->rl) throw InputError("--emit: the RL row carries no RL estimate to write");
    return emit_rl_files(o, g, m, *rl, c, *row, pricing, region);
  }
  const LaunchTarget target = target_of(o);
  LaunchContext ctx = context(o, g, region, pricing);
  if (row) with_channel(ctx, *row);
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
  if (o.max_request_tokens > 0) throw InputError("--max-request-tokens: serving only (the longest request a service accepts)");
  ctx.model_id = !o.hf_model.empty() ? o.hf_model : hugging_face_id(m);  // the tokenizer's; empty: a placeholder
  TrainingLaunch t{&m, &w, c.instance, c.accelerator, c.count, e.layout, e.precision};
  const CheckpointPlan plan = checkpoint_plan(m, w, c, e, pricing, region);
  const double step_hours = e.train_hours / std::max(1.0, w.steps());
  t.save_interval_steps = steps_between_checkpoints(plan.interval_hours, step_hours, w.steps());
  ctx.notes.push_back(checkpoint_note(t.save_interval_steps, step_hours, w.steps(), plan));
  write_files(o, emit_training(t, ctx, target));
}

void emit_serving_files(const EmitOptions& o, const GlobalOptions& g, const ModelSpec& m, const InferenceWorkload& w,
                        const ServingRow& row, const std::string& pricing, const std::string& region) {
  if (o.target.empty()) return;
  const LaunchTarget target = target_of(o);
  LaunchContext ctx = context(o, g, region, pricing);
  with_service_channel(ctx, row, pricing);
  ctx.model_id = !o.hf_model.empty() ? o.hf_model : serving_checkpoint_id(m, w.weights);
  ctx.notes.push_back("serves: " + served_checkpoint_note(o, m, ctx.model_id));
  if (auto note = prequantised_note(o, m, w, row.estimate)) ctx.notes.push_back(*note);
  if (ctx.model_id.empty()) ctx.model_id = "YOUR_MODEL";
  const RequestLimit limit = request_limit(o, m, w, row.estimate);
  ctx.notes.push_back(limit.note);
  const auto& e = row.at_load;
  ctx.predicted = {fmt::format("{} replica(s) of {} on {} x {}", row.replicas, layout_text(e.layout), row.instances, row.instance->name),
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
  if (row.accelerator->software == "neuron")
    ctx.notes.push_back(fmt::format("TP{} counts {} chips of {} NeuronCores each: the engine's --tensor-parallel-size counts NeuronCores ({})",
                                    row.estimate.layout.tp, row.accelerator->name, std::max(1, neuron_cores_per_chip(*row.accelerator)),
                                    tensor_parallel_ranks(*row.accelerator, row.estimate.layout.tp)));
  // The sequence limit the replicas were sized at: the simulator's (the engine's, with KV admission) for a simulated
  // row, else the capacity batch the analytic sizing took.
  const int sequences =
      row.simulated ? replica_sequence_cap(*row.estimate.engine, *row.accelerator, w, row.estimate.layout) : row.estimate.batch;
  ServingLaunch s{&m, &w, row.instance, row.accelerator, row.estimate.layout, row.replicas, row.instances, sequences, limit.tokens};
  s.kv_cache = row.estimate.precision.kv_cache;
  // The autoscalers' targets sit at the sized load, never below it (else they add replicas at the load the pick was
  // sized for): the simulated sequences in flight per replica (the JSON's batch_at_load), and for SkyServe the larger
  // of a replica's share of the load and its capacity x the target utilisation.
  s.batch_at_load = std::clamp(static_cast<int>(std::lround(row.batch_seen())), 1, sequences);
  s.target_qps_per_replica = row.estimate.requests_per_second * w.target_utilisation;
  if (w.requests_per_second && row.replicas > 0) s.target_qps_per_replica = std::max(s.target_qps_per_replica, *w.requests_per_second / row.replicas);
  write_files(o, emit_serving(s, ctx, target));
}

}  // namespace gpuadvisor::cli
