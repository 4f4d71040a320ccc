// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
// Training stacks (docs/methodology.md §Training frameworks): the same job on
// the same accelerators runs at different speeds under Megatron-Core/NeMo,
// PyTorch FSDP (torchtitan, llm-foundry), DeepSpeed ZeRO and the Neuron stack.
// A profile scales the matrix-multiply throughput against the reference stack
// the hardware fractions describe (Megatron-Core with Transformer Engine).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"

namespace gpuadvisor {

struct FrameworkProfile {
  std::string name;      // megatron, fsdp, deepspeed, neuron
  std::string title;
  std::string software;  // accelerators it runs on: "cuda" or "neuron"
  // Matrix-multiply throughput relative to Megatron-Core on the same
  // accelerator and precision: 16-bit, and 8/4-bit recipes.
  double compute_factor_16 = 1, compute_factor_8 = 1;
  std::string source;    // the evidence (docs/research/training-frameworks.md)
  double compute_factor(Precision p) const {
    return p == Precision::bf16 || p == Precision::fp16 ? compute_factor_16 : compute_factor_8;
  }
};

const std::vector<FrameworkProfile>& framework_profiles();
const FrameworkProfile* find_framework(std::string_view name);
std::string framework_names();
// The chosen stack, or the default: megatron on CUDA, neuron on Neuron.
const FrameworkProfile& framework_for(const Accelerator& acc, const FrameworkProfile* chosen);
// Why this stack cannot train on this accelerator, or empty.
std::optional<std::string> framework_problem(const FrameworkProfile& f, const Accelerator& acc);

}  // namespace gpuadvisor
