// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
#include "gpuadvisor/workload/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/statistics.hpp"
#include "gpuadvisor/workload/engine.hpp"
#include "gpuadvisor/base/quantity.hpp"

namespace gpuadvisor {

std::string_view to_string(Task t) {
  switch (t) {
    case Task::pretrain: return "pretrain";
    case Task::finetune: return "finetune";
    case Task::lora: return "lora";
    case Task::qlora: return "qlora";
  }
  return "?";
}

int router_hold_steps(const EngineProfile& e, const InferenceWorkload& w) {
  return e.waiting_served_ratio > 0 ? w.max_waiting_tokens.value_or(e.prefill_batching_steps) : 0;
}

std::optional<Task> task_from_string(std::string_view s) {
  for (Task t : {Task::pretrain, Task::finetune, Task::lora, Task::qlora})
    if (to_string(t) == s) return t;
  return std::nullopt;
}

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

std::optional<Recompute> recompute_from_string(std::string_view s) {
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
    if (to_string(r) == s) return r;
  return std::nullopt;
}

std::string_view to_string(LoraTargets t) { return t == LoraTargets::attention ? "attention" : "attention+mlp"; }

std::optional<LoraTargets> lora_targets_from_string(std::string_view s) {
  if (s == "attention" || s == "attn") return LoraTargets::attention;
  if (s == "attention+mlp" || s == "all" || s == "attn+mlp") return LoraTargets::attention_mlp;
  return std::nullopt;
}

double TrainingWorkload::steps() const { return std::ceil(total_tokens() / tokens_per_step()); }

TrainingWorkload make_workload(const WorkloadRequest& r, const ModelSpec& model) {
  TrainingWorkload w;
  w.task = r.task;
  w.precision = r.precision;
  w.lora_rank = r.lora_rank;
  w.lora_targets = r.lora_targets;
  w.flash_attention = r.flash_attention;
  w.framework = r.framework;
  const bool pretraining = r.task == Task::pretrain;
  w.seq_len = r.seq_len.value_or(pretraining ? 4096 : 2048);
  if (!r.seq_len) w.assumptions.push_back(fmt::format("sequence length {} (default for {})", w.seq_len, to_string(r.task)));
  if (r.global_batch) {
    w.global_batch = *r.global_batch;
  } else if (pretraining) {
    // About 4M tokens per step, the scale used by Llama 2/3 pre-training.
    w.global_batch = std::max(1, static_cast<int>(std::lround(4194304.0 / w.seq_len)));
    w.assumptions.push_back(fmt::format("global batch {} sequences (~4M tokens per step, as in Llama 2 pre-training)", w.global_batch));
  } else {
    w.global_batch = 64;
    w.assumptions.push_back("global batch 64 sequences (fine-tuning default)");
  }
  if (r.tokens) {
    w.tokens = *r.tokens;
  } else if (pretraining) {
    w.tokens = kChinchillaTokensPerParam * model.total_params();
    const std::string tokens = w.tokens >= 1e12 ? fmt::format("{:.3g}T", w.tokens / 1e12) : fmt::format("{:.3g}B", w.tokens / 1e9);
    w.assumptions.push_back(fmt::format("{} training tokens: 20 tokens per parameter (Chinchilla, Hoffmann et al. 2022)", tokens));
  } else {
    w.tokens = kDefaultFinetuneTokens;
    w.assumptions.push_back("100M fine-tuning tokens per epoch (default dataset size; set --tokens)");
  }
  w.epochs = r.epochs.value_or(1);
  if (w.seq_len < 16 || w.seq_len > 10'000'000)
    throw InputError(fmt::format("--seq-len: {} is outside [16, 10000000]", w.seq_len));
  // Fine-tuning past the checkpoint's context is context extension: priced
  // here as plain training at that length, which the user should know.
  if (!pretraining && model.context_length > 0 && w.seq_len > model.context_length)
    w.assumptions.push_back(fmt::format("sequence length {} is beyond {}'s context of {} tokens: training at it extends the context ({}), "
                                        "priced here as plain {} at that length",
                                        w.seq_len, model.name, model.context_length,
                                        model.learned_positions ? "its learned positions stop at the context: new ones must be added and trained"
                                                                : "rotary positions past the context need RoPE scaling, e.g. YaRN",
                                        to_string(r.task)));
  if (w.global_batch < 1 || w.global_batch > 100'000'000)
    throw InputError(fmt::format("--global-batch: {} is outside [1, 100000000]", w.global_batch));
  if (!(w.epochs > 0) || w.epochs > 1e6) throw InputError("--epochs: must be in (0, 1000000]");
  if (!(w.tokens >= 1) || w.tokens > kMaxTokens)
    throw InputError(r.tokens ? fmt::format("--tokens: {:.3g} is outside [1, {:.0e}]", w.tokens, kMaxTokens)
                              : fmt::format("the default of 20 tokens per parameter gives {:.3g} tokens, over the {:.0e} limit; set --tokens", w.tokens, kMaxTokens));
  // The whole run too: a million epochs of 1e17 tokens took a year count of 9 digits.
  if (w.total_tokens() > kMaxTokens)
    throw InputError(fmt::format("--tokens x --epochs: {:.3g} x {:g} = {:.3g} tokens is over the {:.0e} limit; fewer tokens or epochs",
                                 w.tokens, w.epochs, w.total_tokens(), kMaxTokens));
  if (w.lora_rank < 1 || w.lora_rank > 65536) throw InputError("--lora-rank: must be in [1, 65536]");
  return w;
}

std::string_view to_string(WeightFormat f) {
  switch (f) {
    case WeightFormat::bf16: return "bf16";
    case WeightFormat::fp8: return "fp8";
    case WeightFormat::int8: return "int8";
    case WeightFormat::int4: return "int4";
    case WeightFormat::fp4: return "fp4";
  }
  return "?";
}

std::optional<WeightFormat> weight_format_from_string(std::string_view s) {
  for (WeightFormat f : {WeightFormat::bf16, WeightFormat::fp8, WeightFormat::int8, WeightFormat::int4, WeightFormat::fp4})
    if (to_string(f) == s) return f;
  if (s == "fp16") return WeightFormat::bf16;
  return std::nullopt;
}

std::string_view to_string(ServingMode m) { return m == ServingMode::online ? "online" : "offline"; }

std::optional<ServingMode> serving_mode_from_string(std::string_view s) {
  if (s == "online") return ServingMode::online;
  if (s == "offline") return ServingMode::offline;
  return std::nullopt;
}

ServingTargets default_serving_targets(std::optional<double> active_params) {
  const double p = active_params.value_or(70e9);
  if (p <= 20e9) return {0.5, 0.03, "MLPerf Inference's Llama-3.1-8B interactive scenario", "up to 20B"};
  if (p <= 150e9) return {kDefaultMaxTtftS, kDefaultMaxTpotS, "MLPerf Inference's Llama-2-70B interactive scenario", "over 20B, up to 150B"};
  return {4.5, 0.08, "MLPerf Inference's Llama-3.1-405B interactive scenario", "over 150B"};
}

namespace {

// Online chat targets the user did not give: the model's size class (docs/methodology.md §Serving targets).
void apply_default_targets(InferenceWorkload& w, const InferenceRequest& r) {
  const ServingTargets t = default_serving_targets(r.model_active_params);
  // Four digits and the class: a 150.3B model built from --params 150B is over the 150B bound, and says so.
  const std::string size =
      r.model_active_params ? fmt::format(" for a model of {:.4g}B parameters per token, {}", *r.model_active_params / 1e9, t.size_class) : "";
  if (!w.max_ttft_s) {
    w.max_ttft_s = t.max_ttft_s;
    w.ttft_target_default = true;
    w.assumptions.push_back(fmt::format("time to first token at most {} (default online target for chat{}, as {}; set --max-ttft, or --mode offline "
                                        "for a batch job without latency targets)",
                                        format_latency(t.max_ttft_s), size, t.scenario));
  }
  if (w.one_token_outputs()) {
    w.assumptions.push_back("no time-per-output-token target: each request generates one token, so no gap between tokens follows the first");
    return;
  }
  if (!w.max_tpot_s) {
    w.max_tpot_s = t.max_tpot_s;
    w.tpot_target_default = true;
    w.assumptions.push_back(fmt::format("time per output token at most {}, {:.0f} tokens/s per user (default online target for chat{}, as {}; "
                                        "MLPerf's server scenarios allow 100-200 ms; set --max-tpot)",
                                        format_latency(t.max_tpot_s), 1 / t.max_tpot_s, size, t.scenario));
  }
}

// Where the targets bind: at a percentile of the simulated latencies with a
// load, else (no load, or best-of-N samples and a verifier, which are not
// simulated) at the no-queue mean.
void target_assumptions(InferenceWorkload& w, const InferenceRequest& r) {
  if (!w.max_tpot_s && !w.max_ttft_s) return;
  const bool simulated = (w.requests_per_second || w.clients) && w.simulable();
  if (simulated && w.mode == ServingMode::offline) {
    w.assumptions.push_back("offline: the latency targets apply to the analytic means at the load, and replicas are sized by utilisation "
                            "(--target-utilisation), not by simulated percentiles; estimate's simulated rows at the load are shown beside them");
    return;
  }
  if (simulated) {
    const std::string at = w.slo_percentile ? fmt::format("the p{} of", w.slo_percentile) : std::string("the mean of");
    w.assumptions.push_back(fmt::format("the latency targets bind at {} the simulated requests, queueing included (--slo-percentile; "
                                        "MLPerf binds at p99); the prediction's error band is shown beside it, not added",
                                        at));
    return;
  }
  if (w.max_tpot_s)
    w.assumptions.push_back(w.requests_per_second || w.clients
                                ? "the time-per-output-token target applies to the mean: best-of-N samples and a verifier are not simulated, so "
                                  "nothing queues and it has no percentiles"
                                : "the time-per-output-token target applies to the mean: without a load nothing queues, so it has no percentiles");
  if (w.max_ttft_s && r.prompt_tokens_p95)
    w.assumptions.push_back(fmt::format("the time-to-first-token target is checked at the p95 prompt ({:.0f} tokens)", w.prompt_tokens_p95));
  else if (w.max_ttft_s)
    w.assumptions.push_back("the time-to-first-token target applies to the mean prompt and excludes queueing");
}

}  // namespace

double most_p95_length(double mean_tokens) { return 20 * mean_tokens - 19; }

double widest_lognormal_p95(double mean_tokens) { return mean_tokens * std::exp(kStandardNormalP95 * kStandardNormalP95 / 2); }

namespace {

// A p95 no set of whole-token requests of that mean has (most_p95_length):
// --output-tokens 1 --output-tokens-p95 5 would make every request one token
// and some five.
void check_p95_describes_requests(double mean, double p95, std::string_view flag) {
  if (p95 <= most_p95_length(mean) + 1e-9) return;
  throw InputError(fmt::format("{}-p95: {:g} cannot be the 95th percentile of requests averaging {:g} token{}: with 5% of them at {:g} "
                               "tokens or more and the rest at one or more, the mean is at least {:g}; give a p95 of at most {:g} "
                               "or a larger {}",
                               flag, p95, mean, mean == 1 ? "" : "s", p95, 0.95 + 0.05 * p95, std::floor(most_p95_length(mean)), flag));
}

// A p95 wider than any lognormal of that mean reaches: the simulator draws
// the widest one, and says the p95 it draws.
void note_p95_beyond_lognormal(InferenceWorkload& w, double mean, double p95, std::string_view lengths) {
  const double widest = widest_lognormal_p95(mean);
  if (p95 <= widest * (1 + 1e-9)) return;
  w.assumptions.push_back(fmt::format("{} lengths: a p95 of {:g} tokens is {:.1f}x the mean of {:g}, wider than any lognormal of that mean "
                                      "reaches ({:.2f}x): the simulator draws the widest, a p95 of about {:.0f} tokens, so fewer long "
                                      "requests than asked (docs/methodology.md §Serving under load)",
                                      lengths, p95, p95 / mean, mean, widest / mean, widest));
}

// A trace sets the load and the lengths: the means and p95s of its requests,
// and its rate over its span.
InferenceRequest from_trace(const InferenceRequest& given) {
  const RequestTrace& t = *given.trace;
  const std::pair<bool, const char*> conflicts[] = {
      {given.prompt_tokens.has_value(), "--prompt-tokens"}, {given.prompt_tokens_p95.has_value(), "--prompt-tokens-p95"},
      {given.output_tokens.has_value(), "--output-tokens"}, {given.output_tokens_p95.has_value(), "--output-tokens-p95"},
      {given.requests_per_second.has_value(), "--requests-per-second"}, {given.output_tokens_per_day.has_value(), "--tokens-per-day"},
      {given.clients.has_value(), "--clients"}, {given.arrival_cv.has_value(), "--arrival"}, {given.length_spread.has_value(), "--length-spread"}};
  for (const auto& [set, flag] : conflicts)
    if (set) throw InputError(fmt::format("{} with --trace: the trace sets the load, the arrivals and the lengths; leave {} out", flag, flag));
  std::vector<double> prompts, outputs;
  for (const TraceRequest& x : t.requests) {
    prompts.push_back(x.prompt_tokens);
    outputs.push_back(x.output_tokens);
  }
  auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); };
  InferenceRequest r = given;
  r.prompt_tokens = std::round(mean(prompts));
  r.output_tokens = std::round(mean(outputs));
  r.prompt_tokens_p95 = std::max(*r.prompt_tokens, std::round(percentile(prompts, 0.95)));
  r.output_tokens_p95 = std::max(*r.output_tokens, std::round(percentile(outputs, 0.95)));
  r.requests_per_second = t.requests_per_second();
  return r;
}

}  // namespace

double SpeculativeDecoding::tokens_per_step() const {
  if (acceptance <= 0) return 1;
  return (1 - std::pow(acceptance, draft_tokens + 1)) / (1 - acceptance);
}

SpeculativeDecoding parse_speculative(std::string_view text, std::string_view flag) {
  const auto bad = [&](std::string_view why) {
    return InputError(fmt::format("{}: '{}' {}; write DRAFTER:TOKENS:ACCEPTANCE, e.g. mtp:3:0.7 (drafter mtp or ngram, 1-16 draft tokens, "
                                  "acceptance 0-0.99 or 0%-99%)", flag, text.substr(0, 40), why));
  };
  if (std::any_of(text.begin(), text.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) throw bad("has a space");
  const size_t a = text.find(':'), b = a == std::string_view::npos ? a : text.find(':', a + 1);
  if (b == std::string_view::npos || text.find(':', b + 1) != std::string_view::npos) throw bad("is not three fields");
  SpeculativeDecoding s;
  s.drafter = std::string(text.substr(0, a));
  if (s.drafter != "mtp" && s.drafter != "ngram") throw bad("names no drafter this tool models");
  const std::string_view tokens = text.substr(a + 1, b - a - 1);
  if (tokens.empty() || tokens.size() > 2 || !std::all_of(tokens.begin(), tokens.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      tokens[0] == '0')
    throw bad("has no whole number of draft tokens");
  s.draft_tokens = std::stoi(std::string(tokens));
  if (s.draft_tokens > 16) throw bad("proposes more than 16 tokens");
  std::string_view rate = text.substr(b + 1);
  const bool percent = !rate.empty() && rate.back() == '%';
  if (percent) rate.remove_suffix(1);
  try {
    s.acceptance = parse_number(rate, flag, 0, percent ? 99 : 0.99) / (percent ? 100 : 1);
  } catch (const InputError&) {
    throw bad("has no acceptance rate from 0 to 0.99");
  }
  return s;
}

std::string speculative_text(const SpeculativeDecoding& s) { return fmt::format("{}:{}:{:g}", s.drafter, s.draft_tokens, s.acceptance); }

InferenceWorkload make_inference_workload(const InferenceRequest& given) {
  const InferenceRequest r = given.trace ? from_trace(given) : given;
  InferenceWorkload w;
  if (r.trace) {
    w.trace = r.trace;
    w.assumptions.push_back(fmt::format("the load is the trace {}: {} requests arriving over {:.4g} s ({:.4g} requests/s at their mean gap), prompts {:.0f} tokens mean and {:.0f} "
                                        "p95, outputs {:.0f} and {:.0f}; replicas take its requests in turn",
                                        r.trace->name, r.trace->requests.size(), r.trace->span_s(), *r.requests_per_second, *r.prompt_tokens,
                                        *r.prompt_tokens_p95, *r.output_tokens, *r.output_tokens_p95));
  }
  w.mode = r.mode;
  w.weights = r.weights;
  w.kv_cache = r.kv_cache;
  w.samples = r.samples;
  w.reasoning_tokens = r.reasoning_tokens;
  if (r.model_reasons && !r.reasoning_tokens_given)
    w.assumptions.push_back(fmt::format("no hidden reasoning tokens: {} thinks before it answers by default (its model card), often "
                                        "thousands of tokens a request, each a decode step and KV before the first visible token; "
                                        "set --reasoning-tokens N to count what your prompts produce (0 for answers without thinking)",
                                        r.model_name));
  w.verifier = r.verifier;
  w.engine = r.engine;
  const bool quantised = w.weights == WeightFormat::fp8 || w.weights == WeightFormat::fp4;
  if (!w.kv_cache && quantised && w.engine && w.engine->quantised_checkpoint_fp8_kv)
    w.assumptions.push_back(fmt::format("KV cache in fp8 where the accelerator has fp8 math: {} serves {} weights from NVIDIA Model Optimizer "
                                        "checkpoints, which quantise the KV cache unless told otherwise (--kv-cache bf16 for one that does not)",
                                        w.engine->name, to_string(w.weights)));
  if (w.verifier)
    w.assumptions.push_back(fmt::format("the verifier {} runs on each replica beside the model and scores all {} samples of a request "
                                        "(prompt + generated tokens, one forward pass each)",
                                        w.verifier->name, w.samples));
  w.concurrency = r.concurrency;
  w.compiled_batch = r.compiled_batch;
  if (r.scheduler_recv_interval) {
    check_range(*r.scheduler_recv_interval, "--scheduler-recv-interval", 1, 1000);
    if (!w.engine || w.engine->name != "sglang")
      throw InputError(fmt::format("--scheduler-recv-interval: {} is SGLang's server setting; give --engine sglang (engine here: {})",
                                   *r.scheduler_recv_interval, w.engine ? w.engine->name : std::string("the default")));
    w.scheduler_recv_interval = *r.scheduler_recv_interval;
    if (w.scheduler_recv_interval > 1)
      w.assumptions.push_back(fmt::format("SGLang takes in new requests every {} decode steps (--scheduler-recv-interval; after a prefill "
                                          "step, or when idle, at once): an arriving prompt waits for the next look, about {:g} decode steps "
                                          "at a random phase; simulated under a load only",
                                          w.scheduler_recv_interval, w.scheduler_recv_interval / 2.0));
  }
  if (r.max_batched_tokens) {
    check_range(*r.max_batched_tokens, "--max-batched-tokens", kFewestBatchedTokens, kMostBatchedTokens);
    if (w.engine && !w.engine->continuous_batching)
      throw InputError(fmt::format("--max-batched-tokens: {} runs one batch at a time and has no token budget per step; "
                                   "give an engine with continuous batching ({})", w.engine->name,
                                   engine_names_where(batches_continuously, w.engine->software)));
    w.max_batched_tokens = *r.max_batched_tokens;
    const bool apart = w.engine && w.engine->prefill_pauses_decode;
    w.assumptions.push_back(fmt::format("the engine schedules at most {} tokens a step, {} "
                                        "(--max-batched-tokens: vLLM --max-num-batched-tokens, SGLang --chunked-prefill-size, "
                                        "TensorRT-LLM --max_num_tokens)", w.max_batched_tokens.value(),
                                        apart ? fmt::format("prompt chunks in steps of their own ({} runs prefill and decode steps apart)", w.engine->name)
                                              : std::string("decode tokens and prompt chunks together")));
  }
  if (r.max_waiting_tokens) {
    check_range(*r.max_waiting_tokens, "--max-waiting-tokens", 1, 1000);
    if (!w.engine || w.engine->waiting_served_ratio <= 0)
      throw InputError(fmt::format("--max-waiting-tokens: {} is TGI's router setting, for an engine whose router holds prompts ({}); "
                                   "engine here: {}",
                                   *r.max_waiting_tokens, engine_names_where([](const EngineProfile& e) { return e.waiting_served_ratio > 0; }),
                                   w.engine ? w.engine->name : std::string("the default")));
    w.max_waiting_tokens = *r.max_waiting_tokens;
  }
  if (w.engine && w.engine->waiting_served_ratio > 0)
    w.assumptions.push_back(fmt::format("{}'s router lets a waiting prompt join a decoding batch after at most {} decode steps ({}; "
                                        "--max-waiting-tokens), or sooner when {:g} per running sequence wait; an idle server takes it at once",
                                        w.engine->name, router_hold_steps(*w.engine, w), r.max_waiting_tokens ? "given" : "TGI's default",
                                        w.engine->waiting_served_ratio));
  if (r.attention_dp_balance_iters) {
    check_range(*r.attention_dp_balance_iters, "--attention-dp-balance", 1, 1000);
    if (!w.engine || w.engine->name != "trtllm")
      throw InputError(fmt::format("--attention-dp-balance: {} is TensorRT-LLM's attention_dp_config (enable_balance, timeout_iters); "
                                   "give --engine trtllm (engine here: {})",
                                   *r.attention_dp_balance_iters, w.engine ? w.engine->name : std::string("the default")));
    w.attention_dp_balance_iters = *r.attention_dp_balance_iters;
    w.assumptions.push_back(fmt::format("TensorRT-LLM balances its attention data-parallel ranks (--attention-dp-balance): a prompt is "
                                        "held until every rank has one, a rank has nothing to decode, or {} iterations have passed since "
                                        "the last release; layouts with attention data parallelism only, simulated under a load only",
                                        *r.attention_dp_balance_iters));
  }
  w.prompt_tokens = r.prompt_tokens.value_or(kDefaultPromptTokens);
  if (!r.prompt_tokens) w.assumptions.push_back(fmt::format("{:.0f} prompt tokens per request (default; set --prompt-tokens)", w.prompt_tokens));
  w.output_tokens = r.output_tokens.value_or(kDefaultOutputTokens);
  if (!r.output_tokens) w.assumptions.push_back(fmt::format("{:.0f} output tokens per request (default; set --output-tokens)", w.output_tokens));
  w.prompt_tokens_p95 = r.prompt_tokens_p95.value_or(w.prompt_tokens);
  w.output_tokens_p95 = r.output_tokens_p95.value_or(w.output_tokens);
  auto check = [](double v, double lo, double hi, std::string_view flag) { check_range(v, flag, lo, hi); };
  check(w.prompt_tokens, 1, 10'000'000, "--prompt-tokens");
  check(w.output_tokens, 1, 10'000'000, "--output-tokens");
  check(w.reasoning_tokens, 0, 10'000'000, "--reasoning-tokens");
  check(w.samples, 1, 10'000, "--samples");
  if (w.prompt_tokens_p95 < w.prompt_tokens)
    throw InputError(fmt::format("--prompt-tokens-p95: {:g} is below the mean {:g}", w.prompt_tokens_p95, w.prompt_tokens));
  if (w.output_tokens_p95 < w.output_tokens)
    throw InputError(fmt::format("--output-tokens-p95: {:g} is below the mean {:g}", w.output_tokens_p95, w.output_tokens));
  check(w.prompt_tokens_p95, 1, 10'000'000, "--prompt-tokens-p95");
  check(w.output_tokens_p95, 1, 10'000'000, "--output-tokens-p95");
  if (!r.trace) {  // a trace's lengths are the requests themselves
    check_p95_describes_requests(w.prompt_tokens, w.prompt_tokens_p95, "--prompt-tokens");
    check_p95_describes_requests(w.output_tokens, w.output_tokens_p95, "--output-tokens");
  }
  if (w.concurrency) check(*w.concurrency, 1, 1'000'000, "--concurrency");
  if (w.compiled_batch) check(*w.compiled_batch, 1, 4096, "--compiled-batch");
  if (r.requests_per_second && r.output_tokens_per_day)
    throw InputError("give only one of --requests-per-second and --tokens-per-day");
  if (r.requests_per_second) w.requests_per_second = *r.requests_per_second;
  if (r.output_tokens_per_day) w.requests_per_second = *r.output_tokens_per_day / 86400.0 / w.output_tokens;
  // The rate's range (workload.hpp), named by the flag that set it.
  if (r.output_tokens_per_day && !(*w.requests_per_second >= kLeastRequestsPerSecond && *w.requests_per_second <= kMostRequestsPerSecond))
    throw InputError(fmt::format("--tokens-per-day: {:g} tokens a day of {:g} output tokens each is {:.3g} requests/s, outside [{:g}, {:g}]",
                                 *r.output_tokens_per_day, w.output_tokens, *w.requests_per_second, kLeastRequestsPerSecond, kMostRequestsPerSecond));
  if (w.requests_per_second) check(*w.requests_per_second, kLeastRequestsPerSecond, kMostRequestsPerSecond, "--requests-per-second");
  if (r.clients && w.requests_per_second)
    throw InputError(fmt::format("give only one of --clients (a closed loop: each user sends its next request when the last completes) and {} "
                                 "(open-loop arrivals)",
                                 r.output_tokens_per_day ? "--tokens-per-day" : "--requests-per-second"));
  if (r.clients) check(*r.clients, 1, 100'000, "--clients");
  w.clients = r.clients;
  if (r.arrival_cv) {
    check(*r.arrival_cv, 0.05, 20, "--arrival");
    if (!w.requests_per_second) throw InputError("--arrival shapes open-loop arrivals: give --requests-per-second (or --tokens-per-day) with it");
    w.arrival_cv = *r.arrival_cv;
    if (w.arrival_cv != 1)
      w.assumptions.push_back(fmt::format("arrivals: gamma gaps of CV {:g} in the whole stream; a balancer sends each request to a replica at "
                                          "random, so one of N replicas sees gaps of CV sqrt(1 + (CV^2 - 1) / N), a burst spread over them "
                                          "(docs/methodology.md §Serving under load)",
                                          w.arrival_cv));
  }
  if (r.length_spread) check(*r.length_spread, 0, 0.99, "--length-spread");
  w.length_spread = r.length_spread.value_or(0);
  if (w.length_spread > 0 && (r.prompt_tokens_p95 || r.output_tokens_p95))
    throw InputError("give --length-spread (uniform lengths) or a p95 (--prompt-tokens-p95, --output-tokens-p95: lognormal lengths), not both");
  if (w.requests_per_second || w.clients) {  // lengths are drawn only under a load
    note_p95_beyond_lognormal(w, w.prompt_tokens, w.prompt_tokens_p95, "prompt");
    note_p95_beyond_lognormal(w, w.generated_tokens_per_sequence(), w.output_tokens_p95 + w.reasoning_tokens,
                              w.reasoning_tokens > 0 ? "generated (output and reasoning)" : "output");
  }
  if (r.simulated_requests) check(*r.simulated_requests, 10, 1'000'000, "--simulated-requests");
  if (r.simulated_requests && r.clients && *r.simulated_requests < *r.clients)
    throw InputError(fmt::format("--simulated-requests {} is fewer than the {} clients: only {} of them would ever send a request, and the "
                                 "loop would never reach its load; give at least {} (default: 8 per client)",
                                 *r.simulated_requests, *r.clients, *r.simulated_requests, *r.clients));
  if (r.prefix_share) {
    check(*r.prefix_share, 0, 0.99, "--prefix-share");
    if (*r.prefix_share > 0 && w.engine)
      if (auto problem = prefix_share_problem(*w.engine)) throw InputError("--prefix-share: " + *problem);
    w.prefix_share = *r.prefix_share;
    const bool capped = w.prefix_tokens() < std::lround(w.prefix_share * w.prompt_tokens);  // a prefill computes one token at least
    if (w.prefix_tokens() == 0 && w.prefix_share > 0)
      w.assumptions.push_back(fmt::format("--prefix-share {:.0f}% of a {:.0f}-token mean prompt leaves no token to share: every prefill computes "
                                          "its whole prompt",
                                          w.prefix_share * 100, w.prompt_tokens));
    else if (w.prefix_share > 0)
      w.assumptions.push_back(fmt::format("a {}-token prefix ({:.0f}% of the mean prompt{}) is common to every request, cached once and reused: "
                                          "each prefill computes only the rest of its prompt (--prefix-share; {}'s prefix cache)",
                                          w.prefix_tokens(), w.prefix_share * 100, capped ? ", all but the token a prefill must compute" : "",
                                          w.engine ? w.engine->name : std::string("the engine")));
  }
  if (r.speculative) {
    if (w.one_token_outputs())  // as --max-tpot: the one token comes from the prefill, no decode step to speculate in
      throw InputError("--speculative: one generated token per request leaves no decode step to draft tokens for (the first token comes "
                       "from the prefill); give --output-tokens 2 or more, or drop it");
    w.speculative = r.speculative;
    const SpeculativeDecoding& sd = *r.speculative;
    w.assumptions.push_back(fmt::format("speculative decoding: {} proposes {} token{} per step, each accepted with probability {:g}: "
                                        "{:.2f} tokens per sequence and step on average (--speculative; docs/methodology.md §Speculative decoding)",
                                        sd.drafter == "mtp" ? "a one-layer draft head (MTP, EAGLE)" : "prompt lookup (n-gram)", sd.draft_tokens,
                                        sd.draft_tokens > 1 ? "s" : "", sd.acceptance, sd.tokens_per_step()));
  }
  if ((r.length_spread || r.simulated_requests) && !w.clients && !w.requests_per_second)
    throw InputError(fmt::format("{} shapes the simulated load: give --clients or --requests-per-second with it",
                                 r.length_spread ? "--length-spread" : "--simulated-requests"));
  w.simulated_requests = r.simulated_requests.value_or(0);
  if (r.max_tpot_s && r.min_tokens_per_second_per_user)
    throw InputError("give only one of --max-tpot and --min-tokens-per-second-per-user");
  if ((r.max_tpot_s || r.min_tokens_per_second_per_user) && w.one_token_outputs())
    throw InputError(fmt::format("{}: one generated token per request has no time per output token (the first token is --max-ttft's); give "
                                 "--output-tokens 2 or more, or drop the target",
                                 r.max_tpot_s ? "--max-tpot" : "--min-tokens-per-second-per-user"));
  w.max_ttft_s = r.max_ttft_s;
  w.max_tpot_s = r.max_tpot_s;
  if (r.min_tokens_per_second_per_user) w.max_tpot_s = 1.0 / *r.min_tokens_per_second_per_user;
  if (w.mode == ServingMode::online) apply_default_targets(w, r);
  if (r.slo_percentile) {
    if (*r.slo_percentile != 50 && *r.slo_percentile != 90 && *r.slo_percentile != 99 && *r.slo_percentile != 0)
      throw InputError(fmt::format("--slo-percentile: {} is not one of 50, 90, 99, mean", *r.slo_percentile));
    if (!w.requests_per_second && !w.clients)
      throw InputError("--slo-percentile binds the targets at a percentile of the simulated latencies: give a load (--requests-per-second, "
                       "--tokens-per-day or --trace; estimate also --clients)");
    if (!w.max_ttft_s && !w.max_tpot_s)
      throw InputError("--slo-percentile binds the latency targets, and --mode offline has none: give --max-ttft or --max-tpot with it");
    if (!w.simulable())
      throw InputError(fmt::format("--slo-percentile binds the targets at a percentile of the simulated latencies, and {} not simulated "
                                   "(the targets apply to the analytic means): leave --slo-percentile out",
                                   w.verifier ? "a verifier is" : "best-of-N samples are"));
    w.slo_percentile = *r.slo_percentile;
  }
  target_assumptions(w, r);
  if (r.target_utilisation) {
    check(*r.target_utilisation, 0.05, 1, "--target-utilisation");
    w.target_utilisation = *r.target_utilisation;
    w.target_utilisation_given = true;
  } else if (w.mode == ServingMode::offline) {
    w.target_utilisation = 1.0;  // a batch queue has no bursts to absorb and no latency to keep
  }
  if (!w.requests_per_second && w.clients)
    w.assumptions.push_back(fmt::format("a closed loop of {} clients (--clients) is simulated on one replica (the 'at load' rows); the rows above "
                                        "it are the replica at its capacity batch, and its costs per token at {:.0f}% utilisation "
                                        "(--target-utilisation)", *w.clients, w.target_utilisation * 100));
  else if (!w.requests_per_second)
    w.assumptions.push_back(fmt::format("no load given (--requests-per-second or --tokens-per-day): one instance with every replica slot it holds, costs per token at {:.0f}% "
                                        "utilisation (--target-utilisation)", w.target_utilisation * 100));
  else if (w.sizes_replicas_by_simulation())
    w.assumptions.push_back(w.target_utilisation_given
                                ? fmt::format("replicas: the fewest whose simulated latencies meet the targets, and enough to run at most {:.0f}% busy "
                                              "(--target-utilisation)", w.target_utilisation * 100)
                                : std::string("replicas: the fewest whose simulated latencies meet the targets at the load (no cap on how busy they run: "
                                              "--target-utilisation sets one)"));
  else
    w.assumptions.push_back(w.mode == ServingMode::offline && !r.target_utilisation
                                ? std::string("offline: replicas run fully busy (a batch queue has no bursts to absorb; --target-utilisation sets headroom)")
                                : fmt::format("replicas run at most {:.0f}% busy (--target-utilisation): headroom for bursts and queueing",
                                              w.target_utilisation * 100));
  if (w.clients && !w.simulable())
    throw InputError(fmt::format("--clients {}: best-of-N samples (--samples) and verifiers are not simulated, and a closed loop has no rate "
                                 "for the analytic operating point; give --requests-per-second instead, or leave out --samples/--verifier",
                                 *w.clients));
  // An engine that prefills each prompt whole in one step takes no budget below it
  // (TGI 1.x refuses --max-batch-prefill-tokens below --max-input-length).
  if (w.max_batched_tokens && w.engine && w.engine->prefill == PrefillScheduling::separate && *w.max_batched_tokens < w.prompt_tokens) {
    const std::string chunking = engine_names_where(prefills_in_chunks, w.engine->software);  // none on Neuron
    throw InputError(fmt::format("--max-batched-tokens {}: {} prefills each prompt whole in one step, so its budget holds at least the "
                                 "{:.0f}-token mean prompt; give {:.0f} or more{}",
                                 *w.max_batched_tokens, w.engine->name, w.prompt_tokens, std::ceil(w.prompt_tokens),
                                 chunking.empty() ? std::string() : fmt::format(", or an engine that prefills in chunks ({})", chunking)));
  }
  return w;
}

double lora_adapter_params(const ModelSpec& m, int rank, LoraTargets targets) {
  const double r = rank, h = m.hidden;
  double attn;
  if (m.uses_mla()) {
    const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    attn = r * (h + double(m.heads) * qk) + r * (h + m.kv_lora_rank + m.qk_rope_head_dim) +
           r * (double(m.heads) * m.v_head_dim + h);
  } else {
    const double q = double(m.heads) * m.head_dim, kv = double(m.kv_heads) * m.head_dim;
    attn = r * (h + q) * 2 + r * (h + kv) * 2;  // q, o, k, v
  }
  double total = m.layers * attn;
  if (targets == LoraTargets::attention_mlp) {
    const int matrices = m.gated_mlp ? 3 : 2;
    auto mlp = [&](double f) { return matrices * r * (h + f); };
    if (m.is_moe()) {
      total += m.dense_layers * mlp(m.ffn);
      total += m.moe_layers() * (m.experts + m.shared_experts) * mlp(m.expert_ffn);
    } else {
      total += m.layers * mlp(m.ffn);
    }
  }
  return total;
}

}  // namespace gpuadvisor
