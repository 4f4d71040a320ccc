// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
// The time of one engine step from its composition (docs/methodology.md
// §Serving under load): the decode sequences it advances by a token, the
// prompt tokens it prefills, and the context each attends. The roofline terms
// come from physics (decode_cost, prefill_cost), computed once per batch size
// and chunk size and reused for every step.
#pragma once
#include <unordered_map>
#include <vector>

#include "gpuadvisor/physics/inference.hpp"

namespace gpuadvisor {

struct StepComposition {
  int decode_sequences = 0;
  double decode_attended_tokens = 0;   // summed over the decode sequences: the KV each reads
  int prefill_tokens = 0;              // prompt tokens computed in this step, all chunks
  double prefill_attended_pairs = 0;   // summed over those tokens: the earlier tokens each attends
};

class StepTimer {
 public:
  StepTimer(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e);
  // One step: the accelerator streams the weights once (max with the KV read
  // against all matrix and attention math), then the kernels' fixed time,
  // the communication of decode and prefill tokens and the engine's host time.
  double step_s(const StepComposition& s);

 private:
  const DecodeCost& decode(int batch);
  const PrefillCost& prefill(int tokens);
  const ModelSpec& model_;
  const InferenceWorkload& workload_;
  Cluster cluster_;
  const InferenceEstimate& estimate_;
  std::vector<DecodeCost> decode_;
  std::vector<bool> decode_known_;
  std::unordered_map<int, PrefillCost> prefill_;
};

}  // namespace gpuadvisor
