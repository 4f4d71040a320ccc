// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
#include "gpuadvisor/workload/framework.hpp"

#include <fmt/format.h>

#include "gpuadvisor/base/named.hpp"

namespace gpuadvisor {

// Factors and their evidence: docs/research/training-frameworks.md (TL;DR
// table). No source runs one job on one cluster under every stack; each
// factor compares published MFU or tokens/s of comparable dense runs.
const std::vector<FrameworkProfile>& framework_profiles() {
  static const std::vector<FrameworkProfile> profiles{
      {"megatron", "Megatron-Core / NeMo / Megatron-Bridge with Transformer Engine", "cuda", 1.0, 1.0,
       "the reference: the bundled NVIDIA, MLPerf and Megatron cases the hardware fractions are fitted to"},
      {"fsdp", "PyTorch FSDP/FSDP2: torchtitan, MosaicML llm-foundry, NeMo AutoModel", "cuda", 0.95, 0.89,
       "16-bit: H100 MFU 39.7% (torchtitan on p5) and 36-46% (llm-foundry) against Megatron-Core's 41-48%, 0.8-1.0; the bundled "
       "llm-foundry and torchtitan cases run at the Megatron fit, so the top of the range. FP8: torchao float8 gains 1.1-1.3x over "
       "its own BF16, Transformer Engine 1.25-1.45x: 1.2 / 1.35 = 0.89"},
      {"deepspeed", "DeepSpeed ZeRO (stage 3 for models that need it)", "cuda", 0.8, 0.8,
       "ZeRO-3 at 0.98x of FSDP on 4 A100 (Hugging Face accelerate blog), FSDP1 MFU 32-37% on H100 (IBM fms-fsdp); "
       "no published FP8 DeepSpeed runs: the 16-bit factor"},
      {"neuron", "AWS Neuron: neuronx-distributed (NxD Training) on Trainium", "neuron", 1.0, 1.0,
       "the only stack on Trainium: its cases set the Trainium fractions directly"},
  };
  return profiles;
}

const FrameworkProfile* find_framework(std::string_view name) { return find_named(framework_profiles(), name); }

std::string framework_names() { return joined_names(framework_profiles()); }

const FrameworkProfile& framework_for(const Accelerator& acc, const FrameworkProfile* chosen) {
  if (chosen) return *chosen;
  static const FrameworkProfile& neuron = *find_framework("neuron");  // the profiles are static: looked up once
  static const FrameworkProfile& megatron = *find_framework("megatron");
  return acc.is_neuron() ? neuron : megatron;
}

std::optional<std::string> framework_problem(const FrameworkProfile& f, const Accelerator& acc) {
  if (f.software == acc.software) return std::nullopt;
  return fmt::format("framework {} does not run on {} (use --framework {})", f.name, acc.name, acc.software == "neuron" ? "neuron" : "megatron");
}

}  // namespace gpuadvisor
