// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
// Disaggregated serving (docs/methodology.md §Disaggregated prefill and
// decode): prompts prefilled on one pool of replicas, their KV cache sent over
// the network to a second pool that only decodes, as vLLM's NixlConnector,
// SGLang's --disaggregation-mode, TensorRT-LLM's disaggregated serving and
// NVIDIA Dynamo run it. Sized analytically at the target utilisation and shown
// beside the pick; not ranked with the simulated services.
#pragma once
#include <optional>
#include <string>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/search/search.hpp"

namespace gpuadvisor {

struct DisaggregatedPool {
  ServingLayout layout;
  int replicas = 0;
  int instances = 0;
  double requests_per_second_per_replica = 0;  // the pool's capacity per replica
};

struct DisaggregatedService {
  const Instance* instance = nullptr;
  const Accelerator* accelerator = nullptr;
  DisaggregatedPool prefill, decode;
  int decode_batch = 0;          // sequences in flight per decode replica at its capacity
  double ttft_s = 0;             // prefill of the mean prompt alone + the KV transfer + one decode step (no queue)
  double kv_transfer_s = 0;      // the mean prompt's KV cache over the instance's network
  double tpot_s = 0;             // decode step at decode_batch, no prefill in it
  std::optional<double> usd_per_hour;  // both pools, ranked pricing
  int instances() const { return prefill.instances + decode.instances; }
};

// The cheapest disaggregated service for the load on one instance type (EFA
// types only: the KV cache crosses instances), each pool at its own best
// layout among those tried at one instance (tensor parallel at every size, and
// the MoE layouts): empty without a load or where no layout meets the targets.
std::optional<DisaggregatedService> disaggregated_service(const ModelSpec& m, const InferenceWorkload& w, const Instance& inst,
                                                          const Accelerator& acc, const RecommendRequest& r);

}  // namespace gpuadvisor
