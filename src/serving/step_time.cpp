// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
#include "gpuadvisor/serving/step_time.hpp"

#include <algorithm>

namespace gpuadvisor {

StepTimer::StepTimer(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e)
    : model_(m), workload_(w), cluster_(c), estimate_(e) {}

const DecodeCost& StepTimer::decode(int batch) {
  if (batch >= static_cast<int>(decode_.size())) {
    decode_.resize(batch + 1);
    decode_known_.resize(batch + 1, false);
  }
  if (!decode_known_[batch]) {
    decode_[batch] = decode_cost(model_, workload_, cluster_, estimate_, batch);
    decode_known_[batch] = true;
  }
  return decode_[batch];
}

const PrefillCost& StepTimer::prefill(int tokens) {
  auto it = prefill_.find(tokens);
  if (it == prefill_.end()) it = prefill_.emplace(tokens, prefill_cost(model_, workload_, cluster_, estimate_, tokens)).first;
  return it->second;
}

// A step with no decode sequences still runs every layer's kernels and
// all-reduces (the batch-0 decode cost's fixed parts); a prefill's all-reduce
// latency is counted once, in those.
double StepTimer::step_s(const StepComposition& s) {
  const DecodeStep& d = decode(s.decode_sequences).base;
  const DecodeCost& dc = decode(s.decode_sequences);
  double weights_s = d.weights_read_s;
  double memory_s = dc.kv_read_s_per_token * s.decode_attended_tokens + d.moe_permute_s;
  double compute_s = d.compute_s + dc.attention_s_per_token * s.decode_attended_tokens;
  double comm_s = d.tensor_parallel_s + d.expert_parallel_s + d.pipeline_p2p_s;
  double launch_s = d.launch_s;
  if (s.prefill_tokens > 0) {
    const PrefillCost& p = prefill(s.prefill_tokens);
    const DecodeStep& bare = decode(0).base;
    weights_s = std::max(weights_s, p.weights_read_s);
    compute_s += p.matmul_s + p.attention_s_per_token_context * s.prefill_attended_pairs;
    comm_s += std::max(0.0, p.comm_s - bare.tensor_parallel_s - bare.pipeline_p2p_s);
    // The chunk's tokens ride the decodes' dispatch and combine: their latency once.
    comm_s += p.expert_parallel_s - (s.decode_sequences > 0 ? p.expert_parallel_latency_s : 0);
    launch_s = std::max(launch_s, p.launch_s);
  }
  const double draft_s = s.decode_sequences > 0 ? d.draft_s : 0;  // speculative decoding's drafter, before the decodes' verification
  const double accelerator_s =
      std::max(weights_s + memory_s, compute_s) + d.kernel_floor_s + d.moe_routing_s + d.sequence_s + d.dequant_s + comm_s + draft_s;
  return std::max(accelerator_s, launch_s) + d.host_s;
}

}  // namespace gpuadvisor
