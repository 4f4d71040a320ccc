// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
#include "gpuadvisor/workload/neuron.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace gpuadvisor {

int neuron_cores_per_chip(const Accelerator& acc) {
  if (!acc.is_neuron()) return 0;
  return acc.name == "Trainium2" ? 4 : 2;
}

int tensor_parallel_ranks(const Accelerator& acc, int tp_chips) { return tp_chips * std::max(1, neuron_cores_per_chip(acc)); }

bool neuron_small_collectives_mesh(const Accelerator& acc) { return acc.is_neuron() && acc.name == "Trainium2"; }

const std::vector<int>& neuron_tp_cores(const Accelerator& acc) {
  static const std::vector<int> none, inferentia2{1, 2, 4, 8, 12, 24}, trainium2{1, 2, 4, 8, 16, 32, 64}, trainium{1, 2, 8, 16, 32};
  if (!acc.is_neuron()) return none;
  if (acc.name == "Inferentia2") return inferentia2;
  if (acc.name == "Trainium2") return trainium2;
  return trainium;  // Trainium (trn1)
}

NeuronLayoutFault neuron_layout_fault(const Accelerator& acc, const ModelSpec& m, int tp_chips, bool training) {
  const int per_chip = neuron_cores_per_chip(acc);
  if (per_chip == 0) return NeuronLayoutFault::none;
  const int cores = tp_chips * per_chip;
  const std::vector<int>& allowed = neuron_tp_cores(acc);
  if (std::find(allowed.begin(), allowed.end(), cores) == allowed.end()) return NeuronLayoutFault::group_size;
  if (!training) return NeuronLayoutFault::none;  // NxD Inference and transformers-neuronx pad heads
  if (m.heads % cores != 0) return NeuronLayoutFault::heads;
  if (m.kv_heads % cores != 0 && cores % m.kv_heads != 0) return NeuronLayoutFault::kv_heads;
  return NeuronLayoutFault::none;
}

std::optional<std::string> neuron_layout_problem(const Accelerator& acc, const ModelSpec& m, int tp_chips, bool training) {
  const int cores = tp_chips * neuron_cores_per_chip(acc);
  switch (neuron_layout_fault(acc, m, tp_chips, training)) {
    case NeuronLayoutFault::none:
      return std::nullopt;
    case NeuronLayoutFault::group_size:
      return fmt::format("tp {} {} chips = {} NeuronCores, not a group size the Neuron stack runs on {} ({} NeuronCores)", tp_chips, acc.name,
                         cores, acc.name, fmt::join(neuron_tp_cores(acc), ", "));
    case NeuronLayoutFault::heads:
      return fmt::format("tp {} NeuronCores does not divide the model's {} attention heads (neuronx-distributed)", cores, m.heads);
    case NeuronLayoutFault::kv_heads:
      return fmt::format(
          "tp {} NeuronCores and the model's {} KV heads: neither divides the other (neuronx-distributed replicates KV heads only by a whole factor)",
          cores, m.kv_heads);
  }
  return std::nullopt;
}

}  // namespace gpuadvisor
