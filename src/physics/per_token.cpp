// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/per_token.hpp"

#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/physics/memory.hpp"

namespace gpuadvisor {

namespace {
double mixed_stored_bytes(const ModelSpec& m, const TrainingWorkload& w, double moe_share) {
  return (1 - moe_share) * activation_bytes_per_token_per_layer(m, w, false) + moe_share * activation_bytes_per_token_per_layer(m, w, true);
}
}  // namespace

TrainingPerToken training_per_token(const ModelSpec& m, const TrainingWorkload& w) {
  TrainingPerToken t;
  t.total_params = m.total_params();
  t.expert_params = m.expert_params_total();
  t.embedding_params = m.embedding_params();
  t.adapter_params = is_adapter_task(w.task) ? lora_adapter_params(m, w.lora_rank, w.lora_targets) : 0;
  t.matmul_params = matmul_params_per_token(m);
  t.routed_expert_share = routed_expert_share(m);
  t.attention_forward_flops = attention_forward_flops_per_token(m, w.seq_len);
  t.moe_layer_share = m.is_moe() ? double(m.moe_layers()) / m.layers : 0;
  t.stored_bytes_per_layer = mixed_stored_bytes(m, w, t.moe_layer_share);
  TrainingWorkload flash = w;
  flash.flash_attention = true;
  t.stored_bytes_per_layer_flash = mixed_stored_bytes(m, flash, t.moe_layer_share);
  return t;
}

}  // namespace gpuadvisor
