// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// One training configuration, evaluated: memory, step time by component,
// throughput, MFU and total time (docs/methodology.md §Step time).
#pragma once
#include <optional>
#include <string>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/memory.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

struct Cluster {
  const Instance* instance = nullptr;
  const Accelerator* accelerator = nullptr;
  int count = 1;  // instances
  int accelerators() const { return count * instance->accelerator_count; }
};

struct StepTime {
  double compute_s = 0;          // all micro-batches, this stage: matrix multiplies and attention
  double elementwise_s = 0;      // norms, activation functions, residuals: bound by memory bandwidth
  double tensor_parallel_s = 0;  // all-reduces inside the node, not overlapped
  double context_parallel_s = 0; // ring-attention K/V exchange, the part attention does not hide
  double expert_parallel_s = 0;  // MoE all-to-all, not overlapped
  double pipeline_p2p_s = 0;     // stage-to-stage activations
  double bubble_s = 0;           // (pp - 1) micro-batch slots
  double data_parallel_s = 0;    // exposed part of the gradient reduction / ZeRO traffic
  double memory_bound_s = 0;     // optimizer update, QLoRA dequantisation
  double total_s() const {
    return compute_s + elementwise_s + context_parallel_s + tensor_parallel_s + expert_parallel_s + pipeline_p2p_s + bubble_s + data_parallel_s + memory_bound_s;
  }
  std::string bound() const;  // "compute", "network", "memory bandwidth", "pipeline bubble"
};

// What a job pays before its first step and after its last, seconds
// (overheads.hpp computes it).
struct JobOverheads {
  double provision_s = 0;          // request to a booted instance
  double image_pull_s = 0;         // container image, every instance in parallel
  double weight_load_s = 0;        // pretrained weights (or the resumed state) from storage
  double communicator_init_s = 0;  // NCCL / Neuron collectives start-up
  double neuron_compile_s = 0;     // Trainium / Inferentia graph compilation
  double final_checkpoint_s = 0;   // the last save
  double total_s() const {
    return provision_s + image_pull_s + weight_load_s + communicator_init_s + neuron_compile_s + final_checkpoint_s;
  }
  double hours() const { return total_s() / 3600; }
};

struct FrameworkProfile;  // framework.hpp

struct TrainingEstimate {
  const FrameworkProfile* framework = nullptr;  // the training stack (framework_for)
  Layout layout;
  Precision precision = Precision::bf16;  // what the matrices run in on this accelerator
  MemoryBreakdown memory;
  StepTime step;
  int micro_batches = 1;
  double compute_efficiency = 0;       // achieved fraction of peak in the compute term
  double model_flops_per_token = 0;
  double model_flops_per_token_full_attention = 0;  // PaLM's count (the whole attention matrix): validation's TFLOP/s and MFU metrics
  double hardware_flops_per_token = 0;
  double tokens_per_second = 0;        // whole job
  double tokens_per_second_per_accelerator = 0;
  double model_tflops_per_accelerator = 0;
  double mfu = 0;                      // model FLOPs / dense peak at `precision`
  double steps = 0;
  double train_hours = 0;              // steps x step time
  // Time outside the steps (docs/methodology.md §Job overheads); zero until
  // add_job_overheads (overheads.hpp) fills it.
  JobOverheads setup;
  double total_hours = 0;              // train_hours + setup.hours()
  bool fits() const { return memory.fits(); }
};

// Checks that the layout is valid for this cluster and workload; returns an
// explanation if not (e.g. "tp 3 does not divide 8 GPUs per instance").
std::optional<std::string> layout_problem(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l);
// The expert-parallel part of layout_problem: ep, etp against tp, dp, cp and the experts.
std::optional<std::string> expert_layout_problem(const ModelSpec& m, const Layout& l);
// The same rules as a yes/no, formatting nothing (the search's inner loop).
bool layout_valid(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l);
bool expert_layout_valid(const ModelSpec& m, const Layout& l);

// Memory traffic of the elementwise work (norms, activation functions,
// residuals, rotary, casts) per byte of activations a layer stores: 4 (written
// and read forward, read and its gradient written backward), 6 with full
// recompute of every layer (4 + 2 x the share rebuilt).
double activation_traffic_per_stored_byte(Recompute r, double full_share = 1);

// Bytes of elementwise memory traffic per token on one rank of a stage,
// before the tp split: 4 (6 with full recompute) passes over the stored
// activations, fp8/fp4 casts of the matrix inputs, and the fp32 logits of the
// loss (their share per stage). docs/methodology.md §Efficiency.
inline constexpr double kCastBytesPerElement = 6;
inline constexpr double kLogitPasses = 4;
double elementwise_bytes_per_token(const ModelSpec& m, const TrainingWorkload& w, const Layout& l, Precision p);
double elementwise_bytes_per_token(const ModelSpec& m, const TrainingPerToken& per_token, const Layout& l, Precision p);

// GPT-OSS's expert MLP in training (Megatron-Core's TEGroupedMLP), bytes per
// routed token and MoE layer in 16-bit, before the tp split
// (docs/research/gpt-oss-training.md):
// - a clamped GLU: both halves clamped and concatenated outside the fused
//   activation (forward 8 elements of expert_ffn read or written, 16 bytes),
//   their backward and the chunk's gradient (20 bytes): 36 x expert_ffn;
// - expert biases: the down projection's bias scaled by the router weight and
//   added per expert in a loop, then concatenated (12 bytes x hidden forward,
//   as much backward; 24-40 with fp32 router weights): 32 x hidden.
inline constexpr double kClampedGluBytesPerWidth = 36;
inline constexpr double kExpertBiasBytesPerHidden = 32;
double expert_mlp_extra_bytes_per_routed_token(const ModelSpec& m);

// Evaluates the configuration. The layout must be valid (layout_problem empty)
// and the precision supported (effective_precision).
TrainingEstimate estimate_training(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l);

// The same, with the layout's memory already computed (training_memory of
// this layout; the search has it from its fit check).
TrainingEstimate estimate_training(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l, const MemoryBreakdown& memory);
// The same from the job's per-token terms, built once per search (training_per_token).
TrainingEstimate estimate_training(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l, const MemoryBreakdown& memory,
                                   const TrainingPerToken& per_token);

// A step time no layout with these parallel sizes and micro-batch can beat,
// whatever its recompute or ZeRO stage, at vp virtual stages. Each micro-batch
// slot holds at least the compute and elementwise work without recompute and
// the expert all-to-alls (neither depends on recompute or ZeRO), plus vp
// pipeline sends; the bubble is (pp - 1) such slots over vp; the update is
// sharded (ZeRO >= 1). The overlapped terms (tensor, context and data
// parallel) are at least 0. The search skips what this bound says is slower
// than the best layout found (docs/methodology.md §Search).
struct StepTimeBound {
  double slot_s = 0;          // compute + elementwise + expert all-to-all of one micro-batch
  double send_at_one_s = 0;   // one micro-batch's pipeline sends at vp 1
  int micro_batches = 1;
  int pp = 1;
  double memory_bound_s = 0;  // the sharded optimizer update (and QLoRA's dequantisation)
  double at(int vp) const {
    return micro_batches * (slot_s + vp * send_at_one_s) + (pp - 1) * (slot_s / vp + send_at_one_s) + memory_bound_s;
  }
  // A bound for every micro-batch size from `smallest`'s to `largest`'s at
  // once (same parallel sizes): the micro-batches' work per step does not
  // grow with their size (efficiency rises with tokens, fewer latencies) and
  // the bubble does not shrink (a slot's time is tokens / efficiency plus
  // latencies, rising with tokens), so the first part is bounded at the
  // largest size and the bubble at the smallest.
  static double across_micro_batches(const StepTimeBound& smallest, const StepTimeBound& largest, int vp) {
    return largest.micro_batches * (largest.slot_s + vp * largest.send_at_one_s) + (smallest.pp - 1) * (smallest.slot_s / vp + smallest.send_at_one_s) +
           largest.memory_bound_s;
  }
};
StepTimeBound step_time_lower_bound(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& sizes);
StepTimeBound step_time_lower_bound(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& sizes, const TrainingPerToken& per_token);

}  // namespace gpuadvisor
