// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/rl.hpp"

#include <fmt/format.h>

#include <cmath>

#include "gpuadvisor/base/errors.hpp"

namespace gpuadvisor {

std::string_view to_string(RlAlgorithm a) {
  switch (a) {
    case RlAlgorithm::grpo: return "grpo";
    case RlAlgorithm::ppo: return "ppo";
    case RlAlgorithm::dpo: return "dpo";
  }
  return "grpo";
}

std::optional<RlAlgorithm> rl_algorithm_from_string(std::string_view s) {
  for (RlAlgorithm a : {RlAlgorithm::grpo, RlAlgorithm::ppo, RlAlgorithm::dpo})
    if (to_string(a) == s) return a;
  return std::nullopt;
}

std::string_view to_string(RlPlacement p) { return p == RlPlacement::colocated ? "colocated" : "split"; }

std::optional<RlPlacement> rl_placement_from_string(std::string_view s) {
  for (RlPlacement p : {RlPlacement::colocated, RlPlacement::split})
    if (to_string(p) == s) return p;
  return std::nullopt;
}

namespace {

constexpr double kMaxRlTokens = 1 << 22;  // 4M tokens: longer than any context window

void check_tokens(double v, const char* flag) {
  if (!(v >= 1 && v <= kMaxRlTokens)) throw InputError(fmt::format("{}: {:g} is not in [1, {:.0f}]", flag, v, kMaxRlTokens));
}

// The step count: --steps, or --prompts x --epochs over --prompts-per-step.
double rl_steps(const RlRequest& r, int prompts_per_step, std::vector<std::string>& assumptions) {
  if (r.steps && r.prompts) throw InputError("give --steps or --prompts (with --epochs), not both");
  if (r.epochs && !r.prompts) throw InputError("--epochs with --task rl needs --prompts (the dataset's prompts)");
  if (r.steps) {
    if (!(*r.steps >= 1 && *r.steps <= 1e8)) throw InputError(fmt::format("--steps: {:g} is not in [1, 1e8]", *r.steps));
    return std::ceil(*r.steps);
  }
  if (r.prompts) {
    const double epochs = r.epochs.value_or(1);
    if (!(*r.prompts >= 1 && *r.prompts <= 1e10)) throw InputError(fmt::format("--prompts: {:g} is not in [1, 1e10]", *r.prompts));
    return std::ceil(*r.prompts * epochs / prompts_per_step);
  }
  assumptions.push_back(fmt::format("{:.0f} steps (no --steps or --prompts given)", kDefaultRlSteps));
  return kDefaultRlSteps;
}

void set_shape_defaults(const RlRequest& r, RlWorkload& w) {
  auto note = [&](const std::string& s) { w.assumptions.push_back(s); };
  w.prompts_per_step = r.prompts_per_step.value_or(kDefaultRlPromptsPerStep);
  if (!r.prompts_per_step) note(fmt::format("{} {} per step", w.prompts_per_step, w.generates() ? "prompts" : "preference pairs"));
  if (w.algorithm == RlAlgorithm::dpo) {
    if (r.samples_per_prompt && *r.samples_per_prompt != 2)
      throw InputError("--samples-per-prompt: DPO trains on pairs (chosen and rejected); leave it out");
    w.samples_per_prompt = 2;
  } else {
    w.samples_per_prompt = r.samples_per_prompt.value_or(kDefaultRlSamplesPerPrompt);
    if (!r.samples_per_prompt) note(fmt::format("{} samples per prompt (the group size)", w.samples_per_prompt));
  }
  w.prompt_tokens = r.prompt_tokens.value_or(kDefaultRlPromptTokens);
  if (!r.prompt_tokens) note(fmt::format("{:.0f} prompt tokens", w.prompt_tokens));
  w.response_tokens = r.response_tokens.value_or(kDefaultRlResponseTokens);
  if (!r.response_tokens) note(fmt::format("{:.0f} response tokens on average", w.response_tokens));
  w.response_tokens_max = r.response_tokens_max.value_or(w.response_tokens * (w.generates() ? kDefaultRlResponseMaxFactor : 1));
  if (!r.response_tokens_max && w.generates())
    note(fmt::format("the longest response {:.0f} tokens (twice the mean; --response-tokens-max)", w.response_tokens_max));
  check_tokens(w.prompt_tokens, "--prompt-tokens");
  check_tokens(w.response_tokens, "--response-tokens");
  check_tokens(w.response_tokens_max, "--response-tokens-max");
  if (w.response_tokens_max < w.response_tokens)
    throw InputError(fmt::format("--response-tokens-max {:g} is below the mean --response-tokens {:g}", w.response_tokens_max, w.response_tokens));
  if (w.prompts_per_step < 1 || w.prompts_per_step > (1 << 20)) throw InputError("--prompts-per-step: must be in [1, 1048576]");
  if (w.samples_per_prompt < 1 || w.samples_per_prompt > 1024) throw InputError("--samples-per-prompt: must be in [1, 1024]");
  if (w.algorithm == RlAlgorithm::grpo && w.samples_per_prompt < 2)
    throw InputError("--samples-per-prompt: GRPO compares samples within a group; give at least 2");
}

}  // namespace

RlWorkload make_rl_workload(const RlRequest& r, const ModelSpec& policy) {
  RlWorkload w;
  w.algorithm = r.algorithm;
  set_shape_defaults(r, w);
  w.steps = rl_steps(r, w.prompts_per_step, w.assumptions);
  w.reference = !r.no_reference;
  w.reward_model = r.reward_model;
  if (w.algorithm == RlAlgorithm::dpo && w.reward_model) throw InputError("--reward model: DPO learns from preference pairs, without a reward model");
  if (w.algorithm == RlAlgorithm::ppo) {
    w.critic = w.reward_model ? *w.reward_model : policy;
    w.assumptions.push_back(fmt::format("the critic has the {}'s shape ({})", w.reward_model ? "reward model" : "policy", w.critic->name));
  }
  w.placement = r.placement;
  w.async = r.async;
  if (w.async && w.placement == RlPlacement::colocated)
    throw InputError("--async overlaps generation with the update on separate pools; it needs --placement split");
  if (w.async && !w.placement) {
    w.placement = RlPlacement::split;
    w.assumptions.push_back("--async: split pools (generation overlaps the update only on separate accelerators)");
  }
  if (w.async && !w.generates()) throw InputError("--async: DPO has no generation to overlap");
  if (w.placement == RlPlacement::split && !w.generates()) throw InputError("--placement: DPO has no generation pool to place");
  TrainingWorkload& u = w.update;
  u.task = r.lora ? Task::lora : Task::finetune;
  u.precision = r.precision;
  u.lora_rank = r.lora_rank;
  u.lora_targets = r.lora_targets;
  u.seq_len = static_cast<int>(std::ceil(w.prompt_tokens + w.response_tokens_max));
  u.global_batch = w.sequences_per_step();
  u.tokens = w.tokens_per_step() * w.steps;
  u.epochs = 1;
  return w;
}

}  // namespace gpuadvisor
