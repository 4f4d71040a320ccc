#include "gpuadvisor/estimate.hpp"
#include "gpuadvisor/neuron.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuadvisor/communication.hpp"
#include "gpuadvisor/compute.hpp"
#include "gpuadvisor/framework.hpp"

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

std::optional<std::string> layout_problem(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l) {
  const int per_node = c.instance->accelerator_count;
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.ep < 1 || l.cp < 1 || l.micro_batch < 1)
    return "tp, cp, pp, dp, ep and micro-batch must be at least 1";
  if (per_node % l.tp != 0)
    return fmt::format("tp {} does not divide the {} accelerators of one {} (tensor parallelism stays inside an instance)", l.tp, per_node, c.instance->name);
  if (l.accelerators() != c.accelerators())
    return fmt::format("tp {} x cp {} x pp {} x dp {} = {} does not equal the {} accelerators of {} x {}", l.tp, l.cp, l.pp, l.dp,
                       l.accelerators(), c.accelerators(), c.count, c.instance->name);
  // Load-balanced causal ring attention gives each rank two chunks of the sequence.
  if (l.cp > 1 && w.seq_len % (2 * l.cp) != 0)
    return fmt::format("cp {} needs the sequence length ({}) divisible by 2 x cp (two chunks per rank)", l.cp, w.seq_len);
  if (m.heads % l.tp != 0) return fmt::format("tp {} does not divide the model's {} attention heads", l.tp, m.heads);
  if (auto p = neuron_layout_problem(*c.accelerator, m, l.tp, true)) return p;
  if (l.experts_folded() && c.accelerator->software != "cuda")
    return "an expert tensor-parallel size below tp (MoE parallel folding) is a Megatron-Core feature: CUDA accelerators only";
  if (l.pp > m.layers) return fmt::format("pp {} exceeds the model's {} layers", l.pp, m.layers);
  if (w.global_batch % (l.dp * l.micro_batch) != 0)
    return fmt::format("global batch {} is not divisible by dp {} x micro-batch {}", w.global_batch, l.dp, l.micro_batch);
  if (l.zero_stage < 0 || l.zero_stage > 3) return "ZeRO stage must be 0, 1, 2 or 3";
  if (l.recompute_layers < 0) return "recompute layers must be at least 0 (0: all)";
  if (l.recompute_layers > 0 && l.recompute != Recompute::full) return "recompute layers apply to full recompute only";
  if (l.recompute_layers > std::ceil(double(m.layers) / l.pp))
    return fmt::format("recompute layers {} exceed the {} layers of a pipeline stage", l.recompute_layers, static_cast<int>(std::ceil(double(m.layers) / l.pp)));
  if (l.vp < 1) return "vp must be at least 1";
  if (l.vp > 1) {
    if (l.pp == 1) return "virtual pipeline stages (vp) need pipeline parallelism (pp > 1)";
    // Uneven stages are padded (Megatron does), so only at least one layer per virtual stage is needed.
    // The embedding and the loss may each take a layer's place (Megatron's
    // account-for-embedding/loss split; Llama 3 section 3.3.2).
    if (m.layers + 2 < l.pp * l.vp) return fmt::format("pp {} x vp {} exceeds the model's {} layers plus the embedding and the loss", l.pp, l.vp, m.layers);
    if (l.micro_batches(w.global_batch) % l.pp != 0)
      return fmt::format("an interleaved schedule needs the micro-batches ({}) to be a multiple of pp {}", l.micro_batches(w.global_batch), l.pp);
  }
  if (l.zero_stage >= 2 && l.pp > 1) return "ZeRO stage 2 and 3 cannot be combined with pipeline parallelism (DeepSpeed/Megatron restriction)";
  return expert_layout_problem(m, l);
}

std::optional<std::string> expert_layout_problem(const ModelSpec& m, const Layout& l) {
  if (l.etp < 0 || l.tp % l.expert_tp() != 0) return fmt::format("etp {} does not divide tp {}", l.etp, l.tp);
  if (l.ep == 1 && !l.experts_folded()) return std::nullopt;
  if (!m.is_moe()) return l.ep > 1 ? "expert parallelism needs a mixture-of-experts model" : "an expert tensor-parallel size (etp) needs a mixture-of-experts model";
  // Megatron-Core draws the expert ranks from the data- and context-parallel
  // ranks that hold the same dense weights (its expert rank generator); with
  // parallel folding (etp below tp) from the tensor-, context- and
  // data-parallel ranks together.
  if (!l.experts_folded() && (l.dp * l.cp) % l.ep != 0)
    return fmt::format("ep {} does not divide dp {} x cp {}{}", l.ep, l.dp, l.cp,
                       l.tp > 1 ? " (with the experts whole on each rank, etp 1, ep may divide tp x dp x cp)" : "");
  if ((l.tp * l.dp * l.cp) % (l.ep * l.expert_tp()) != 0)
    return fmt::format("ep {} x etp {} does not divide tp {} x dp {} x cp {}", l.ep, l.expert_tp(), l.tp, l.dp, l.cp);
  if (m.experts % l.ep != 0) return fmt::format("ep {} does not divide the model's {} experts", l.ep, m.experts);
  return std::nullopt;
}

double activation_traffic_per_stored_byte(Recompute r, double full_share) {
  // Forward: written, read by its consumer; backward: read, gradient written
  // (4 passes). A full recompute writes and reads the forward's again (+2).
  return r == Recompute::full ? 4.0 + 2.0 * full_share : 4.0;
}

double expert_mlp_extra_bytes_per_routed_token(const ModelSpec& m) {
  return (m.clamped_glu ? kClampedGluBytesPerWidth * m.expert_ffn : 0.0) + (m.expert_bias ? kExpertBiasBytesPerHidden * m.hidden : 0.0);
}

double elementwise_bytes_per_token(const ModelSpec& m, const TrainingWorkload& w, const Layout& l, Precision p) {
  const double stage_layers = double(m.layers) / l.pp;
  const double moe_share = m.is_moe() ? double(m.moe_layers()) / m.layers : 0;
  const double stored = (1 - moe_share) * activation_bytes_per_token_per_layer(m, w, false) +
                        moe_share * activation_bytes_per_token_per_layer(m, w, true);
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

TrainingEstimate estimate_training(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l) {
  const Accelerator& acc = *c.accelerator;
  const Instance& inst = *c.instance;
  TrainingEstimate e;
  e.layout = l;
  e.precision = effective_precision(acc, w.precision).value_or(w.precision);
  e.framework = &framework_for(acc, w.framework);
  e.memory = training_memory(m, w, l, acc);
  e.micro_batches = l.micro_batches(w.global_batch);
  const int per_node = inst.accelerator_count;
  const double mb_tokens = double(l.micro_batch) * w.seq_len;

  // Compute for one micro-batch on one stage.
  const double rebuilt = l.recompute_share(double(m.layers) / l.pp);  // share of layers a full recompute rebuilds
  const FlopsPerToken flops = training_flops_per_token(m, w, l.recompute, rebuilt);
  e.model_flops_per_token = flops.model;
  e.model_flops_per_token_full_attention = flops.model_full_attention;
  e.hardware_flops_per_token = flops.hardware;
  const double peak = acc.tflops(e.precision).value_or(0) * 1e12;
  // Context parallelism gives each rank 1/cp of every sequence (its tokens
  // still attend to the whole sequence, so attention per token is unchanged).
  const double rank_tokens = mb_tokens / l.cp;
  const double stage_tokens = rank_tokens / (l.tp * l.pp);  // token-shares of the model one rank computes
  // Matrix multiplies at the requested precision: the dense ones at width
  // hidden / tp; routed experts at expert_ffn / etp, each seeing only its share
  // of the tokens the EP group gathers (mb_tokens x ep x k / E, the tp ranks'
  // sequence-parallel shares: x etp / tp). The FLOPs per rank are the same
  // either way: every rank of a stage holds 1 / (tp x dp x cp) of the expert work.
  // Attention products and the output projection run in 16-bit even under an fp8/fp4 recipe.
  const Precision attention_p = attention_precision(acc, e.precision);
  const bool low_precision = attention_p != e.precision;
  const double output_flops = low_precision ? output_layer_training_flops_per_token(m, is_adapter_task(w.task)) : 0;
  const double output_s = output_flops * stage_tokens /
                          (acc.tflops(attention_p).value_or(0) * 1e12 * compute_efficiency(acc, attention_p, double(m.hidden) / l.tp, rank_tokens));
  const double matmul_flops = flops.hardware - flops.attention;
  const double dense_eff = compute_efficiency(acc, e.precision, double(m.hidden) / l.tp, rank_tokens);
  const double tokens_per_expert = m.is_moe() ? rank_tokens * l.ep * l.expert_tp() / l.tp * m.active_experts / m.experts : 0;
  // The output projection moves from the recipe's rate (a dense matrix there) to 16-bit.
  const double matmul_s = matmul_seconds(m, acc, e.precision, matmul_flops * stage_tokens, dense_eff, l.expert_tp(), tokens_per_expert) -
                          output_flops * stage_tokens / (peak * dense_eff) + output_s;
  const double attention_peak = acc.tflops(attention_p).value_or(0) * 1e12;
  const double executed_share = w.flash_attention ? kCausalExecutedShare : 1.0;  // fused kernels skip the masked half
  const double attention_s = flops.attention * executed_share * stage_tokens / (attention_peak * max_compute_fraction(acc, attention_p));
  // The training stack's throughput against the reference stack (framework.hpp).
  const double mb_compute_s = (matmul_s + attention_s) / framework_for(acc, w.framework).compute_factor(e.precision);
  e.compute_efficiency = flops.hardware * stage_tokens / peak / mb_compute_s;
  // Elementwise work (norms, activations, residuals, rotary, casts, the
  // loss) is bound by memory bandwidth.
  const double hbm = acc.memory_bandwidth_gb_per_s * 1e9 * acc.efficiency.memory_bandwidth_fraction;
  const double mb_elementwise_s = elementwise_bytes_per_token(m, w, l, e.precision) * rank_tokens / l.tp / hbm;

  // Rank order: tp innermost, then cp, then dp (ep inside dp), then pp outermost.
  const double intra = intra_node_gb_per_s(acc);
  // Across instances a group gets its members' share of the network: the
  // tp-strided CP, DP and EP groups have per_node / tp members on each
  // instance; a pipeline send is one accelerator's own share.
  // A group leaves NVLink only when it spans more than the NVLink domain (the
  // instance, or a multi-instance domain such as a GB200 NVL72 rack); its
  // rings leave each domain once (ring_across_domains_gb_per_s).
  const int domain = inst.nvlink_domain();
  const int strided_members = std::max(1, per_node / l.tp);
  const double inter_dp = ring_across_domains_gb_per_s(inst, acc, std::max(1, domain / l.tp));
  const double inter_p2p = inter_node_gb_per_s(inst, acc, 1);
  const bool cp_crosses_nodes = l.tp * l.cp > domain;
  const bool dp_crosses_nodes = l.tp * l.cp * l.dp > domain;  // the gradient group is dp x cp
  // The EP group spans tp x cp x ep ranks, or with folding ep x etp adjacent ranks.
  const int ep_span = l.experts_folded() ? l.ep * l.expert_tp() : l.tp * l.cp * l.ep;
  const bool ep_crosses_nodes = ep_span > domain;
  const double inter_ep = inter_node_gb_per_s(inst, acc, std::max(1, per_node / l.expert_tp()));
  const bool pp_crosses_nodes = l.tp * l.cp * l.dp < c.accelerators() && l.tp * l.cp * l.dp >= domain;
  const double layers_per_stage = std::ceil(double(m.layers) / l.pp);

  // Tensor parallel: 2 all-reduces forward and 2 backward per layer (plus 2 per
  // recomputed forward) of the layer's activations (2 bytes x hidden per token).
  double tp_mb_s = 0;
  if (l.tp > 1) {
    const double collectives = 4 + 2 * rebuilt;
    tp_mb_s = layers_per_stage * collectives * all_reduce_s(2.0 * m.hidden * rank_tokens, l.tp, intra, kCollectiveLatencyIntraS);
    // Overlapped with the matrix multiplies they feed (Megatron-Core
    // --tp-comm-overlap, PyTorch async TP): only what outlasts them shows.
    tp_mb_s = std::max(0.0, tp_mb_s - matmul_s);
  }
  // Context parallel: ring attention passes each rank's K and V chunk round
  // the cp ranks, cp - 1 steps forward, and K, V and their gradients
  // backward (2 more; +1 for a recomputed forward), overlapped with the
  // attention it feeds.
  double cp_mb_s = 0;
  if (l.cp > 1) {
    const double kv_bytes = 2.0 * stored_kv_width(m) * rank_tokens / l.tp;
    const double passes = 3 + rebuilt;
    const double bw = cp_crosses_nodes ? inter_dp : intra;
    const double lat = cp_crosses_nodes ? kCollectiveLatencyInterS : kCollectiveLatencyIntraS;
    cp_mb_s = layers_per_stage * passes * (l.cp - 1) * (kv_bytes / (bw * 1e9) + lat);
    cp_mb_s = std::max(0.0, cp_mb_s - attention_s);
  }
  // Expert parallel: dispatch and combine all-to-alls, forward and backward.
  double ep_mb_s = 0;
  if (m.is_moe() && l.ep > 1) {
    const double moe_layers_stage = std::ceil(double(m.moe_layers()) / l.pp);
    const double bytes = 2.0 * m.hidden * rank_tokens * m.active_experts / l.tp;
    ep_mb_s = moe_layers_stage * 4 * all_to_all_s(bytes, l.ep, ep_crosses_nodes ? inter_ep : intra,
                                                 ep_crosses_nodes ? kCollectiveLatencyInterS : kCollectiveLatencyIntraS);
  }
  // Pipeline: one activation send forward and one gradient send backward.
  double pp_mb_s = 0;
  if (l.pp > 1) {
    const double bytes = 2.0 * m.hidden * rank_tokens / l.tp;
    const double bw = pp_crosses_nodes ? inter_p2p : intra;
    // Interleaving (vp virtual stages per rank) crosses vp times as many stage boundaries.
    pp_mb_s = 2 * l.vp * (bytes / (bw * 1e9) + (pp_crosses_nodes ? kCollectiveLatencyInterS : kCollectiveLatencyIntraS));
  }
  const double slot_s = mb_compute_s + mb_elementwise_s + tp_mb_s + cp_mb_s + ep_mb_s + pp_mb_s;
  e.step.compute_s = e.micro_batches * mb_compute_s;
  e.step.elementwise_s = e.micro_batches * mb_elementwise_s;
  e.step.tensor_parallel_s = e.micro_batches * tp_mb_s;
  e.step.context_parallel_s = e.micro_batches * cp_mb_s;
  e.step.expert_parallel_s = e.micro_batches * ep_mb_s;
  e.step.pipeline_p2p_s = e.micro_batches * pp_mb_s;
  // 1F1B bubble: (pp - 1) micro-batch slots, divided by the virtual stages
  // of an interleaved schedule (Narayanan et al. 2021, section 2.2.2).
  e.step.bubble_s = (l.pp - 1) * slot_s / l.vp;

  // Data parallel: the trainable parameters' gradients are reduced over the
  // dp x cp ranks that hold the same weights once per
  // step (all-reduce, or reduce-scatter + all-gather under ZeRO: same volume),
  // overlapped with the last micro-batch's backward pass (2/3 of its compute).
  // ZeRO-3 also all-gathers the weights forward and backward every micro-batch,
  // overlapped with that micro-batch's compute.
  const double local_params = local_parameters(m, l).total();
  const double trainable_local = is_adapter_task(w.task) ? lora_adapter_params(m, w.lora_rank, w.lora_targets) / (l.tp * l.pp) : local_params;
  const double dp_bw = dp_crosses_nodes ? inter_dp : intra;
  const double dp_lat = dp_crosses_nodes ? kCollectiveLatencyInterS : kCollectiveLatencyIntraS;
  const int grad_group = l.dp * l.cp;
  if (grad_group > 1) {
    const double grad_s = all_reduce_s(2.0 * trainable_local, grad_group, dp_bw, dp_lat);
    const double overlap = mb_compute_s * 2.0 / 3.0;
    double exposed = std::max(0.0, grad_s - overlap);
    if (l.zero_stage >= 3) {
      const double weight_bytes = w.task == Task::qlora ? 0.52 * local_params : 2.0 * local_params;
      const double gather_s = 2 * all_gather_s(weight_bytes, grad_group, dp_bw, dp_lat);
      exposed += e.micro_batches * std::max(0.0, gather_s - mb_compute_s);
    }
    e.step.data_parallel_s = exposed;
  }

  // Memory-bound work: the AdamW update reads and writes ~28 bytes per local
  // trainable parameter (sharded by ZeRO >= 1); QLoRA dequantises its base
  // weights (read 0.5 + write 2 bytes per parameter) in every forward,
  // backward and recomputed forward pass.
  const double update_params = trainable_local / (l.zero_stage >= 1 ? grad_group : 1);
  e.step.memory_bound_s = update_params * 28.0 / hbm;
  if (w.task == Task::qlora) {
    const double passes = 2 + rebuilt;
    e.step.memory_bound_s += e.micro_batches * passes * local_params * 2.5 / hbm;
  }

  const double step_s = e.step.total_s();
  e.tokens_per_second = w.tokens_per_step() / step_s;
  e.tokens_per_second_per_accelerator = e.tokens_per_second / c.accelerators();
  e.model_tflops_per_accelerator = e.model_flops_per_token * e.tokens_per_second_per_accelerator / 1e12;
  e.mfu = peak > 0 ? e.model_tflops_per_accelerator * 1e12 / peak : 0;
  e.steps = w.steps();
  e.train_hours = e.steps * step_s / 3600;
  e.total_hours = e.train_hours;
  return e;
}

}  // namespace gpuadvisor
