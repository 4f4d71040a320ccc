// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
// The workload: what is trained, on how many tokens, in which precision, and
// the parallel layout a configuration runs with.
#pragma once
#include <algorithm>
#include <cmath>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/trace.hpp"

namespace gpuadvisor {

// Request lengths through a mean and a p95 (docs/methodology.md §Serving under
// load). Whole tokens, at least one each: a p95 of q puts 5% of the requests
// at q or more and the rest at one or more, so the mean is at least
// 0.95 + 0.05 q, and a p95 above 20 x mean - 19 describes no set of requests.
double most_p95_length(double mean_tokens);
// The simulator draws such lengths lognormal; no lognormal of a given mean
// has a p95 above mean x exp(z95^2 / 2), about 3.87 x the mean.
constexpr double kStandardNormalP95 = 1.6448536269514722;
double widest_lognormal_p95(double mean_tokens);

enum class Task { pretrain, finetune, lora, qlora };
std::string_view to_string(Task t);
std::optional<Task> task_from_string(std::string_view s);
inline bool is_adapter_task(Task t) { return t == Task::lora || t == Task::qlora; }

enum class Recompute { none, selective, full };
std::string_view to_string(Recompute r);
std::optional<Recompute> recompute_from_string(std::string_view s);

enum class LoraTargets { attention, attention_mlp };
std::string_view to_string(LoraTargets t);
std::optional<LoraTargets> lora_targets_from_string(std::string_view s);

struct FrameworkProfile;  // framework.hpp

struct TrainingWorkload {
  Task task = Task::pretrain;
  double tokens = 0;  // tokens per epoch
  double epochs = 1;
  int seq_len = 0;
  int global_batch = 0;  // sequences per optimizer step
  Precision precision = Precision::bf16;
  int lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::attention_mlp;
  bool flash_attention = true;
  const FrameworkProfile* framework = nullptr;  // --framework; null: the default on each accelerator (framework_for)
  std::vector<std::string> assumptions;  // defaults that were applied

  double total_tokens() const { return tokens * epochs; }
  double tokens_per_step() const { return double(global_batch) * seq_len; }
  double steps() const;  // optimizer steps, rounded up
};

// User choices; empty optionals take documented defaults (docs/methodology.md §Defaults).
struct WorkloadRequest {
  Task task = Task::pretrain;
  std::optional<double> tokens;
  std::optional<double> epochs;
  std::optional<int> seq_len;
  std::optional<int> global_batch;
  Precision precision = Precision::bf16;
  int lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::attention_mlp;
  bool flash_attention = true;
  const FrameworkProfile* framework = nullptr;
};

inline constexpr double kChinchillaTokensPerParam = 20;
inline constexpr double kDefaultFinetuneTokens = 100e6;
inline constexpr double kMaxTokens = 1e17;  // training tokens per epoch: 20 per parameter of a 5,000T model

TrainingWorkload make_workload(const WorkloadRequest& request, const ModelSpec& model);

// Trainable LoRA parameters: rank * (d_in + d_out) for every targeted matrix
// of every layer (every expert's MLP for MoE models).
double lora_adapter_params(const ModelSpec& model, int rank, LoraTargets targets);

// ---------------------------------------------------------------------------
// Inference (serving) workloads (docs/methodology.md §Inference).

// How the weights are stored. bf16/fp8/fp4 run their matrix math in that
// precision where the accelerator has it; int8/int4 are weight-only formats
// (dequantised to 16-bit for the math), as are fp8/fp4 on accelerators
// without fp8/fp4 tensor throughput.
enum class WeightFormat { bf16, fp8, int8, int4, fp4 };
std::string_view to_string(WeightFormat f);
std::optional<WeightFormat> weight_format_from_string(std::string_view s);

enum class ServingMode { online, offline };
std::string_view to_string(ServingMode m);
std::optional<ServingMode> serving_mode_from_string(std::string_view s);

// Replicas run at most this busy: headroom for bursts and the queueing a
// replica's continuous batch sees near saturation.
inline constexpr double kDefaultTargetUtilisation = 0.8;
// The percentile of the simulated latencies the targets bind at
// (--slo-percentile): 50, 90 or 99, or 0 for the mean.
inline constexpr int kDefaultSloPercentile = 90;


struct EngineProfile;  // engine.hpp

// --speculative: speculative decoding (docs/methodology.md §Speculative
// decoding). Each decode step verifies `draft_tokens` proposed tokens per
// sequence in one forward pass of the target, after the drafter proposed them.
struct SpeculativeDecoding {
  // "mtp": a draft head of one decoder layer and the output head on the target
  // (DeepSeek-V3's multi-token prediction module, EAGLE); "ngram": prompt
  // lookup, proposals copied from the context at no model cost.
  std::string drafter;
  int draft_tokens = 0;   // K: proposed per sequence and step
  double acceptance = 0;  // each proposal is accepted with this probability, given the ones before it were
  // Tokens a sequence emits per step on average: (1 - a^(K+1)) / (1 - a)
  // (Leviathan et al. 2023, eq. 1): the accepted run of proposals plus the
  // target's own next token.
  double tokens_per_step() const;
};
// "mtp:3:0.7": the drafter, the draft tokens (1-16) and the acceptance rate
// (0-0.99, or a percentage); InputError naming `flag` otherwise.
SpeculativeDecoding parse_speculative(std::string_view text, std::string_view flag);
// "mtp:3:0.7" again, from the parsed form.
std::string speculative_text(const SpeculativeDecoding& s);

// The loads a service may be asked for (--requests-per-second, a case's
// requests_per_second): one request in about 30 years to a billion a second;
// beyond either a figure is a typo, not a service.
inline constexpr double kLeastRequestsPerSecond = 1e-9;
inline constexpr double kMostRequestsPerSecond = 1e9;

struct InferenceWorkload {
  double prompt_tokens = 0;         // mean per request
  double prompt_tokens_p95 = 0;     // equals the mean when no distribution was given
  double output_tokens = 0;         // visible output per request (mean)
  double output_tokens_p95 = 0;
  double reasoning_tokens = 0;      // hidden "thinking" tokens per sample
  int samples = 1;                  // best-of-N / self-consistency sequences per request
  std::optional<double> requests_per_second;  // the load; empty: size one replica, within [kLeastRequestsPerSecond, kMostRequestsPerSecond]
  // The load as the serving simulator draws it (docs/methodology.md §Serving
  // under load): a closed loop of `clients` users, each sending its next
  // request when the last completes, or open-loop arrivals at
  // requests_per_second whose gaps have this coefficient of variation (1:
  // Poisson; above 1: bursty, gamma-distributed gaps).
  std::optional<int> clients;
  double arrival_cv = 1;
  // Request lengths: fixed at the mean, uniform over mean x (1 +- spread)
  // (benchmark clients' range ratio), or lognormal through the mean and the
  // p95 where a p95 above the mean was given.
  double length_spread = 0;
  int simulated_requests = 0;       // 0: the default count (serving/simulate.hpp)
  // --trace: the requests as recorded; the load, lengths and arrivals come
  // from it (requests_per_second = requests / span, the means and p95s its own).
  std::shared_ptr<const RequestTrace> trace;
  // --prefix-share: the share of the mean prompt that every request shares
  // (a system prompt, few-shot examples), which the engine caches once and
  // reuses (vLLM V1's automatic prefix caching, on by default; SGLang's radix
  // cache): a request computes and holds only the rest of its prompt.
  double prefix_share = 0;
  std::optional<SpeculativeDecoding> speculative;  // --speculative
  bool ttft_target_default = false; // the TTFT target is the documented default, not the user's
  bool tpot_target_default = false;
  std::optional<int> concurrency;   // most sequences in flight per replica
  // Neuron: the batch the decode graph was compiled for. Every step runs all
  // its slots, filled or not (docs/methodology.md §Decode step); empty: the
  // batch in flight. GPUs ignore it.
  std::optional<int> compiled_batch;
  // SGLang's --scheduler-recv-interval: new requests are taken in only every
  // this many decode steps (a prefill step takes them at once); 1: every step,
  // every engine's default (docs/methodology.md §Serving under load).
  int scheduler_recv_interval = 1;
  // TGI's --max-waiting-tokens, on engines with its router hold
  // (EngineProfile::waiting_served_ratio): the most decode steps waiting
  // prompts wait to join a decoding batch; empty: the profile's
  // prefill_batching_steps (docs/methodology.md §Serving under load).
  std::optional<int> max_waiting_tokens;
  // The engine's token budget per step, as its server was started (vLLM
  // --max-num-batched-tokens, SGLang --chunked-prefill-size, TensorRT-LLM
  // --max_num_tokens, TGI --max-batch-prefill-tokens); empty: the profile's
  // default for the accelerator (step_token_budget).
  std::optional<int> max_batched_tokens;
  // TensorRT-LLM's attention_dp_config {enable_balance: true, timeout_iters:
  // N}: on a layout with attention data parallelism, prompts are held until
  // every attention rank has one, a rank has nothing to decode, or N
  // iterations pass (docs/methodology.md §Serving under load); empty: off.
  std::optional<int> attention_dp_balance_iters;
  std::optional<double> max_ttft_s; // time to first token
  std::optional<double> max_tpot_s; // time per output token (applied to the mean)
  WeightFormat weights = WeightFormat::bf16;
  // --kv-cache; empty: the engine's default for the weights
  // (serving_kv_cache in physics/inference.hpp, docs/methodology.md §Precision).
  std::optional<Precision> kv_cache;
  ServingMode mode = ServingMode::online;
  // Share of a replica's capacity the load may use (docs/methodology.md §Replicas).
  double target_utilisation = kDefaultTargetUtilisation;
  // --target-utilisation was given: with a load simulated online, the
  // replicas are sized by the targets alone unless a cap was given.
  bool target_utilisation_given = false;
  // The percentile of the simulated latencies the targets bind at (0: the mean).
  int slo_percentile = kDefaultSloPercentile;
  // Other state kept on each accelerator beside the replica (RL: a colocated
  // trainer's weights and optimizer state), GB.
  double resident_state_gb = 0;
  // Best-of-N with a verifier: a second model on the same replica that scores
  // every sample (prompt + generated tokens) in one forward pass.
  std::optional<ModelSpec> verifier;
  // The serving engine (--engine); null: the default on each accelerator (engine_for).
  const EngineProfile* engine = nullptr;
  std::vector<std::string> assumptions;

  // The shared prefix, tokens: at most the mean prompt less one, the token a
  // prefill must compute to give the first output token.
  int prefix_tokens() const {
    return static_cast<int>(std::clamp<double>(std::lround(prefix_share * prompt_tokens), 0, std::max(0.0, std::floor(prompt_tokens) - 1)));
  }
  // Prompt tokens a prefill computes for a prompt of `prompt` tokens: all but the shared prefix, at least one.
  double computed_prompt_tokens(double prompt) const { return std::max(1.0, prompt - std::min<double>(prefix_tokens(), prompt - 1)); }
  // The serving simulator runs one sequence per request: best-of-N samples
  // and a verifier are not simulated (their figures at a load are analytic).
  bool simulable() const { return samples == 1 && !verifier; }
  // Replicas sized by simulation (docs/methodology.md §Replicas sized by
  // simulation): online, with a load and a latency target, and simulable.
  bool sizes_replicas_by_simulation() const {
    return mode == ServingMode::online && requests_per_second && (max_ttft_s || max_tpot_s) && simulable();
  }
  // Tokens each decoding sequence emits per step (1 without speculation), and
  // the positions it computes per step (the target's token and the proposals).
  double tokens_per_decode_step() const { return speculative ? speculative->tokens_per_step() : 1; }
  int decode_queries_per_sequence() const { return speculative ? 1 + speculative->draft_tokens : 1; }
  // Decode steps each sample runs (output plus hidden reasoning).
  double generated_tokens_per_sequence() const { return output_tokens + reasoning_tokens; }
  // One-token outputs (scoring, classification): no gap between tokens, so no time per output token.
  bool one_token_outputs() const { return generated_tokens_per_sequence() < 2; }
  // Tokens generated per request, all samples.
  double generated_tokens_per_request() const { return samples * generated_tokens_per_sequence(); }
  // Test-time compute multiplier: generated tokens per visible output token.
  double test_time_multiplier() const { return generated_tokens_per_request() / output_tokens; }
};

struct InferenceRequest {
  std::optional<double> prompt_tokens, prompt_tokens_p95, output_tokens, output_tokens_p95;
  double reasoning_tokens = 0;
  int samples = 1;
  std::optional<double> requests_per_second;
  std::optional<double> output_tokens_per_day;
  std::optional<int> clients;                 // --clients: a closed loop of this many users
  std::optional<double> arrival_cv;           // --arrival gamma:CV (1: Poisson)
  std::optional<double> length_spread;        // --length-spread: uniform lengths mean x (1 +- spread)
  std::optional<int> simulated_requests;      // --simulated-requests
  std::shared_ptr<const RequestTrace> trace;  // --trace
  std::optional<double> prefix_share;         // --prefix-share
  std::optional<SpeculativeDecoding> speculative;  // --speculative
  std::optional<int> concurrency;
  std::optional<int> compiled_batch;  // --compiled-batch
  std::optional<int> scheduler_recv_interval;  // --scheduler-recv-interval (SGLang only)
  std::optional<int> max_waiting_tokens;       // --max-waiting-tokens (engines with TGI's router hold)
  std::optional<int> max_batched_tokens;       // --max-batched-tokens (engines with continuous batching)
  std::optional<int> attention_dp_balance_iters;  // --attention-dp-balance (TensorRT-LLM only)
  std::optional<double> max_ttft_s, max_tpot_s, min_tokens_per_second_per_user;
  WeightFormat weights = WeightFormat::bf16;
  std::optional<Precision> kv_cache;  // --kv-cache; empty: the engine's default
  ServingMode mode = ServingMode::online;
  std::optional<double> target_utilisation;
  std::optional<int> slo_percentile;        // --slo-percentile: 50, 90, 99, 0 (mean)
  std::optional<double> model_active_params;  // sets the default targets' size class; empty: the 70B class
  // The model thinks before it answers (ModelSpec::reasoning) and its name:
  // without --reasoning-tokens the hidden tokens are not counted, said once.
  bool model_reasons = false;
  std::string model_name;
  bool reasoning_tokens_given = false;  // --reasoning-tokens, 0 included
  std::optional<ModelSpec> verifier;  // --verifier-model
  const EngineProfile* engine = nullptr;  // --engine
};

inline constexpr double kDefaultPromptTokens = 1024;
// --max-batched-tokens' range: below a few dozen tokens a step serves no
// prompt; engines' own readers stop at 2^20 (data/engines.json's too).
inline constexpr int kFewestBatchedTokens = 64;
inline constexpr int kMostBatchedTokens = 1 << 20;
inline constexpr double kDefaultOutputTokens = 256;
// Online defaults: MLPerf Inference v5.0's Llama-2-70B interactive-scenario
// limits, set for chat from ChatGPT and Perplexity data (MLCommons, 2025-04);
// its older server scenario allows 2 s and 200 ms (5 tokens/s per user).
// The class of a model whose size is not known (70B).
inline constexpr double kDefaultMaxTtftS = 0.45;
inline constexpr double kDefaultMaxTpotS = 0.04;

// The online chat targets of a model's size class (docs/methodology.md
// §Serving targets): MLPerf Inference's interactive scenario for the nearest
// of its models by parameters touched per token (loadgen/mlperf.conf,
// mlcommons/inference): Llama-3.1-8B up to 20B (500 ms, 30 ms), Llama-2-70B
// up to 150B (450 ms, 40 ms), Llama-3.1-405B above (4.5 s, 80 ms).
struct ServingTargets {
  double max_ttft_s, max_tpot_s;
  const char* scenario;    // "MLPerf Inference's Llama-3.1-8B interactive scenario"
  const char* size_class;  // "up to 20B": the class of parameters per token the targets are for
};
ServingTargets default_serving_targets(std::optional<double> active_params);


// Applies the documented defaults and checks the values; InputError names the flag.
InferenceWorkload make_inference_workload(const InferenceRequest& request);

// The most decode steps TGI's router holds waiting prompts from a decoding
// batch on engine `e` (--max-waiting-tokens, else the profile's
// prefill_batching_steps); 0 where the engine's router does not hold.
int router_hold_steps(const EngineProfile& e, const InferenceWorkload& w);

// A parallel layout (docs/methodology.md §Layouts).
struct Layout {
  int tp = 1;  // tensor parallel (inside one instance)
  int pp = 1;  // pipeline stages
  int dp = 1;  // data-parallel replicas
  int ep = 1;  // expert parallel (MoE): ep x etp divides tp x dp x cp
  int zero_stage = 0;
  int micro_batch = 1;  // sequences per micro-batch
  Recompute recompute = Recompute::none;
  int vp = 1;  // virtual pipeline stages per pipeline rank (interleaved 1F1B); last, so positional initialisers stay valid
  int cp = 1;  // context parallel: each sequence split over cp ranks (ring attention)
  int recompute_layers = 0;  // with full recompute: layers of a stage rebuilt (Megatron's block method); 0 = all
  // Expert tensor parallel: the ranks one expert's matrices split over; 0 =
  // tp (experts split like the dense layers, expert ranks drawn from dp x cp).
  // Below tp, Megatron-Core's MoE parallel folding: the expert-parallel group
  // is drawn from tp x dp x cp, so ep x etp may exceed dp x cp.
  int etp = 0;

  int accelerators() const { return tp * cp * pp * dp; }
  int expert_tp() const { return etp > 0 ? etp : tp; }
  bool experts_folded() const { return expert_tp() != tp; }
  // Ranks holding the same expert shard (the experts' data-parallel group).
  int expert_dp() const { return std::max(1, tp * cp * dp / (ep * expert_tp())); }
  // Share of a stage's layers that full recompute rebuilds (0 without it).
  double recompute_share(double stage_layers) const {
    if (recompute != Recompute::full) return 0;
    if (recompute_layers <= 0 || recompute_layers >= stage_layers) return 1;
    return recompute_layers / stage_layers;
  }
  int micro_batches(int global_batch) const { return global_batch / (dp * micro_batch); }
};

}  // namespace gpuadvisor
