// The workload: what is trained, on how many tokens, in which precision, and
// the parallel layout a configuration runs with.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog.hpp"
#include "gpuadvisor/model.hpp"

namespace gpuadvisor {

enum class Task { pretrain, finetune, lora, qlora };
std::string_view to_string(Task t);
std::optional<Task> task_from_string(std::string_view s);
inline bool is_adapter_task(Task t) { return t == Task::lora || t == Task::qlora; }

enum class Recompute { none, selective, full };
std::string_view to_string(Recompute r);
std::optional<Recompute> recompute_from_string(std::string_view s);

enum class LoraTargets { attention, attention_mlp };
std::string_view to_string(LoraTargets t);
std::optional<LoraTargets> lora_targets_from_string(std::string_view s);

struct TrainingWorkload {
  Task task = Task::pretrain;
  double tokens = 0;  // tokens per epoch
  double epochs = 1;
  int seq_len = 0;
  int global_batch = 0;  // sequences per optimizer step
  Precision precision = Precision::bf16;
  int lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::attention_mlp;
  bool flash_attention = true;
  std::vector<std::string> assumptions;  // defaults that were applied

  double total_tokens() const { return tokens * epochs; }
  double tokens_per_step() const { return double(global_batch) * seq_len; }
  double steps() const;  // optimizer steps, rounded up
};

// User choices; empty optionals take documented defaults (docs/methodology.md §Defaults).
struct WorkloadRequest {
  Task task = Task::pretrain;
  std::optional<double> tokens;
  std::optional<double> epochs;
  std::optional<int> seq_len;
  std::optional<int> global_batch;
  Precision precision = Precision::bf16;
  int lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::attention_mlp;
  bool flash_attention = true;
};

inline constexpr double kChinchillaTokensPerParam = 20;
inline constexpr double kDefaultFinetuneTokens = 100e6;

TrainingWorkload make_workload(const WorkloadRequest& request, const ModelSpec& model);

// Trainable LoRA parameters: rank * (d_in + d_out) for every targeted matrix
// of every layer (every expert's MLP for MoE models).
double lora_adapter_params(const ModelSpec& model, int rank, LoraTargets targets);

// A parallel layout (docs/methodology.md §Layouts).
struct Layout {
  int tp = 1;  // tensor parallel (inside one instance)
  int pp = 1;  // pipeline stages
  int dp = 1;  // data-parallel replicas
  int ep = 1;  // expert parallel (MoE), a divisor of dp
  int zero_stage = 0;
  int micro_batch = 1;  // sequences per micro-batch
  Recompute recompute = Recompute::none;

  int accelerators() const { return tp * pp * dp; }
  int micro_batches(int global_batch) const { return global_batch / (dp * micro_batch); }
};

}  // namespace gpuadvisor
