// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// What a training job's token costs whatever the layout: the model's sums and
// per-token terms that the layout search would otherwise recompute for every
// layout it tries (docs/methodology.md §Search). Built once per search; every
// field is the same expression its function computes, so an estimate reads the
// same bytes either way.
#pragma once
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

struct TrainingPerToken {
  double total_params = 0;           // ModelSpec::total_params
  double expert_params = 0;          // ModelSpec::expert_params_total: routed experts, all layers
  double embedding_params = 0;       // ModelSpec::embedding_params
  double adapter_params = 0;         // lora_adapter_params for LoRA/QLoRA, else 0
  double matmul_params = 0;          // matmul_params_per_token
  double routed_expert_share = 0;    // routed_expert_share
  double attention_forward_flops = 0;  // attention_forward_flops_per_token at the job's sequence length
  double moe_layer_share = 0;        // MoE layers / layers (0 for a dense model)
  double stored_bytes_per_layer = 0;        // activation bytes per token per layer, dense and MoE layers mixed by share
  double stored_bytes_per_layer_flash = 0;  // the same with attention scores not stored (fused kernel or selective recompute)
};

TrainingPerToken training_per_token(const ModelSpec& m, const TrainingWorkload& w);

}  // namespace gpuadvisor
