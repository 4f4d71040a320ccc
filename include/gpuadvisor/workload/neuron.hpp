// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
// The Neuron stack's layout rules (docs/methodology.md §Neuron rules): the
// catalog counts Inferentia2/Trainium/Trainium2 chips as accelerators, while
// the Neuron stack shards over NeuronCores, and only some group sizes run.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/workload/model.hpp"

namespace gpuadvisor {

// NeuronCores per chip as the Neuron stack ranks them: 2 on Inferentia2 and
// Trainium, 4 logical cores on Trainium2 at the default LNC=2; 0 for non-Neuron.
int neuron_cores_per_chip(const Accelerator& acc);
// The ranks a tensor-parallel group of `tp_chips` accelerators shards over:
// its NeuronCores on Neuron (tp x neuron_cores_per_chip), its GPUs otherwise.
int tensor_parallel_ranks(const Accelerator& acc, int tp_chips);

// Whether the Neuron runtime runs a small collective (below 1 MB, as a decode
// step's all-reduce) as Mesh, in a fixed number of steps whatever the ranks,
// rather than as a ring whose latency grows by one hop per rank: on
// Trainium2's 2D torus a rank writes to any other chip through inter-chip
// routing (Neuron runtime, "Intra-node Collective Communications": Mesh below
// 1 MB, RDH 1-56 MB, KangaRing above, Ring only as the fallback; per-hop
// latency 1-2 us). Inferentia2 and Trainium keep the ring.
bool neuron_small_collectives_mesh(const Accelerator& acc);

// Tensor-parallel sizes, in NeuronCores, that the Neuron stack runs on this
// accelerator: Trainium {1, 2, 8, 16, 32} (NxD; "1, 2, 8, 16 or a multiple of
// 32"), Inferentia2 {1, 2, 4, 8, 12, 24} (NxD Inference, transformers-neuronx),
// Trainium2 {1, 2, 4, 8, 16, 32, 64} (LNC=2). Empty for non-Neuron accelerators.
const std::vector<int>& neuron_tp_cores(const Accelerator& acc);

// Why a tensor-parallel size of `tp_chips` chips cannot run, or empty:
// its NeuronCore count must be a supported group size, and for training the
// attention heads must divide by it and the KV heads divide it or be divided
// by it (neuronx-distributed; inference pads heads).
std::optional<std::string> neuron_layout_problem(const Accelerator& acc, const ModelSpec& m, int tp_chips, bool training);
// The same rule without its message, for the layout search's inner loop.
enum class NeuronLayoutFault { none, group_size, heads, kv_heads };
NeuronLayoutFault neuron_layout_fault(const Accelerator& acc, const ModelSpec& m, int tp_chips, bool training);

}  // namespace gpuadvisor
