// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/estimate.hpp"
#include "gpuadvisor/workload/neuron.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/workload/framework.hpp"

namespace gpuadvisor {

std::string StepTime::bound() const {
  struct Part {
    double s;
    const char* name;
  };
  const Part parts[] = {{compute_s, "compute"},
                        {tensor_parallel_s + context_parallel_s + expert_parallel_s + pipeline_p2p_s + data_parallel_s, "network"},
                        {memory_bound_s + elementwise_s, "memory bandwidth"},
                        {bubble_s, "pipeline bubble"}};
  const Part* best = &parts[0];
  for (const auto& p : parts)
    if (p.s > best->s) best = &p;
  return best->name;
}

namespace {

// The rules of a valid layout, written once: `fail` receives a function that
// writes the reason, so the search's yes/no check (layout_valid) formats
// nothing and layout_problem formats only the first broken rule.
template <class Fail>
auto check_expert_layout(const ModelSpec& m, const Layout& l, Fail fail) -> decltype(fail([] { return std::string(); })) {
  using Result = decltype(fail([] { return std::string(); }));
  if (l.etp < 0 || l.tp % l.expert_tp() != 0) return fail([&] { return fmt::format("etp {} does not divide tp {}", l.etp, l.tp); });
  if (l.ep == 1 && !l.experts_folded()) return Result{};
  if (!m.is_moe())
    return fail([&] {
      return std::string(l.ep > 1 ? "expert parallelism needs a mixture-of-experts model" : "an expert tensor-parallel size (etp) needs a mixture-of-experts model");
    });
  // Megatron-Core draws the expert ranks from the data- and context-parallel
  // ranks that hold the same dense weights (its expert rank generator); with
  // parallel folding (etp below tp) from the tensor-, context- and
  // data-parallel ranks together.
  if (!l.experts_folded() && (l.dp * l.cp) % l.ep != 0)
    return fail([&] {
      return fmt::format("ep {} does not divide dp {} x cp {}{}", l.ep, l.dp, l.cp,
                         l.tp > 1 ? " (with the experts whole on each rank, etp 1, ep may divide tp x dp x cp)" : "");
    });
  if ((l.tp * l.dp * l.cp) % (l.ep * l.expert_tp()) != 0)
    return fail([&] { return fmt::format("ep {} x etp {} does not divide tp {} x dp {} x cp {}", l.ep, l.expert_tp(), l.tp, l.dp, l.cp); });
  if (m.experts % l.ep != 0) return fail([&] { return fmt::format("ep {} does not divide the model's {} experts", l.ep, m.experts); });
  return Result{};
}

template <class Fail>
auto check_layout(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l, Fail fail)
    -> decltype(fail([] { return std::string(); })) {
  const int per_node = c.instance->accelerator_count;
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.ep < 1 || l.cp < 1 || l.micro_batch < 1)
    return fail([] { return std::string("tp, cp, pp, dp, ep and micro-batch must be at least 1"); });
  // QLoRA's 4-bit base runs data parallel only: bitsandbytes' FSDP-QLoRA,
  // torchtune's LoRA/QLoRA recipes and NeMo's QLoRA refuse tensor parallelism,
  // and none pipelines it (docs/methodology.md §Step time, QLoRA).
  if (w.task == Task::qlora && (l.tp > 1 || l.pp > 1 || l.cp > 1))
    return fail([] {
      return std::string("QLoRA runs data parallel only (FSDP/ZeRO, or one GPU): its stacks support no tensor, pipeline or context "
                         "parallelism with a 4-bit base");
    });
  if (per_node % l.tp != 0)
    return fail([&] {
      return fmt::format("tp {} does not divide the {} accelerators of one {} (tensor parallelism stays inside an instance)", l.tp, per_node,
                         c.instance->name);
    });
  if (l.accelerators() != c.accelerators())
    return fail([&] {
      return fmt::format("tp {} x cp {} x pp {} x dp {} = {} does not equal the {} accelerators of {} x {}", l.tp, l.cp, l.pp, l.dp,
                         l.accelerators(), c.accelerators(), c.count, c.instance->name);
    });
  // Load-balanced causal ring attention gives each rank two chunks of the sequence.
  if (l.cp > 1 && w.seq_len % (2 * l.cp) != 0)
    return fail([&] { return fmt::format("cp {} needs the sequence length ({}) divisible by 2 x cp (two chunks per rank)", l.cp, w.seq_len); });
  if (m.heads % l.tp != 0) return fail([&] { return fmt::format("tp {} does not divide the model's {} attention heads", l.tp, m.heads); });
  if (neuron_layout_fault(*c.accelerator, m, l.tp, true) != NeuronLayoutFault::none)
    return fail([&] { return *neuron_layout_problem(*c.accelerator, m, l.tp, true); });
  if (l.experts_folded() && !c.accelerator->is_cuda())
    return fail([] {
      return std::string("an expert tensor-parallel size below tp (MoE parallel folding) is a Megatron-Core feature: CUDA accelerators only");
    });
  if (l.pp > m.layers) return fail([&] { return fmt::format("pp {} exceeds the model's {} layers", l.pp, m.layers); });
  if (w.global_batch % (l.dp * l.micro_batch) != 0)
    return fail([&] { return fmt::format("global batch {} is not divisible by dp {} x micro-batch {}", w.global_batch, l.dp, l.micro_batch); });
  if (l.zero_stage < 0 || l.zero_stage > 3) return fail([] { return std::string("ZeRO stage must be 0, 1, 2 or 3"); });
  if (l.recompute_layers < 0) return fail([] { return std::string("recompute layers must be at least 0 (0: all)"); });
  if (l.recompute_layers > 0 && l.recompute != Recompute::full) return fail([] { return std::string("recompute layers apply to full recompute only"); });
  const int stage_layers = static_cast<int>(std::ceil(double(m.layers) / l.pp));
  if (l.recompute_layers > stage_layers)
    return fail([&] { return fmt::format("recompute layers {} exceed the {} layers of a pipeline stage", l.recompute_layers, stage_layers); });
  if (l.vp < 1) return fail([] { return std::string("vp must be at least 1"); });
  if (l.vp > 1) {
    if (l.pp == 1) return fail([] { return std::string("virtual pipeline stages (vp) need pipeline parallelism (pp > 1)"); });
    // Uneven stages are padded (Megatron does), so only at least one layer per virtual stage is needed.
    // The embedding and the loss may each take a layer's place (Megatron's
    // account-for-embedding/loss split; Llama 3 section 3.3.2).
    if (m.layers + 2 < l.pp * l.vp)
      return fail([&] { return fmt::format("pp {} x vp {} exceeds the model's {} layers plus the embedding and the loss", l.pp, l.vp, m.layers); });
    if (l.micro_batches(w.global_batch) % l.pp != 0)
      return fail([&] {
        return fmt::format("an interleaved schedule needs the micro-batches ({}) to be a multiple of pp {}", l.micro_batches(w.global_batch), l.pp);
      });
  }
  if (l.zero_stage >= 2 && l.pp > 1)
    return fail([] { return std::string("ZeRO stage 2 and 3 cannot be combined with pipeline parallelism (DeepSpeed/Megatron restriction)"); });
  return check_expert_layout(m, l, fail);
}

// The two ways of failing: with the reason, or with a bare no.
struct FailWithReason {
  template <class Write>
  std::optional<std::string> operator()(Write write) const {
    return write();
  }
};
struct FailQuietly {
  template <class Write>
  std::optional<bool> operator()(Write) const {
    return false;
  }
};

}  // namespace

std::optional<std::string> layout_problem(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l) {
  return check_layout(m, w, c, l, FailWithReason{});
}

bool layout_valid(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l) {
  return !check_layout(m, w, c, l, FailQuietly{}).has_value();
}

std::optional<std::string> expert_layout_problem(const ModelSpec& m, const Layout& l) { return check_expert_layout(m, l, FailWithReason{}); }

bool expert_layout_valid(const ModelSpec& m, const Layout& l) { return !check_expert_layout(m, l, FailQuietly{}).has_value(); }

double activation_traffic_per_stored_byte(Recompute r, double full_share) {
  // Forward: written, read by its consumer; backward: read, gradient written
  // (4 passes). A full recompute writes and reads the forward's again (+2).
  return r == Recompute::full ? 4.0 + 2.0 * full_share : 4.0;
}

double expert_mlp_extra_bytes_per_routed_token(const ModelSpec& m) {
  return (m.clamped_glu ? kClampedGluBytesPerWidth * m.expert_ffn : 0.0) + (m.expert_bias ? kExpertBiasBytesPerHidden * m.hidden : 0.0);
}

double elementwise_bytes_per_token(const ModelSpec& m, const TrainingWorkload& w, const Layout& l, Precision p) {
  return elementwise_bytes_per_token(m, training_per_token(m, w), l, p);
}

double elementwise_bytes_per_token(const ModelSpec& m, const TrainingPerToken& t, const Layout& l, Precision p) {
  const double stage_layers = double(m.layers) / l.pp;
  const double moe_share = t.moe_layer_share;
  const double stored = t.stored_bytes_per_layer;
  double bytes = stage_layers * activation_traffic_per_stored_byte(l.recompute, l.recompute_share(stage_layers)) * stored;
  bytes += stage_layers * moe_share * m.active_experts * expert_mlp_extra_bytes_per_routed_token(m);
  // fp8/fp4 recipes cast each matrix input to 8 or 4 bits (read 2 bytes, write
  // 1) forward, and the output gradients backward: 6 bytes per element of the
  // inputs of the QKV, projection, MLP-up and MLP-down products.
  if (p == Precision::fp8 || p == Precision::fp4) {
    const double ffn = m.is_moe() ? (1 - moe_share) * m.ffn + moe_share * double(m.expert_ffn) * m.active_experts : double(m.ffn);
    bytes += stage_layers * kCastBytesPerElement * (2.0 * m.hidden + m.query_width() + ffn);
  }
  // The loss (last stage): fp32 logits written, read by the softmax, their
  // gradient written and read by the output layer's backward pass.
  bytes += kLogitPasses * 4.0 * m.vocab / l.pp;
  return bytes;
}

// estimate_training in named stages, each a section of docs/methodology.md:
// the micro-batch's shape, its compute (§Compute, §Efficiency), the links its
// groups use and their communication (§Communication), the step's slots and
// bubble (§Step time), the data-parallel and memory-bound terms, the totals.
namespace {

// One micro-batch on one rank (§Step time).
struct MicroBatchShape {
  double rank_tokens = 0;       // the micro-batch's tokens one rank holds: context parallelism gives it 1/cp of every sequence
  double stage_tokens = 0;      // token-shares of the model one rank computes (/ tp x pp)
  double rebuilt = 0;           // share of a stage's layers a full recompute rebuilds
  double layers_per_stage = 0;  // ceil(layers / pp)
};

MicroBatchShape micro_batch_shape(const ModelSpec& m, const TrainingWorkload& w, const Layout& l) {
  MicroBatchShape s;
  const double mb_tokens = double(l.micro_batch) * w.seq_len;
  s.rebuilt = l.recompute_share(double(m.layers) / l.pp);
  // Context parallelism gives each rank 1/cp of every sequence (its tokens
  // still attend to the whole sequence, so attention per token is unchanged).
  s.rank_tokens = mb_tokens / l.cp;
  s.stage_tokens = s.rank_tokens / (l.tp * l.pp);
  s.layers_per_stage = std::ceil(double(m.layers) / l.pp);
  return s;
}

// One micro-batch's work on one rank of a stage (§Compute, §Efficiency).
struct MicroBatchWork {
  double matmul_s = 0;       // matrix multiplies at the recipe's precision (the output layer in 16-bit)
  double attention_s = 0;    // attention products in 16-bit
  double compute_s = 0;      // both, over the training stack's throughput factor
  double elementwise_s = 0;  // norms, activations, residuals, casts, the loss: memory bandwidth
};

double effective_hbm_bytes_per_s(const Accelerator& acc) {
  return acc.memory_bandwidth_gb_per_s * 1e9 * acc.efficiency.memory_bandwidth_fraction;
}

// Matrix multiplies at the requested precision: the dense ones at width
// hidden / tp; routed experts at expert_ffn / etp, each seeing only its share
// of the tokens the EP group gathers (mb_tokens x ep x k / E, the tp ranks'
// sequence-parallel shares: x etp / tp). The FLOPs per rank are the same
// either way: every rank of a stage holds 1 / (tp x dp x cp) of the expert work.
// Attention products and the output projection run in 16-bit even under an
// fp8/fp4 recipe: the output projection moves from the recipe's rate (a dense
// matrix there) to 16-bit.
double matmul_s(const ModelSpec& m, const TrainingWorkload& w, const TrainingPerToken& t, const Accelerator& acc, const Layout& l, Precision p,
                const FlopsPerToken& flops, const MicroBatchShape& s) {
  const double peak = acc.tflops(p).value_or(0) * 1e12;
  const Precision attention_p = attention_precision(acc, p);
  const bool low_precision = attention_p != p;
  const double output_flops = low_precision ? output_layer_training_flops_per_token(m, is_adapter_task(w.task)) : 0;
  const double output_s = output_flops * s.stage_tokens /
                          (acc.tflops(attention_p).value_or(0) * 1e12 * compute_efficiency(acc, attention_p, double(m.hidden) / l.tp, s.rank_tokens));
  const double matmul_flops = flops.hardware - flops.attention;
  const double dense_eff = compute_efficiency(acc, p, double(m.hidden) / l.tp, s.rank_tokens);
  const double tokens_per_expert = m.is_moe() ? s.rank_tokens * l.ep * l.expert_tp() / l.tp * m.active_experts / m.experts : 0;
  return matmul_seconds(m, acc, p, matmul_flops * s.stage_tokens, dense_eff, l.expert_tp(), tokens_per_expert, t.routed_expert_share) -
         output_flops * s.stage_tokens / (peak * dense_eff) + output_s;
}

MicroBatchWork micro_batch_work(const ModelSpec& m, const TrainingWorkload& w, const TrainingPerToken& t, const Accelerator& acc, const Layout& l,
                                const TrainingEstimate& e, const FlopsPerToken& flops, const MicroBatchShape& s) {
  MicroBatchWork mb;
  mb.matmul_s = matmul_s(m, w, t, acc, l, e.precision, flops, s);
  const Precision attention_p = attention_precision(acc, e.precision);
  const double attention_peak = acc.tflops(attention_p).value_or(0) * 1e12;
  const double executed_share = w.flash_attention ? kCausalExecutedShare : 1.0;  // fused kernels skip the masked half
  mb.attention_s = flops.attention * executed_share * s.stage_tokens / (attention_peak * max_compute_fraction(acc, attention_p));
  // The training stack's throughput against the reference stack (framework.hpp).
  mb.compute_s = (mb.matmul_s + mb.attention_s) / e.framework->compute_factor(e.precision);
  mb.elementwise_s = elementwise_bytes_per_token(m, t, l, e.precision) * s.rank_tokens / l.tp / effective_hbm_bytes_per_s(acc);
  return mb;
}

// The bandwidth each parallel group gets, and whether it leaves the NVLink
// domain (§Communication). Rank order: tp innermost, then cp, then dp (ep
// inside dp), then pp outermost. Across instances a group gets its members'
// share of the network: the tp-strided CP, DP and EP groups have per_node / tp
// members on each instance; a pipeline send is one accelerator's own share. A
// group leaves NVLink only when it spans more than the NVLink domain (the
// instance, or a multi-instance domain such as a GB200 NVL72 rack); its rings
// leave each domain once (ring_across_domains_gb_per_s).
struct GroupLinks {
  double intra_gb_per_s = 0;      // inside the domain
  double inter_dp_gb_per_s = 0;   // a DP or CP ring across domains
  double inter_p2p_gb_per_s = 0;  // a pipeline send across instances
  double inter_ep_gb_per_s = 0;   // an EP all-to-all across instances
  bool cp_crosses = false, dp_crosses = false, ep_crosses = false, pp_crosses = false;
};

GroupLinks group_links(const Cluster& c, const Layout& l) {
  const Instance& inst = *c.instance;
  const Accelerator& acc = *c.accelerator;
  const int per_node = inst.accelerator_count;
  const int domain = inst.nvlink_domain();
  GroupLinks g;
  g.intra_gb_per_s = intra_node_gb_per_s(acc);
  g.inter_dp_gb_per_s = ring_across_domains_gb_per_s(inst, acc, std::max(1, domain / l.tp));
  g.inter_p2p_gb_per_s = inter_node_gb_per_s(inst, acc, 1);
  g.inter_ep_gb_per_s = inter_node_gb_per_s(inst, acc, std::max(1, per_node / l.expert_tp()));
  g.cp_crosses = l.tp * l.cp > domain;
  g.dp_crosses = l.tp * l.cp * l.dp > domain;  // the gradient group is dp x cp
  // The EP group spans tp x cp x ep ranks, or with folding ep x etp adjacent ranks.
  g.ep_crosses = (l.experts_folded() ? l.ep * l.expert_tp() : l.tp * l.cp * l.ep) > domain;
  g.pp_crosses = l.tp * l.cp * l.dp < c.accelerators() && l.tp * l.cp * l.dp >= domain;
  return g;
}

double latency_s(bool crosses) { return crosses ? kCollectiveLatencyInterS : kCollectiveLatencyIntraS; }

// Tensor parallel: 2 all-reduces forward and 2 backward per layer (plus 2 per
// recomputed forward) of the layer's activations (2 bytes x hidden per token),
// overlapped with the matrix multiplies they feed (Megatron-Core
// --tp-comm-overlap, PyTorch async TP): only what outlasts them shows.
double tensor_parallel_s(const ModelSpec& m, const Layout& l, const MicroBatchShape& s, const GroupLinks& g, double matmul_s) {
  if (l.tp <= 1) return 0;
  const double collectives = 4 + 2 * s.rebuilt;
  const double tp_s = s.layers_per_stage * collectives * all_reduce_s(2.0 * m.hidden * s.rank_tokens, l.tp, g.intra_gb_per_s, kCollectiveLatencyIntraS);
  return std::max(0.0, tp_s - matmul_s);
}

// Context parallel: ring attention passes each rank's K and V chunk round the
// cp ranks, cp - 1 steps forward, and K, V and their gradients backward (2
// more; +1 for a recomputed forward), overlapped with the attention it feeds.
double context_parallel_s(const ModelSpec& m, const Layout& l, const MicroBatchShape& s, const GroupLinks& g, double attention_s) {
  if (l.cp <= 1) return 0;
  const double kv_bytes = 2.0 * stored_kv_width(m) * s.rank_tokens / l.tp;
  const double passes = 3 + s.rebuilt;
  const double bw = g.cp_crosses ? g.inter_dp_gb_per_s : g.intra_gb_per_s;
  const double cp_s = s.layers_per_stage * passes * (l.cp - 1) * (kv_bytes / (bw * 1e9) + latency_s(g.cp_crosses));
  return std::max(0.0, cp_s - attention_s);
}

// Expert parallel: dispatch and combine all-to-alls, forward and backward.
double expert_parallel_s(const ModelSpec& m, const Layout& l, const MicroBatchShape& s, const GroupLinks& g) {
  if (!m.is_moe() || l.ep <= 1) return 0;
  const double moe_layers_stage = std::ceil(double(m.moe_layers()) / l.pp);
  const double bytes = 2.0 * m.hidden * s.rank_tokens * m.active_experts / l.tp;
  return moe_layers_stage * 4 * all_to_all_s(bytes, l.ep, g.ep_crosses ? g.inter_ep_gb_per_s : g.intra_gb_per_s, latency_s(g.ep_crosses));
}

// Pipeline: one activation send forward and one gradient send backward;
// interleaving (vp virtual stages per rank) crosses vp times as many stage boundaries.
double pipeline_s(const ModelSpec& m, const Layout& l, const MicroBatchShape& s, const GroupLinks& g) {
  if (l.pp <= 1) return 0;
  const double bytes = 2.0 * m.hidden * s.rank_tokens / l.tp;
  const double bw = g.pp_crosses ? g.inter_p2p_gb_per_s : g.intra_gb_per_s;
  return 2 * l.vp * (bytes / (bw * 1e9) + latency_s(g.pp_crosses));
}

// The step's micro-batch slots and the 1F1B bubble: (pp - 1) slots, divided by
// the virtual stages of an interleaved schedule (Narayanan et al. 2021, section 2.2.2).
void fill_step(TrainingEstimate& e, const Layout& l, const MicroBatchWork& mb, double tp_s, double cp_s, double ep_s, double pp_s) {
  const double slot_s = mb.compute_s + mb.elementwise_s + tp_s + cp_s + ep_s + pp_s;
  e.step.compute_s = e.micro_batches * mb.compute_s;
  e.step.elementwise_s = e.micro_batches * mb.elementwise_s;
  e.step.tensor_parallel_s = e.micro_batches * tp_s;
  e.step.context_parallel_s = e.micro_batches * cp_s;
  e.step.expert_parallel_s = e.micro_batches * ep_s;
  e.step.pipeline_p2p_s = e.micro_batches * pp_s;
  e.step.bubble_s = (l.pp - 1) * slot_s / l.vp;
}

// Parameters one rank holds, and those it trains (a LoRA adapter's share).
struct LocalParams {
  double held = 0, trained = 0;
};

LocalParams local_params(const TrainingPerToken& t, const TrainingWorkload& w, const Layout& l) {
  const double held = local_parameters(t.total_params, t.expert_params, l).total();
  return {held, is_adapter_task(w.task) ? t.adapter_params / (l.tp * l.pp) : held};
}

// Data parallel: the trainable parameters' gradients are reduced over the
// dp x cp ranks that hold the same weights once per step (all-reduce, or
// reduce-scatter + all-gather under ZeRO: same volume), overlapped with the
// last micro-batch's backward pass (2/3 of its compute). ZeRO-3 also
// all-gathers the weights forward and backward every micro-batch, overlapped
// with that micro-batch's compute.
double data_parallel_s(const TrainingWorkload& w, const Layout& l, const GroupLinks& g, const LocalParams& p, double mb_compute_s, int micro_batches) {
  const int grad_group = l.dp * l.cp;
  if (grad_group <= 1) return 0;
  const double bw = g.dp_crosses ? g.inter_dp_gb_per_s : g.intra_gb_per_s;
  const double lat = latency_s(g.dp_crosses);
  const double grad_s = all_reduce_s(2.0 * p.trained, grad_group, bw, lat);
  const double overlap = mb_compute_s * 2.0 / 3.0;
  double exposed = std::max(0.0, grad_s - overlap);
  if (l.zero_stage >= 3) {
    const double weight_bytes = w.task == Task::qlora ? 0.52 * p.held : 2.0 * p.held;
    const double gather_s = 2 * all_gather_s(weight_bytes, grad_group, bw, lat);
    exposed += micro_batches * std::max(0.0, gather_s - mb_compute_s);
  }
  return exposed;
}

// Memory-bound work: the AdamW update reads and writes ~28 bytes per local
// trainable parameter (sharded by ZeRO >= 1); QLoRA dequantises its base
// weights (read 0.5 + write 2 bytes per parameter) in every forward, backward
// and recomputed forward pass.
double memory_bound_s(const TrainingWorkload& w, const Layout& l, const Accelerator& acc, const LocalParams& p, double rebuilt, int micro_batches) {
  const double hbm = effective_hbm_bytes_per_s(acc);
  const double update_params = p.trained / (l.zero_stage >= 1 ? l.dp * l.cp : 1);
  double s = update_params * 28.0 / hbm;
  if (w.task == Task::qlora) {
    const double passes = 2 + rebuilt;
    s += micro_batches * passes * p.held * 2.5 / hbm;
  }
  return s;
}

// Throughput, MFU and hours from the step time (§Step time, throughput, MFU).
void fill_totals(TrainingEstimate& e, const TrainingWorkload& w, const Cluster& c, double peak) {
  const double step_s = e.step.total_s();
  e.tokens_per_second = w.tokens_per_step() / step_s;
  e.tokens_per_second_per_accelerator = e.tokens_per_second / c.accelerators();
  e.model_tflops_per_accelerator = e.model_flops_per_token * e.tokens_per_second_per_accelerator / 1e12;
  e.mfu = peak > 0 ? e.model_tflops_per_accelerator * 1e12 / peak : 0;
  e.steps = w.steps();
  e.train_hours = e.steps * step_s / 3600;
  e.total_hours = e.train_hours;
}

}  // namespace

TrainingEstimate estimate_training(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l) {
  return estimate_training(m, w, c, l, training_memory(m, w, l, *c.accelerator));
}

TrainingEstimate estimate_training(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l, const MemoryBreakdown& memory) {
  return estimate_training(m, w, c, l, memory, training_per_token(m, w));
}

TrainingEstimate estimate_training(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l, const MemoryBreakdown& memory,
                                   const TrainingPerToken& t) {
  const Accelerator& acc = *c.accelerator;
  TrainingEstimate e;
  e.layout = l;
  e.precision = effective_precision(acc, w.precision).value_or(w.precision);
  e.framework = &framework_for(acc, w.framework);
  e.memory = memory;
  e.micro_batches = l.micro_batches(w.global_batch);

  const MicroBatchShape shape = micro_batch_shape(m, w, l);
  const FlopsPerToken flops = training_flops_per_token(t, w, l.recompute, shape.rebuilt);
  e.model_flops_per_token = flops.model;
  e.model_flops_per_token_full_attention = flops.model_full_attention;
  e.hardware_flops_per_token = flops.hardware;
  const double peak = acc.tflops(e.precision).value_or(0) * 1e12;
  const MicroBatchWork mb = micro_batch_work(m, w, t, acc, l, e, flops, shape);
  e.compute_efficiency = flops.hardware * shape.stage_tokens / peak / mb.compute_s;

  const GroupLinks links = group_links(c, l);
  fill_step(e, l, mb, tensor_parallel_s(m, l, shape, links, mb.matmul_s), context_parallel_s(m, l, shape, links, mb.attention_s),
            expert_parallel_s(m, l, shape, links), pipeline_s(m, l, shape, links));
  const LocalParams params = local_params(t, w, l);
  e.step.data_parallel_s = data_parallel_s(w, l, links, params, mb.compute_s, e.micro_batches);
  e.step.memory_bound_s = memory_bound_s(w, l, acc, params, shape.rebuilt, e.micro_batches);
  fill_totals(e, w, c, peak);
  return e;
}

StepTimeBound step_time_lower_bound(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& sizes) {
  return step_time_lower_bound(m, w, c, sizes, training_per_token(m, w));
}

StepTimeBound step_time_lower_bound(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& sizes, const TrainingPerToken& t) {
  const Accelerator& acc = *c.accelerator;
  // The least work of any layout with these sizes and micro-batch: no
  // recompute (it only adds FLOPs and traffic), ZeRO >= 1 (the update sharded),
  // no interleaving in the shape (vp changes only the bubble, bounded below).
  Layout l = sizes;
  l.recompute = Recompute::none;
  l.recompute_layers = 0;
  l.vp = 1;
  l.zero_stage = 1;
  TrainingEstimate e;
  e.precision = effective_precision(acc, w.precision).value_or(w.precision);
  e.framework = &framework_for(acc, w.framework);
  const MicroBatchShape shape = micro_batch_shape(m, w, l);
  const FlopsPerToken flops = training_flops_per_token(t, w, Recompute::none, 0);
  const MicroBatchWork mb = micro_batch_work(m, w, t, acc, l, e, flops, shape);
  const GroupLinks links = group_links(c, l);
  StepTimeBound b;
  b.micro_batches = l.micro_batches(w.global_batch);
  b.pp = l.pp;
  b.slot_s = mb.compute_s + mb.elementwise_s + expert_parallel_s(m, l, shape, links);
  b.send_at_one_s = pipeline_s(m, l, shape, links);
  b.memory_bound_s = memory_bound_s(w, l, acc, local_params(t, w, l), 0, b.micro_batches);
  return b;
}

}  // namespace gpuadvisor
