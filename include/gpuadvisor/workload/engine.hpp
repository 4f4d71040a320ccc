// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
// Serving engines (docs/methodology.md §Serving engines): what differs between
// vLLM, SGLang, TensorRT-LLM, TGI, transformers and the Neuron stack on the
// same hardware. Each profile (data/engines.json) carries its sources; the
// hardware's bandwidth and compute fractions are shared by every engine.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

// How an engine schedules prompts beside running sequences.
enum class PrefillScheduling {
  chunked,   // prompt tokens share a token budget with the decode batch: weights read once per chunk
  separate,  // each prefill is its own forward pass that pauses the decode batch
};

struct EngineProfile {
  std::string name;      // vllm, sglang, trtllm, tgi, tgi-1, hf, neuron, gpt-fast
  std::string title;     // "vLLM V1 (0.14 and later: async scheduling), default server settings"
  std::string software;  // accelerators it runs on: "cuda" or "neuron"
  // Host time per decode step in series with the accelerator (scheduling,
  // sampling, detokenising that no overlap scheduler hides), s.
  double step_overhead_s = 0;
  // Host time per sequence in flight per decode step, in series, s.
  double sequence_overhead_s = 0;
  // Host time to launch one layer's kernels, overlapped with the accelerator
  // (the step takes the longer of the two; 0 with CUDA or compiled graphs), s.
  double launch_s_per_layer = 0;
  // Prefill run eagerly (no CUDA graph: SGLang's default), each of a
  // layer's kernels launched from Python: the step takes at least this per
  // kernel (decode_kernels_per_layer of them a layer), overlapped with the
  // device's work (docs/methodology.md §Prefill).
  double prefill_launch_s_per_kernel = 0;
  PrefillScheduling prefill = PrefillScheduling::chunked;
  // Chunked prefill whose steps carry no decode tokens: a step is all prompt
  // chunks or all decodes, prompts first, so the running sequences wait out
  // each prefill step (SGLang: --enable-mixed-chunk is off by default).
  bool prefill_pauses_decode = false;
  // Runs on Ampere and newer GPUs only (TensorRT-LLM's supported hardware):
  // refused on an accelerator without bf16 tensor cores (V100, T4).
  bool ampere_or_newer = false;
  // Token budget of one chunked step (vLLM's max_num_batched_tokens, SGLang's
  // chunked_prefill_size, TensorRT-LLM's max_num_tokens), or a separate
  // prefill's: `prefill_chunk_tokens`, or the last of `prefill_chunk_tiers`
  // whose from_gib the accelerator's memory reaches (engine_prefill_chunk_tokens).
  int prefill_chunk_tokens = 2048;
  struct MemoryTier {
    double from_gib = 0;
    int tokens = 0;
  };
  std::vector<MemoryTier> prefill_chunk_tiers;      // ascending from_gib
  std::vector<std::string> prefill_chunk_excludes;  // accelerators kept at the default (vLLM: A100)
  // Compiled prefill graphs: the share of the accelerator's compute fraction
  // a prefill reaches at any prompt length (0: the GPU ramp with width and tokens).
  double prefill_compute_factor = 0;
  // Separate prefills: the decode steps over which arriving prompts gather
  // into one prefill pass (TGI's max_waiting_tokens); 0: one prompt per pass.
  int prefill_batching_steps = 0;
  // TGI's router (waiting_served_ratio): while a batch decodes, waiting prompts
  // join it before prefill_batching_steps run out only if at least this many
  // per running sequence wait and fit the prefill; 0: no such hold (the
  // simulator's EngineLimits::join_ratio).
  double waiting_served_ratio = 0;
  // Memory the engine leaves unallocated: a share of the whole memory (vLLM's
  // gpu_memory_utilization) or of what is left after the weights (TensorRT-LLM's
  // free_gpu_memory_fraction).
  double free_fraction = 0;
  bool free_fraction_of_remaining = false;
  double cuda_graph_pool_gb = 0;
  // Weight-only int8/int4 decode: vector operations per weight not hidden
  // behind the memory stream (unpack, convert, scale).
  double dequant_ops_per_weight = 0;
  // Pre-Marlin weight-only kernels (GPTQ "cuda-old", AutoGPTQ) unpack the
  // weights again for every sequence of the batch: the dequantisation grows
  // with the batch instead of once per step.
  bool dequant_per_sequence = false;
  bool continuous_batching = true;
  // Admission reserves each request's whole KV (prompt + every output token)
  // before it starts, so no running request is ever paused (TensorRT-LLM's
  // default GUARANTEED_NO_EVICT); false: the KV actually held, on average
  // prompt + half the output (vLLM and SGLang admit on what is cached and
  // preempt if memory runs out).
  bool reserves_full_kv = false;
  // The KV cache keeps sliding-window (and chunked) layers at full length:
  // every layer in one full-context pool, the window applied only as a mask
  // (TensorRT-LLM's PyTorch backend unless max_attention_window is set by
  // hand). Decode still reads only the window; false: those layers cache the
  // window alone (vLLM's hybrid allocator, SGLang's SWA pool).
  bool full_length_local_kv = false;
  // The engine serves fp8 and fp4 weights from checkpoints that also hold the
  // KV cache in fp8 (TensorRT-LLM: NVIDIA's Model Optimizer quantises the KV
  // cache to fp8 unless told otherwise), so without --kv-cache the KV is fp8
  // on accelerators with fp8 math; false: 16-bit KV unless asked.
  bool quantised_checkpoint_fp8_kv = false;
  // An fp8 KV cache only on accelerators with fp8 math (TensorRT-LLM: no FP8
  // on Ampere); --kv-cache fp8 elsewhere is refused, not estimated.
  bool fp8_kv_needs_fp8_math = false;
  // Serves MoE models with expert parallelism and data-parallel attention
  // (vLLM --enable-expert-parallel with --data-parallel-size, SGLang
  // --enable-dp-attention, TensorRT-LLM enable_attention_dp), §MoE serving layouts.
  bool expert_parallel = false;
  // Reuses the KV cache of a prompt prefix other requests computed (vLLM's
  // automatic prefix caching, SGLang's radix cache, TensorRT-LLM's block reuse,
  // TGI 3's prefix cache): --prefix-share applies only where it is set.
  bool prefix_cache = false;
  // Whether the server chunks its prefills without being asked; a launch file
  // of a chunked profile whose server does not passes the engine's flag (vLLM
  // V0's --enable-chunked-prefill: without it a token budget below the model
  // length is refused at start).
  bool chunked_prefill_by_default = true;
  // Attention data parallel over fewer ranks than the replica's, each rank's
  // attention tensor parallel (vLLM: "Data Parallel attention can be combined
  // with Tensor Parallel attention"); SGLang's dp size equals its tp size and
  // TensorRT-LLM's enable_attention_dp runs attention at TP1.
  bool partial_attention_dp = false;
  // Sequences the scheduler runs at once by default (vLLM's max_num_seqs):
  // `max_sequences`, or `max_sequences_large` on accelerators with at least
  // `large_from_gib` of memory whose name contains none of `large_excludes`
  // (vLLM keeps A100 at the small default). 0: kMaxServingBatch.
  int max_sequences = 0;
  int max_sequences_large = 0;
  double large_from_gib = 0;
  std::vector<std::string> large_excludes;
  std::vector<WeightFormat> weights;      // formats it serves
  std::vector<WeightFormat> weight_only;  // of those, the ones it also runs dequantised where the accelerator lacks their math
  std::vector<std::string> notes;     // each field's source, as "field: source"
  // Earlier releases whose figures differ (engines.json "releases", ascending):
  // a release before `before` runs with this title and host time per step
  // (vLLM before 0.14 schedules in series with the model).
  struct Release {
    std::vector<int> before;  // 0.14 as {0, 14}
    std::string title;
    double step_overhead_s = 0;
    std::optional<bool> prefix_cache;  // where the release differs (vLLM V0: automatic prefix caching off by default)
    std::optional<int> max_sequences;  // where it differs: one limit on every accelerator (vLLM V0: 256)
    std::optional<bool> chunked_prefill_by_default;  // where it differs (vLLM V0: only when asked, at 32K of context and below)
  };
  std::vector<Release> releases;
  // The profile each release runs with, releases[i]'s at [i], made when the
  // profile is read (engine_release hands them out).
  std::vector<EngineProfile> release_profiles;
  // Set on those: an earlier release, which every output names.
  bool earlier_release = false;
};

// The bundled profiles (data/engines.json), in file order.
const std::vector<EngineProfile>& engine_profiles();
std::string_view embedded_engines_text();
// Parses an engines file; InputError names the engine and field.
std::vector<EngineProfile> read_engines(const std::string& origin, const std::string& text);

const EngineProfile* find_engine(std::string_view name);
// The profile of one release of an engine (docs/methodology.md §Serving
// engines): `version` ("0.13", "v0.20.1") before one of the profile's
// `releases` takes that release's figures, a later one the profile's own.
// InputError, starting with `what`, for text that is not a release number or
// an engine whose figures do not change with its release.
const EngineProfile& engine_release(const EngineProfile& e, std::string_view version, std::string_view what);
// The release in free text such as a case's engine_version, as written
// ("0.20.1+cu128", for engine_release to read strictly): where the text names
// the engine (`name`, lower case), the tag or pin in the name's own word
// ("vllm/vllm-openai:v0.7.3", "vllm==0.6.0") or the word after it ("CUDA
// 12.1, vLLM 0.8.5": 0.8.5); where it does not, its first word if that is a
// number ("0.7.3"); nullopt otherwise ("vLLM serving Mixtral-8x7B-v0.1": no
// release said).
std::optional<std::string> release_number_in(std::string_view text, std::string_view name);
// "vllm, sglang, trtllm, ..." for messages and --help.
std::string engine_names();
// The bundled engines that have a property, "vllm, sglang, trtllm, tgi", for
// messages that name the engines to choose instead; with `software`
// ("cuda", "neuron"), only those that run on it.
std::string engine_names_where(bool (*has)(const EngineProfile&), std::string_view software = {});
bool has_prefix_cache(const EngineProfile& e);
bool prefills_in_chunks(const EngineProfile& e);
bool batches_continuously(const EngineProfile& e);
// --prefix-share on an engine that cannot reuse a prefix: what is wrong, and
// the engines that can.
// `software`: only engines that run there are named (none: say so).
std::optional<std::string> prefix_share_problem(const EngineProfile& e, std::string_view software = {});

// The engine a replica runs on this accelerator: the chosen one, or the
// default (vllm on CUDA, neuron on Neuron).
const EngineProfile& engine_for(const Accelerator& acc, const EngineProfile* chosen);
inline constexpr std::string_view kDefaultCudaEngine = "vllm";
inline constexpr std::string_view kDefaultNeuronEngine = "neuron";

// The most sequences the engine runs at once on this accelerator by default
// (EngineProfile::max_sequences), else `fallback`.
int engine_max_sequences(const EngineProfile& e, const Accelerator& acc, int fallback);

// The engine's default token budget per step on this accelerator
// (EngineProfile::prefill_chunk_tokens and its memory tiers).
int engine_prefill_chunk_tokens(const EngineProfile& e, const Accelerator& acc);
// The token budget per step a workload runs at: its --max-batched-tokens
// (InferenceWorkload::max_batched_tokens), else the profile's default.
int step_token_budget(const EngineProfile& e, const Accelerator& acc, const InferenceWorkload& w);

// Why this engine cannot serve these weights on this accelerator, or empty.
std::optional<std::string> engine_problem(const EngineProfile& e, const Accelerator& acc, WeightFormat weights);

}  // namespace gpuadvisor
