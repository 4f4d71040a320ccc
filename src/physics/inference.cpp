// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/inference.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/physics/memory.hpp"
#include "gpuadvisor/workload/neuron.hpp"

namespace gpuadvisor {

namespace {
constexpr double kGb = 1e9;
constexpr double kActivationBytes = 2;  // 16-bit activations between layers

double kv_bytes(Precision p) { return p == Precision::fp8 ? 1 : 2; }

// Small-message all-reduce for decode over the group's ranks (its NeuronCores
// on Neuron: tensor_parallel_ranks): one latency (growing with the ranks on
// Neuron's rings) plus the ring bandwidth term.
double decode_all_reduce_s(double bytes, int tp, const Accelerator& acc) {
  const int ranks = tensor_parallel_ranks(acc, tp);
  if (ranks <= 1) return 0;
  return serving_all_reduce_latency_s(acc, ranks) + 2.0 * (ranks - 1) / ranks * bytes / (intra_node_gb_per_s(acc) * kGb);
}

// Expected distinct routed experts one MoE layer touches for `tokens` tokens,
// uniform routing: E (1 - (1 - k/E)^tokens).
double experts_touched(const ModelSpec& m, double tokens) {
  const double E = m.experts, k = m.active_experts;
  return E * (1 - std::pow(1 - k / E, tokens));
}

}  // namespace

// Expert parallelism: the routed experts of one MoE layer that its busiest
// rank holds among those `tokens` touch, uniform routing: each of a rank's
// E / ep experts is touched with probability q = touched / E, and the step
// waits for the largest of ep such binomial counts, E[max] = sum over k of
// 1 - F(k)^ep (F the binomial CDF). At ep = 1 (experts sliced over tp) every
// rank reads its slice of each touched expert: the touched experts / tp.
double busiest_rank_experts_touched(const ModelSpec& m, double tokens, int ep) {
  const double touched = experts_touched(m, tokens);
  if (ep <= 1) return touched;
  const int per_rank = m.experts / ep;
  const double q = std::clamp(touched / m.experts, 0.0, 1.0);
  if (q <= 0 || q >= 1) return q * per_rank;
  double pmf = std::pow(1 - q, per_rank), cdf = 0, expected_max = 0;
  for (int k = 0; k < per_rank; ++k) {
    cdf = std::min(1.0, cdf + pmf);
    expected_max += 1 - std::pow(cdf, ep);
    pmf *= q / (1 - q) * double(per_rank - k) / (k + 1);
  }
  return expected_max;
}

bool pads_attention_heads(const Accelerator& acc) { return acc.is_neuron(); }

double decode_sequence_layer_s(const Accelerator& acc) {
  if (!acc.is_neuron()) return 0;
  return acc.efficiency.sequence_layer_us > 0 ? acc.efficiency.sequence_layer_us * 1e-6 : kNeuronSequenceLayerS;
}

double kv_tokens_held(const EngineProfile& engine, const InferenceWorkload& w) {
  const double generated = w.generated_tokens_per_sequence();
  return w.prompt_tokens + (engine.reserves_full_kv ? generated : generated / 2);
}

double kv_shared_prefix_tokens(const EngineProfile& engine, const InferenceWorkload& w) {
  return engine.prefix_cache ? w.prefix_tokens() : 0;  // prefix_tokens() leaves a prompt's last token to compute
}

double kv_cached_tokens(const ModelSpec& m, const EngineProfile& engine, double tokens) {
  return engine.full_length_local_kv ? tokens : m.attended_tokens(tokens);
}

std::optional<int> compiled_batch_on(const Accelerator& acc, const InferenceWorkload& w) {
  return acc.is_neuron() ? w.compiled_batch : std::nullopt;
}

int decode_slots(const Accelerator& acc, const InferenceWorkload& w, int batch) {
  return std::max(batch, compiled_batch_on(acc, w).value_or(batch));
}

double bytes_per_weight(WeightFormat f) {
  switch (f) {
    case WeightFormat::bf16: return 2;
    case WeightFormat::fp8: return 1;
    case WeightFormat::int8: return 1;
    case WeightFormat::int4: return kBytesInt4;
    case WeightFormat::fp4: return kBytesFp4;
  }
  return 2;
}

std::optional<ServingPrecision> serving_precision(const Accelerator& acc, WeightFormat f) {
  auto sixteen = effective_precision(acc, Precision::bf16);
  if (f == WeightFormat::fp8 && acc.tflops(Precision::fp8)) return ServingPrecision{Precision::fp8, false};
  if (f == WeightFormat::fp4 && acc.tflops(Precision::fp4)) return ServingPrecision{Precision::fp4, false};
  if (!sixteen) return std::nullopt;
  return ServingPrecision{*sixteen, f != WeightFormat::bf16};
}

Precision serving_kv_cache(const Accelerator& acc, const EngineProfile& engine, const InferenceWorkload& w) {
  if (w.kv_cache) return *w.kv_cache;
  const bool quantised = w.weights == WeightFormat::fp8 || w.weights == WeightFormat::fp4;
  return engine.quantised_checkpoint_fp8_kv && quantised && acc.tflops(Precision::fp8) ? Precision::fp8 : Precision::bf16;
}

std::optional<std::string> serving_accelerator_problem(const Accelerator& acc, const InferenceWorkload& w) {
  const EngineProfile& engine = engine_for(acc, w.engine);
  if (auto p = engine_problem(engine, acc, w.weights)) return p;
  auto precision = serving_precision(acc, w.weights);
  if (!precision) return fmt::format("{} has no 16-bit or {} tensor throughput", acc.name, to_string(w.weights));
  const auto& wo = engine.weight_only;
  if (precision->weight_only && std::find(wo.begin(), wo.end(), w.weights) == wo.end())
    return fmt::format("engine {} runs {} weights only on accelerators with {} math; {} has none (--weights bf16, or --engine vllm or sglang, "
                       "which run them dequantised)",
                       engine.name, to_string(w.weights), to_string(w.weights), acc.name);
  if (engine.fp8_kv_needs_fp8_math && serving_kv_cache(acc, engine, w) == Precision::fp8 && !acc.tflops(Precision::fp8))
    return fmt::format("engine {} keeps an fp8 KV cache only on accelerators with fp8 math; {} has none (--kv-cache bf16, or --engine vllm)",
                       engine.name, acc.name);
  // vLLM runs fp8 checkpoints weight-only (FP8 Marlin) from compute capability 7.5 (Turing) up; Volta has no such kernel.
  const bool eight_or_four = w.weights == WeightFormat::fp8 || w.weights == WeightFormat::fp4;
  if (eight_or_four && acc.name.rfind("V100", 0) == 0)
    return fmt::format("{} (Volta) has no kernels for {} weights: serving engines run them from compute capability 7.5 up; use --weights int8 or int4",
                       acc.name, to_string(w.weights));
  return std::nullopt;
}

double inference_weight_bytes(const ModelSpec& m, WeightFormat f) {
  const double embeddings = m.embedding_params();
  return embeddings * kBytesWeight16 + (m.total_params() - embeddings) * bytes_per_weight(f);
}

double serving_weight_bytes_per_accelerator(const ModelSpec& m, WeightFormat f, const ServingLayout& l) {
  const double experts = m.expert_params_total() * bytes_per_weight(f);
  return ((inference_weight_bytes(m, f) - experts) / l.attention_tp() + experts / l.tp) / l.pp;
}

double kv_gb_per_token_on_rank(const ModelSpec& m, Precision kv, const ServingLayout& l) {
  return kv_cache_bytes_per_token(m, kv, l.attention_tp()) / l.pp / kGb;
}

double kv_gb_per_token_averaged(const ModelSpec& m, Precision kv, const ServingLayout& l) {
  return kv_gb_per_token_on_rank(m, kv, l) / l.attention_dp;
}

std::string to_string(BatchLimit limit) {
  switch (limit) {
    case BatchLimit::memory: return "memory";
    case BatchLimit::engine_sequence_limit: return "engine_sequence_limit";
    case BatchLimit::concurrency: return "concurrency";
    case BatchLimit::max_batched_tokens: return "max_batched_tokens";
    case BatchLimit::compiled_batch: return "compiled_batch";
  }
  return "memory";
}

SequenceCap replica_sequence_limit(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w, const ServingLayout& l) {
  SequenceCap cap{w.concurrency.value_or(engine_max_sequences(engine, acc, kMaxServingBatch) * l.attention_dp),
                  w.concurrency ? BatchLimit::concurrency : BatchLimit::engine_sequence_limit};
  if (!w.max_batched_tokens) return cap;
  // Every decoding sequence takes its token (and its proposals) from the step's
  // budget: a budget set below the sequence limit caps it (vLLM refuses
  // max_num_seqs above max_num_batched_tokens).
  const int by_budget = std::max(1, *w.max_batched_tokens / w.decode_queries_per_sequence() * l.attention_dp);
  if (by_budget < cap.sequences) cap = {by_budget, BatchLimit::max_batched_tokens};
  return cap;
}

int replica_sequence_cap(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w, const ServingLayout& l) {
  const int sequences = replica_sequence_limit(engine, acc, w, l).sequences;
  const std::optional<int> compiled = compiled_batch_on(acc, w);
  return compiled ? std::min(sequences, *compiled) : sequences;
}

int sample_waves(const InferenceWorkload& w, int batch) { return std::max(1, (w.samples + std::max(1, batch) - 1) / std::max(1, batch)); }

int replica_step_tokens(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w, const ServingLayout& l) {
  return step_token_budget(engine, acc, w) * l.attention_dp;
}

double kv_cache_bytes_per_token(const ModelSpec& m, Precision kv, int tp) {
  if (m.uses_mla()) return double(m.layers) * (m.kv_lora_rank + m.qk_rope_head_dim) * kv_bytes(kv);  // latent, replicated over tp
  const int heads_per_rank = std::max(1, (m.kv_heads + tp - 1) / tp);
  return 2.0 * m.layers * heads_per_rank * m.head_dim * kv_bytes(kv);
}

double decode_kernels_per_layer(const ModelSpec& m) { return kDecodeKernelsPerLayer + (m.uses_mla() ? kMlaExtraDecodeKernels : 0); }

// Kernels run one after another in the step's graph: each one's fixed time
// (kernel_floor_s) adds to the byte and FLOP time of the kernels themselves.
double DecodeStep::accelerator_s() const {
  return std::max(weights_read_s + kv_read_s + moe_permute_s, compute_s) + kernel_floor_s + moe_routing_s + sequence_s + dequant_s + tensor_parallel_s +
         expert_parallel_s + pipeline_p2p_s + draft_s;
}

double DecodeStep::total_s() const { return std::max(accelerator_s(), launch_s) + host_s; }

std::string DecodeStep::bound() const {
  const double memory = weights_read_s + kv_read_s + moe_permute_s, comm = tensor_parallel_s + expert_parallel_s + pipeline_p2p_s;
  if (launch_s > accelerator_s() || host_s > accelerator_s()) return "engine host overhead";
  const double kernels = kernel_floor_s + moe_routing_s;
  if (comm > std::max({memory, compute_s, dequant_s, kernels, sequence_s})) return "communication";
  if (sequence_s > std::max({memory, compute_s, kernels})) return "per-sequence work";
  if (kernels > std::max(memory, compute_s)) return "kernel latency";
  if (dequant_s > std::max(memory, compute_s)) return "dequantisation";
  return memory >= compute_s ? "memory bandwidth" : "compute";
}

namespace {

// Expert parallelism and attention data parallelism (§MoE serving layouts):
// an MoE model's experts spread whole over every accelerator of one instance,
// its attention data parallel over a divisor of them, on GPU engines.
std::optional<std::string> expert_parallel_problem(const ModelSpec& m, const Cluster& c, const ServingLayout& l) {
  if (l.ep == 1 && l.attention_dp == 1) return std::nullopt;
  if (!c.accelerator->is_cuda()) return fmt::format("{} serving runs tensor parallel only here (no expert-parallel layouts)", c.accelerator->name);
  if (!m.is_moe()) return fmt::format("ep and attention_dp are for mixture-of-experts models; {} is dense", m.name);
  if (l.ep != l.tp)
    return fmt::format("ep {} must equal tp {}: the experts spread over every accelerator of the stage{}", l.ep, l.tp,
                       l.attention_dp > 1 ? ", as attention data parallelism needs them" : "");
  if (l.tp % l.attention_dp != 0) return fmt::format("attention_dp {} does not divide tp {}", l.attention_dp, l.tp);
  if (m.experts % l.ep != 0) return fmt::format("ep {} does not divide the model's {} experts", l.ep, m.experts);
  if (l.pp > 1) return "expert-parallel layouts stay inside one instance here (pp 1)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> serving_engine_layout_problem(const EngineProfile& engine, const ServingLayout& l) {
  if ((l.ep > 1 || l.attention_dp > 1) && !engine.expert_parallel)
    return fmt::format("engine {} runs MoE experts tensor parallel only (no ep or attention_dp)", engine.name);
  if (l.attention_dp > 1 && l.attention_dp < l.tp && !engine.partial_attention_dp)
    return fmt::format("engine {} runs attention data parallel over every rank of the replica only (attention_dp = tp = {}, attention at TP1)",
                       engine.name, l.tp);
  return std::nullopt;
}

std::optional<std::string> serving_layout_problem(const ModelSpec& m, const Cluster& c, const ServingLayout& l) {
  const int per_node = c.instance->accelerator_count;
  if (l.tp < 1 || l.pp < 1 || l.ep < 1 || l.attention_dp < 1) return "tp, pp, ep and attention_dp must be at least 1";
  if (per_node % l.tp != 0)
    return fmt::format("tp {} does not divide the {} accelerators of one {} (tensor parallelism stays inside an instance)", l.tp, per_node, c.instance->name);
  if (auto p = expert_parallel_problem(m, c, l)) return p;
  if (m.heads % l.attention_tp() != 0 && !pads_attention_heads(*c.accelerator))
    return fmt::format("tp {} does not divide the model's {} attention heads", l.attention_tp(), m.heads);
  if (auto p = neuron_layout_problem(*c.accelerator, m, l.tp, false)) return p;
  if (l.pp > 1 && l.tp != per_node)
    return fmt::format("pipeline stages span whole instances: with pp {} the tp must be {} (all accelerators of one {})", l.pp, per_node, c.instance->name);
  if (l.pp > m.layers) return fmt::format("pp {} exceeds the model's {} layers", l.pp, m.layers);
  return std::nullopt;
}

namespace {

// Tensor-parallel all-reduces of one pass over `tokens` tokens of a stage
// (§Communication in serving): two per layer over tp; with expert parallelism
// one per attention block and one per dense-FFN layer, over the attention's
// tensor parallel, each on its attention rank's share of the tokens.
double pass_all_reduce_s(const ModelSpec& m, const Accelerator& acc, const ServingLayout& l, double tokens) {
  if (!l.experts_all_to_all()) return 2.0 * m.layers * decode_all_reduce_s(tokens * m.hidden * kActivationBytes, l.tp, acc);
  const double reduces = 2.0 * m.layers - m.moe_layers();
  return reduces * decode_all_reduce_s(tokens / l.attention_dp * m.hidden * kActivationBytes, l.attention_tp(), acc);
}

// Expert parallelism (§MoE serving layouts): every MoE layer dispatches each
// rank's share of the tokens (tokens / tp), k hidden-state copies of 16 bits,
// to the ranks holding their experts and combines the results back: two
// all-to-alls over NVLink, each kExpertAllToAllLatencyS plus (n-1)/n of its bytes.
double expert_all_to_all_s(const ModelSpec& m, const Accelerator& acc, const ServingLayout& l, double tokens) {
  if (!l.experts_all_to_all() || !m.is_moe()) return 0;
  const double bytes = tokens / l.tp * m.active_experts * m.hidden * kActivationBytes;
  return 2.0 * m.moe_layers() * all_to_all_s(bytes, l.ep, intra_node_gb_per_s(acc), kExpertAllToAllLatencyS);
}

struct Prefill {
  double compute_s = 0, weights_read_s = 0, comm_s = 0, launch_s = 0;
  double expert_parallel_s = 0;  // the all-to-alls' part of comm_s
  double total_s() const { return std::max({compute_s, weights_read_s, launch_s}) + comm_s; }
};

// Prefill of `tokens` prompt tokens in `sequences` prompts of equal length;
// `batched_tokens` is the token count the matrices see (the prompts alone, or
// a shared chunk under load).
// With `attention_context`, each token attends that many earlier tokens (a
// chunk of a longer prompt: the tokens before it plus half the chunk) instead
// of half its own prompt (causal).
// With a shared prefix cached (--prefix-share), the tokens a prefill
// computes attend the prefix and, causally, half of themselves on average:
// the context each attends; none without a prefix (the prefill's own causal half).
std::optional<double> prefix_context(const InferenceWorkload& w, double prompt) {
  if (w.prefix_tokens() <= 0) return std::nullopt;
  const double computed = w.computed_prompt_tokens(prompt);
  return (prompt - computed) + computed / 2;
}

// With attention data parallelism the prompts' attention and dense matrices
// run on the attention ranks that hold them: min(attention_dp, sequences)
// ranks for prompts prefilled alone, every rank under load (`spread`: the
// load's prompts land on all of them); the routed experts on every accelerator.
Prefill prefill(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const ServingLayout& l, const ServingPrecision& p,
                double tokens, double batched_tokens, double sequences = 1, std::optional<double> attention_context = std::nullopt,
                bool spread = false) {
  const Accelerator& acc = *c.accelerator;
  Prefill out;
  const double attention_flops = attention_context ? 4.0 * m.layers * m.query_width() * tokens * m.attended_tokens(*attention_context)
                                                   : 2.0 * m.layers * m.query_width() * tokens * m.attended_tokens(tokens / sequences);
  const double flops = tokens * 2 * matmul_params_per_token(m) + attention_flops;
  // Compiled prefill graphs (prefill_compute_factor) run at a flat share of the
  // compute fraction; GPU kernels ramp with width and tokens.
  const EngineProfile& engine = engine_for(acc, w.engine);
  auto efficiency = [&](Precision at) {
    return engine.prefill_compute_factor > 0 ? max_compute_fraction(acc, at) * engine.prefill_compute_factor
                                             : compute_efficiency(acc, at, double(m.hidden) / l.attention_tp(), batched_tokens);
  };
  const double eff = efficiency(p.compute);
  // On GPUs routed experts see k/E of the batched tokens each, as in training
  // (matmul_seconds); a compiled graph's flat share covers its experts too.
  const double matmul_flops = tokens * 2 * matmul_params_per_token(m);
  const double peak = acc.tflops(p.compute).value_or(0) * 1e12;
  const double tokens_per_expert = batched_tokens * m.active_experts / std::max(1, m.experts);
  const double matmul_s = engine.prefill_compute_factor > 0 ? matmul_flops / (peak * eff)
                                                            : matmul_seconds(m, acc, p.compute, matmul_flops, eff, l.expert_tp(), tokens_per_expert);
  const double expert_s = engine.prefill_compute_factor > 0 ? 0 : routed_expert_matmul_seconds(m, acc, p.compute, matmul_flops, l.expert_tp(), tokens_per_expert);
  const Precision attention_p = serving_attention_precision(acc, p.compute, p.kv_cache);
  const double attention_s = (flops - matmul_flops) / (acc.tflops(attention_p).value_or(0) * 1e12 * efficiency(attention_p));
  const double ranks = spread ? l.attention_dp : std::clamp(std::ceil(sequences), 1.0, double(l.attention_dp));
  out.compute_s = expert_s / l.tp + (matmul_s - expert_s + attention_s) / (l.attention_tp() * ranks);
  const double bw = acc.memory_bandwidth_gb_per_s * acc.efficiency.memory_bandwidth_fraction * kGb;
  out.weights_read_s = serving_weight_bytes_per_accelerator(m, w.weights, l) * l.pp / bw * std::min(1.0, tokens / batched_tokens);
  const double act = tokens * m.hidden * kActivationBytes;
  out.expert_parallel_s = expert_all_to_all_s(m, acc, l, tokens);
  out.comm_s += pass_all_reduce_s(m, acc, l, tokens) + out.expert_parallel_s;
  if (l.pp > 1)
    out.comm_s += (l.pp - 1) * (kCollectiveLatencyInterS + act / (inter_node_gb_per_s(*c.instance, acc, 1) * kGb));
  out.launch_s = m.layers * (engine.launch_s_per_layer + engine.prefill_launch_s_per_kernel * decode_kernels_per_layer(m));
  return out;
}

// One prompt's prefill: on a chunked engine whose step budget (the profile's,
// or --max-batched-tokens) is below the tokens it computes, ceil(computed /
// budget) passes, each attending the shared prefix and the chunks before it,
// as the simulator runs them; one pass otherwise. `under_load`: each pass
// shares a budget-sized step with other work.
double prompt_prefill_s(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const ServingLayout& l,
                        const ServingPrecision& p, double prompt, bool under_load) {
  const EngineProfile& engine = engine_for(*c.accelerator, w.engine);
  const int budget = step_token_budget(engine, *c.accelerator, w);
  const double computed = w.computed_prompt_tokens(prompt);
  if (engine.prefill != PrefillScheduling::chunked || computed <= budget)
    return prefill(m, w, c, l, p, computed, under_load ? std::max<double>(computed, budget) : computed, 1, prefix_context(w, prompt),
                   under_load).total_s();
  const double cached = prompt - computed;  // the shared prefix
  double s = 0;
  for (double done = 0; done < computed; done += budget) {
    const double tokens = std::min<double>(budget, computed - done);
    s += prefill(m, w, c, l, p, tokens, under_load ? budget : tokens, 1, cached + done + tokens / 2, under_load).total_s();
  }
  return s;
}

// The drafter's K passes before a speculative step (§Speculative decoding).
// "mtp": each pass runs a draft head of one decoder layer and the output head
// for every sequence, the share `head` of the target's weights and matrix work
// (read once per pass, as the target's), plus one layer's kernel floor and
// all-reduces; "ngram": proposals are looked up in the context, no pass.
double drafter_s(const ModelSpec& m, const SpeculativeDecoding& sd, const DecodeStep& s, double matmul_one_token_s) {
  if (sd.drafter != "mtp") return 0;
  const double layer = (m.active_params() - m.embedding_params()) / m.layers;
  const double head = std::min(1.0, (layer + double(m.vocab) * m.hidden) / matmul_params_per_token(m));
  const double pass_s = head * std::max(s.weights_read_s, matmul_one_token_s) + (s.kernel_floor_s + s.tensor_parallel_s) / m.layers;
  return sd.draft_tokens * pass_s;
}

// `context`: the tokens each sequence holds (default: the mean over a
// sequence's life, prompt + half its generated tokens).
DecodeStep decode_step(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const ServingLayout& l,
                       const ServingPrecision& p, int batch, std::optional<double> context_tokens = std::nullopt) {
  const Accelerator& acc = *c.accelerator;
  const EngineProfile& engine = engine_for(acc, w.engine);
  DecodeStep s;
  // Sequences per pipeline micro-batch as the device computes them (with Neuron's padded slots).
  const double stage_batch = std::ceil(double(decode_slots(acc, w, batch)) / l.pp);
  const double bw = acc.memory_bandwidth_gb_per_s * acc.efficiency.memory_bandwidth_fraction * kGb;
  // Weights read once per step by each stage, per accelerator: the non-expert
  // weights of its attention rank, and of the experts only those the step's
  // tokens touch (all attention ranks' tokens reach every expert rank).
  const double bpw = bytes_per_weight(w.weights);
  // With expert parallelism the step waits for the rank holding the most touched experts.
  const double step_tokens = stage_batch * w.decode_queries_per_sequence();
  const double expert_bytes = m.is_moe() ? m.moe_layers() * m.expert_mlp_params() * bpw : 0;
  const double experts_read = expert_bytes * (m.is_moe() ? experts_touched(m, step_tokens) : 0);
  const double experts_read_per_accelerator =
      l.ep > 1 ? expert_bytes * busiest_rank_experts_touched(m, step_tokens, l.ep) : experts_read / l.tp;
  const double weight_bytes = inference_weight_bytes(m, w.weights) - m.expert_params_total() * bpw + experts_read;  // all ranks together
  const double weight_bytes_per_accelerator = (weight_bytes - experts_read) / l.attention_tp() + experts_read_per_accelerator;
  // Each attention rank serves its share of the stage's sequences.
  const double rank_batch = std::ceil(stage_batch / l.attention_dp);
  const double context = context_tokens.value_or(w.prompt_tokens + w.generated_tokens_per_sequence() / 2);
  const double kv_per_token = kv_cache_bytes_per_token(m, p.kv_cache, l.attention_tp());
  // Speculative decoding: each sequence computes its token and the K
  // proposals in one pass (the weights and its KV read once), §Speculative decoding.
  const double queries = w.decode_queries_per_sequence();
  const double stage_tokens = stage_batch * queries;
  // pp stages in turn: each reads its 1/pp share for its micro-batch.
  s.weights_read_s = weight_bytes_per_accelerator / bw;
  // Weight-only formats: each quantised weight read is dequantised on the
  // vector units once per step, whatever the batch (once per sequence with
  // legacy kernels, dequant_per_sequence); the engine's kernels hide all but
  // `dequant_ops_per_weight` operations of it behind the weight stream.
  if (p.weight_only) {
    const double quantised = (weight_bytes_per_accelerator - m.embedding_params() * kBytesWeight16 / l.attention_tp()) / bpw;
    const double rows = engine.dequant_per_sequence ? rank_batch : 1;  // legacy kernels unpack per sequence
    if (acc.vector_fp32_tflops) s.dequant_s = rows * quantised * engine.dequant_ops_per_weight / (*acc.vector_fp32_tflops * 1e12);
    else s.dequant_unknown = true;
  }
  s.kv_read_s = rank_batch * m.attended_tokens(context) * kv_per_token / bw;
  // MoE dispatch reads each token's activations and writes k copies; combine
  // reads the k expert outputs and writes their sum: (2k + 2) x hidden x 2 bytes
  // per token of the attention rank and MoE layer (every TP rank holds the full hidden).
  if (m.is_moe())
    s.moe_permute_s = double(m.moe_layers()) / l.pp * stage_tokens / l.attention_dp * (2.0 * m.active_experts + 2) * m.hidden * kActivationBytes / bw;
  const double matmul_flops = stage_tokens * 2 * matmul_params_per_token(m);
  const double attention_flops = stage_tokens * 4.0 * m.layers * m.query_width() * m.attended_tokens(context);
  // Decode matrices have few rows: no token-count factor, dense or expert
  // (the memory term covers that regime); routed experts keep their narrower
  // width's factor (no row count).
  const double dense_eff = compute_efficiency(acc, p.compute, double(m.hidden) / l.attention_tp(), std::nullopt);
  const Precision attention_p = serving_attention_precision(acc, p.compute, p.kv_cache);
  const double attention_s = attention_flops / (acc.tflops(attention_p).value_or(0) * 1e12 *
                                                compute_efficiency(acc, attention_p, double(m.hidden) / l.attention_tp(), std::nullopt));
  const double matmul_s = matmul_seconds(m, acc, p.compute, matmul_flops, dense_eff, l.expert_tp(), std::nullopt) / l.tp;
  s.compute_s = matmul_s + attention_s / l.tp;
  s.tensor_parallel_s = pass_all_reduce_s(m, acc, l, stage_tokens);
  s.expert_parallel_s = expert_all_to_all_s(m, acc, l, stage_tokens);
  if (l.pp > 1)
    s.pipeline_p2p_s = (l.pp - 1) * (kCollectiveLatencyInterS + stage_tokens * m.hidden * kActivationBytes /
                                                                   (inter_node_gb_per_s(*c.instance, acc, 1) * kGb));
  // GPUs: the kernels' own floor, and MoE routing (decode_kernels_per_layer, kMoeRoutingPerLayerS).
  if (acc.is_cuda()) {
    s.kernel_floor_s = double(m.layers) / l.pp * decode_kernels_per_layer(m) * kKernelMinS;
    if (m.is_moe()) s.moe_routing_s = double(m.moe_layers()) / l.pp * kMoeRoutingPerLayerS;
  }
  // Per-sequence work follows the sequences in flight, not the padded slots.
  s.sequence_s = std::ceil(double(batch) / l.pp) * m.layers / l.pp * decode_sequence_layer_s(acc);
  // The engine's host work: kernel launches overlap the step (each stage
  // launches its layers); scheduling and per-sequence work run in series.
  s.launch_s = double(m.layers) / l.pp * engine.launch_s_per_layer;
  // Each attention rank's scheduler runs in its own process, in parallel.
  s.host_s = engine.step_overhead_s + std::ceil(double(batch) / l.attention_dp) * engine.sequence_overhead_s;
  if (w.speculative) s.draft_s = drafter_s(m, *w.speculative, s, matmul_s / queries);
  return s;
}

}  // namespace

double static_batch_ttft_s(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e, int sequences) {
  const double tokens = double(sequences) * w.prompt_tokens;
  return prefill(m, w, c, e.layout, e.precision, tokens, tokens, sequences).total_s() + e.step.total_s();
}

namespace {
constexpr double kProbeContextTokens = 1024;  // any context: the terms are linear in it
}

DecodeCost decode_cost(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e, int batch) {
  DecodeCost d;
  d.base = decode_step(m, w, c, e.layout, e.precision, batch, 0.0);
  if (batch < 1) return d;
  const DecodeStep probe = decode_step(m, w, c, e.layout, e.precision, batch, kProbeContextTokens);
  const double attended_sum = batch * m.attended_tokens(kProbeContextTokens);
  d.kv_read_s_per_token = probe.kv_read_s / attended_sum;
  d.attention_s_per_token = (probe.compute_s - d.base.compute_s) / attended_sum;
  return d;
}

PrefillCost prefill_cost(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e, int tokens) {
  PrefillCost out;
  const Prefill bare = prefill(m, w, c, e.layout, e.precision, tokens, tokens, 1, 0.0, true);
  const Prefill probe = prefill(m, w, c, e.layout, e.precision, tokens, tokens, 1, kProbeContextTokens, true);
  out.matmul_s = bare.compute_s;
  out.attention_s_per_token_context = (probe.compute_s - bare.compute_s) / (double(tokens) * m.attended_tokens(kProbeContextTokens));
  out.weights_read_s = bare.weights_read_s;
  out.comm_s = bare.comm_s - bare.expert_parallel_s;
  out.expert_parallel_s = bare.expert_parallel_s;
  out.expert_parallel_latency_s = e.layout.experts_all_to_all() && m.is_moe() ? 2.0 * m.moe_layers() * kExpertAllToAllLatencyS : 0;
  out.launch_s = bare.launch_s;
  return out;
}

namespace {
// Mean prompts one prefill pass's token budget holds (at least one: a longer
// prompt prefills alone).
double prompts_in_prefill_budget(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w) {
  return std::max(1.0, std::floor(step_token_budget(engine, acc, w) / std::max(1.0, w.prompt_tokens)));
}
}  // namespace

int prompts_per_prefill(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w, int batch) {
  if (engine.prefill != PrefillScheduling::separate || engine.prefill_batching_steps <= 0) return 1;
  const int steps = w.max_waiting_tokens.value_or(engine.prefill_batching_steps);  // --max-waiting-tokens: engines with TGI's router only
  const double arriving = double(batch) * steps / std::max(1.0, w.generated_tokens_per_sequence());
  return static_cast<int>(std::clamp(std::min(arriving, prompts_in_prefill_budget(engine, acc, w)), 1.0, double(batch)));
}

int router_batch_cap(const EngineProfile& engine, const Accelerator& acc, const InferenceWorkload& w) {
  const int hold_steps = router_hold_steps(engine, w);
  if (hold_steps <= 0) return std::numeric_limits<int>::max();
  const double fit = prompts_in_prefill_budget(engine, acc, w);
  const double steps_per_sequence = w.generated_tokens_per_sequence() / w.tokens_per_decode_step();
  const double by_ratio = std::floor(fit / engine.waiting_served_ratio) + fit;
  const double by_hold = std::ceil(fit * steps_per_sequence / hold_steps);
  return static_cast<int>(std::max(by_ratio, by_hold));
}

namespace {

// Replica time per request spent in prefill under load at `batch` sequences
// in flight. A chunked engine shares each weight read among a chunk's prompts;
// an engine that prefills separately runs the prompts gathered since its last
// prefill (prompts_per_prefill) as one pass.
double prefill_s_per_request(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const InferenceEstimate& e, int batch) {
  const EngineProfile& engine = *e.engine;
  const ServingLayout& l = e.layout;
  const ServingPrecision& p = e.precision;
  const int chunk = step_token_budget(engine, *c.accelerator, w);
  double s;
  if (engine.prefill == PrefillScheduling::chunked) {
    s = prompt_prefill_s(m, w, c, l, p, w.prompt_tokens, true);
  } else {
    const int k = prompts_per_prefill(engine, *c.accelerator, w, batch);
    const double computed = k * w.computed_prompt_tokens(w.prompt_tokens);
    s = prefill(m, w, c, l, p, computed, computed, k, prefix_context(w, w.prompt_tokens), true).total_s() / k;
  }
  // Best-of-N: the verifier reads every sample once, like a prefill of its tokens.
  if (w.verifier) {
    const double scored = w.samples * (w.prompt_tokens + w.generated_tokens_per_sequence());
    const double batched = engine.prefill == PrefillScheduling::chunked ? std::max<double>(scored, chunk) : scored;
    s += prefill(*w.verifier, w, c, l, p, scored, batched, w.samples, std::nullopt, true).total_s();
  }
  return s / l.pp;
}

}  // namespace

namespace {

// The KV cache one sequence holds: per token on one accelerator, the cached
// tokens of a mean request beyond the shared prefix, the prefix held once per
// accelerator, and the cached tokens of the longest (p95) request.
struct KvNeed {
  double gb_per_token = 0;       // averaged over the attention ranks (a sequence lives on one)
  double rank_gb_per_token = 0;  // on each accelerator of the rank that holds it
  double context_tokens = 0;     // a sequence's own: cached (or reserved) less the shared prefix
  double shared_gb = 0;          // the shared prefix (kv_shared_prefix_tokens), once per accelerator
  double longest_request_tokens = 0, longest_tokens = 0;
};

KvNeed kv_need(const ModelSpec& m, const InferenceWorkload& w, const EngineProfile& engine, const ServingLayout& l, Precision kv_cache) {
  KvNeed k;
  k.gb_per_token = kv_gb_per_token_averaged(m, kv_cache, l);
  k.rank_gb_per_token = kv_gb_per_token_on_rank(m, kv_cache, l);
  // A sliding-window layer keeps a sequence's last `window` tokens: its own
  // tokens beyond the prefix up to the window, and the prefix's last ones, shared.
  const double shared = kv_shared_prefix_tokens(engine, w);
  k.context_tokens = std::max(1.0, kv_cached_tokens(m, engine, kv_tokens_held(engine, w) - shared));
  k.shared_gb = k.rank_gb_per_token * kv_cached_tokens(m, engine, shared);
  k.longest_request_tokens = w.prompt_tokens_p95 + w.output_tokens_p95 + w.reasoning_tokens;
  k.longest_tokens = kv_cached_tokens(m, engine, k.longest_request_tokens);
  return k;
}

}  // namespace

void evaluate_batch(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, InferenceEstimate& e, int batch) {
  e.batch = batch;
  e.prefill_gpu_s_per_request = prefill_s_per_request(m, w, c, e, batch);
  e.step = decode_step(m, w, c, e.layout, e.precision, batch);
  const double t = e.step.total_s();
  const KvNeed kv = kv_need(m, w, *e.engine, e.layout, e.precision.kv_cache);
  e.memory.kv_cache_gb = decode_slots(*c.accelerator, w, batch) * kv.context_tokens * kv.gb_per_token + kv.shared_gb;
  e.memory.kv_shared_prefix_gb = kv.shared_gb;
  // Replica time per request: its batched prefill plus its share of decode
  // steps (every step advances `batch` sequences by one token).
  // Speculative decoding: each step emits tokens_per_decode_step tokens per sequence.
  const double per_token_s = t / w.tokens_per_decode_step();
  const double per_request_s = e.prefill_gpu_s_per_request + w.samples * w.generated_tokens_per_sequence() * per_token_s / batch;
  e.requests_per_second = 1 / per_request_s;
  e.prefill_share = e.requests_per_second * e.prefill_gpu_s_per_request;
  e.ttft_s = e.prefill_s + t;
  // A request's own prefill comes before its first token; between its tokens
  // run the prefills of the other requests in flight, which take their share
  // of replica time: (r-1)/r of prefill_share with r requests in flight (none
  // at batch 1). One-token requests have no gap between tokens (tpot 0, as the
  // simulator reports): they wait for the others' prefills before their step.
  const double requests_in_flight = double(batch) / w.samples;
  const double others_in_flight = std::max(0.0, requests_in_flight - 1);
  if (w.one_token_outputs()) {
    e.tpot_s = 0;
    e.latency_s = e.ttft_s + others_in_flight * e.prefill_gpu_s_per_request;
    e.tokens_per_second_per_user = w.generated_tokens_per_sequence() / e.latency_s;
  } else {
    e.tpot_s = per_token_s / (1 - e.prefill_share * others_in_flight / requests_in_flight);
    // The request ends with its samples' last wave (the first token comes with TTFT).
    e.latency_s = e.ttft_s + (sample_waves(w, batch) * w.generated_tokens_per_sequence() - 1) * e.tpot_s;
    e.tokens_per_second_per_user = 1 / e.tpot_s;
  }
  e.output_tokens_per_second = e.requests_per_second * w.generated_tokens_per_request();
  e.visible_tokens_per_second = e.requests_per_second * w.output_tokens;
}

double serving_reserve_gb(const Accelerator& acc, const EngineProfile& engine, double weights_gb) {
  const double base = engine.free_fraction_of_remaining ? std::max(0.0, acc.memory_usable_gb() - weights_gb) : acc.memory_usable_gb();
  return kReserveFixedGb + engine.free_fraction * base + (acc.is_cuda() ? engine.cuda_graph_pool_gb : 0);
}

namespace {

// The time to first token the target is checked against: the p95 prompt's
// prefill and one step, without queueing. A one-token request's first token
// is its last, so it also waits for the prefills of the other requests in its
// batch (latency_s - ttft_s there: they queue behind each other).
double ttft_checked_s(const InferenceWorkload& w, const InferenceEstimate& e) {
  const double alone_s = e.prefill_p95_s + e.step.total_s();
  return w.one_token_outputs() ? alone_s + (e.latency_s - e.ttft_s) : alone_s;
}

// The latency targets an evaluated batch misses, each with its target
// ("the time per output token is 52.0 ms (target 40.0 ms)").
std::string missed_targets(const InferenceWorkload& w, const InferenceEstimate& e) {
  const double ttft_checked = ttft_checked_s(w, e);
  std::vector<std::string> misses;
  if (w.max_tpot_s && e.tpot_s > *w.max_tpot_s)
    misses.push_back(fmt::format("the time per output token is {} (target {})", format_latency_against(e.tpot_s, *w.max_tpot_s, 1), format_latency(*w.max_tpot_s, 1)));
  if (w.max_ttft_s && ttft_checked > *w.max_ttft_s)
    misses.push_back(fmt::format("the time to first token is {} (target {})", format_latency_against(ttft_checked, *w.max_ttft_s), format_latency(*w.max_ttft_s)));
  return fmt::format("{}", fmt::join(misses, " and "));
}

// The memory one accelerator of a replica holds before the KV cache
// (§Memory per accelerator): weights (and a verifier's), the engine's
// reserve, the prefill chunk's activations and the logits of a full batch.
void fill_serving_memory(InferenceEstimate& e, const ModelSpec& m, const InferenceWorkload& w, const Accelerator& acc, int batch_cap) {
  const ServingLayout& l = e.layout;
  auto& mem = e.memory;
  mem.capacity_gb = acc.memory_usable_gb();
  mem.resident_gb = w.resident_state_gb;
  // An mtp drafter adds one decoder layer of the model's (every expert of an
  // MoE layer; the output head is the model's own), §Speculative decoding.
  const double draft_head_bytes =
      w.speculative && w.speculative->drafter == "mtp" ? (m.total_params() - m.embedding_params()) / m.layers * bytes_per_weight(w.weights) : 0;
  mem.weights_gb = serving_weight_bytes_per_accelerator(m, w.weights, l) / kGb +
                   (draft_head_bytes + (w.verifier ? inference_weight_bytes(*w.verifier, w.weights) : 0)) / l.accelerators() / kGb;
  mem.reserve_gb = serving_reserve_gb(acc, *e.engine, mem.weights_gb);
  const double ffn = m.is_moe() ? double(m.expert_ffn) * (m.active_experts + m.shared_experts) : m.ffn;
  mem.workspace_gb = (step_token_budget(*e.engine, acc, w) * kActivationBytes * (4.0 * m.hidden + 2 * ffn / l.tp) +
                      double(batch_cap) / l.attention_dp * m.vocab / l.attention_tp() * 4) / kGb;
}

void say(std::string* problem, std::string s) {
  if (problem) *problem = std::move(s);
}

// The most sequences the KV cache holds (or a compiled Neuron graph runs);
// false, with the problem said, when not one request fits.
bool size_max_batch(InferenceEstimate& e, const Accelerator& acc, const InferenceWorkload& w, const KvNeed& kv, SequenceCap cap, std::string* problem) {
  const auto& mem = e.memory;
  const double free_gb = mem.capacity_gb - mem.weights_gb - mem.workspace_gb - mem.reserve_gb - mem.resident_gb;
  if (free_gb <= 0) {
    say(problem, fmt::format("weights {:.1f} GB + workspace {:.1f} GB + reserve {:.1f} GB{} per accelerator exceed its {:.1f} GB", mem.weights_gb,
                             mem.workspace_gb, mem.reserve_gb,
                             mem.resident_gb > 0 ? fmt::format(" + resident training state {:.1f} GB", mem.resident_gb) : std::string(),
                             mem.capacity_gb));
    return false;
  }
  if (kv.rank_gb_per_token * kv.longest_tokens > free_gb) {
    say(problem, fmt::format("the KV cache of one {:.0f}-token request ({:.2f} GB) exceeds the {:.2f} GB left after the weights",
                             kv.longest_request_tokens, kv.rank_gb_per_token * kv.longest_tokens, free_gb));
    return false;
  }
  const double by_memory = std::floor(std::max(0.0, free_gb - kv.shared_gb) / (kv.gb_per_token * kv.context_tokens));
  e.max_batch_by_memory = static_cast<int>(std::min<double>(by_memory, std::numeric_limits<int>::max()));
  e.max_batch = std::max(std::min(cap.sequences, e.max_batch_by_memory), 1);
  e.max_batch_limit = cap.sequences < e.max_batch_by_memory ? cap.limit : BatchLimit::memory;
  // Neuron with a compiled batch: its slots hold KV whether filled or not, and no more sequences run.
  if (const std::optional<int> compiled = compiled_batch_on(acc, w)) {
    const int slots = *compiled;
    if (slots > e.max_batch) {
      say(problem, fmt::format("the decode graph compiled for batch {} needs {:.1f} GB of KV cache per accelerator; {} sequences fit", slots,
                               slots * kv.context_tokens * kv.gb_per_token + kv.shared_gb, e.max_batch));
      e.max_batch = 0;
      return false;
    }
    e.max_batch = slots;
    e.max_batch_limit = BatchLimit::compiled_batch;
  }
  return true;
}

bool meets_targets(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, InferenceEstimate& e, int batch) {
  evaluate_batch(m, w, c, e, batch);
  const double ttft_checked = ttft_checked_s(w, e);
  return (!w.max_tpot_s || e.tpot_s <= *w.max_tpot_s) && (!w.max_ttft_s || ttft_checked <= *w.max_ttft_s);
}

// A batch the user fixed: evaluated at it (at most the max batch), with why it
// does not fit or misses the targets.
void evaluate_fixed_batch(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, InferenceEstimate& e, const KvNeed& kv,
                          int batch, std::string* problem) {
  if (compiled_batch_on(*c.accelerator, w) && batch > e.max_batch)
    say(problem, fmt::format("batch {} exceeds the {} sequences the decode graph was compiled for", batch, e.max_batch));
  else if (w.concurrency && batch > *w.concurrency && e.max_batch <= *w.concurrency)
    say(problem, fmt::format("batch {} exceeds the engine's sequence limit of {} (--concurrency)", batch, *w.concurrency));
  else if (batch > e.max_batch)
    say(problem, fmt::format("batch {} needs {:.1f} GB of KV cache per accelerator; {} sequences fit", batch,
                             batch * kv.context_tokens * kv.gb_per_token + kv.shared_gb, e.max_batch));
  else if (!meets_targets(m, w, c, e, batch))
    say(problem, fmt::format("at batch {} {}", batch, missed_targets(w, e)));
  evaluate_batch(m, w, c, e, std::min(batch, e.max_batch));
}

// Time per output token and time to first token grow with the batch, and
// throughput does too: the largest batch that meets the targets is the best.
void evaluate_largest_batch(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, InferenceEstimate& e, std::string* problem) {
  if (!meets_targets(m, w, c, e, 1)) {
    say(problem, fmt::format("even at batch 1 {}", missed_targets(w, e)));
    return;
  }
  int lo = 1, hi = std::min(e.max_batch, router_batch_cap(*e.engine, *c.accelerator, w));
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (meets_targets(m, w, c, e, mid)) lo = mid;
    else hi = mid - 1;
  }
  evaluate_batch(m, w, c, e, lo);
}

}  // namespace

InferenceEstimate estimate_inference(const ModelSpec& m, const InferenceWorkload& w, const Cluster& c, const ServingLayout& l,
                                     std::optional<int> fixed_batch, std::string* problem) {
  const Accelerator& acc = *c.accelerator;
  InferenceEstimate e;
  const EngineProfile& engine = engine_for(acc, w.engine);
  e.engine = &engine;
  e.layout = l;
  e.precision = serving_precision(acc, w.weights).value_or(ServingPrecision{});
  e.precision.kv_cache = serving_kv_cache(acc, engine, w);
  const SequenceCap batch_cap = replica_sequence_limit(engine, acc, w, l);
  fill_serving_memory(e, m, w, acc, batch_cap.sequences);
  const KvNeed kv = kv_need(m, w, engine, l, e.precision.kv_cache);
  if (problem) problem->clear();
  if (!size_max_batch(e, acc, w, kv, batch_cap, problem)) return e;
  const ServingPrecision& p = e.precision;
  e.prefill_s = prompt_prefill_s(m, w, c, l, p, w.prompt_tokens, false);
  e.prefill_p95_s = prompt_prefill_s(m, w, c, l, p, w.prompt_tokens_p95, false);
  if (fixed_batch) evaluate_fixed_batch(m, w, c, e, kv, *fixed_batch, problem);
  else evaluate_largest_batch(m, w, c, e, problem);
  return e;
}

}  // namespace gpuadvisor
