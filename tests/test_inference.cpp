// Inference physics and the serving search: hand-computed KV-cache sizes and
// decode bounds, sizing guidance, monotonicity and test-time compute.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/workload/engine.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/catalog/pricing.hpp"
#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/search/inference_search.hpp"

using namespace gpuadvisor;

namespace {
const Catalog& cat() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}
const ModelSpec& model(const char* name) { return *find_model_preset(name); }
InferenceWorkload offline(double prompt = 1024, double output = 256) {
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return make_inference_workload(r);
}
Cluster cluster(const char* instance, int count = 1) {
  const Instance* i = cat().find_instance(instance);
  return Cluster{i, &cat().accelerator_of(*i), count};
}
}  // namespace

TEST_CASE("KV cache per token, Llama-2-70B with GQA (hand-computed)") {
  const ModelSpec& m = model("llama-2-70b");
  // 2 (K and V) x 80 layers x 8 KV heads x 128 head dim x 2 bytes = 327,680 bytes.
  CHECK(kv_cache_bytes_per_token(m, Precision::bf16, 1) == 327680);
  // tp 8: one KV head per rank.
  CHECK(kv_cache_bytes_per_token(m, Precision::bf16, 8) == 40960);
  // tp 16: KV heads are replicated, never fewer than one per rank.
  CHECK(kv_cache_bytes_per_token(m, Precision::bf16, 16) == 40960);
  CHECK(kv_cache_bytes_per_token(m, Precision::fp8, 1) == 163840);
}

TEST_CASE("KV cache per token, Llama-2-7B without GQA (hand-computed)") {
  const ModelSpec& m = model("llama-2-7b");
  // 2 x 32 layers x 32 heads x 128 x 2 bytes = 524,288 bytes (0.5 MiB per token).
  CHECK(kv_cache_bytes_per_token(m, Precision::bf16, 1) == 524288);
  CHECK(kv_cache_bytes_per_token(m, Precision::bf16, 4) == 131072);
}

TEST_CASE("weight bytes by format, with group scales (hand-computed)") {
  const ModelSpec& m = model("llama-2-7b");
  const double n = m.total_params(), emb = m.embedding_params();  // 6,738,415,616 and 262,144,000
  CHECK(n == 6738415616.0);
  CHECK(inference_weight_bytes(m, WeightFormat::bf16) == Approx(2 * n));
  CHECK(inference_weight_bytes(m, WeightFormat::int8) == Approx(2 * emb + (n - emb)));
  // int4: 0.5 byte + fp16 scale and 4-bit zero per group of 128 = 0.51953125 bytes.
  CHECK(kBytesInt4 == Approx(0.51953125));
  CHECK(inference_weight_bytes(m, WeightFormat::int4) == Approx(2 * emb + (n - emb) * 0.51953125));
  CHECK(kBytesFp4 == Approx(0.5625));
}

TEST_CASE("batch-1 decode is bound by reading the weights once (Llama-2-7B on one A10G)") {
  const ModelSpec& m = model("llama-2-7b");
  Cluster c = cluster("g5.xlarge");
  InferenceWorkload w = offline(128, 128);
  std::string problem;
  InferenceEstimate e = estimate_inference(m, w, c, ServingLayout{1, 1}, 1, &problem);
  REQUIRE(problem.empty());
  // 13.477 GB / (600 GB/s x the A10G's achievable fraction, fitted in docs/validation.md).
  const double bw = 600e9 * c.accelerator->efficiency.memory_bandwidth_fraction;
  CHECK(e.step.weights_read_s == Approx(2 * 6738415616.0 / bw).epsilon(1e-9));
  CHECK(e.step.bound() == "memory bandwidth");
  // Plus the default engine's (vLLM's, current release: async scheduling) host time: 0.3 ms per step and 3 us per sequence.
  CHECK(e.engine->name == "vllm");
  CHECK(e.step.host_s == Approx(0.3e-3 + 3e-6));
  // The kernels' fixed time runs in series: 32 layers x 9 kernels x 3 us.
  CHECK(e.step.kernel_floor_s == Approx(32 * 9 * 3e-6));
  CHECK(e.step.total_s() == Approx(e.step.weights_read_s + e.step.kv_read_s + e.step.kernel_floor_s + 0.303e-3));
  // KV read at batch 1: (128 + 64) tokens x 524,288 bytes at the same bandwidth.
  CHECK(e.step.kv_read_s == Approx(192 * 524288.0 / bw));
  CHECK(e.tpot_s >= e.step.total_s());
}

TEST_CASE("weight-only int4 decode adds the dequantisation on the vector units (hand-computed)") {
  const ModelSpec& m = model("llama-2-7b");
  Cluster c = cluster("g5.xlarge");
  InferenceWorkload w = offline(128, 128);
  w.weights = WeightFormat::int4;
  std::string problem;
  InferenceEstimate e = estimate_inference(m, w, c, ServingLayout{1, 1}, 1, &problem);
  REQUIRE(problem.empty());
  REQUIRE(e.precision.weight_only);
  // Quantised weights: all but the two 32,000 x 4096 embeddings, at the A10G's
  // 35 FP32 TFLOPS: 1 operation each left exposed by vLLM's Marlin kernels,
  // 8 with gpt-fast's (data/engines.json).
  const double quantised = 6738415616.0 - 2 * 32000.0 * 4096;
  CHECK(e.step.dequant_s == Approx(quantised * 1 / 35e12));
  CHECK(e.step.total_s() ==
        Approx(std::max(e.step.weights_read_s + e.step.kv_read_s, e.step.compute_s) + e.step.kernel_floor_s + e.step.dequant_s + e.step.host_s));
  InferenceWorkload fast = w;
  fast.engine = find_engine("gpt-fast");
  const InferenceEstimate g = estimate_inference(m, fast, c, ServingLayout{1, 1}, 1, &problem);
  CHECK(g.step.dequant_s == Approx(quantised * 8 / 35e12));
  CHECK(g.step.host_s == 0);
  // bf16 weights and native fp8 weights have none.
  w.weights = WeightFormat::bf16;
  CHECK(estimate_inference(m, w, c, ServingLayout{1, 1}, 1, &problem).step.dequant_s == 0);
  w.weights = WeightFormat::fp8;
  Cluster h = cluster("p5.48xlarge");
  CHECK(estimate_inference(m, w, h, ServingLayout{1, 1}, 1, &problem).step.dequant_s == 0);
  // An accelerator whose vector throughput is not published: not counted, and said so.
  w.weights = WeightFormat::int8;
  Cluster t = cluster("trn1.32xlarge");
  InferenceEstimate n = estimate_inference(m, w, t, ServingLayout{1, 1}, 1, &problem);
  CHECK(n.step.dequant_s == 0);
  CHECK(n.step.dequant_unknown);
}

TEST_CASE("time to first token of prompts submitted together: their joint prefill (hand-computed)") {
  const ModelSpec& m = model("llama-2-7b");
  Cluster c = cluster("p5.48xlarge");
  InferenceWorkload w = offline(1024, 128);
  std::string problem;
  InferenceEstimate e = estimate_inference(m, w, c, ServingLayout{1, 1}, 4, &problem);
  REQUIRE(problem.empty());
  CHECK(static_batch_ttft_s(m, w, c, e, 1) == Approx(e.ttft_s));
  // Four 1,024-token prompts: 4 x 1024 x 2 N_matmul + 4 x 2 L w 1024^2 FLOPs
  // (attention within each prompt), with the matrices seeing 4,096 rows.
  const double flops = 4096 * 2 * matmul_params_per_token(m) + 4 * 2.0 * 32 * 4096 * 1024.0 * 1024;
  const double compute_s = flops / (989.5e12 * compute_efficiency(*c.accelerator, Precision::bf16, 4096, 4096));
  CHECK(static_batch_ttft_s(m, w, c, e, 4) == Approx(compute_s + e.step.total_s()));
}

TEST_CASE("max batch is what the free memory holds at mean occupancy (hand-computed)") {
  const ModelSpec& m = model("llama-2-7b");
  Cluster c = cluster("g5.xlarge");
  InferenceWorkload w = offline(1024, 256);
  InferenceEstimate e = estimate_inference(m, w, c, ServingLayout{1, 1}, std::nullopt, nullptr);
  const double capacity = 22 * 1.073741824;
  const double reserve = 1 + 0.10 * capacity + 2 * 1.073741824;  // engine's free 10% and the CUDA-graph pool
  const double weights = 2 * 6738415616.0 / 1e9;
  const double workspace = (2048 * 2 * (4.0 * 4096 + 2 * 11008) + 1024.0 * 32000 * 4) / 1e9;
  const double per_sequence = (1024 + 128) * 524288.0 / 1e9;
  CHECK(e.max_batch == static_cast<int>((capacity - weights - workspace - reserve) / per_sequence));
  CHECK(e.max_batch == 7);
}

TEST_CASE("sizing guidance comes out of the physics") {
  RecommendRequest r;
  r.top = 100;
  // Memory decides these, not latency: MLPerf's server-scenario targets.
  InferenceRequest server;
  server.max_ttft_s = 2.0;
  server.max_tpot_s = 0.2;
  SECTION("7B in bf16 fits one A10G (g5.xlarge) and one Inferentia2 (inf2.xlarge)") {
    InferenceWorkload w = make_inference_workload(server);
    auto rec = recommend_inference(model("llama-2-7b"), w, cat(), r);
    bool g5 = false, inf2 = false;
    for (const auto& row : rec.rows) {
      if (row.instance->name == "g5.xlarge" && row.estimate.layout.pp == 1) g5 = true;
      if (row.instance->name == "inf2.xlarge" && row.estimate.layout.pp == 1) inf2 = true;
    }
    CHECK(g5);
    CHECK(inf2);
  }
  SECTION("13B in bf16 does not fit 24 GB; the int8 alternative is offered") {
    InferenceWorkload w = make_inference_workload(server);
    r.families = {"g5"};
    auto rec = recommend_inference(model("llama-2-13b"), w, cat(), r);
    // One A10G cannot hold it, and without EFA a replica is not pipelined
    // over several g5.xlarge: rejected, with the int8 alternative named.
    bool noted = false;
    for (const auto& x : rec.rejections)
      if (x.instance == "g5.xlarge" && x.reason.find("without EFA") != std::string::npos &&
          x.reason.find("--weights int8 fits") != std::string::npos)
        noted = true;
    CHECK(noted);
    for (const auto& row : rec.rows) CHECK(row.instance->accelerator_count > 1);
    InferenceRequest q = server;
    q.weights = WeightFormat::int8;
    auto rec8 = recommend_inference(model("llama-2-13b"), make_inference_workload(q), cat(), r);
    bool one = false;
    for (const auto& row : rec8.rows)
      if (row.instance->name == "g5.xlarge" && row.estimate.layout.pp == 1) one = true;
    CHECK(one);
  }
  SECTION("70B in bf16 needs several GPUs") {
    InferenceWorkload w = make_inference_workload({});
    auto rec = recommend_inference(model("llama-2-70b"), w, cat(), r);
    REQUIRE(!rec.rows.empty());
    for (const auto& row : rec.rows) {
      const double memory_gb = row.estimate.layout.accelerators() * row.accelerator->memory_usable_gb();
      CHECK(memory_gb > 138);  // 69B x 2 bytes
      if (row.accelerator->memory_usable_gb() < 138) CHECK(row.estimate.layout.accelerators() > 1);
    }
  }
}

TEST_CASE("more load never needs fewer replicas") {
  const ModelSpec& m = model("llama-3-8b");
  RecommendRequest r;
  r.families = {"g6e", "p5"};
  r.top = 1000;
  std::map<std::string, int> last;
  for (double rps : {0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0, 200.0}) {
    InferenceRequest q;
    q.requests_per_second = rps;
    auto rec = recommend_inference(m, make_inference_workload(q), cat(), r);
    for (const auto& row : rec.rows) {
      const std::string key = row.instance->name + "/" + std::to_string(row.estimate.layout.tp);
      CHECK(row.replicas >= last[key]);
      CHECK(row.instances * row.instance->accelerator_count >= row.replicas * row.estimate.layout.accelerators());
      // Sized by simulation, the targets hold at the percentile (the load may
      // pass the analytic capacity point); sized by utilisation, at most 100%.
      if (row.simulated) CHECK(row.simulated->tpot_s.p90 <= 0.040 + 1e-9);
      else CHECK(row.utilisation <= 1.0 + 1e-9);
      last[key] = row.replicas;
    }
  }
}

TEST_CASE("test-time compute multiplies the generated tokens and the cost") {
  const ModelSpec& m = model("llama-3-8b");
  Cluster c = cluster("p5.48xlarge");
  InferenceRequest plain;
  plain.mode = ServingMode::offline;
  plain.output_tokens = 250;
  InferenceRequest thinking = plain;
  thinking.samples = 4;
  thinking.reasoning_tokens = 1000;
  InferenceWorkload a = make_inference_workload(plain), b = make_inference_workload(thinking);
  CHECK(a.test_time_multiplier() == 1);
  CHECK(b.test_time_multiplier() == Approx(20));  // 4 x (250 + 1000) / 250
  CHECK(b.generated_tokens_per_request() == 5000);
  InferenceEstimate ea = estimate_inference(m, a, c, ServingLayout{1, 1}, 64, nullptr);
  InferenceEstimate eb = estimate_inference(m, b, c, ServingLayout{1, 1}, 64, nullptr);
  // Same batch: per request, 20x the decode work; capacity drops accordingly.
  CHECK(eb.requests_per_second < ea.requests_per_second / 10);
  CHECK(eb.visible_tokens_per_second < ea.visible_tokens_per_second / 10);
  CHECK(eb.output_tokens_per_second == Approx(eb.requests_per_second * 5000));
  CHECK(eb.latency_s > ea.latency_s * 2);  // 5x the tokens per sequence; less prefill interference per token
}

TEST_CASE("latency targets bind the batch, an impossible target is reported with the best figure") {
  const ModelSpec& m = model("llama-3-8b");
  Cluster c = cluster("p5.48xlarge");
  InferenceRequest q;
  q.max_tpot_s = 0.030;
  InferenceWorkload w = make_inference_workload(q);
  std::string problem;
  InferenceEstimate e = estimate_inference(m, w, c, ServingLayout{1, 1}, std::nullopt, &problem);
  REQUIRE(problem.empty());
  CHECK(e.tpot_s <= 0.030);
  if (e.batch < e.max_batch) {
    InferenceEstimate next = e;
    evaluate_batch(m, w, c, next, e.batch + 1);
    CHECK(next.tpot_s > 0.030);  // the largest batch that meets the target
  }
  q.max_tpot_s = 0.0001;
  w = make_inference_workload(q);
  e = estimate_inference(m, w, c, ServingLayout{1, 1}, std::nullopt, &problem);
  CHECK(problem.find("even at batch 1 the time per output token") != std::string::npos);
  CHECK(problem.find("time to first token") == std::string::npos);  // only the missed target is named
  RecommendRequest r;
  auto rec = recommend_inference(m, w, cat(), r);
  CHECK(rec.rows.empty());
  REQUIRE(rec.best_batch1_tpot_s);
  CHECK(*rec.best_batch1_tpot_s > 0.0001);
}

TEST_CASE("inference workload defaults and errors") {
  InferenceWorkload w = make_inference_workload({});
  CHECK(w.prompt_tokens == kDefaultPromptTokens);
  CHECK(w.output_tokens == kDefaultOutputTokens);
  // MLPerf Inference v5.0's interactive (chat) scenario: 450 ms and 40 ms.
  CHECK(*w.max_tpot_s == Approx(0.040));
  CHECK(*w.max_ttft_s == Approx(0.450));
  CHECK_FALSE(make_inference_workload(InferenceRequest{.mode = ServingMode::offline}).max_tpot_s);
  // A batch queue runs its replicas fully busy; a live service keeps 20% headroom.
  CHECK(w.target_utilisation == Approx(0.8));
  CHECK(make_inference_workload(InferenceRequest{.mode = ServingMode::offline}).target_utilisation == Approx(1.0));
  CHECK(make_inference_workload(InferenceRequest{.mode = ServingMode::offline, .target_utilisation = 0.9}).target_utilisation == Approx(0.9));
  InferenceRequest r;
  r.output_tokens_per_day = 86400.0 * 256 * 2;  // 2 requests per second of 256 output tokens
  CHECK(*make_inference_workload(r).requests_per_second == Approx(2));
  r.requests_per_second = 1;
  CHECK_THROWS_AS(make_inference_workload(r), InputError);
  InferenceRequest p95;
  p95.prompt_tokens = 1000;
  p95.prompt_tokens_p95 = 500;
  CHECK_THROWS_AS(make_inference_workload(p95), InputError);
  InferenceRequest both;
  both.max_tpot_s = 0.05;
  both.min_tokens_per_second_per_user = 20;
  CHECK_THROWS_AS(make_inference_workload(both), InputError);
  InferenceRequest per_user;
  per_user.min_tokens_per_second_per_user = 20;
  CHECK(*make_inference_workload(per_user).max_tpot_s == Approx(0.05));
}

TEST_CASE("fp8 and fp4 weights are not served on V100 (no kernels below compute capability 7.5)") {
  InferenceRequest r;
  r.weights = WeightFormat::fp8;
  const InferenceWorkload w = make_inference_workload(r);
  CHECK(serving_accelerator_problem(*cat().find_accelerator("V100-32GB"), w));
  CHECK_FALSE(serving_accelerator_problem(*cat().find_accelerator("A10G"), w));  // weight-only fp8 (Marlin)
  CHECK_FALSE(serving_accelerator_problem(*cat().find_accelerator("H100-SXM"), w));
  r.weights = WeightFormat::int8;
  CHECK_FALSE(serving_accelerator_problem(*cat().find_accelerator("V100-32GB"), make_inference_workload(r)));
}

TEST_CASE("TensorRT-LLM keeps gpt-oss's sliding-window layers at full length in the KV cache, vLLM keeps the window (hand-computed)") {
  const ModelSpec& m = model("gpt-oss-20b");  // 24 layers, 12 of them a 128-token window; 8 KV heads of 64
  Cluster c = cluster("p6-b200.48xlarge");
  auto kv_gb_at_batch_100 = [&](const char* engine) {
    InferenceRequest r;
    r.mode = ServingMode::offline;
    r.prompt_tokens = 1024;
    r.output_tokens = 8192;
    r.weights = WeightFormat::fp4;
    r.kv_cache = Precision::fp8;
    r.engine = find_engine(engine);
    return estimate_inference(m, make_inference_workload(r), c, ServingLayout{1, 1}, 100, nullptr).memory.kv_cache_gb;
  };
  const double per_token_all_layers = 2.0 * 24 * 8 * 64 * 1;  // bytes, fp8
  // trtllm: the whole prompt + output reserved at admission, every layer at full length.
  CHECK(kv_gb_at_batch_100("trtllm") == Approx(100 * (1024 + 8192) * per_token_all_layers / 1e9));
  // vLLM: prompt + half the output held on average; the local layers hold 128 tokens.
  const double attended = (12 * (1024 + 4096.0) + 12 * 128.0) / 24;
  CHECK(kv_gb_at_batch_100("vllm") == Approx(100 * attended * per_token_all_layers / 1e9));
}

TEST_CASE("serving attention runs at fp8 with an fp8 KV cache, else 16-bit, whatever the matrices run at") {
  const Accelerator& b200 = *cat().find_accelerator("B200");
  const Accelerator& a10g = *cat().find_accelerator("A10G");
  CHECK(serving_attention_precision(b200, Precision::fp4, Precision::fp8) == Precision::fp8);
  CHECK(serving_attention_precision(b200, Precision::fp4, Precision::bf16) == Precision::bf16);
  CHECK(serving_attention_precision(a10g, Precision::bf16, Precision::fp8) == Precision::bf16);  // no fp8 math on Ampere
  // Decode at batch 32, 8k context, on B200 with fp4 weights: the attention
  // share of the compute runs at fp8 or bf16 peak, never fp4's.
  const ModelSpec& m = model("llama-3-70b");
  Cluster c = cluster("p6-b200.48xlarge");
  auto compute_at = [&](Precision kv) {
    InferenceRequest r;
    r.mode = ServingMode::offline;
    r.prompt_tokens = 8192;
    r.output_tokens = 2;
    r.weights = WeightFormat::fp4;
    r.kv_cache = kv;
    r.engine = find_engine("trtllm");
    return estimate_inference(m, make_inference_workload(r), c, ServingLayout{1, 1}, 32, nullptr).step.compute_s;
  };
  const double matmul_s = matmul_seconds(m, b200, Precision::fp4, 32 * 2 * matmul_params_per_token(m),
                                         compute_efficiency(b200, Precision::fp4, 8192, std::nullopt), 1, std::nullopt);
  const double attention_flops = 32 * 4.0 * 80 * 8192 * 8193;  // 80 layers, 64 x 128 query width, 8192 + 1 tokens attended
  auto attention_s = [&](Precision p) { return attention_flops / (*b200.tflops(p) * 1e12 * compute_efficiency(b200, p, 8192, std::nullopt)); };
  CHECK(compute_at(Precision::fp8) == Approx(matmul_s + attention_s(Precision::fp8)));
  CHECK(compute_at(Precision::bf16) == Approx(matmul_s + attention_s(Precision::bf16)));
}

TEST_CASE("MoE decode reads and writes the dispatch and combine copies of the activations (gpt-oss-20b, hand-computed)") {
  const ModelSpec& m = model("gpt-oss-20b");  // 24 MoE layers, hidden 2880, top-4
  Cluster c = cluster("p6-b200.48xlarge");
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.weights = WeightFormat::fp4;
  const InferenceEstimate e = estimate_inference(m, make_inference_workload(r), c, ServingLayout{1, 1}, 100, nullptr);
  const double bw = 8000e9 * c.accelerator->efficiency.memory_bandwidth_fraction;
  CHECK(e.step.moe_permute_s == Approx(24 * 100 * (2 * 4 + 2) * 2880 * 2 / bw));
  CHECK(e.step.accelerator_s() >= e.step.weights_read_s + e.step.kv_read_s + e.step.moe_permute_s);
  CHECK(estimate_inference(model("llama-3-8b"), make_inference_workload(r), c, ServingLayout{1, 1}, 100, nullptr).step.moe_permute_s == 0);
}

// MoE serving layouts (docs/methodology.md §MoE serving layouts).
namespace {
InferenceWorkload deepseek_offline(const char* engine = nullptr) {
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.prompt_tokens = 1000;
  r.output_tokens = 1000;
  r.weights = WeightFormat::fp8;
  if (engine) r.engine = find_engine(engine);
  return make_inference_workload(r);
}
}  // namespace

TEST_CASE("MoE serving layouts: weights and KV cache per accelerator, DeepSeek-V3 fp8 on 8 H200 (hand-computed)") {
  const ModelSpec& m = model("deepseek-v3");
  const ServingLayout tp8{8, 1}, tp8_ep8{8, 1, 8, 1}, dp8_ep8{8, 1, 8, 8};
  // 58 MoE layers x 256 experts x 3 x 7168 x 2048 = 6.539e11 routed-expert weights, 1 byte each.
  const double experts = 58.0 * 256 * 3 * 7168 * 2048;
  CHECK(m.expert_params_total() == Approx(experts));
  const double all = inference_weight_bytes(m, WeightFormat::fp8);
  CHECK(serving_weight_bytes_per_accelerator(m, WeightFormat::fp8, tp8) == Approx(all / 8));
  CHECK(serving_weight_bytes_per_accelerator(m, WeightFormat::fp8, tp8_ep8) == Approx(all / 8));
  // Attention data parallel: every rank holds the 17 GB of non-expert weights, and 1/8 of the experts.
  CHECK(serving_weight_bytes_per_accelerator(m, WeightFormat::fp8, dp8_ep8) == Approx(all - experts + experts / 8));
  CHECK(serving_weight_bytes_per_accelerator(m, WeightFormat::fp8, dp8_ep8) / 1e9 == Approx(100.7).epsilon(0.002));
  // MLA: 61 layers x (512 + 64) x 1 byte = 35,136 bytes a token on every rank
  // that holds the sequence; TP replicates it, DP8 spreads the sequences.
  CHECK(kv_gb_per_token_on_rank(m, Precision::fp8, tp8) == Approx(35136e-9));
  CHECK(kv_gb_per_token_on_rank(m, Precision::fp8, dp8_ep8) == Approx(35136e-9));
  CHECK(kv_gb_per_token_averaged(m, Precision::fp8, dp8_ep8) == Approx(35136e-9 / 8));
  // GQA with fewer KV heads than ranks (Qwen3-235B-A22B: 4): TP8 replicates
  // one head on each rank; DP8 holds all 4 on the sequence's rank, half the bytes per accelerator.
  const ModelSpec& q = model("qwen3-235b-a22b");
  CHECK(kv_gb_per_token_on_rank(q, Precision::bf16, tp8) == Approx(2.0 * 94 * 1 * 128 * 2 / 1e9));
  CHECK(kv_gb_per_token_averaged(q, Precision::bf16, dp8_ep8) == Approx(2.0 * 94 * 4 * 128 * 2 / 1e9 / 8));
  // More sequences fit at DP8 (the KV cache not replicated), though each rank holds more weights.
  const Cluster c = cluster("p5en.48xlarge");
  const InferenceWorkload w = deepseek_offline();
  const InferenceEstimate at_tp = estimate_inference(m, w, c, tp8, std::nullopt, nullptr);
  const InferenceEstimate at_dp = estimate_inference(m, w, c, dp8_ep8, std::nullopt, nullptr);
  CHECK(at_dp.memory.weights_gb > at_tp.memory.weights_gb + 15);
  CHECK(at_dp.max_batch > 4 * at_tp.max_batch);
}

TEST_CASE("MoE serving layouts: the decode step's all-to-alls, KV reads and all-reduces (hand-computed)") {
  const ModelSpec& m = model("deepseek-v3");
  const Cluster c = cluster("p5en.48xlarge");
  const InferenceWorkload w = deepseek_offline();
  const int batch = 64;
  const InferenceEstimate tp = estimate_inference(m, w, c, ServingLayout{8, 1}, batch, nullptr);
  const InferenceEstimate ep = estimate_inference(m, w, c, ServingLayout{8, 1, 8, 1}, batch, nullptr);
  const InferenceEstimate dp = estimate_inference(m, w, c, ServingLayout{8, 1, 8, 8}, batch, nullptr);
  REQUIRE(tp.batch == batch);
  REQUIRE(dp.batch == batch);
  CHECK(tp.step.expert_parallel_s == 0);
  // Each MoE layer: dispatch and combine, each 25 us + 7/8 x (64 / 8 tokens x top-8 x 7168 x 2 bytes) over NVLink.
  const double bytes = 64.0 / 8 * 8 * 7168 * 2;
  const double one = kExpertAllToAllLatencyS + 7.0 / 8 * bytes / (intra_node_gb_per_s(*c.accelerator) * 1e9);
  CHECK(dp.step.expert_parallel_s == Approx(2 * 58 * one));
  // TP8 EP8: every rank holds every token after the attention's all-reduce,
  // so no token moves: no all-to-all, and TP's two all-reduces per layer.
  CHECK(ep.step.expert_parallel_s == 0);
  CHECK(ep.step.tensor_parallel_s == Approx(tp.step.tensor_parallel_s));
  // DP8: no all-reduce (attention at TP1).
  CHECK(dp.step.tensor_parallel_s == 0);
  // MLA's latent KV is read by every TP rank; at DP8 each rank reads its 8 sequences'.
  CHECK(dp.step.kv_read_s == Approx(tp.step.kv_read_s / 8));
  // Every rank's tokens reach every expert; at EP the step waits for the rank
  // holding the most touched experts: at 64 tokens 30.2954 of its 32 against
  // TP's 256 (1 - (31/32)^64) / 8 = 27.8053 (the binomial maximum, worked
  // apart in Python). DP8 adds the replicated non-expert weights.
  const double bw = c.accelerator->memory_bandwidth_gb_per_s * c.accelerator->efficiency.memory_bandwidth_fraction * 1e9;
  const double non_expert = inference_weight_bytes(m, WeightFormat::fp8) - m.expert_params_total();
  const double expert_bytes = 58.0 * 3 * 7168 * 2048;  // one expert in every MoE layer, 1 byte a weight
  CHECK(ep.step.weights_read_s - tp.step.weights_read_s == Approx(expert_bytes * (30.2954 - 27.8053) / bw).epsilon(1e-4));
  CHECK(dp.step.weights_read_s - tp.step.weights_read_s == Approx((non_expert * 7 / 8 + expert_bytes * (30.2954 - 27.8053)) / bw).epsilon(1e-4));
}

TEST_CASE("MoE serving layouts: the busiest expert-parallel rank's touched experts, uniform routing (hand-computed)") {
  const ModelSpec& m = model("deepseek-v3");  // 256 routed experts, top-8
  // One rank (ep 1): the layer's touched experts, 256 (1 - (31/32)^t).
  CHECK(busiest_rank_experts_touched(m, 4, 1) == Approx(256 * (1 - std::pow(31.0 / 32, 4))));
  // EP8, 4 tokens: 30.53 touched, 3.82 a rank on average, and the largest of
  // eight binomial(32, 30.53/256) counts 6.5635 (summed CDF, in Python).
  CHECK(busiest_rank_experts_touched(m, 4, 8) == Approx(6.5635).epsilon(1e-4));
  CHECK(busiest_rank_experts_touched(m, 4, 8) > 1.7 * busiest_rank_experts_touched(m, 4, 1) / 8);
  // Many tokens touch every expert: every rank reads all 32 of its own.
  CHECK(busiest_rank_experts_touched(m, 4096, 8) == Approx(32).epsilon(1e-6));
  CHECK(busiest_rank_experts_touched(m, 0, 8) == 0);
}

TEST_CASE("MoE serving layouts: what cannot be laid out says why") {
  const Cluster c = cluster("p5en.48xlarge");
  CHECK(serving_layout_problem(model("llama-3-8b"), c, ServingLayout{8, 1, 8, 8})->find("dense") != std::string::npos);
  const ModelSpec& m = model("deepseek-v3");
  CHECK(serving_layout_problem(m, c, ServingLayout{8, 1, 4, 1})->find("must equal tp 8") != std::string::npos);
  CHECK(serving_layout_problem(m, c, ServingLayout{8, 1, 8, 3})->find("does not divide tp 8") != std::string::npos);
  CHECK(serving_layout_problem(m, cluster("p5en.48xlarge", 2), ServingLayout{8, 2, 8, 1})->find("one instance") != std::string::npos);
  CHECK(serving_layout_problem(m, cluster("trn2.48xlarge"), ServingLayout{16, 1, 16, 16})->find("tensor parallel only") != std::string::npos);
  CHECK_FALSE(serving_layout_problem(m, c, ServingLayout{8, 1, 8, 8}));
  CHECK_FALSE(serving_layout_problem(m, c, ServingLayout{8, 1, 8, 2}));  // DP2 at attention TP4
  // An engine without expert parallelism: TGI.
  const Instance& inst = *cat().find_instance("p5en.48xlarge");
  const ServingChoice tgi = choose_serving_layout(m, deepseek_offline("tgi"), inst, cat().accelerator_of(inst), 1, LayoutRequest{8, 8, 8}, std::nullopt);
  CHECK(tgi.problem.find("tensor parallel only") != std::string::npos);
  // Searched, the expert-parallel layouts are tried beside TP: only they at ep 8.
  const ServingChoice any = choose_serving_layout(m, deepseek_offline(), inst, cat().accelerator_of(inst), 1, LayoutRequest{std::nullopt, 8, std::nullopt}, std::nullopt);
  REQUIRE(any.row);
  CHECK(any.row->estimate.layout.ep == 8);
  CHECK(expert_parallel_layouts(model("llama-3-70b"), engine_for(cat().accelerator_of(inst), nullptr), cat().accelerator_of(inst), 8).empty());
  CHECK(expert_parallel_layouts(m, engine_for(cat().accelerator_of(inst), nullptr), cat().accelerator_of(inst), 8).size() == 2);
}

TEST_CASE("Disaggregated prefill and decode: pools sized from each one's capacity, the KV cache over the network (hand-computed)") {
  const ModelSpec& m = model("llama-3-70b");
  InferenceRequest q;
  q.requests_per_second = 20;
  q.weights = WeightFormat::fp8;
  const InferenceWorkload w = make_inference_workload(q);
  const Instance& inst = *cat().find_instance("p5.48xlarge");
  const Accelerator& acc = cat().accelerator_of(inst);
  RecommendRequest r;
  const auto d = disaggregated_service(m, w, inst, acc, r);
  REQUIRE(d);
  // The mean prompt's KV cache, every layer (2 x 80 x 8 x 128 x 2 bytes a token), over the instance's network.
  const double kv_bytes = w.computed_prompt_tokens(w.prompt_tokens) * 2.0 * 80 * 8 * 128 * 2;
  CHECK(d->kv_transfer_s == Approx(kv_bytes / (inter_node_gb_per_s(inst, acc, 8) * 1e9)));
  // Each pool: the load over its replicas' capacity at the target utilisation, in whole instances.
  for (const DisaggregatedPool* p : {&d->prefill, &d->decode}) {
    const int per_instance = 8 / p->layout.tp;
    const int needed = static_cast<int>(std::ceil(20 / (p->requests_per_second_per_replica * kDefaultTargetUtilisation) - 1e-9));
    CHECK(p->instances == (needed + per_instance - 1) / per_instance);
    CHECK(p->replicas == p->instances * per_instance);
  }
  // Decode runs no prefill: its time per token is the decode step at its batch, within the target.
  CHECK(d->tpot_s <= *w.max_tpot_s);
  const Cluster c{&inst, &acc, 1};
  InferenceEstimate at = estimate_inference(m, w, c, d->decode.layout, d->decode_batch, nullptr);
  CHECK(d->tpot_s == Approx(at.step.total_s()));
  CHECK(d->decode.requests_per_second_per_replica == Approx(d->decode_batch / (w.generated_tokens_per_sequence() * at.step.total_s())));
  // TTFT: the prefill pool's mean prompt alone, the transfer and the first decode step.
  const InferenceEstimate pre = estimate_inference(m, w, c, d->prefill.layout, 1, nullptr);
  CHECK(d->ttft_s == Approx(pre.prefill_s + d->kv_transfer_s + d->tpot_s));
  CHECK(d->usd_per_hour == Approx(*hourly_rate(inst, "us-east-1", Pricing::on_demand) * d->instances()));
  // None without a load, nor where the KV cache has no EFA to cross on.
  CHECK_FALSE(disaggregated_service(m, make_inference_workload({}), inst, acc, r));
  const auto no_efa = std::find_if(cat().instances.begin(), cat().instances.end(),
                                   [](const Instance& i) { return !i.efa_supported && i.accelerator_count >= 4 && i.accelerator_name.rfind("V100", 0) == 0; });
  REQUIRE(no_efa != cat().instances.end());
  CHECK_FALSE(disaggregated_service(model("llama-3-8b"), w, *no_efa, cat().accelerator_of(*no_efa), r));
}

TEST_CASE("The analytic time per token counts the other requests' prefills between a request's tokens, not its own") {
  const ModelSpec& m = model("llama-3-8b");
  Cluster c = cluster("g6e.xlarge");
  InferenceRequest q;
  q.prompt_tokens = 2048;
  q.output_tokens = 64;
  InferenceWorkload w = make_inference_workload(q);
  InferenceEstimate e = estimate_inference(m, w, c, ServingLayout{1, 1}, 1, nullptr);
  REQUIRE(e.fits());
  const double P = e.prefill_gpu_s_per_request;
  // Batch 1: nothing else runs between its tokens; 63 gaps after the first.
  CHECK(e.tpot_s == Approx(e.step.total_s()).epsilon(1e-12));
  CHECK(e.latency_s == Approx(e.ttft_s + 63 * e.step.total_s()).epsilon(1e-12));
  // Batch 4: capacity R = 1/(P + 64 t/4); the other 3 of 4 requests' prefills
  // take 3/4 of the prefill share R P.
  evaluate_batch(m, w, c, e, 4);
  const double t = e.step.total_s(), R = 1 / (P + 64 * t / 4);
  CHECK(e.requests_per_second == Approx(R).epsilon(1e-12));
  CHECK(e.tpot_s == Approx(t / (1 - R * P * 3 / 4)).epsilon(1e-12));
  // One token per request: no gap (0), and the request waits for the other
  // three prefills before its step.
  q.output_tokens = 1;
  w = make_inference_workload(q);
  InferenceEstimate one = estimate_inference(m, w, c, ServingLayout{1, 1}, 4, nullptr);
  REQUIRE(one.fits());
  CHECK(one.tpot_s == 0);
  CHECK(one.latency_s == Approx(one.ttft_s + 3 * one.prefill_gpu_s_per_request).epsilon(1e-12));
  CHECK(one.tokens_per_second_per_user == Approx(1 / one.latency_s).epsilon(1e-12));
}

TEST_CASE("a shared prompt prefix is held once: the max batch counts each sequence's own tokens (Llama-3-8B, one L40S, hand-computed)") {
  const ModelSpec& m = model("llama-3-8b");
  const Cluster c = cluster("g6e.xlarge");
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.prompt_tokens = 4000;
  r.output_tokens = 200;
  const InferenceWorkload plain = make_inference_workload(r);
  r.prefix_share = 0.75;  // 3,000 of the 4,000 prompt tokens shared
  const InferenceWorkload shared = make_inference_workload(r);
  std::string problem;
  const InferenceEstimate a = estimate_inference(m, plain, c, ServingLayout{1, 1}, std::nullopt, &problem);
  const InferenceEstimate b = estimate_inference(m, shared, c, ServingLayout{1, 1}, std::nullopt, &problem);
  REQUIRE(problem.empty());
  // 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes a token; a sequence holds 4,000 + 200/2 = 4,100 tokens, 1,100 its own.
  const double gb = 131072 / 1e9;
  auto free_gb_of = [](const InferenceEstimate& e) { return e.memory.capacity_gb - e.memory.weights_gb - e.memory.workspace_gb - e.memory.reserve_gb; };
  CHECK(a.max_batch == static_cast<int>(std::floor(free_gb_of(a) / (4100 * gb))));
  const double free_gb = free_gb_of(b);
  CHECK(b.max_batch == std::min(256, static_cast<int>(std::floor((free_gb - 3000 * gb) / (1100 * gb)))));
  CHECK(b.max_batch > 3 * a.max_batch);
  CHECK(b.memory.kv_cache_gb == Approx(b.batch * 1100 * gb + 3000 * gb));
  // An engine without a prefix cache holds every prompt whole.
  CHECK(kv_shared_prefix_tokens(*find_engine("tgi-1"), shared) == 0);
  CHECK(kv_shared_prefix_tokens(*find_engine("vllm"), shared) == 3000);
}

TEST_CASE("a shared prefix on a sliding-window model: each sequence's own tokens fill its window (Gemma-3-27B, one L40S, hand-computed)") {
  const ModelSpec& m = model("gemma-3-27b");
  REQUIRE(m.sliding_layers == 52);
  REQUIRE(m.sliding_window == 1024);
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.prompt_tokens = 8192;
  r.output_tokens = 1024;
  r.weights = WeightFormat::fp8;
  r.prefix_share = 0.9;  // 7,373 shared; each sequence holds 8,192 + 512 = 8,704, 1,331 its own
  std::string problem;
  const InferenceEstimate e = estimate_inference(m, make_inference_workload(r), cluster("g6e.xlarge"), ServingLayout{1, 1}, std::nullopt, &problem);
  REQUIRE(problem.empty());
  // Own tokens: 10 full layers hold 1,331, the 52 local ones their window of 1,024; the prefix: 7,373 and 1,024, once.
  const double own = (10 * 1331 + 52 * 1024) / 62.0, prefix = (10 * 7373 + 52 * 1024) / 62.0;
  const double gb = 2.0 * 62 * 16 * 128 * 2 / 1e9;  // bf16 KV a token, every layer
  const double free_gb = e.memory.capacity_gb - e.memory.weights_gb - e.memory.workspace_gb - e.memory.reserve_gb;
  CHECK(e.max_batch == static_cast<int>(std::floor((free_gb - prefix * gb) / (own * gb))));
  CHECK(e.memory.kv_cache_gb <= free_gb);
}
