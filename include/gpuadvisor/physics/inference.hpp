// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// Inference physics for one serving configuration (docs/methodology.md
// §Inference): memory per accelerator and the largest batch, prefill and
// decode times on the roofline, and the batch that maximises throughput under
// the latency targets.
#pragma once
#include <optional>
#include <string>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/workload/engine.hpp"
#include "gpuadvisor/physics/estimate.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

// Bytes per weight, group scales included (docs/methodology.md §Inference memory).
inline constexpr double kBytesInt4 = 0.5 + 2.0 / 128 + 0.5 / 128;  // GPTQ/AWQ: fp16 scale + 4-bit zero per 128 weights
inline constexpr double kBytesFp4 = 0.5 + 1.0 / 16;                 // NVFP4: one fp8 scale per 16 weights
inline constexpr int kMaxServingBatch = 1024;     // scheduler limit on sequences in flight (unless --concurrency or the engine's own, max_sequences)
// Decode kernels run one after another even inside CUDA graphs
// (docs/research/moe-kernels.md §2.1): 9 kernels per decoder layer (fused-add
// RMSNorm, QKV, RoPE with the KV write, attention, O-proj, fused-add RMSNorm,
// gate-up, SiLU-and-mul, down; the research's 8-10), each with about 3 us of
// fixed time (launch gap, ramp-up and tail) on top of its bytes and FLOPs
// (B200 decode traces: the smallest kernels take 2.1 us, small GEMMs 4-9 us),
// in series with the weight and KV streaming; each MoE layer's routing (router top-k, align and
// permute, finalize) adds 28 us above its weight reads (vLLM/SGLang fused-MoE
// benchmarks captured in CUDA graphs: 29.5 us on H100 with 2.3 us of weights,
// 31.7 us on H200 with 3.9 us).
inline constexpr double kDecodeKernelsPerLayer = 9;
// Multi-head latent attention (DeepSeek-V2/V3) runs 4 more kernels in series
// per decode layer than a QKV projection does: the q_a RMSNorm (the kv_a one
// overlaps on a second stream), the q_b projection and the two absorbed
// batched products (q_nope x W_kc before attention, the output x W_vc after),
// as SGLang's DeepseekV2AttentionMLA.forward_absorb_prepare/_core issue them
// (docs/research/moe-kernels.md §2.1).
inline constexpr double kMlaExtraDecodeKernels = 4;
inline constexpr double kKernelMinS = 3e-6;
// One expert-parallel dispatch or combine inside an instance, before its bytes
// (§MoE serving layouts): TensorRT-LLM's one-sided NVLink all-to-all at EP8
// takes 18.9 us to dispatch and 31.0 us to combine one token per rank
// (DeepSeek-V3 shapes, GB200; tech blog 18), flat to 32 tokens; DeepEP's
// low-latency kernels over NVLink take 37 and 59 us at 128 tokens per rank
// (H20, DeepEP PR #173), most of it their bytes. The mean of the two floors.
inline constexpr double kExpertAllToAllLatencyS = 25e-6;
inline constexpr double kMoeRoutingPerLayerS = 28e-6;
// Neuron decode: each sequence in flight costs the device a time per layer,
// whatever its context (transformers-neuronx without a server: TPOT grows
// from 6.5 ms at batch 1 to 10.45 ms at batch 8 on inf2.48xlarge, about 16 us
// per sequence per layer; docs/research/decode-overheads.md). This is the
// prior; calibration fits each Neuron chip's figure (efficiency.sequence_layer_us).
inline constexpr double kNeuronSequenceLayerS = 20e-6;
// Kernels one decode layer runs in series on a GPU: kDecodeKernelsPerLayer,
// plus kMlaExtraDecodeKernels for multi-head latent attention.
double decode_kernels_per_layer(const ModelSpec& m);
// The fitted figure, else the prior, on Neuron; 0 on GPUs, s.
double decode_sequence_layer_s(const Accelerator& acc);
// KV-cache tokens one sequence holds in memory: prompt + half its generated
// tokens on average over its life, or prompt + all of them where the engine
// reserves a request's whole KV at admission (EngineProfile::reserves_full_kv).
double kv_tokens_held(const EngineProfile& engine, const InferenceWorkload& w);
// Of those, the shared prompt prefix (--prefix-share) an engine with a prefix
// cache holds once for every sequence of an attention rank, as the simulator
// does (src/serving/scheduler.cpp): at most the prompt less one token; 0 where
// no prefix is shared or the engine has no prefix cache.
double kv_shared_prefix_tokens(const EngineProfile& engine, const InferenceWorkload& w);
// Tokens of KV a sequence of `tokens` keeps, averaged over the layers: the
// local (sliding-window, chunked) layers' window alone, or their full length
// where the engine keeps every layer at full context (full_length_local_kv).
double kv_cached_tokens(const ModelSpec& m, const EngineProfile& engine, double tokens);
// Neuron compiles its decode graph for a fixed batch and every step computes
// all of the graph's slots, filled or not (padding): the slots a step runs for
// `batch` sequences in flight are the compiled batch where one is set and
// larger (InferenceWorkload::compiled_batch), else the batch. GPUs: the batch.
int decode_slots(const Accelerator& acc, const InferenceWorkload& w, int batch);
// The compiled batch where it applies (a Neuron accelerator and one was set), else empty.
std::optional<int> compiled_batch_on(const Accelerator& acc, const InferenceWorkload& w);
// Runtime reserve of a serving replica per accelerator: the training reserve's
// fixed part, the share the engine leaves free (of the whole memory or of what
// the weights leave) and, on CUDA, its graph pool (data/engines.json).
double serving_reserve_gb(const Accelerator& acc, const EngineProfile& engine, double weights_gb);
inline constexpr double kHoursPerMonth = 720;     // a 30-day month
// Offline picks busy less than this are also priced as a batch job that runs
// only the hours a day its volume needs (the recommend pick's "batch" line).
inline constexpr double kBatchHoursNoteBelowUtilisation = 0.9;

double bytes_per_weight(WeightFormat f);

// Whether the serving stack pads attention heads to a multiple of the tensor-
// parallel size (Neuron does: Llama-2-7B runs at TP 24 on inf2.48xlarge).
bool pads_attention_heads(const Accelerator& acc);

// Precision the matrix math runs in for these weights on this accelerator,
// and whether the format is weight-only (dequantised before the math).
struct ServingPrecision {
  Precision compute = Precision::bf16;
  bool weight_only = false;
  Precision kv_cache = Precision::bf16;  // the KV cache's, serving_kv_cache
};
std::optional<ServingPrecision> serving_precision(const Accelerator& acc, WeightFormat weights);

// The KV cache's precision: --kv-cache if given, else the engine's default
// for the weights (docs/methodology.md §Precision): fp8 where the engine's
// quantised checkpoints hold it so (TensorRT-LLM's fp8 and fp4 weights) and
// the accelerator has fp8 math, else bf16.
Precision serving_kv_cache(const Accelerator& acc, const EngineProfile& engine, const InferenceWorkload& w);

// Why this accelerator cannot serve these weights at all, or empty.
std::optional<std::string> serving_accelerator_problem(const Accelerator& acc, const InferenceWorkload& w);

// All weight bytes of the model (embeddings stay 16-bit; the rest in `weights`).
double inference_weight_bytes(const ModelSpec& m, WeightFormat weights);

// KV-cache bytes per token on one tensor-parallel rank, all layers:
// 2 x layers x ceil(kv_heads / tp) x head_dim x bytes (GQA-aware; at least one
// KV head per rank), or layers x (kv_lora_rank + rope_dim) x bytes for MLA.
double kv_cache_bytes_per_token(const ModelSpec& m, Precision kv, int tp);

// A replica's layout (docs/methodology.md §MoE serving layouts). `tp` is the
// accelerators of one pipeline stage; an MoE model may run its attention data
// parallel over them (each rank serves its own sequences at tensor parallel
// tp / attention_dp) and its routed experts expert parallel (whole experts
// spread over `ep` = tp ranks, tokens dispatched to them and combined back)
// instead of slicing every matrix over tp.
struct ServingLayout {
  int tp = 1;            // accelerators per pipeline stage, inside one instance
  int pp = 1;            // pipeline stages, one instance each (tp is then the whole instance)
  int ep = 1;            // MoE: expert-parallel ranks (1: experts tensor-sliced over tp; else tp)
  int attention_dp = 1;  // MoE with ep = tp: attention data-parallel ranks (a divisor of tp)
  int accelerators() const { return tp * pp; }
  int attention_tp() const { return tp / attention_dp; }  // tensor parallel of attention and dense layers
  int expert_tp() const { return tp / ep; }              // tensor parallel of one routed expert
  // Tokens move between ranks for their experts (dispatch and combine
  // all-to-alls) only when each attention rank holds its own tokens: with
  // attention tensor parallel every rank holds every token, runs its own
  // experts on them, and one all-reduce combines the layer, as at TP.
  bool experts_all_to_all() const { return ep > 1 && attention_dp > 1; }
  bool operator==(const ServingLayout&) const = default;
};
// Routed experts of one MoE layer that the busiest of `ep` expert-parallel
// ranks holds among those `tokens` touch, uniform routing (E[max] of ep
// binomial counts); at ep 1 the layer's touched experts (docs/methodology.md
// §MoE serving layouts).
double busiest_rank_experts_touched(const ModelSpec& m, double tokens, int ep);
// Weight bytes one accelerator holds: the non-expert weights over the
// attention's tensor parallel, the routed experts over every rank of the stage.
double serving_weight_bytes_per_accelerator(const ModelSpec& m, WeightFormat f, const ServingLayout& l);
// KV-cache GB per cached token of ONE sequence on each accelerator of the
// attention rank that serves it, and the same averaged over the replica's
// accelerators (a sequence lives on one of attention_dp ranks).
double kv_gb_per_token_on_rank(const ModelSpec& m, Precision kv, const ServingLayout& l);
double kv_gb_per_token_averaged(const ModelSpec& m, Precision kv, const ServingLayout& l);
// What sets the most sequences a replica runs at once (InferenceEstimate::max_batch):
// the KV cache's memory, the engine's sequence limit, --concurrency,
// --max-batched-tokens' budget, or Neuron's compiled decode batch.
enum class BatchLimit { memory, engine_sequence_limit, concurrency, max_batched_tokens, compiled_batch };
std::string to_string(BatchLimit limit);  // the JSON token: "memory", "engine_sequence_limit", ...
struct SequenceCap {
  int sequences = 1;
  BatchLimit limit = BatchLimit::engine_sequence_limit;  // concurrency or max_batched_tokens where those set it
};
// Sequences a replica runs at once: --concurrency, else the engine's limit
// per scheduler (one scheduler per attention data-parallel rank) x attention_dp;
// with --max-batched-tokens at most budget / (1 + draft tokens) per scheduler.
SequenceCap replica_sequence_limit(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w, const ServingLayout& l);
// That limit's sequences, at most a compiled Neuron batch: the serving
// simulator's limit and the launch files' --max-num-seqs for a simulated row.
int replica_sequence_cap(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w, const ServingLayout& l);
// The waves a request's samples run in at a batch of `batch` sequences: more
// samples than the batch holds run one batch after another (docs/methodology.md
// §Decode step, request latency).
int sample_waves(const InferenceWorkload& w, int batch);
// Tokens a replica's step takes: the budget per scheduler (--max-batched-tokens, else the engine's) x attention_dp.
int replica_step_tokens(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w, const ServingLayout& l);

struct InferenceMemory {
  double weights_gb = 0;     // per accelerator
  double kv_cache_gb = 0;    // per accelerator at the chosen batch
  double kv_shared_prefix_gb = 0;  // of it, the shared prefix (--prefix-share), held once
  double workspace_gb = 0;   // prefill chunk activations and fp32 logits
  double reserve_gb = 0;     // serving_reserve_gb: 1 GB + the engine's free share + its CUDA-graph pool
  double resident_gb = 0;    // other state kept beside the replica (InferenceWorkload::resident_state_gb)
  double capacity_gb = 0;
  double total_gb() const { return weights_gb + kv_cache_gb + workspace_gb + reserve_gb + resident_gb; }
};

struct DecodeStep {
  double weights_read_s = 0;     // weight bytes / achievable bandwidth
  double kv_read_s = 0;          // KV bytes / achievable bandwidth
  double compute_s = 0;          // FLOPs / achievable compute
  double kernel_floor_s = 0;     // GPUs: layers x kernels per layer x each kernel's fixed time, in series with the bytes and FLOPs
  double moe_routing_s = 0;      // GPUs: MoE layers x the routing kernels' fixed time
  double moe_permute_s = 0;      // MoE: dispatch and combine copies of the activations (memory traffic)
  double sequence_s = 0;         // Neuron: sequences x layers x decode_sequence_layer_s
  double dequant_s = 0;          // weight-only int8/int4: unpacking and scaling on the vector units
  bool dequant_unknown = false;  // weight-only, but the accelerator's vector FLOP/s are not published (not counted)
  double tensor_parallel_s = 0;  // per-layer all-reduces
  double expert_parallel_s = 0;  // MoE with ep > 1: each MoE layer's dispatch and combine all-to-alls
  double pipeline_p2p_s = 0;
  double launch_s = 0;           // the engine's kernel launches, overlapped with the work above
  double host_s = 0;             // the engine's host time per step in series (scheduling, per-sequence work)
  double draft_s = 0;            // speculative decoding: the drafter's passes before the step (§Speculative decoding)
  double accelerator_s() const;  // max(weights + KV + MoE permute, compute) + kernels' fixed time + MoE routing + dequantisation + communication (all-reduces, all-to-alls, pipeline sends)
  double total_s() const;        // max(accelerator, launch) + host
  std::string bound() const;     // "memory bandwidth", "compute", "communication"
};

struct InferenceEstimate {
  const EngineProfile* engine = nullptr;  // the engine the replica runs (engine_for)
  ServingLayout layout;
  ServingPrecision precision;
  InferenceMemory memory;
  int max_batch = 0;                // sequences that fit in memory (0: not even one)
  int max_batch_by_memory = 0;      // of those, what the KV cache alone holds; above max_batch where the sequence limit binds
  BatchLimit max_batch_limit = BatchLimit::memory;  // what sets max_batch
  int batch = 0;                    // sequences in flight chosen
  DecodeStep step;                  // at `batch`
  double prefill_s = 0;             // mean prompt, alone
  double prefill_p95_s = 0;         // p95 prompt, alone
  double prefill_gpu_s_per_request = 0;  // under load (batched prefill; with a verifier, its scoring pass too)
  double ttft_s = 0;
  double tpot_s = 0;                // with prefill interference
  double latency_s = 0;             // ttft + (generated tokens per sequence - 1) x tpot (methodology §Continuous batching)
  double prefill_share = 0;         // fraction of replica time spent in prefill
  double requests_per_second = 0;   // capacity of one replica
  double output_tokens_per_second = 0;     // generated tokens/s of one replica (all samples, reasoning included)
  double visible_tokens_per_second = 0;    // visible output tokens/s of one replica
  double tokens_per_second_per_user = 0;   // 1 / tpot
  bool fits() const { return max_batch >= 1; }
};

// The pieces of one engine step whose composition changes from step to step
// (the serving simulator, src/serving/, composes every step from them;
// docs/methodology.md §Serving under load). Each is the roofline above, split
// into the part fixed for the step and the parts linear in its tokens.
struct DecodeCost {
  DecodeStep base;                    // `batch` sequences holding no context: weights, matrices, fixed times, communication, host
  double kv_read_s_per_token = 0;     // KV read per attended context token summed over the sequences
  double attention_s_per_token = 0;   // attention compute per attended context token summed over the sequences
};
DecodeCost decode_cost(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e, int batch);
struct PrefillCost {
  double matmul_s = 0;                        // the chunk's matrix math (tokens x 2 x parameters per token)
  double attention_s_per_token_context = 0;   // attention per token and attended earlier token
  double weights_read_s = 0;                  // every weight once
  double comm_s = 0;                          // tensor-parallel all-reduces and pipeline sends of the chunk's activations
  double expert_parallel_s = 0;               // ep > 1: the chunk's dispatch and combine all-to-alls, latency included
  double expert_parallel_latency_s = 0;       // their latency alone (a step with decodes pays it once, in theirs)
  double launch_s = 0;                        // kernel launches, overlapped
};
PrefillCost prefill_cost(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e, int tokens);

// Prompts a separate-prefill engine runs in one prefill pass at `batch`
// sequences in flight: those arriving over its prefill_batching_steps decode
// steps (batch x steps / generated tokens), within its prefill token budget
// and the batch; 1 for chunked engines and engines that prefill one at a time.
int prompts_per_prefill(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w, int batch);

// The most sequences TGI's router hold lets a saturated replica keep in flight
// (engines with waiting_served_ratio r and hold H steps; k prompts fit the
// prefill budget; S decode steps per sequence): prompts join whenever
// floor(r B) of them fit, so the batch reaches floor(k / r) + k, and beyond
// that k join every H steps, a steady batch of k S / H. No cap (INT_MAX)
// where the router does not hold. The analytic capacity's largest batch; the
// simulator holds prompts step by step instead (docs/methodology.md §Serving
// under load).
int router_batch_cap(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w);

// The achieved decode step and latencies of `batch` sequences in flight.
void evaluate_batch(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, InferenceEstimate& e, int batch);

// Time to first token when `sequences` prompts arrive together and are
// prefilled as one batch (static batching, as transformers-neuronx and offline
// benchmarks measure it): their prefill, then one decode step. With one
// sequence it is `ttft_s`.
double static_batch_ttft_s(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e, int sequences);

// Evaluates one layout: memory and the largest batch, then the batch that
// maximises throughput under the targets (or `fixed_batch`). `problem` says why
// it cannot meet them (with the best figure it reaches), empty if it can.
InferenceEstimate estimate_inference(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const ServingLayout& l,
                                     std::optional<int> fixed_batch, std::string* problem);

// Checks the layout against this instance and model; an explanation if invalid.
std::optional<std::string> serving_layout_problem(const ModelSpec& m, const Cluster& c, const ServingLayout& l);
// Why the engine cannot run this layout (no expert parallelism; attention data
// parallel over fewer ranks than tp where it runs attention at TP1 only), or empty.
std::optional<std::string> serving_engine_layout_problem(const EngineProfile& engine, const ServingLayout& l);

}  // namespace gpuadvisor
