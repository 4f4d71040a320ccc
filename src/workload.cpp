#include "gpuadvisor/workload.hpp"

#include <fmt/format.h>

#include <cmath>

#include "gpuadvisor/errors.hpp"

namespace gpuadvisor {

std::string_view to_string(Task t) {
  switch (t) {
    case Task::pretrain: return "pretrain";
    case Task::finetune: return "finetune";
    case Task::lora: return "lora";
    case Task::qlora: return "qlora";
  }
  return "?";
}

std::optional<Task> task_from_string(std::string_view s) {
  for (Task t : {Task::pretrain, Task::finetune, Task::lora, Task::qlora})
    if (to_string(t) == s) return t;
  return std::nullopt;
}

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

std::optional<Recompute> recompute_from_string(std::string_view s) {
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
    if (to_string(r) == s) return r;
  return std::nullopt;
}

std::string_view to_string(LoraTargets t) { return t == LoraTargets::attention ? "attention" : "attention+mlp"; }

std::optional<LoraTargets> lora_targets_from_string(std::string_view s) {
  if (s == "attention" || s == "attn") return LoraTargets::attention;
  if (s == "attention+mlp" || s == "all" || s == "attn+mlp") return LoraTargets::attention_mlp;
  return std::nullopt;
}

double TrainingWorkload::steps() const { return std::ceil(total_tokens() / tokens_per_step()); }

TrainingWorkload make_workload(const WorkloadRequest& r, const ModelSpec& model) {
  TrainingWorkload w;
  w.task = r.task;
  w.precision = r.precision;
  w.lora_rank = r.lora_rank;
  w.lora_targets = r.lora_targets;
  w.flash_attention = r.flash_attention;
  const bool pretraining = r.task == Task::pretrain;
  w.seq_len = r.seq_len.value_or(pretraining ? 4096 : 2048);
  if (!r.seq_len) w.assumptions.push_back(fmt::format("sequence length {} (default for {})", w.seq_len, to_string(r.task)));
  if (r.global_batch) {
    w.global_batch = *r.global_batch;
  } else if (pretraining) {
    // About 4M tokens per step, the scale used by Llama 2/3 pre-training.
    w.global_batch = std::max(1, static_cast<int>(std::lround(4194304.0 / w.seq_len)));
    w.assumptions.push_back(fmt::format("global batch {} sequences (~4M tokens per step, as in Llama 2 pre-training)", w.global_batch));
  } else {
    w.global_batch = 64;
    w.assumptions.push_back("global batch 64 sequences (fine-tuning default)");
  }
  if (r.tokens) {
    w.tokens = *r.tokens;
  } else if (pretraining) {
    w.tokens = kChinchillaTokensPerParam * model.total_params();
    w.assumptions.push_back(fmt::format("{:.3g}B training tokens: 20 tokens per parameter (Chinchilla, Hoffmann et al. 2022)", w.tokens / 1e9));
  } else {
    w.tokens = kDefaultFinetuneTokens;
    w.assumptions.push_back("100M fine-tuning tokens per epoch (default dataset size; set --tokens)");
  }
  w.epochs = r.epochs.value_or(1);
  if (w.seq_len < 16 || w.seq_len > 10'000'000)
    throw InputError(fmt::format("--seq-len: {} is outside [16, 10000000]", w.seq_len));
  if (w.global_batch < 1 || w.global_batch > 100'000'000)
    throw InputError(fmt::format("--global-batch: {} is outside [1, 100000000]", w.global_batch));
  if (!(w.epochs > 0) || w.epochs > 1e6) throw InputError("--epochs: must be in (0, 1000000]");
  if (!(w.tokens >= 1) || w.tokens > 1e16) throw InputError(fmt::format("--tokens: {:.3g} is outside [1, 1e16]", w.tokens));
  if (w.lora_rank < 1 || w.lora_rank > 65536) throw InputError("--lora-rank: must be in [1, 65536]");
  return w;
}

double lora_adapter_params(const ModelSpec& m, int rank, LoraTargets targets) {
  const double r = rank, h = m.hidden;
  double attn;
  if (m.uses_mla()) {
    const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    attn = r * (h + double(m.heads) * qk) + r * (h + m.kv_lora_rank + m.qk_rope_head_dim) +
           r * (double(m.heads) * m.v_head_dim + h);
  } else {
    const double q = double(m.heads) * m.head_dim, kv = double(m.kv_heads) * m.head_dim;
    attn = r * (h + q) * 2 + r * (h + kv) * 2;  // q, o, k, v
  }
  double total = m.layers * attn;
  if (targets == LoraTargets::attention_mlp) {
    const int matrices = m.gated_mlp ? 3 : 2;
    auto mlp = [&](double f) { return matrices * r * (h + f); };
    if (m.is_moe()) {
      total += m.dense_layers * mlp(m.ffn);
      total += m.moe_layers() * (m.experts + m.shared_experts) * mlp(m.expert_ffn);
    } else {
      total += m.layers * mlp(m.ffn);
    }
  }
  return total;
}

}  // namespace gpuadvisor
