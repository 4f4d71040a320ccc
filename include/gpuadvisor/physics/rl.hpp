// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// RL post-training (docs/methodology.md §RL post-training): a step of GRPO or
// PPO is generation (rollouts), scoring (log-probabilities of the policy and
// the reference, the critic's values and the reward model), the policy (and
// critic) update, and the transfer of the new weights to the generators. DPO
// is training only. The types here; rl_search.hpp evaluates and ranks.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/physics/estimate.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

enum class RlAlgorithm { grpo, ppo, dpo };
std::string_view to_string(RlAlgorithm a);
std::optional<RlAlgorithm> rl_algorithm_from_string(std::string_view s);

enum class RlPlacement { colocated, split };
std::string_view to_string(RlPlacement p);
std::optional<RlPlacement> rl_placement_from_string(std::string_view s);

// Documented defaults (docs/methodology.md §RL defaults).
inline constexpr int kDefaultRlPromptsPerStep = 256;
inline constexpr int kDefaultRlSamplesPerPrompt = 8;
inline constexpr double kDefaultRlPromptTokens = 512;
inline constexpr double kDefaultRlResponseTokens = 1024;
inline constexpr double kDefaultRlResponseMaxFactor = 2;  // --response-tokens-max: twice the mean
inline constexpr double kDefaultRlSteps = 200;
// Host time a rollout engine spends per decode step outside the GPU's work:
// scheduling, sampling and returning each token's log-probability to the
// trainer. vLLM measured about 8 ms per step for Llama-8B on H100 (GPU busy
// 38%: ~13 ms per token against ~5 ms of GPU work; vLLM blog 2024-09-05,
// "vLLM v0.6.0: 2.7x throughput improvement"), which RL frameworks drive
// synchronously. docs/methodology.md §RL generation.
inline constexpr double kRolloutStepOverheadS = 8e-3;
// Colocated refit: the new weights enter the engine tensor by tensor through
// its weight-loading path (CUDA IPC handles, dtype casts), about 2 GB/s of each
// generating accelerator's shard: verl resharded a 7B policy at TP 2 (7.6 GB
// per GPU) in 4.19 s (RLinf, "Comparison with VeRL").
inline constexpr double kColocatedRefitGbPerS = 2.0;
// Host-device link for offloading a colocated trainer's state while the
// generators run: PCIe Gen4 x16 achieves about 25 GB/s each way.
inline constexpr double kHostOffloadGbPerS = 25;

struct RlWorkload {
  RlAlgorithm algorithm = RlAlgorithm::grpo;
  int prompts_per_step = kDefaultRlPromptsPerStep;      // DPO: preference pairs per step
  int samples_per_prompt = kDefaultRlSamplesPerPrompt;  // the group size (DPO: 2, chosen and rejected)
  double prompt_tokens = kDefaultRlPromptTokens;
  double response_tokens = kDefaultRlResponseTokens;    // mean
  double response_tokens_max = kDefaultRlResponseTokens * kDefaultRlResponseMaxFactor;
  double steps = kDefaultRlSteps;
  bool reference = true;                 // KL to a frozen reference policy (its log-probabilities each step)
  std::optional<ModelSpec> reward_model; // empty: a rule-based verifier (no accelerator time)
  std::optional<ModelSpec> critic;       // PPO: the value model (the reward model's shape, else the policy's)
  std::optional<RlPlacement> placement;  // empty: both are searched (estimate: colocated)
  bool async = false;                    // split only: generation overlaps the previous step's update
  WeightFormat rollout_weights = WeightFormat::bf16;
  // The policy update as a training job: finetune or lora, its precision and
  // LoRA settings; seq_len = prompt + longest response, global_batch = the
  // sequences of one step, tokens = their tokens over all steps.
  TrainingWorkload update;
  std::vector<std::string> assumptions;

  bool generates() const { return algorithm != RlAlgorithm::dpo; }
  int sequences_per_step() const { return prompts_per_step * samples_per_prompt; }
  double tokens_per_sequence() const { return prompt_tokens + response_tokens; }
  double tokens_per_step() const { return sequences_per_step() * tokens_per_sequence(); }
};

// User choices; empty optionals take the documented defaults.
struct RlRequest {
  RlAlgorithm algorithm = RlAlgorithm::grpo;
  std::optional<int> prompts_per_step, samples_per_prompt;
  std::optional<double> prompt_tokens, response_tokens, response_tokens_max;
  std::optional<double> steps, prompts, epochs;  // --steps, or --prompts x --epochs / --prompts-per-step
  std::optional<ModelSpec> reward_model;         // --reward model --reward-model M
  bool no_reference = false;                     // --no-reference (DAPO and Dr. GRPO drop the KL term)
  std::optional<RlPlacement> placement;
  bool async = false;
  bool lora = false;                             // --policy-update lora
  int lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::attention_mlp;
  Precision precision = Precision::bf16;
};

// Applies the defaults and checks the values; InputError names the flag.
RlWorkload make_rl_workload(const RlRequest& request, const ModelSpec& policy);

// One stage of a step: its time and its throughput per accelerator that ran it.
struct RlStage {
  double seconds = 0;
  int accelerators = 0;
  double tokens = 0;  // tokens the stage produced or processed
  double tokens_per_second_per_accelerator() const { return seconds > 0 && accelerators > 0 ? tokens / seconds / accelerators : 0; }
};

struct RlEstimate {
  RlPlacement placement = RlPlacement::colocated;
  bool async = false;
  int rollout_instances = 0, trainer_instances = 0;  // split: the pools; colocated: both are all instances
  int rollout_accelerators = 0, trainer_accelerators = 0;
  // Generation
  ServingLayout rollout_layout;  // one generator (tensor-parallel group)
  int generators = 0;            // generators working in parallel
  int sequences_per_generator = 0;
  int batch = 0;                 // sequences in flight per generator
  double decode_step_s = 0;      // one decode step at `batch`
  bool straggler_bound = false;  // the longest response sets the generation time
  double resident_state_gb = 0;  // colocated: training state kept on each accelerator while generating
  bool offloaded = false;        // colocated: that state moved to host memory (its transfer counts in weight_sync)
  // The stages (docs/methodology.md §RL step)
  RlStage generation, scoring, training;
  double weight_sync_s = 0;
  double step_time_s = 0;
  std::vector<std::string> scoring_models;  // "policy", "reference", "critic", "reward model"
  // The update's training estimate (the policy's layout search); the critic's for PPO.
  TrainingEstimate trainer;
  std::optional<TrainingEstimate> critic_trainer;
  std::vector<std::string> notes;

  double generation_share() const { return step_time_s > 0 ? generation.seconds / step_time_s : 0; }
};

}  // namespace gpuadvisor
