// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/communication.hpp"

#include "gpuadvisor/workload/neuron.hpp"

#include <algorithm>

namespace gpuadvisor {

double intra_node_gb_per_s(const Accelerator& acc) {
  const double link = acc.link_gb_per_s.value_or(kPcieFallbackGbPerS * 2);
  return link / 2 * acc.efficiency.link_fraction;
}

double serving_all_reduce_latency_s(const Accelerator& acc) {
  if (acc.efficiency.all_reduce_latency_us > 0) return acc.efficiency.all_reduce_latency_us * 1e-6;
  return acc.link_kind == "pcie" ? 4 * kCollectiveLatencyIntraS : kCollectiveLatencyIntraS;
}

double serving_all_reduce_latency_s(const Accelerator& acc, int ranks) {
  const double at_reference = serving_all_reduce_latency_s(acc);
  if (!acc.is_neuron() || neuron_small_collectives_mesh(acc)) return at_reference;
  return at_reference * (ranks - 1) / (kNeuronLatencyReferenceRanks - 1);
}

double inter_node_gb_per_s(const Instance& instance, const Accelerator& acc, int members_per_node) {
  const int members = std::clamp(members_per_node, 1, instance.accelerator_count);
  const double share = instance.network_gbps / 8.0 * members / instance.accelerator_count;
  return share * acc.efficiency.link_fraction;
}

double ring_across_domains_gb_per_s(const Instance& instance, const Accelerator& acc, int members_per_domain) {
  const int members = std::clamp(members_per_domain, 1, instance.nvlink_domain());
  const double share = instance.network_gbps / 8.0 / instance.accelerator_count * members * acc.efficiency.link_fraction;
  return instance.nvlink_domain() > instance.accelerator_count ? std::min(share, intra_node_gb_per_s(acc)) : share;
}

double all_reduce_s(double bytes, int ranks, double gb_per_s, double latency_s) {
  if (ranks <= 1 || bytes <= 0) return 0;
  return 2.0 * (ranks - 1) / ranks * bytes / (gb_per_s * 1e9) + 2.0 * (ranks - 1) * latency_s;
}

double all_gather_s(double bytes, int ranks, double gb_per_s, double latency_s) {
  if (ranks <= 1 || bytes <= 0) return 0;
  return double(ranks - 1) / ranks * bytes / (gb_per_s * 1e9) + (ranks - 1) * latency_s;
}

double all_to_all_s(double bytes, int ranks, double gb_per_s, double latency_s) {
  if (ranks <= 1 || bytes <= 0) return 0;
  return double(ranks - 1) / ranks * bytes / (gb_per_s * 1e9) + latency_s;
}

}  // namespace gpuadvisor
