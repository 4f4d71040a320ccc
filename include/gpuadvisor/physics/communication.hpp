// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// Collective communication times (docs/methodology.md §Communication): the
// bandwidth term of ring algorithms plus a per-call latency.
#pragma once
#include "gpuadvisor/catalog/catalog.hpp"

namespace gpuadvisor {

inline constexpr double kCollectiveLatencyIntraS = 10e-6;  // per collective inside a node
inline constexpr double kCollectiveLatencyInterS = 30e-6;  // per collective across EFA/Ethernet
inline constexpr double kPcieFallbackGbPerS = 16;          // when a link figure is unknown

// Achievable per-accelerator bandwidth (GB/s, one direction) between the
// accelerators of one instance: half the vendor's bidirectional link figure
// times the link efficiency.
double intra_node_gb_per_s(const Accelerator& acc);
// Latency of one small all-reduce inside an instance as serving engines run it:
// the catalog's all_reduce_latency_us, else 10 us over NVLink/NeuronLink and
// 4x that over PCIe.
double serving_all_reduce_latency_s(const Accelerator& acc);
// The same over `ranks` ranks. On Neuron the collectives run as rings over the
// NeuronCores (Neuron runtime: intra-node Ring/KangaRing, one hop per step), so
// the latency grows with the ranks: the catalog's figure is the latency at
// kNeuronLatencyReferenceRanks and scales as (ranks - 1) / 7. NVLink/NVSwitch
// and PCIe GPUs keep one latency (NCCL's low-latency one-shot kernels).
double serving_all_reduce_latency_s(const Accelerator& acc, int ranks);
inline constexpr int kNeuronLatencyReferenceRanks = 8;

// Achievable bandwidth (GB/s) that one collective group gets between
// instances when `members_per_node` of its ranks sit on each instance: NCCL
// spreads a group's rings over the NICs, so the group gets its members' share
// of the instance's network (all of it when every accelerator of the instance
// is in the group), times the link efficiency.
double inter_node_gb_per_s(const Instance& instance, const Accelerator& acc, int members_per_node = 1);
// The same for a ring collective (all-reduce, reduce-scatter, all-gather) whose
// group spans NVLink domains: each ring leaves a domain once, so the group gets
// its members' share of the whole domain's network (a GB200/GB300 NVL72 rack is
// 18 instances), at most the NVLink bandwidth its hops inside the domain cross.
// On an instance that is its own NVLink domain this is inter_node_gb_per_s.
double ring_across_domains_gb_per_s(const Instance& instance, const Accelerator& acc, int members_per_domain);

// Ring all-reduce of `bytes` per rank over `ranks` ranks: 2 (n-1)/n bytes / bw.
double all_reduce_s(double bytes, int ranks, double gb_per_s, double latency_s);
// Reduce-scatter or all-gather: (n-1)/n bytes / bw.
double all_gather_s(double bytes, int ranks, double gb_per_s, double latency_s);
// All-to-all where each rank sends `bytes` in total: (n-1)/n bytes / bw.
double all_to_all_s(double bytes, int ranks, double gb_per_s, double latency_s);

}  // namespace gpuadvisor
