// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
// One replica's engine, step by step (docs/methodology.md §Serving under
// load): requests wait in arrival order, are admitted while the engine's
// sequence limit, its token budget per step and the free KV blocks allow,
// and leave when their last token is out.
//  - chunked engines (vLLM V1, SGLang, TensorRT-LLM, TGI 2+) run the decode
//    sequences first, one token each from the step's token budget, then
//    continue unfinished prompts and admit new ones into what is left;
//  - separate-prefill engines run waiting prompts as a step of their own,
//    the decode batch paused;
//  - engines without continuous batching admit only into an empty batch.
// A sequence whose next token finds no free block preempts the most recently
// admitted sequence, which is recomputed later (vLLM's recompute mode); an
// engine that reserves each request's whole KV at admission never preempts.
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "gpuadvisor/serving/arrivals.hpp"
#include "gpuadvisor/serving/step_time.hpp"

namespace gpuadvisor {

struct SimRequest {
  double arrival_s = 0;
  int prompt_tokens = 1, output_tokens = 1;
  double scheduled_s = -1, first_token_s = -1, finish_s = -1;  // -1: not reached
  int preemptions = 0;
  bool rejected = false;  // longer than the whole KV cache holds
};

struct EngineLimits {
  int max_sequences = 1;   // vLLM max_num_seqs, SGLang max_running_requests, TensorRT-LLM max_batch_size
  int token_budget = 2048; // tokens one step computes: max_num_batched_tokens, chunked_prefill_size, max_num_tokens
  bool chunked = true;
  // Chunked prefill in steps of their own: a step with prompt work runs only
  // that, and the decode batch waits a step (SGLang without
  // --enable-mixed-chunk); false: chunks ride with the decode batch (vLLM,
  // TensorRT-LLM).
  bool prefill_pauses_decode = false;
  bool continuous = true;
  bool reserves_full_kv = false;
  int64_t kv_blocks = 0;
  // Prompt tokens every request shares (--prefix-share: a system prompt),
  // cached once and reused: each request computes and holds only the rest
  // (vLLM's automatic prefix caching, SGLang's radix cache).
  int shared_prefix_tokens = 0;
  // Speculative decoding (--speculative): each decoding sequence emits this
  // many tokens per step on average (the scheduler keeps the fraction as a
  // credit, so the counts stay whole and deterministic) and holds KV room for
  // `decode_lookahead` positions while its proposals are verified.
  double tokens_per_decode_step = 1;
  int decode_lookahead = 1;
  // SGLang's --scheduler-recv-interval: arrivals wait in the server's inbox
  // until this many decode steps have run since the last look (a step with a
  // prefill, or an idle engine, looks at once); 1: every step.
  int receive_every_steps = 1;
  // TensorRT-LLM's attention-DP balance (attention_dp_config enable_balance,
  // timeout_iters = receive_every_steps): prompts are held until one waits
  // for every attention rank (this many), a rank has nothing to decode, or
  // the timeout since the last release passes; its count restarts at a
  // release, where SGLang's looks again after a prefill step. 0: no balance.
  int release_when_waiting = 0;
  // TGI's router (its v2 queue, engines that prefill whole prompts): while a
  // batch decodes, waiting prompts join it only when at least
  // floor(join_ratio x running) of them fit the next prefill
  // (--waiting-served-ratio), or once join_after_steps decode steps have run
  // since the last join (--max-waiting-tokens); an idle engine takes them at
  // once. 0: no such hold.
  double join_ratio = 0;
  int join_after_steps = 0;
};

// Sizing only asks whether the targets are met: once more requests than the
// percentile allows have already missed a target, the answer cannot change,
// and the run stops there (SchedulerTotals::stopped_early). Off by default.
struct EarlyStop {
  double max_ttft_s = 1e300, max_tpot_s = 1e300;
  int late_allowed = 1 << 30;  // requests that may miss each target
};
// The EarlyStop of a target at `percentile` (0: the mean, never stopped)
// over `requests`: once N - floor(q (N - 1)) values exceed the target, the
// interpolated q-quantile does too (base/statistics.hpp).
EarlyStop early_stop_for(std::optional<double> max_ttft_s, std::optional<double> max_tpot_s, int percentile, int requests);

struct SchedulerTotals {
  double busy_s = 0;            // time the replica ran steps
  double sequence_seconds = 0;  // sequences in flight integrated over busy time
  double block_seconds = 0;     // KV blocks in use integrated over busy time
  int preemptions = 0;
  int64_t steps = 0;
  bool stopped_early = false;  // EarlyStop: more requests than allowed missed a target
  bool cut_short = false;      // kMaxSchedulerRounds reached
};

// Scheduling rounds one run may take (a few seconds): outputs of millions of
// tokens thrashing a full KV cache could otherwise run for minutes; the
// requests unfinished then are left out and the run is reported saturated.
inline constexpr int64_t kMaxSchedulerRounds = 3'000'000;

// Runs every request to completion. Open loop: arrival_s is set for each, in
// order. Closed loop: the first `clients` arrive at 0 and each completion
// sends the next request at once.
SchedulerTotals run_engine(std::vector<SimRequest>& requests, const ArrivalPattern& arrivals, const EngineLimits& limits, StepTimer& timer,
                           const ModelSpec& m, const EngineProfile& engine, const EarlyStop& stop = {});

}  // namespace gpuadvisor
