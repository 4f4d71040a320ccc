// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// estimate: one layout on one instance, its breakdown and its explanation.
#include "gpuadvisor/report/report.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/workload/framework.hpp"
#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/physics/overheads.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/search/capacity.hpp"
#include "report/detail.hpp"


namespace gpuadvisor {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;
using namespace report_detail;

namespace {

// The job's cost at the given rates: the cluster for its billed hours.
struct EstimateCost {
  std::optional<double> on_demand_usd, spot_usd;
  double million_tokens = 0;
};

EstimateCost estimate_cost(const EstimateContext& ctx) {
  const Cluster& c = *ctx.cluster;
  const double hours = ctx.estimate->total_hours;
  EstimateCost out;
  if (ctx.on_demand_usd_per_hour) out.on_demand_usd = *ctx.on_demand_usd_per_hour * c.count * billed_hours(hours);
  if (ctx.spot_usd_per_hour) out.spot_usd = *ctx.spot_usd_per_hour * c.count * billed_hours(hours);
  out.million_tokens = ctx.workload->total_tokens() / 1e6;
  return out;
}

std::string training_framework_name(const EstimateContext& ctx) { return framework_for(*ctx.cluster->accelerator, ctx.workload->framework).name; }

ordered_json memory_json(const MemoryBreakdown& m) {
  return {{"per_accelerator_gb", sig6(m.total_gb())}, {"capacity_gb", sig6(m.capacity_gb)},
          {"weights_gb", sig6(m.weights_gb)}, {"gradients_gb", sig6(m.gradients_gb)},
          {"optimizer_gb", sig6(m.optimizer_gb)}, {"adapters_gb", sig6(m.adapters_gb)},
          {"activations_gb", sig6(m.activations_gb)}, {"logits_gb", sig6(m.logits_gb)},
          {"workspace_gb", sig6(m.workspace_gb)}, {"reserve_gb", sig6(m.reserve_gb)}};
}

ordered_json time_json(const TrainingEstimate& e) {
  const JobOverheads& su = e.setup;
  return {{"compute_s", sig6(e.step.compute_s)}, {"elementwise_s", sig6(e.step.elementwise_s)},
          {"tensor_parallel_s", sig6(e.step.tensor_parallel_s)}, {"context_parallel_s", sig6(e.step.context_parallel_s)},
          {"expert_parallel_s", sig6(e.step.expert_parallel_s)}, {"pipeline_p2p_s", sig6(e.step.pipeline_p2p_s)},
          {"pipeline_bubble_s", sig6(e.step.bubble_s)}, {"data_parallel_exposed_s", sig6(e.step.data_parallel_s)},
          {"memory_bound_s", sig6(e.step.memory_bound_s)}, {"bound", e.step.bound()},
          {"micro_batches", e.micro_batches}, {"steps", e.steps}, {"train_hours", sig6(e.train_hours)},
          {"setup_hours", sig6(su.hours())},
          {"setup", {{"provision_s", sig6(su.provision_s)}, {"image_pull_s", sig6(su.image_pull_s)},
                     {"weight_load_s", sig6(su.weight_load_s)}, {"communicator_init_s", sig6(su.communicator_init_s)},
                     {"neuron_compile_s", sig6(su.neuron_compile_s)}, {"final_checkpoint_s", sig6(su.final_checkpoint_s)}}},
          {"total_hours", sig6(e.total_hours)}};
}

ordered_json throughput_json(const TrainingEstimate& e) {
  return {{"tokens_per_second", sig6(e.tokens_per_second)},
          {"tokens_per_second_per_accelerator", sig6(e.tokens_per_second_per_accelerator)},
          {"model_tflops_per_accelerator", sig6(e.model_tflops_per_accelerator)},
          {"model_flops_per_token", sig6(e.model_flops_per_token)},
          {"hardware_flops_per_token", sig6(e.hardware_flops_per_token)},
          {"compute_efficiency", sig6(e.compute_efficiency)}};
}

// Where the count is beyond what one usually starts on demand, the type is
// sold through Capacity Blocks only, or it has no on-demand rate here
// (p6-b300), what buys it (recommend and cost rank such a count at a Capacity
// Block): a block sized to the prediction plus its p90 error, as recommend
// sizes it. Empty otherwise.
std::optional<CapacityAdvice> estimate_capacity(const EstimateContext& ctx) {
  const Cluster& c = *ctx.cluster;
  const bool unpriced = !ctx.on_demand_usd_per_hour;
  if (!unpriced && !beyond_usual_on_demand(*c.instance, c.count) && c.instance->purchase == "on_demand_and_spot") return std::nullopt;
  const auto band = accuracy_band(c.accelerator->name, accuracy_task(to_string(ctx.workload->task)), training_framework_name(ctx), ctx.model->is_moe());
  CapacityAdvice a =
      capacity_advice(*c.instance, c.count, ctx.estimate->total_hours, ctx.region, Pricing::on_demand, band ? band->p90_abs_error : 0);
  if (a.note.empty() && unpriced && a.block_cost_usd) advise_block_instead_of_on_demand(a, *c.instance, c.count, ctx.region, false);
  if (a.note.empty()) return std::nullopt;
  return a;
}

// The channel that delivers the run: a Capacity Block where no on-demand rate is known.
std::string estimate_capacity_channel(const EstimateContext& ctx, const CapacityAdvice& a) {
  return !ctx.on_demand_usd_per_hour && a.block_cost_usd && !a.blocks_only ? "capacity block" : a.column();
}

ordered_json estimate_cost_json(const EstimateContext& ctx, const EstimateCost& cost) {
  auto rate_or_null = [](std::optional<double> v) { return v ? ordered_json(rate_json_value(*v)) : ordered_json(nullptr); };
  auto per_million = [&](std::optional<double> v) { return v ? ordered_json(sig6(*v / cost.million_tokens)) : ordered_json(nullptr); };
  const auto capacity = estimate_capacity(ctx);
  return {{"on_demand_usd_per_hour_per_instance", rate_or_null(ctx.on_demand_usd_per_hour)},
          {"spot_usd_per_hour_per_instance", rate_or_null(ctx.spot_usd_per_hour)},
          {"on_demand_usd", money_json(cost.on_demand_usd)}, {"spot_usd", money_json(cost.spot_usd)},
          {"on_demand_usd_per_million_tokens", per_million(cost.on_demand_usd)},
          {"spot_usd_per_million_tokens", per_million(cost.spot_usd)},
          {"spot_note", "spot_usd assumes no interruptions; `gpuadvisor cost` gives the expected cost with reclaims and failures"},
          {"capacity", capacity ? ordered_json{{"channel", estimate_capacity_channel(ctx, *capacity)}, {"note", capacity->note}} : ordered_json(nullptr)}};
}

std::string estimate_json(const Catalog& catalog, const EstimateContext& ctx, const EstimateCost& cost) {
  const TrainingEstimate& e = *ctx.estimate;
  const Cluster& c = *ctx.cluster;
  ordered_json j = envelope(catalog, "estimate");
  j["model"] = model_json(*ctx.model);
  j["workload"] = workload_json(*ctx.workload);
  j["assumptions"] = assumptions_json(*ctx.model, *ctx.workload);
  j["instance"] = c.instance->name;
  j["count"] = c.count;
  j["accelerators"] = c.accelerators();
  j["region"] = ctx.region;
  j["precision"] = to_string(e.precision);
  j["fits"] = e.fits();
  j["layout"] = layout_json(e.layout);
  j["memory"] = memory_json(e.memory);
  j["step_time_s"] = sig6(e.step.total_s());
  j["time"] = time_json(e);
  j["throughput"] = throughput_json(e);
  j["mfu"] = sig6(e.mfu);
  j["framework"] = e.framework ? e.framework->name : std::string();
  j["accuracy"] = accuracy_json(c.accelerator->name, to_string(ctx.workload->task), training_framework_name(ctx), ctx.model->is_moe());
  j["cost"] = estimate_cost_json(ctx, cost);
  return json_text(j, 2) + "\n";
}

void add_config_and_memory(const EstimateContext& ctx, const ItemAdder& add) {
  const TrainingEstimate& e = *ctx.estimate;
  const Cluster& c = *ctx.cluster;
  const auto& m = e.memory;
  add("config", "instance", text(fmt::format("{} x {}", c.count, c.instance->name)), "");
  add("config", "accelerators", integer(c.accelerators()), c.accelerator->name);
  add("config", "layout", text(layout_text(e.layout)), "");
  const Precision asked = ctx.workload->precision;
  add("config", "precision", text(std::string(to_string(e.precision))),
      e.precision == asked ? std::string()
                           : fmt::format("{} asked: {} has no {} matrix path, so {} (with loss scaling)", to_string(asked), c.accelerator->name,
                                         to_string(asked), to_string(e.precision)));
  if (e.framework)
    add("config", "framework", text(e.framework->name),
        fmt::format("{}; matrices at {:.2f} of Megatron-Core's", e.framework->title, e.framework->compute_factor(e.precision)));
  add("memory", "weights", num(m.weights_gb, 2), "GB");
  add("memory", "gradients", num(m.gradients_gb, 2), "GB");
  add("memory", "optimizer (fp32 master + Adam)", num(m.optimizer_gb, 2), "GB");
  if (m.adapters_gb > 0) add("memory", "LoRA adapters + state", num(m.adapters_gb, 3), "GB");
  add("memory", "activations", num(m.activations_gb, 2), "GB");
  add("memory", "logits (fp32)", num(m.logits_gb, 2), "GB");
  if (m.workspace_gb > 0) add("memory", "workspace", num(m.workspace_gb, 2), "GB");
  add("memory", "runtime reserve", num(m.reserve_gb, 2), "GB");
  add("memory", "total per accelerator", num(m.total_gb(), 2), "GB");
  add("memory", "capacity", num(m.capacity_gb, 2), e.fits() ? "GB (fits)" : "GB (DOES NOT FIT)");
}

void add_step_and_setup(const TrainingEstimate& e, const ItemAdder& add) {
  const JobOverheads& su = e.setup;
  add("time", "compute (matrices, attention)", num(e.step.compute_s, 3), "s/step");
  add("time", "elementwise (norms, activations)", num(e.step.elementwise_s, 3), "s/step");
  add("time", "tensor-parallel comm (exposed)", num(e.step.tensor_parallel_s, 3), "s/step");
  if (e.layout.cp > 1) add("time", "context-parallel K/V ring (exposed)", num(e.step.context_parallel_s, 3), "s/step");
  if (e.step.expert_parallel_s > 0) add("time", "expert all-to-all", num(e.step.expert_parallel_s, 3), "s/step");
  if (e.step.pipeline_p2p_s > 0) add("time", "pipeline p2p", num(e.step.pipeline_p2p_s, 3), "s/step");
  add("time", "pipeline bubble", num(e.step.bubble_s, 3), "s/step");
  add("time", "data-parallel (exposed)", num(e.step.data_parallel_s, 3), "s/step");
  add("time", "memory-bound (optimizer, dequant)", num(e.step.memory_bound_s, 3), "s/step");
  add("time", "step", num(e.step.total_s(), 3), "s (" + e.step.bound() + "-bound)");
  add("time", "steps", num(e.steps, 0), "");
  add("time", "training (steps x step)", hours_cell(e.train_hours), "");
  add("setup", "provisioning and boot", num(su.provision_s, 0), "s");
  add("setup", "container image pull", num(su.image_pull_s, 0), "s");
  add("setup", "loading weights", num(su.weight_load_s, 0), "s");
  add("setup", "communicator start-up", num(su.communicator_init_s, 0), "s");
  if (su.neuron_compile_s > 0) add("setup", "Neuron compilation", num(su.neuron_compile_s, 0), "s");
  add("setup", "final checkpoint", num(su.final_checkpoint_s, 0), "s");
  add("setup", "total", hours_cell(su.hours()), "");
  add("time", "total (training + setup)", hours_cell(e.total_hours), "");
}

void add_throughput_and_cost(const EstimateContext& ctx, const EstimateCost& cost, const ItemAdder& add) {
  const TrainingEstimate& e = *ctx.estimate;
  add("throughput", "tokens/s", num(e.tokens_per_second, 0), "whole job");
  add("throughput", "tokens/s per accelerator", num(e.tokens_per_second_per_accelerator, 1), "");
  add("throughput", "model TFLOP/s per accelerator", num(e.model_tflops_per_accelerator, 1), "");
  add("throughput", "MFU", pct(e.mfu), "of dense " + std::string(to_string(e.precision)) + " peak");
  add("cost", "on-demand", money(cost.on_demand_usd), std::string(ctx.region) + ", billed per second, 60 s minimum");
  add("cost", "spot (no interruptions)", money(cost.spot_usd), std::string(ctx.region));
  add("cost", "on-demand per million tokens", cost.on_demand_usd ? num(*cost.on_demand_usd / cost.million_tokens, 2) : Cell{"unknown", std::monostate{}}, "USD");
  // The on-demand figure assumes the instances can be started at will.
  if (const auto a = estimate_capacity(ctx)) add("cost", "capacity", text(estimate_capacity_channel(ctx, *a)), a->note);
}

}  // namespace

std::string render_estimate(const Catalog& catalog, const EstimateContext& ctx, const RenderOptions& o) {
  const EstimateCost cost = estimate_cost(ctx);
  if (o.format == Format::json) return estimate_json(catalog, ctx, cost);
  Table t = items_table();
  const ItemAdder add = item_adder(t);
  add_config_and_memory(ctx, add);
  add_step_and_setup(*ctx.estimate, add);
  add_throughput_and_cost(ctx, cost, add);
  const Cluster& c = *ctx.cluster;
  return render_items(std::move(t), catalog, o,
                      accuracy_line(c.accelerator->name, to_string(ctx.workload->task), training_framework_name(ctx), ctx.model->is_moe()));
}

std::string explain_estimate(const EstimateContext& ctx) {
  const TrainingEstimate& e = *ctx.estimate;
  const ModelSpec& m = *ctx.model;
  const TrainingWorkload& w = *ctx.workload;
  const Cluster& c = *ctx.cluster;
  const Layout& l = e.layout;
  const Accelerator& a = *c.accelerator;
  std::string out = "How these numbers were computed (docs/methodology.md):\n";
  out += fmt::format("  parameters N = {:.4g} (active {:.4g}); matmul parameters per token = {:.4g}\n", m.total_params(),
                     m.active_params(), matmul_params_per_token(m));
  out += fmt::format("  model FLOPs/token = {} = {:.4g} (causal: the lower half of the attention matrix; PaLM's whole-matrix count {:.4g});"
                     " hardware count, with recompute and the whole matrix {:.4g}\n",
                     is_adapter_task(w.task) ? "4 x matmul parameters + 6N_adapter + 6 L H Q T" : "6 x matmul parameters per token + 6 L H Q T",
                     e.model_flops_per_token, e.model_flops_per_token_full_attention, e.hardware_flops_per_token);
  const Precision attention_p = attention_precision(a, e.precision);
  out += fmt::format("  matrix efficiency = {:.3f} (max for {} {}) x w/(w+256) x n/(n+256), w = hidden/tp = {}, n = mb x seq / cp = {}"
                     " (MoE experts: w = expert ffn/etp, n = their share of the tokens)\n",
                     max_compute_fraction(a, e.precision), a.name, to_string(e.precision), m.hidden / l.tp, l.micro_batch * w.seq_len / l.cp);
  out += fmt::format("  compute/step = micro-batches {} x tokens/mb / (tp x pp) x [matrix FLOPs/token / (peak {} TFLOPS x eff)"
                     " + attention FLOPs/token x {} / ({} peak {} TFLOPS x {:.3f})] / framework factor {:.2f} ({}) = {:.3f} s"
                     " (overall {:.3f} of the {} peak)\n",
                     e.micro_batches, a.tflops(e.precision).value_or(0),
                     w.flash_attention ? "0.5 executed (causal, fused kernel)" : "1 (full matrix, no fused kernel)", to_string(attention_p),
                     a.tflops(attention_p).value_or(0),
                     max_compute_fraction(a, attention_p), e.framework ? e.framework->compute_factor(e.precision) : 1.0,
                     e.framework ? e.framework->name : "megatron", e.step.compute_s, e.compute_efficiency, to_string(e.precision));
  if (attention_p != e.precision)
    out += fmt::format("  the output projection ({:.4g} FLOPs/token: {} x vocab x hidden) runs at the {} peak, as the attention products:"
                       " fp8/fp4 recipes keep it in 16-bit\n",
                       output_layer_training_flops_per_token(m, is_adapter_task(w.task)), is_adapter_task(w.task) ? 4 : 6, to_string(attention_p));
  const double rebuilt = l.recompute_share(double(m.layers) / l.pp);
  const double expert_extra = expert_mlp_extra_bytes_per_routed_token(m);
  const std::string extras = (e.precision == Precision::fp8 || e.precision == Precision::fp4 ? " + fp8/fp4 casts of the matrix inputs" : "") +
                             (expert_extra > 0 ? fmt::format(" + {:.4g} bytes per routed token and MoE layer: the expert clamp and bias passes", expert_extra)
                                               : std::string());
  out += fmt::format("  elementwise/step = micro-batches x {:.4g} bytes/token ({:.3g} passes over the stored activations x layers/pp{}"
                     " + 4 passes over fp32 logits / pp) x tokens/mb / (cp x tp) / ({:.0f} GB/s x {:.3f}) = {:.3f} s\n",
                     elementwise_bytes_per_token(m, w, l, e.precision), activation_traffic_per_stored_byte(l.recompute, rebuilt), extras,
                     a.memory_bandwidth_gb_per_s, a.efficiency.memory_bandwidth_fraction, e.step.elementwise_s);
  out += fmt::format("  bubble = (pp - 1) x slot / vp = {} x ... / {} = {:.3f} s\n", l.pp - 1, l.vp, e.step.bubble_s);
  out += fmt::format("  tensor parallel exposed = max(0, layers/pp x {:.3g} all-reduces x 2(tp-1)/tp x 2 h tokens_mb/cp / {:.0f} GB/s"
                     " - matrix time) per micro-batch, for the step = {:.3f} s\n",
                     4 + 2 * rebuilt, intra_node_gb_per_s(a), e.step.tensor_parallel_s);
  if (l.cp > 1)
    out += fmt::format("  context parallel exposed = max(0, layers/pp x {:.3g} x (cp-1) x 2 x K/V width {} x tokens_mb/cp / tp / bw - attention time)"
                       " per micro-batch, for the step = {:.3f} s\n",
                       3 + rebuilt, stored_kv_width(m), e.step.context_parallel_s);
  out += fmt::format("  data parallel exposed = max(0, 2(n-1)/n x 2 bytes x trainable params / bw - 2/3 x mb compute), n = dp x cp = {:.3f} s"
                     " (across instances {:.1f} GB/s for each tp-strided data-parallel group: its members' share of the NVLink domain's network)\n",
                     e.step.data_parallel_s, ring_across_domains_gb_per_s(*c.instance, a, std::max(1, c.instance->nvlink_domain() / l.tp)));
  out += fmt::format("  step = {:.3f} s; steps = ceil(tokens x epochs / (global batch x seq)) = {:.0f}; training = {:.2f} h\n",
                     e.step.total_s(), e.steps, e.train_hours);
  const JobOverheads& su = e.setup;
  out += fmt::format("  setup = provisioning {:.0f} s + image pull {:.0f} s (image GB / 0.06 GB/s) + weights {:.0f} s (GB per instance x instances"
                     " / storage read GB/s) + communicators {:.0f} s (15 s + 0.04 s x ranks) + Neuron compile {:.0f} s + final checkpoint"
                     " {:.0f} s (checkpoint GB / write GB/s) = {:.0f} s; total = training + setup = {:.2f} h, billed per second (60 s minimum)\n",
                     su.provision_s, su.image_pull_s, su.weight_load_s, su.communicator_init_s, su.neuron_compile_s, su.final_checkpoint_s,
                     su.total_s(), e.total_hours);
  out += fmt::format("  memory = weights {:.2f} + grads {:.2f} + optimizer {:.2f} + adapters {:.3f} + activations {:.2f} + logits {:.2f}"
                     " + workspace {:.2f} + reserve {:.2f} (1 GB + 5% of capacity) = {:.2f} GB of {:.2f} GB\n",
                     e.memory.weights_gb, e.memory.gradients_gb, e.memory.optimizer_gb, e.memory.adapters_gb, e.memory.activations_gb,
                     e.memory.logits_gb, e.memory.workspace_gb, e.memory.reserve_gb, e.memory.total_gb(), e.memory.capacity_gb);
  out += fmt::format("  MFU = model FLOPs/token x tokens/s per accelerator / peak = {:.4g} x {:.4g} / {} TFLOPS = {:.1f}%\n",
                     e.model_flops_per_token, e.tokens_per_second_per_accelerator, a.tflops(e.precision).value_or(0), e.mfu * 100);
  return out;
}

}  // namespace gpuadvisor
