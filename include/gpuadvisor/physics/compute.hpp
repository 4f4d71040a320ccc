// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// Floating-point work and the achievable fraction of peak (docs/methodology.md §Compute).
#pragma once
#include <optional>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/per_token.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

// The output projection's part of a training token's matrix FLOPs: hidden x
// vocab weights, 6 FLOPs each (4 for adapter tasks, whose base is frozen).
// fp8/fp4 recipes keep this layer in 16-bit: Megatron-Core's output layer is
// its own ColumnParallelLinear, not a Transformer Engine module, and
// torchtitan's float8 converter skips it (module_filter_fn: fqn != "output").
double output_layer_training_flops_per_token(const ModelSpec& m, bool adapter_task);

struct FlopsPerToken {
  double model = 0;     // useful work: what MFU counts (no recompute; causal attention's lower triangle)
  double model_full_attention = 0;  // the same with the whole attention matrix: PaLM's convention, as published TFLOP/s figures count
  double hardware = 0;  // work actually executed (with recompute; attention at the full count, its time halved under fused kernels)
  double attention = 0; // the part of `hardware` in attention score and value products
};

// Weights that take part in matrix multiplies for one token: active
// parameters less the input-embedding lookup (unless tied) and norms.
double matmul_params_per_token(const ModelSpec& m);

// Attention score and value FLOPs per token, forward only: 4 * layers * q_width * seq
// (PaLM's 12·L·H·Q·T for training is three times this; no causal halving).
double attention_forward_flops_per_token(const ModelSpec& m, int seq_len);

// Training FLOPs per token for the task (6N, or 4N + 6N_adapter for LoRA/QLoRA),
// plus attention, plus recompute in the hardware count.
// `full_share`: the share of layers a full recompute rebuilds (Layout::recompute_share).
FlopsPerToken training_flops_per_token(const ModelSpec& m, const TrainingWorkload& w, Recompute recompute, double full_share = 1);
// The same from the job's per-token terms (the search's inner loop).
FlopsPerToken training_flops_per_token(const TrainingPerToken& t, const TrainingWorkload& w, Recompute recompute, double full_share);

// Achievable fraction of the dense peak for a matrix of inner width `width`
// (hidden / tp) and `tokens` rows per micro-batch:
//   max_fraction(acc, precision) * width / (width + 256) * tokens / (tokens + 256).
// Without `tokens` (decode: few rows, the memory term covers that regime)
// only the width factor applies.
inline constexpr double kHalfEfficiencyWidth = 256;
inline constexpr double kHalfEfficiencyTokens = 256;
double compute_efficiency(const Accelerator& acc, Precision p, double width, std::optional<double> tokens);
// MoE experts run as one grouped GEMM over many small matrices: tiles that do
// not fill, per-expert scheduling and skew. Their width factor halves at an
// expert width of 1024 instead of 256 (0.43 at Qwen3-30B-A3B's 768, 0.74 at
// gpt-oss's 2880, 0.93 at Mixtral's 14,336, which runs near dense efficiency,
// MoE Parallel Folding). The kernel benchmark alone would put it higher: a
// grouped GEMM at Qwen3-30B-A3B's shape reaches 11-16% of H100's bf16 peak
// (tgale96/grouped_gemm#37, docs/research/moe-kernels.md); 1536 and 2048 were
// tried and moved DeepSeek-V3 and gpt-oss-20b training further off than they
// moved Qwen3-30B-A3B on, so the rest of that case's gap is not the width.
inline constexpr double kHalfEfficiencyExpertWidth = 1024;
// Causal attention under a fused kernel (FlashAttention and cuDNN's fused
// attention skip the tiles above the diagonal) executes about half the score
// and value FLOPs that the 12 L H Q T convention counts; prefill's 2 L w P^2
// is already halved. Without a fused kernel the full matrix is computed.
inline constexpr double kCausalExecutedShare = 0.5;
double expert_compute_efficiency(const Accelerator& acc, Precision p, double expert_width, std::optional<double> tokens_per_expert);
// The share of a token's matrix-multiply weights (matmul_params_per_token)
// that are routed experts: 0 for a dense model.
double routed_expert_share(const ModelSpec& m);
// Seconds per token-share of `matmul_flops` split between dense matrices at
// `dense_eff` and routed experts at expert_compute_efficiency (expert_ffn / tp
// wide, `tokens_per_expert` rows; decode passes none: width factor only):
//   flops / peak x ((1 - share) / dense_eff + share / expert_eff).
// Training, prefill and decode all run their MoE layers through it.
double matmul_seconds(const ModelSpec& m, const Accelerator& acc, Precision p, double matmul_flops, double dense_eff, int tp,
                      std::optional<double> tokens_per_expert);
// The same at a given routed_expert_share(m) (the search reads it once).
double matmul_seconds(const ModelSpec& m, const Accelerator& acc, Precision p, double matmul_flops, double dense_eff, int tp,
                      std::optional<double> tokens_per_expert, double share);
// The routed experts' part of matmul_seconds alone: flops / peak x share / expert_eff.
double routed_expert_matmul_seconds(const ModelSpec& m, const Accelerator& acc, Precision p, double matmul_flops, int tp,
                                    std::optional<double> tokens_per_expert);
double routed_expert_matmul_seconds(const ModelSpec& m, const Accelerator& acc, Precision p, double matmul_flops, int tp,
                                    std::optional<double> tokens_per_expert, double share);
// The large-matrix limit max_fraction(acc, precision): the catalog's figure for
// the precision (fp16 and bf16 stand in for each other), else 0.5.
double max_compute_fraction(const Accelerator& acc, Precision p);

// Attention's precision: 16-bit (bf16, else fp16) whatever the matrix
// precision, since Transformer Engine's fp8 and NVFP4 recipes keep dot-product
// attention in bf16 by default. Its FLOPs (full, non-causal count) run at that
// precision's max_compute_fraction.
Precision attention_precision(const Accelerator& acc, Precision matmul);

// Serving attention's precision: fp8 when the KV cache is fp8 and the
// accelerator has fp8 math (vLLM's FlashAttention 3 backend then runs
// attention in fp8 with the queries quantised too; TensorRT-LLM's FP8 FMHA),
// else 16-bit as attention_precision, whatever the matrices run at.
Precision serving_attention_precision(const Accelerator& acc, Precision matmul, Precision kv_cache);

// The precision the accelerator runs `requested` at: the same, or fp16 for a
// bf16 request on an accelerator without bf16 (T4, V100); nullopt if unsupported.
std::optional<Precision> effective_precision(const Accelerator& acc, Precision requested);

}  // namespace gpuadvisor
