// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/compute.hpp"

#include <algorithm>

namespace gpuadvisor {

double matmul_params_per_token(const ModelSpec& m) {
  double p = m.active_params() - (2.0 * m.hidden * m.layers + m.hidden);  // norms
  if (!m.tied_embeddings) p -= double(m.vocab) * m.hidden;               // input lookup
  return p;
}

double attention_forward_flops_per_token(const ModelSpec& m, int seq_len) {
  return 4.0 * m.layers * m.query_width() * m.attended_tokens(seq_len);
}

double output_layer_training_flops_per_token(const ModelSpec& m, bool adapter_task) {
  return (adapter_task ? 4.0 : 6.0) * double(m.vocab) * m.hidden;
}

FlopsPerToken training_flops_per_token(const ModelSpec& m, const TrainingWorkload& w, Recompute recompute, double full_share) {
  return training_flops_per_token(training_per_token(m, w), w, recompute, full_share);
}

FlopsPerToken training_flops_per_token(const TrainingPerToken& t, const TrainingWorkload& w, Recompute recompute, double full_share) {
  const double n = t.matmul_params;
  const double attn_fwd = t.attention_forward_flops;
  FlopsPerToken f;
  if (is_adapter_task(w.task)) {
    // Frozen base: forward (2N) and input gradients (2N), no weight gradients;
    // the adapters train fully (6 per adapter parameter).
    f.model_full_attention = 4 * n + 6 * t.adapter_params + 3 * attn_fwd;
  } else {
    f.model_full_attention = 6 * n + 3 * attn_fwd;
  }
  // A causal model needs the score and value products below the diagonal only.
  f.model = f.model_full_attention - 3 * attn_fwd * (1 - kCausalExecutedShare);
  f.hardware = f.model_full_attention;
  f.attention = 3 * attn_fwd;
  if (recompute == Recompute::full) {
    f.hardware += full_share * (2 * n + attn_fwd);  // one more forward of the rebuilt layers
    f.attention += full_share * attn_fwd;
  } else if (recompute == Recompute::selective) {
    f.hardware += attn_fwd;  // attention only
    f.attention += attn_fwd;
  }
  return f;
}

double max_compute_fraction(const Accelerator& acc, Precision p) {
  const auto& fractions = acc.efficiency.compute_max_fraction;
  if (auto it = fractions.find(p); it != fractions.end()) return it->second;
  if (p == Precision::fp16 || p == Precision::bf16)
    if (auto it = fractions.find(p == Precision::fp16 ? Precision::bf16 : Precision::fp16); it != fractions.end()) return it->second;
  return 0.5;
}

namespace {
double token_factor(std::optional<double> tokens) { return tokens ? *tokens / (*tokens + kHalfEfficiencyTokens) : 1.0; }
}  // namespace

double compute_efficiency(const Accelerator& acc, Precision p, double width, std::optional<double> tokens) {
  return max_compute_fraction(acc, p) * width / (width + kHalfEfficiencyWidth) * token_factor(tokens);
}

double expert_compute_efficiency(const Accelerator& acc, Precision p, double expert_width, std::optional<double> tokens_per_expert) {
  return max_compute_fraction(acc, p) * expert_width / (expert_width + kHalfEfficiencyExpertWidth) * token_factor(tokens_per_expert);
}

double routed_expert_share(const ModelSpec& m) {
  if (!m.is_moe()) return 0;
  const double expert_params_per_token = double(m.moe_layers()) * m.active_experts * m.expert_mlp_params();
  return std::min(1.0, expert_params_per_token / matmul_params_per_token(m));
}

double routed_expert_matmul_seconds(const ModelSpec& m, const Accelerator& acc, Precision p, double matmul_flops, int tp,
                                    std::optional<double> tokens_per_expert) {
  return routed_expert_matmul_seconds(m, acc, p, matmul_flops, tp, tokens_per_expert, routed_expert_share(m));
}

double routed_expert_matmul_seconds(const ModelSpec& m, const Accelerator& acc, Precision p, double matmul_flops, int tp,
                                    std::optional<double> tokens_per_expert, double share) {
  if (share <= 0) return 0;
  const double peak = acc.tflops(p).value_or(0) * 1e12;
  return matmul_flops / peak * share / expert_compute_efficiency(acc, p, double(m.expert_ffn) / tp, tokens_per_expert);
}

double matmul_seconds(const ModelSpec& m, const Accelerator& acc, Precision p, double matmul_flops, double dense_eff, int tp,
                      std::optional<double> tokens_per_expert) {
  return matmul_seconds(m, acc, p, matmul_flops, dense_eff, tp, tokens_per_expert, routed_expert_share(m));
}

double matmul_seconds(const ModelSpec& m, const Accelerator& acc, Precision p, double matmul_flops, double dense_eff, int tp,
                      std::optional<double> tokens_per_expert, double share) {
  const double peak = acc.tflops(p).value_or(0) * 1e12;
  return matmul_flops / peak * (1 - share) / dense_eff + routed_expert_matmul_seconds(m, acc, p, matmul_flops, tp, tokens_per_expert, share);
}

Precision attention_precision(const Accelerator& acc, Precision matmul) {
  if (acc.tflops(Precision::bf16)) return Precision::bf16;
  if (acc.tflops(Precision::fp16)) return Precision::fp16;
  return matmul;
}

Precision serving_attention_precision(const Accelerator& acc, Precision matmul, Precision kv_cache) {
  if (kv_cache == Precision::fp8 && acc.tflops(Precision::fp8)) return Precision::fp8;
  return attention_precision(acc, matmul);
}

std::optional<Precision> effective_precision(const Accelerator& acc, Precision requested) {
  if (acc.tflops(requested)) return requested;
  if (requested == Precision::bf16 && acc.tflops(Precision::fp16)) return Precision::fp16;
  return std::nullopt;
}

}  // namespace gpuadvisor
