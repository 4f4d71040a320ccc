// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// Memory per accelerator for training (docs/methodology.md §Memory).
#pragma once
#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/per_token.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

// Bytes per parameter of the model states (mixed-precision AdamW).
inline constexpr double kBytesWeight16 = 2;      // bf16/fp16 weights
inline constexpr double kBytesGrad16 = 2;        // bf16/fp16 gradients
inline constexpr double kBytesOptimizer = 12;    // fp32 master (4) + Adam m (4) + v (4)
inline constexpr double kBytesNf4 = 0.5;         // QLoRA 4-bit NormalFloat base weights
inline constexpr double kBytesNf4Constants = 0.127 / 8;  // double-quantised block constants (Dettmers et al. 2023)
inline constexpr double kReserveFixedGb = 1.0;   // CUDA/Neuron context, communication buffers
inline constexpr double kReserveFraction = 0.05; // allocator fragmentation, as a fraction of capacity

struct MemoryBreakdown {
  double weights_gb = 0;        // trainable or frozen base weights on this accelerator
  double gradients_gb = 0;
  double optimizer_gb = 0;      // fp32 master weights and Adam moments
  double adapters_gb = 0;       // LoRA weights, gradients and optimizer state
  double activations_gb = 0;    // stored for the backward pass, all in-flight micro-batches
  double logits_gb = 0;         // fp32 logits for the loss, last pipeline stage
  double workspace_gb = 0;      // transient: one recomputed layer, QLoRA dequantised layer
  double reserve_gb = 0;        // runtime reserve (context, buffers, fragmentation)
  double capacity_gb = 0;       // usable accelerator memory, as EC2 reports it

  double total_gb() const {
    return weights_gb + gradients_gb + optimizer_gb + adapters_gb + activations_gb + logits_gb + workspace_gb + reserve_gb;
  }
  bool fits() const { return total_gb() <= capacity_gb; }
};

// Width of the K and V a layer stores per token (2 x kv heads x head_dim; MLA:
// heads x (nope + rope + v) dims): what ring attention passes between ranks.
double stored_kv_width(const ModelSpec& m);

// Activation bytes stored per token per transformer layer (one micro-batch,
// no recompute), before tensor/sequence parallel division.
double activation_bytes_per_token_per_layer(const ModelSpec& m, const TrainingWorkload& w, bool moe_layer);

// Parameters one model-parallel rank holds: dense weights over tp x pp, routed
// experts further over ep.
struct LocalParameters {
  double dense = 0, experts = 0;
  double total() const { return dense + experts; }
};
LocalParameters local_parameters(const ModelSpec& m, const Layout& layout);
LocalParameters local_parameters(double total_params, double expert_params, const Layout& layout);

MemoryBreakdown training_memory(const ModelSpec& m, const TrainingWorkload& w, const Layout& layout,
                                const Accelerator& accelerator);
// The same from the job's per-token terms, built once per search.
MemoryBreakdown training_memory(const ModelSpec& m, const TrainingWorkload& w, const Layout& layout, const Accelerator& accelerator,
                                const TrainingPerToken& per_token);

}  // namespace gpuadvisor
