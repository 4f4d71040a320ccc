// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/memory.hpp"

#include <algorithm>

namespace gpuadvisor {

namespace {
constexpr double kGb = 1e9;
}

double stored_kv_width(const ModelSpec& m) {
  if (m.uses_mla()) return double(m.heads) * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
  return 2.0 * m.kv_heads * m.head_dim;
}

double activation_bytes_per_token_per_layer(const ModelSpec& m, const TrainingWorkload& w, bool moe_layer) {
  const double h = m.hidden;
  // Attention widths: q (and attention output) and the stored K and V.
  const double q_width = m.query_width();
  const double kv_store = stored_kv_width(m);
  // Korthikanti et al. 2022, generalised to GQA and gated MLPs, 2-byte tensors,
  // no dropout: two norm inputs (4h), QKV input (2h), Q (2q), K and V (2kv),
  // attention output (2q), MLP input (2h), MLP intermediates (4f or 6f); an
  // MoE layer also keeps its k routed copies of the input and of the expert
  // outputs before they are combined (4hk).
  double bytes = 4 * h + 2 * h + 2 * q_width + 2 * kv_store + 2 * q_width + 2 * h;
  const double per_f = m.gated_mlp ? 6 : 4;
  if (moe_layer) bytes += per_f * m.expert_ffn * (m.active_experts + m.shared_experts) + 4 * h * m.active_experts;
  else bytes += per_f * m.ffn;
  // LoRA/QLoRA on attention only: the MLP's frozen matrices need no weight
  // gradients, so their inputs are not kept: the MLP input (2h; in an MoE
  // layer also its k routed copies, 2hk) and the down-projection input (2f per
  // expert). The gate/up outputs stay (the activation function's backward).
  if (is_adapter_task(w.task) && w.lora_targets == LoraTargets::attention) {
    bytes -= 2 * h;
    if (moe_layer) bytes -= 2 * h * m.active_experts + 2.0 * m.expert_ffn * (m.active_experts + m.shared_experts);
    else bytes -= 2.0 * m.ffn;
  }
  // Without flash attention the softmax output, its dropout mask and output
  // (5 bytes per score) are stored: 5 * heads * seq per token.
  if (!w.flash_attention) bytes += 5.0 * m.heads * w.seq_len;
  return bytes;
}

LocalParameters local_parameters(const ModelSpec& m, const Layout& l) {
  return local_parameters(m.total_params(), m.expert_params_total(), l);
}

LocalParameters local_parameters(double total_params, double expert_params, const Layout& l) {
  const double model_parallel = double(l.tp) * l.pp;
  return {(total_params - expert_params) / model_parallel, expert_params / (double(l.expert_tp()) * l.pp * l.ep)};
}

MemoryBreakdown training_memory(const ModelSpec& m, const TrainingWorkload& w, const Layout& l, const Accelerator& acc) {
  return training_memory(m, w, l, acc, training_per_token(m, w));
}

MemoryBreakdown training_memory(const ModelSpec& m, const TrainingWorkload& w, const Layout& l, const Accelerator& acc, const TrainingPerToken& t) {
  MemoryBreakdown mem;
  mem.capacity_gb = acc.memory_usable_gb();
  mem.reserve_gb = kReserveFixedGb + kReserveFraction * mem.capacity_gb;

  // Parameters held by one model-parallel rank: dense weights split over
  // tensor and pipeline ranks; routed experts further split over EP ranks.
  const LocalParameters local = local_parameters(t.total_params, t.expert_params, l);
  const double model_parallel = double(l.tp) * l.pp;
  const double dense_shard = local.dense, expert_shard = local.experts;
  // ZeRO shards over the ranks holding the same weights: dp x cp (experts over
  // their own data-parallel group, dp x cp / ep, or tp x dp x cp / (ep x etp) folded).
  const double dp_dense = double(l.dp) * l.cp, dp_expert = l.expert_dp();
  auto sharded = [&](double bytes_per_param, bool shard) {
    return shard ? dense_shard * bytes_per_param / dp_dense + expert_shard * bytes_per_param / dp_expert
                 : (dense_shard + expert_shard) * bytes_per_param;
  };

  if (w.task == Task::pretrain || w.task == Task::finetune) {
    mem.weights_gb = sharded(kBytesWeight16, l.zero_stage >= 3) / kGb;
    mem.gradients_gb = sharded(kBytesGrad16, l.zero_stage >= 2) / kGb;
    mem.optimizer_gb = sharded(kBytesOptimizer, l.zero_stage >= 1) / kGb;
  } else {
    if (w.task == Task::lora) {
      mem.weights_gb = sharded(kBytesWeight16, l.zero_stage >= 3) / kGb;
    } else {
      // QLoRA: linear layers in NF4 with double-quantised constants; the
      // embeddings and output head stay in 16-bit.
      const double emb_fraction = t.embedding_params / t.total_params;
      const double per_param = emb_fraction * kBytesWeight16 + (1 - emb_fraction) * (kBytesNf4 + kBytesNf4Constants);
      mem.weights_gb = sharded(per_param, l.zero_stage >= 3) / kGb;
    }
    const double adapters = t.adapter_params / model_parallel;
    mem.adapters_gb = adapters * (kBytesWeight16 + kBytesGrad16 + kBytesOptimizer) / kGb;
  }

  // Activations: the first pipeline stage holds min(pp, micro-batches)
  // micro-batches of its layers in flight (1F1B schedule).
  const int m_count = std::max(1, l.micro_batches(w.global_batch));
  const double in_flight = std::min(l.pp, m_count);
  const double tokens_mb = double(l.micro_batch) * w.seq_len / l.cp;  // this rank's share under context parallelism
  const double layers_per_stage = double(m.layers) / l.pp;
  const double per_layer = t.stored_bytes_per_layer;
  // Tensor parallelism with sequence parallelism divides every stored tensor by tp.
  const double per_layer_mb = per_layer * tokens_mb / l.tp;
  if (l.recompute == Recompute::full) {
    // A rebuilt layer keeps only its input (2 bytes x hidden per token), the
    // others all their activations; one layer's activations are rebuilt at a
    // time during the backward pass.
    const double rebuilt = l.recompute_share(layers_per_stage);
    const double kept = rebuilt * 2.0 * m.hidden + (1 - rebuilt) * per_layer;
    mem.activations_gb = layers_per_stage * in_flight * kept * tokens_mb / l.tp / kGb;
    mem.workspace_gb = per_layer_mb / kGb;
  } else {
    // Selective recompute rebuilds the attention scores instead of storing them.
    const double stored = l.recompute == Recompute::selective ? t.stored_bytes_per_layer_flash : t.stored_bytes_per_layer;
    mem.activations_gb = layers_per_stage * in_flight * stored * tokens_mb / l.tp / kGb;
  }
  if (w.task == Task::qlora) {
    // One layer's weights dequantised to 16-bit at a time.
    const double largest_layer = m.attention_params_per_layer() + (m.is_moe() ? m.expert_mlp_params() * (m.active_experts + m.shared_experts) : m.dense_mlp_params());
    mem.workspace_gb += largest_layer * kBytesWeight16 / l.tp / kGb;
  }
  // fp32 logits for the cross-entropy loss, vocabulary split over tp.
  mem.logits_gb = tokens_mb * m.vocab * 4.0 / l.tp / kGb;
  return mem;
}

}  // namespace gpuadvisor
