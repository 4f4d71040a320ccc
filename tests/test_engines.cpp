// Serving engines and training stacks as inputs (engines issue): the profiles
// parse and carry sources, each mechanism changes the step by the hand-computed
// amount, the wrong engine or stack for an accelerator is refused, and the
// bounded, regularised fit stays inside its bounds.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/workload/engine.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/physics/estimate.hpp"
#include "gpuadvisor/workload/framework.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/physics/memory.hpp"
#include "gpuadvisor/workload/neuron.hpp"
#include "gpuadvisor/search/search.hpp"
#include "gpuadvisor/validation/validation.hpp"

using namespace gpuadvisor;
using cli_test::Run;
using cli_test::run;

namespace {
const Catalog& cat() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}
Cluster cluster(const char* instance) {
  const Instance* i = cat().find_instance(instance);
  return Cluster{i, &cat().accelerator_of(*i), 1};
}
InferenceWorkload workload(const char* engine, WeightFormat weights = WeightFormat::bf16) {
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.prompt_tokens = 128;
  r.output_tokens = 128;
  r.weights = weights;
  r.engine = engine ? find_engine(engine) : nullptr;
  return make_inference_workload(r);
}
InferenceEstimate at_batch(const char* model, const char* instance, const InferenceWorkload& w, int batch, int tp = 1) {
  std::string problem;
  InferenceEstimate e = estimate_inference(*find_model_preset(model), w, cluster(instance), ServingLayout{tp, 1}, batch, &problem);
  REQUIRE(problem.empty());
  return e;
}
}  // namespace

TEST_CASE("the bundled engine profiles parse, name their sources, and default by accelerator") {
  const auto& profiles = engine_profiles();
  REQUIRE(profiles.size() >= 8);
  for (const char* name : {"vllm", "sglang", "trtllm", "tgi", "hf", "neuron"}) REQUIRE(find_engine(name));
  for (const auto& e : profiles) {
    CHECK(!e.notes.empty());
    CHECK(!e.weights.empty());
  }
  CHECK(engine_for(*cat().find_accelerator("H100-SXM"), nullptr).name == "vllm");
  CHECK(engine_for(*cat().find_accelerator("Inferentia2"), nullptr).name == "neuron");
  CHECK(engine_for(*cat().find_accelerator("H100-SXM"), find_engine("sglang")).name == "sglang");
  CHECK(find_engine("nope") == nullptr);
}

TEST_CASE("each engine's token budget per step follows its own memory tiers") {
  auto budget = [](const char* engine, const char* acc) { return engine_prefill_chunk_tokens(*find_engine(engine), *cat().find_accelerator(acc)); };
  // vLLM's API server: max_num_batched_tokens 8192 from 70 GiB except A100, else 2048.
  CHECK(budget("vllm", "A10G") == 2048);
  CHECK(budget("vllm", "A100-80GB") == 2048);
  CHECK(budget("vllm", "H100-SXM") == 8192);
  // SGLang's chunked_prefill_size: 2048 below 35 GB, 8192 below 160 GB, 16384 above.
  CHECK(budget("sglang", "A10G") == 2048);
  CHECK(budget("sglang", "L40S") == 8192);
  CHECK(budget("sglang", "H200") == 8192);
  CHECK(budget("sglang", "B200") == 16384);
  // TensorRT-LLM's max_num_tokens: 8192 everywhere.
  CHECK(budget("trtllm", "A10G") == 8192);
  CHECK(budget("trtllm", "B200") == 8192);
  CHECK(budget("tgi-1", "A10G") == 4096);
}

TEST_CASE("an engines file with a bad field is refused with the engine and field named") {
  auto bad = [](const std::string& engine) {
    return R"({"sources": {"S": {"title": "t", "url": "u"}}, "engines": [)" + engine + "]}";
  };
  const std::string good = R"({"name": "x", "title": "t", "software": "cuda", "step_overhead_ms": 1, "sequence_overhead_us": 0,
    "launch_ms_per_layer": 0, "prefill": "chunked", "prefill_chunk_tokens": 2048, "free_fraction": 0.1, "free_fraction_of": "total",
    "cuda_graph_pool_gb": 2, "dequant_ops_per_weight": 1, "continuous_batching": true, "weights": ["bf16"], "weight_only": [],
    "sources": {"step_overhead_ms": "S"}})";
  CHECK(read_engines("f", bad(good)).size() == 1);
  auto refused = [&](const std::string& from, const std::string& to, const std::string& field) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    CHECK_THROWS_WITH(read_engines("f", bad(text)), Catch::Contains("engine x: field '" + field + "'"));
  };
  refused(R"("software": "cuda")", R"("software": "rocm")", "software");
  refused(R"("step_overhead_ms": 1)", R"("step_overhead_ms": -1)", "step_overhead_ms");
  refused(R"("prefill": "chunked")", R"("prefill": "sometimes")", "prefill");
  refused(R"("weights": ["bf16"])", R"("weights": ["bf17"])", "weights");
  refused(R"("weights": ["bf16"])", R"("weights": [])", "weights");
  refused(R"("free_fraction_of": "total")", R"("free_fraction_of": "most")", "free_fraction_of");
  refused(R"({"step_overhead_ms": "S"})", R"({"step_overhead_ms": "T"})", "sources");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "prefill_compute_factor": 2)", "prefill_compute_factor");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "prefill_batching_steps": -3)", "prefill_batching_steps");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "waiting_served_ratio": -1)", "waiting_served_ratio");
  // TGI's ratio holds prompts only up to a number of decode steps: without one it would hold them for ever.
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "waiting_served_ratio": 1.2)", "waiting_served_ratio");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "prefill_pauses_decode": "yes")", "prefill_pauses_decode");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "releases": [])", "releases");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "releases": [{"before": "soon", "title": "t", "step_overhead_ms": 1}])",
          "releases");
  refused(R"("continuous_batching": true)",
          R"("continuous_batching": true, "releases": [{"before": "0.14", "title": "a", "step_overhead_ms": 1}, {"before": "0.9", "title": "b", "step_overhead_ms": 2}])",
          "releases");
  // A release's own sequence limit is a count of sequences, and the release's profile takes it on every accelerator.
  for (const char* limit : {"0", "\"many\"", "2e6"})
    refused(R"("continuous_batching": true)",
            std::string(R"("continuous_batching": true, "releases": [{"before": "0.8", "title": "v0", "step_overhead_ms": 1, "max_sequences": )") + limit +
                "}]",
            "max_sequences");
  {
    std::string text = good;
    const std::string from = R"("continuous_batching": true)";
    text.replace(text.find(from), from.size(),
                 R"("continuous_batching": true, "max_sequences": {"default": 512}, "releases": [{"before": "0.8", "title": "v0", "step_overhead_ms": 1, "max_sequences": 64}])");
    const auto read = read_engines("f", bad(text));
    REQUIRE(read.size() == 1);
    REQUIRE(read[0].release_profiles.size() == 1);
    CHECK(read[0].release_profiles[0].max_sequences == 64);
    CHECK(read[0].max_sequences == 512);
  }
  // A separate prefill pauses the decode batch already: the flag belongs to chunked prefill.
  refused(R"("prefill": "chunked")", R"("prefill": "separate", "prefill_pauses_decode": true)", "prefill_pauses_decode");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "dequant_per_sequence": "yes")", "dequant_per_sequence");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "reserves_full_kv": 1)", "reserves_full_kv");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "full_length_local_kv": "yes")", "full_length_local_kv");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "expert_parallel": "yes")", "expert_parallel");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "partial_attention_dp": 1)", "partial_attention_dp");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "max_sequences": 256)", "max_sequences");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "max_sequences": {"default": 0})", "default");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "max_sequences": {"default": 256, "large": 1024})", "large_from_gib");
  refused(R"("continuous_batching": true)", R"("continuous_batching": true, "max_sequences": {"default": 256, "large_excludes": "A100"})", "max_sequences");
  const std::string tiers = R"("prefill_chunk_tokens": {"default": 2048, "tiers": [{"from_gib": 70, "tokens": 8192}], "excludes": ["A100"]})";
  CHECK(read_engines("f", bad([&] { std::string t = good; t.replace(t.find(R"("prefill_chunk_tokens": 2048)"), 28, tiers); return t; }())).size() == 1);
  refused(R"("prefill_chunk_tokens": 2048)", R"("prefill_chunk_tokens": {"default": 2048, "tiers": [{"from_gib": 160, "tokens": 16384}, {"from_gib": 35, "tokens": 8192}]})", "prefill_chunk_tokens");
  refused(R"("prefill_chunk_tokens": 2048)", R"("prefill_chunk_tokens": {"default": 2048, "tiers": [{"from_gib": 35, "tokens": 0}]})", "tokens");
  refused(R"("prefill_chunk_tokens": 2048)", R"("prefill_chunk_tokens": {"default": 2048, "excludes": "A100"})", "prefill_chunk_tokens");
  refused(R"("prefill_chunk_tokens": 2048)", R"("prefill_chunk_tokens": {"tiers": []})", "default");
  {
    std::string text = good;
    const std::string batching = R"("continuous_batching": true)";
    text.replace(text.find(batching), batching.size(),
                 batching + R"(, "prefill_compute_factor": 0.33, "prefill_batching_steps": 20, "waiting_served_ratio": 1.2, "dequant_per_sequence": true)");
    const EngineProfile e = read_engines("f", bad(text)).front();
    CHECK(e.prefill_compute_factor == 0.33);
    CHECK(e.prefill_batching_steps == 20);
    CHECK(e.waiting_served_ratio == 1.2);
    CHECK(e.dequant_per_sequence);
    CHECK_FALSE(e.prefill_pauses_decode);  // left out: chunks ride with the decodes
  }
  CHECK(find_engine("sglang")->prefill_pauses_decode);  // SGLang: --enable-mixed-chunk off by default
  CHECK_FALSE(find_engine("vllm")->prefill_pauses_decode);
  CHECK_FALSE(find_engine("trtllm")->prefill_pauses_decode);
  CHECK_THROWS_WITH(read_engines("f", bad(good + "," + good)), Catch::Contains("duplicate engine"));
  CHECK_THROWS_AS(read_engines("f", "{"), InputError);
}

TEST_CASE("engine host time adds in series, kernel launches overlap the accelerator (Llama-3-8B, one A10G, batch 1)") {
  const InferenceEstimate v = at_batch("llama-3-8b", "g5.xlarge", workload("vllm"), 1);
  const InferenceEstimate s = at_batch("llama-3-8b", "g5.xlarge", workload("sglang"), 1);
  const InferenceEstimate h = at_batch("llama-3-8b", "g5.xlarge", workload("hf"), 1);
  // The accelerator's work is the engine's to share: the same in all three.
  CHECK(v.step.accelerator_s() == Approx(s.step.accelerator_s()));
  CHECK(v.step.accelerator_s() == Approx(h.step.accelerator_s()));
  // vLLM (async scheduling, 0.14 on): 0.3 ms per step + 3 us per sequence; SGLang's overlap scheduler leaves 0.2 ms.
  CHECK(v.step.total_s() == Approx(v.step.accelerator_s() + 0.3e-3 + 3e-6));
  CHECK(s.step.total_s() == Approx(s.step.accelerator_s() + 0.2e-3));
  // transformers: 32 layers x 1.2 ms of launches (longer than the 32 ms weight read) + 2 ms per step.
  CHECK(h.step.launch_s == Approx(32 * 1.2e-3));
  CHECK(h.step.total_s() == Approx(std::max(h.step.accelerator_s(), 32 * 1.2e-3) + 2e-3));
  CHECK(h.step.bound() == "engine host overhead");
  // The acceptance case: 1 / (weights / (600 GB/s x fraction) + host) is 27-32 tok/s, as TGI 1.0.3
  // measured for Llama-2-7B on the same GPU (32.4 tok/s for 13.5 GB) scales to 16 GB.
  CHECK(1 / v.step.total_s() > 27);
  CHECK(1 / v.step.total_s() < 37);  // the datasheet bandwidth's ceiling: 600 GB/s / 16.06 GB
}

TEST_CASE("per-sequence host time grows with the batch, a separate prefill reads the weights for every prompt") {
  const InferenceEstimate one = at_batch("llama-3-8b", "p5.48xlarge", workload("vllm"), 1);
  const InferenceEstimate many = at_batch("llama-3-8b", "p5.48xlarge", workload("vllm"), 64);
  CHECK(many.step.host_s - one.step.host_s == Approx(63 * 3e-6));
  // TGI 1.x prefills each prompt in its own pass: more replica time per request than chunked vLLM.
  const InferenceEstimate chunked = at_batch("llama-2-7b", "g5.xlarge", workload("vllm"), 8);
  const InferenceEstimate separate = at_batch("llama-2-7b", "g5.xlarge", workload("tgi-1"), 8);
  CHECK(separate.prefill_gpu_s_per_request > chunked.prefill_gpu_s_per_request);
}

TEST_CASE("the engine's memory reserve: a share of the whole memory (vLLM) or of what the weights leave (TensorRT-LLM)") {
  const Accelerator& a = *cat().find_accelerator("H100-SXM");
  const double usable = a.memory_usable_gb();
  CHECK(serving_reserve_gb(a, *find_engine("vllm"), 16) == Approx(kReserveFixedGb + 0.10 * usable + 2.15));
  CHECK(serving_reserve_gb(a, *find_engine("trtllm"), 16) == Approx(kReserveFixedGb + 0.10 * (usable - 16)));
  // Neuron compiles its graphs: no CUDA-graph pool, whatever the profile says.
  const Accelerator& n = *cat().find_accelerator("Inferentia2");
  CHECK(serving_reserve_gb(n, *find_engine("neuron"), 4) == Approx(kReserveFixedGb));
}

TEST_CASE("messages name the engines to choose from the profiles' properties, not a list of their own") {
  CHECK(engine_names_where(has_prefix_cache) == "vllm, sglang, trtllm, tgi");
  CHECK(engine_names_where(prefills_in_chunks) == "vllm, sglang, trtllm, tgi");
  CHECK(engine_names_where(batches_continuously) == "vllm, sglang, trtllm, tgi, tgi-1, neuron, neuron-direct");
  CHECK(!prefix_share_problem(*find_engine("sglang")));
  CHECK(prefix_share_problem(*find_engine("hf")).value_or("") ==
        "hf has no prefix cache, so every prompt is prefilled whole; give an engine that reuses a shared prefix (vllm, sglang, trtllm, tgi)");
}

TEST_CASE("engines refuse accelerators and formats they do not serve") {
  const Accelerator& a10g = *cat().find_accelerator("A10G");
  const Accelerator& inf2 = *cat().find_accelerator("Inferentia2");
  CHECK(serving_accelerator_problem(inf2, workload("vllm")).value_or("").find("is the CUDA build; Inferentia2 is a Neuron accelerator") != std::string::npos);
  CHECK(serving_accelerator_problem(a10g, workload("neuron")).value_or("").find(
            "runs on Inferentia and Trainium only; A10G is a GPU: --engine vllm, sglang, trtllm, tgi, tgi-1, hf, gpt-fast") != std::string::npos);
  // fp8 on Ampere: vLLM runs it weight-only (FP8 Marlin); TensorRT-LLM needs fp8 math.
  CHECK(!serving_accelerator_problem(a10g, workload("vllm", WeightFormat::fp8)));
  CHECK(serving_accelerator_problem(a10g, workload("trtllm", WeightFormat::fp8)).value_or("").find("fp8 math") != std::string::npos);
  CHECK(serving_accelerator_problem(a10g, workload("hf", WeightFormat::fp4)).value_or("").find("does not serve fp4") != std::string::npos);
  CHECK(!serving_accelerator_problem(a10g, workload(nullptr)));
}

TEST_CASE("Neuron all-reduces run over NeuronCores: one chip's two cores all-reduce too") {
  InferenceWorkload w = workload("neuron");
  const InferenceEstimate one_chip = at_batch("llama-3-8b", "inf2.xlarge", w, 1);
  const Accelerator& inf2 = *cat().find_accelerator("Inferentia2");
  REQUIRE(neuron_cores_per_chip(inf2) == 2);
  // 2 all-reduces per layer x 32 layers, each one latency plus the ring term over 2 cores;
  // the ring's latency over 2 cores is 1/7 of the catalog's 8-core figure.
  const double latency = serving_all_reduce_latency_s(inf2, 2);
  CHECK(latency == Approx(serving_all_reduce_latency_s(inf2) / 7));
  CHECK(one_chip.step.tensor_parallel_s > 64 * latency);
  CHECK(one_chip.step.tensor_parallel_s < 64 * latency * 1.5);
  // A GPU at tp 1 has none.
  CHECK(at_batch("llama-3-8b", "g5.xlarge", workload("vllm"), 1).step.tensor_parallel_s == 0);
}

TEST_CASE("Neuron rings: the all-reduce latency grows with the NeuronCores, a GPU's does not, nor Trainium2's mesh") {
  const Accelerator& inf2 = *cat().find_accelerator("Inferentia2");
  const Accelerator& h100 = *cat().find_accelerator("H100-SXM");
  const Accelerator& trn2 = *cat().find_accelerator("Trainium2");
  const Accelerator& trn1 = *cat().find_accelerator("Trainium");
  // Trainium2 routes between the chips of its torus: a small all-reduce is one mesh step at 4 or 64 ranks.
  CHECK(neuron_small_collectives_mesh(trn2));
  CHECK_FALSE(neuron_small_collectives_mesh(inf2));
  CHECK_FALSE(neuron_small_collectives_mesh(trn1));
  CHECK_FALSE(neuron_small_collectives_mesh(h100));
  CHECK(serving_all_reduce_latency_s(trn2, 64) == Approx(serving_all_reduce_latency_s(trn2)));
  CHECK(serving_all_reduce_latency_s(trn2, 4) == Approx(serving_all_reduce_latency_s(trn2)));
  CHECK(serving_all_reduce_latency_s(trn1, 16) == Approx(serving_all_reduce_latency_s(trn1) * 15.0 / 7));
  // (ranks - 1) / (8 - 1) of the 8-rank figure: 24 cores (inf2.48xlarge at TP 12 chips) take 23/7 of it.
  CHECK(serving_all_reduce_latency_s(inf2, 24) == Approx(serving_all_reduce_latency_s(inf2) * 23.0 / 7));
  CHECK(serving_all_reduce_latency_s(inf2, 8) == Approx(serving_all_reduce_latency_s(inf2)));
  CHECK(serving_all_reduce_latency_s(h100, 8) == serving_all_reduce_latency_s(h100, 2));
  // Decode at TP 12 chips on inf2.48xlarge: 64 all-reduces at the 24-core latency, at least.
  InferenceWorkload w = workload("neuron-direct");
  w.prompt_tokens = 128;
  w.output_tokens = 128;
  const InferenceEstimate e = at_batch("llama-2-7b", "inf2.48xlarge", w, 1, 12);
  CHECK(e.step.tensor_parallel_s > 64 * serving_all_reduce_latency_s(inf2, 24));
}

TEST_CASE("Neuron decode: each sequence costs the device a fitted time per layer, both Neuron engines") {
  const Accelerator& inf2 = *cat().find_accelerator("Inferentia2");
  const double per_layer = decode_sequence_layer_s(inf2);
  CHECK(per_layer > 5e-6);  // the fit stays near the 20 us prior (bounds 2-200 us)
  CHECK(per_layer < 60e-6);
  Accelerator bare = inf2;
  bare.efficiency.sequence_layer_us = 0;
  CHECK(decode_sequence_layer_s(bare) == kNeuronSequenceLayerS);
  CHECK(decode_sequence_layer_s(*cat().find_accelerator("H100-SXM")) == 0);
  InferenceWorkload w = workload("neuron-direct");
  const InferenceEstimate b1 = at_batch("llama-3-8b", "inf2.48xlarge", w, 1, 12);
  const InferenceEstimate b8 = at_batch("llama-3-8b", "inf2.48xlarge", w, 8, 12);
  CHECK(b1.step.sequence_s == Approx(32 * per_layer));
  CHECK(b8.step.sequence_s == Approx(8 * 32 * per_layer));
  CHECK(b8.step.accelerator_s() - b1.step.accelerator_s() > 7 * 32 * per_layer);
  CHECK(b8.step.host_s == 0);  // neuron-direct has no server
  // GPUs have none.
  CHECK(at_batch("llama-3-8b", "g5.xlarge", workload("vllm"), 8).step.sequence_s == 0);
}

TEST_CASE("Neuron prefill runs at a flat 0.33 of the compute fraction, GPUs ramp with tokens") {
  const Accelerator& inf2 = *cat().find_accelerator("Inferentia2");
  InferenceWorkload w = workload("neuron-direct");
  w.prompt_tokens = 4096;
  const InferenceEstimate e = at_batch("llama-2-13b", "inf2.48xlarge", w, 1, 12);
  const ModelSpec& m = *find_model_preset("llama-2-13b");
  // Hand computation: (2 N_matmul P + 2 L w P^2) / (12 chips x 190 TFLOPS x fraction x 0.33).
  const double flops = 4096.0 * 2 * matmul_params_per_token(m) + 2.0 * m.layers * m.query_width() * 4096 * m.attended_tokens(4096);
  const double compute_s = flops / (12 * 190e12 * max_compute_fraction(inf2, Precision::bf16) * 0.33);
  CHECK(e.prefill_s > compute_s);
  CHECK(e.prefill_s < compute_s * 1.35);  // plus the all-reduces of the prompt's activations (42 MB each over 24 cores)
  // The same prompt at 256 tokens runs at the same rate: time scales with the FLOPs, no ramp.
  w.prompt_tokens = 256;
  const InferenceEstimate short_prompt = at_batch("llama-2-13b", "inf2.48xlarge", w, 1, 12);
  const double short_flops = 256.0 * 2 * matmul_params_per_token(m) + 2.0 * m.layers * m.query_width() * 256 * m.attended_tokens(256);
  CHECK(short_prompt.prefill_s > short_flops / (12 * 190e12 * max_compute_fraction(inf2, Precision::bf16) * 0.33));
}

TEST_CASE("TGI 1.x gathers the prompts of 20 decode steps into one prefill, within 4096 tokens") {
  const EngineProfile& tgi1 = *find_engine("tgi-1");
  InferenceWorkload w = workload("tgi-1");
  w.prompt_tokens = 256;
  w.output_tokens = 50;
  // batch 20, 50 tokens each: 20 x 20 / 50 = 8 prompts arrive per 20 steps; 8 x 256 = 2048 tokens fit 4096.
  const Accelerator& a10g = *cat().find_accelerator("A10G");
  CHECK(prompts_per_prefill(tgi1, a10g, w, 20) == 8);
  CHECK(prompts_per_prefill(tgi1, a10g, w, 1) == 1);
  w.prompt_tokens = 1000;
  CHECK(prompts_per_prefill(tgi1, a10g, w, 20) == 4);  // the 4096-token budget
  CHECK(prompts_per_prefill(*find_engine("neuron"), *cat().find_accelerator("Inferentia2"), w, 20) == 1);
  CHECK(prompts_per_prefill(*find_engine("vllm"), a10g, w, 20) == 1);
  // Gathered prompts share a weight read and fill the matrices: less replica time per request.
  w.prompt_tokens = 256;
  const InferenceEstimate b20 = at_batch("llama-2-7b", "g5.2xlarge", w, 20);
  const InferenceEstimate b1 = at_batch("llama-2-7b", "g5.2xlarge", w, 1);
  CHECK(b20.prefill_gpu_s_per_request < 0.7 * b1.prefill_gpu_s_per_request);
}

TEST_CASE("training stacks scale the matrix throughput against Megatron-Core, the wrong stack for an accelerator is refused") {
  REQUIRE(find_framework("megatron"));
  REQUIRE(find_framework("fsdp"));
  CHECK(framework_for(*cat().find_accelerator("H100-SXM"), nullptr).name == "megatron");
  CHECK(framework_for(*cat().find_accelerator("Trainium"), nullptr).name == "neuron");
  const ModelSpec& m = *find_model_preset("llama-3-8b");
  WorkloadRequest r;
  r.seq_len = 8192;
  r.global_batch = 64;
  r.tokens = 1e9;
  r.precision = Precision::fp8;
  const TrainingWorkload reference = make_workload(r, m);
  r.framework = find_framework("fsdp");
  const TrainingWorkload fsdp = make_workload(r, m);
  const Cluster c = cluster("p5.48xlarge");
  LayoutConstraints fixed;
  fixed.tp = 1;
  fixed.pp = 1;
  fixed.micro_batch = 1;
  fixed.zero_stage = 1;
  const auto a = search_cluster(m, reference, c, fixed), b = search_cluster(m, fsdp, c, fixed);
  REQUIRE(a.best);
  REQUIRE(b.best);
  // The same layout; fsdp's fp8 matrices run at 0.89 of Megatron's: its compute time is 1 / 0.89 as long.
  CHECK(b.best->compute_efficiency == Approx(a.best->compute_efficiency * find_framework("fsdp")->compute_factor(Precision::fp8)));
  CHECK(b.best->tokens_per_second_per_accelerator < a.best->tokens_per_second_per_accelerator);
  r.framework = find_framework("neuron");
  CHECK(accelerator_problem(*c.accelerator, make_workload(r, m)).value_or("").find("does not run on H100") != std::string::npos);
}

TEST_CASE("the fit stays inside each parameter's bounds and is pulled toward its prior") {
  const Accelerator& h100 = *cat().find_accelerator("H100-SXM");
  const ParameterPrior mem = parameter_prior(h100, "memory_bandwidth_fraction");
  CHECK(mem.value == kPriorMemoryFraction);
  CHECK(mem.lower == 0.50);
  const ParameterPrior latency = parameter_prior(*cat().find_accelerator("A10G"), "all_reduce_latency_us");
  CHECK(latency.value == Approx(40));  // PCIe: 4 x 10 us
  // Two cases that would need an absurd bandwidth fraction (decode 10x slower than the weight read).
  Catalog catalog = cat();
  std::vector<ValidationCase> cases = read_cases("t", R"({"cases": [
    {"id": "a", "task": "inference", "model": "llama-3-8b", "system": "g5.xlarge", "precision": "bf16", "engine": "sglang",
     "prompt_tokens": 128, "output_tokens": 128, "tp": 1, "batch": 1, "metric": "tpot_s", "measured": 0.35, "source": "s", "source_key": "S"},
    {"id": "b", "task": "inference", "model": "llama-2-7b", "system": "g5.xlarge", "precision": "bf16", "engine": "sglang",
     "prompt_tokens": 128, "output_tokens": 128, "tp": 1, "batch": 1, "metric": "tpot_s", "measured": 0.30, "source": "s", "source_key": "S"}]})");
  reset_to_prior(catalog);
  const auto fitted = calibrate(catalog, cases);
  REQUIRE(fitted.size() == 1);
  CHECK(fitted[0].parameter == "memory_bandwidth_fraction");
  // No physical bandwidth explains a decode ten times slower than the weight
  // read: the fit stays in bounds, and the prior keeps it near 0.80 instead of
  // letting the hardware absorb what is missing from the engine.
  CHECK(fitted[0].after >= mem.lower);
  CHECK(fitted[0].after <= mem.upper);
  CHECK(fitted[0].after > 0.7);
}

TEST_CASE("a parameter's prior is the median fitted on the other accelerators of its stack with at least 5 cases") {
  const std::vector<FittedParameter> fitted{{"H100-SXM", "compute_max_fraction.fp8", 0.35, 0.50, 10},
                                            {"B200", "compute_max_fraction.fp8", 0.35, 0.40, 6},
                                            {"L40S", "compute_max_fraction.fp8", 0.35, 0.46, 5},
                                            {"H200", "compute_max_fraction.fp8", 0.35, 0.90, 4},       // too few cases to pool
                                            {"Trainium2", "compute_max_fraction.fp8", 0.35, 0.20, 9},  // another stack
                                            {"A100-80GB", "compute_max_fraction.bf16", 0.50, 0.68, 28},
                                            {"H100-SXM", "all_reduce_latency_us", 10, 9, 10},
                                            {"Trainium2", "all_reduce_latency_us", 10, 5, 7}};
  CHECK(pooled_prior(cat(), fitted, "B300", "compute_max_fraction.fp8").value == Approx(0.46));      // median of 0.50, 0.40, 0.46
  CHECK(pooled_prior(cat(), fitted, "H100-SXM", "compute_max_fraction.fp8").value == Approx(0.43));  // itself left out
  CHECK(pooled_prior(cat(), fitted, "Inferentia2", "compute_max_fraction.fp8").value == Approx(0.20));
  CHECK(pooled_prior(cat(), fitted, "T4", "compute_max_fraction.fp16").value == Approx(0.68));  // fp16 pools with bf16
  const ParameterPrior none = pooled_prior(cat(), fitted, "B300", "compute_max_fraction.fp4");
  CHECK(none.value == kPriorComputeFraction4);
  CHECK(none.lower == 0.15);
  CHECK(none.upper == 0.90);
  // Latencies pool between NVSwitch fabrics only (NeuronLink rings and tori, PCIe trees differ by device).
  CHECK(pooled_prior(cat(), fitted, "B200", "all_reduce_latency_us").value == Approx(9));
  CHECK(pooled_prior(cat(), fitted, "Inferentia2", "all_reduce_latency_us").value ==
        parameter_prior(*cat().find_accelerator("Inferentia2"), "all_reduce_latency_us").value);
  CHECK(pooled_prior(cat(), fitted, "L40S", "all_reduce_latency_us").value ==
        parameter_prior(*cat().find_accelerator("L40S"), "all_reduce_latency_us").value);
}

TEST_CASE("vLLM runs at most 256 sequences, 1024 on GPUs of 70 GiB and more except A100 (its max_num_seqs defaults)") {
  const EngineProfile& vllm = *find_engine("vllm");
  auto seqs = [&](const char* acc) { return engine_max_sequences(vllm, *cat().find_accelerator(acc), kMaxServingBatch); };
  CHECK(seqs("H100-SXM") == 1024);
  CHECK(seqs("H200") == 1024);
  CHECK(seqs("A100-80GB") == 256);  // excluded by name (vLLM PR #17885)
  CHECK(seqs("L40S") == 256);       // 48 GB
  CHECK(seqs("A10G") == 256);
  CHECK(engine_max_sequences(*find_engine("sglang"), *cat().find_accelerator("L40S"), kMaxServingBatch) == kMaxServingBatch);
  // Llama-3-8B on one A100-80GB: the KV cache holds well over 256 sequences of 192 tokens; the scheduler runs 256.
  InferenceWorkload w = workload("vllm");
  std::string problem;
  const InferenceEstimate e = estimate_inference(*find_model_preset("llama-3-8b"), w, cluster("p4de.24xlarge"), ServingLayout{1, 1}, std::nullopt, &problem);
  CHECK(e.max_batch == 256);
  w.concurrency = 400;  // --concurrency overrides the engine's default
  CHECK(estimate_inference(*find_model_preset("llama-3-8b"), w, cluster("p4de.24xlarge"), ServingLayout{1, 1}, std::nullopt, &problem).max_batch == 400);
}

TEST_CASE("TensorRT-LLM reserves each request's whole KV at admission: prompt + all output tokens per sequence") {
  const EngineProfile& trt = *find_engine("trtllm");
  CHECK(trt.reserves_full_kv);
  CHECK_FALSE(find_engine("vllm")->reserves_full_kv);
  InferenceWorkload w = workload("trtllm");
  w.prompt_tokens = 1000;
  w.output_tokens = 1000;
  CHECK(kv_tokens_held(trt, w) == 2000);
  CHECK(kv_tokens_held(*find_engine("vllm"), w) == 1500);
  // Llama-3-70B bf16 on two A100-80GB (TP2): the batch is what the free memory holds at 2000 tokens a sequence.
  const ModelSpec& m = *find_model_preset("llama-3-70b");
  std::string problem;
  const InferenceEstimate e = estimate_inference(m, w, cluster("p4de.24xlarge"), ServingLayout{2, 1}, std::nullopt, &problem);
  const double free_gb = e.memory.capacity_gb - e.memory.weights_gb - e.memory.workspace_gb - e.memory.reserve_gb;
  const double kv_gb = 2.0 * 80 * (8 / 2) * 128 * 2 / 1e9;  // bytes per token per rank: 2 x layers x kv heads/tp x head_dim x 2
  CHECK(e.max_batch == static_cast<int>(std::floor(free_gb / (kv_gb * 2000))));
}

TEST_CASE("Neuron runs the whole compiled batch every step: padded slots read KV and route to experts, sequences cost host and per-sequence time") {
  InferenceWorkload w = workload("neuron");
  w.prompt_tokens = 1500;
  w.output_tokens = 250;
  const InferenceEstimate plain = at_batch("llama-3-8b", "inf2.48xlarge", w, 1, 4);
  w.compiled_batch = 32;
  const InferenceEstimate padded = at_batch("llama-3-8b", "inf2.48xlarge", w, 1, 4);
  CHECK(decode_slots(*cat().find_accelerator("Inferentia2"), w, 1) == 32);
  CHECK(decode_slots(*cat().find_accelerator("Inferentia2"), w, 40) == 40);
  CHECK(decode_slots(*cat().find_accelerator("H100-SXM"), w, 1) == 1);  // GPUs ignore it
  CHECK(padded.step.kv_read_s == Approx(32 * plain.step.kv_read_s));
  CHECK(padded.step.weights_read_s == Approx(plain.step.weights_read_s));  // dense: the weights are read once either way
  CHECK(padded.step.sequence_s == Approx(plain.step.sequence_s));          // one sequence in flight
  CHECK(padded.step.host_s == Approx(plain.step.host_s));
  CHECK(padded.memory.kv_cache_gb == Approx(32 * plain.memory.kv_cache_gb));  // every slot holds its KV
  // MoE: the padded tokens are routed too, so a step reads the experts 32 tokens touch (128 experts, top-8).
  const ModelSpec& moe = *find_model_preset("qwen3-30b-a3b");
  std::string problem;
  const InferenceEstimate moe_padded = estimate_inference(moe, w, cluster("inf2.48xlarge"), ServingLayout{4, 1}, 1, &problem);
  w.compiled_batch.reset();
  const InferenceEstimate moe_plain = estimate_inference(moe, w, cluster("inf2.48xlarge"), ServingLayout{4, 1}, 1, &problem);
  const double expert_bytes = moe.expert_mlp_params() * 2.0 * moe.moe_layers();
  const double touched_32 = 128 * (1 - std::pow(1 - 8.0 / 128, 32)), touched_1 = 8;
  const double bw = cat().find_accelerator("Inferentia2")->memory_bandwidth_gb_per_s * cat().find_accelerator("Inferentia2")->efficiency.memory_bandwidth_fraction * 1e9;
  CHECK(moe_padded.step.weights_read_s - moe_plain.step.weights_read_s == Approx((touched_32 - touched_1) * expert_bytes / 4 / bw).epsilon(1e-6));
  // More sequences than slots is refused; a compiled batch whose KV does not fit is too.
  w.compiled_batch = 4;
  estimate_inference(*find_model_preset("llama-3-8b"), w, cluster("inf2.48xlarge"), ServingLayout{4, 1}, 8, &problem);
  CHECK(problem.find("exceeds the 4 sequences the decode graph was compiled for") != std::string::npos);
  w.compiled_batch = 4096;
  const InferenceEstimate too_big = estimate_inference(*find_model_preset("llama-3-8b"), w, cluster("inf2.xlarge"), ServingLayout{1, 1}, std::nullopt, &problem);
  CHECK_FALSE(too_big.fits());
  CHECK(problem.find("compiled for batch 4096") != std::string::npos);
}

TEST_CASE("cli: --compiled-batch on Neuron, its refusals") {
  Run r = run("estimate --task inference --instance inf2.48xlarge --model llama-3-8b --tp 4 --batch 1 --compiled-batch 32 --mode offline --format json");
  REQUIRE(r.code == 0);
  Run plain = run("estimate --task inference --instance inf2.48xlarge --model llama-3-8b --tp 4 --batch 1 --mode offline --format json");
  REQUIRE(plain.code == 0);
  const double kv = nlohmann::json::parse(r.out)["inference"]["decode_step"]["kv_read_s"].get<double>();
  CHECK(kv == Approx(32 * nlohmann::json::parse(plain.out)["inference"]["decode_step"]["kv_read_s"].get<double>()));
  CHECK(run("estimate --task inference --instance inf2.48xlarge --model llama-3-8b --compiled-batch 0").code == 2);
  CHECK(run("estimate --task inference --instance inf2.48xlarge --model llama-3-8b --compiled-batch x").code == 2);
  CHECK(run("estimate --instance trn1.32xlarge --model llama-3-8b --compiled-batch 8").code == 2);  // a serving flag on training
  r = run("estimate --task inference --instance inf2.48xlarge --model llama-3-8b --tp 4 --batch 32 --compiled-batch 16");
  CHECK(r.code == 2);
  CHECK(r.err.find("--batch 32 exceeds --compiled-batch 16") != std::string::npos);
  r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --compiled-batch 16 --mode offline");
  CHECK(r.code == 0);
  CHECK(r.err.find("--compiled-batch applies to Inferentia and Trainium") != std::string::npos);
}

TEST_CASE("estimate with a load reports what users see at it, as recommend does (at_load beside the capacity point)") {
  const std::string service = "--model llama-3-70b --task inference --requests-per-second 20 --prompt-tokens 2000 --output-tokens 300 "
                              "--max-tpot 50ms --format json";
  Run est = run("estimate --instance p5.48xlarge --tp 8 " + service);
  REQUIRE(est.code == 0);
  const auto e = nlohmann::json::parse(est.out)["inference"];
  REQUIRE(e["at_load"].is_object());
  CHECK(e["at_load"]["batch"].get<int>() < e["batch"].get<int>());     // fewer in flight than the capacity batch
  CHECK(e["at_load"]["tpot_s"].get<double>() < e["tpot_s"].get<double>());
  CHECK(e["tpot_s"].get<double>() <= 0.05 + 1e-9);                       // the capacity point meets the target
  Run rec = run("recommend --family p5 " + service);
  REQUIRE(rec.code == 0);
  const auto pick = nlohmann::json::parse(rec.out)["recommendation"];
  REQUIRE(pick["instance"] == "p5.48xlarge");
  REQUIRE(pick["layout"]["tp"] == 8);
  // estimate simulates the replica under its share of the load; recommend's
  // rows are still the analytic operating point (Little's law), which has no
  // queue: the simulated mean is slower than it, never faster.
  CHECK(e["at_load"]["model"] == "simulated");
  CHECK(pick["tpot_s"].get<double>() <= e["at_load"]["percentiles"]["tpot_s"]["p99"].get<double>() * 1.5);
  // Without a load there is no operating point to report.
  Run one = run("estimate --instance p5.48xlarge --tp 8 --model llama-3-70b --task inference --format json");
  REQUIRE(one.code == 0);
  CHECK(nlohmann::json::parse(one.out)["inference"]["at_load"].is_null());
}

TEST_CASE("cli: --engine and --framework, their refusals, and the engine in the JSON") {
  Run r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --engine sglang --mode offline --format json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["engine"]["name"] == "sglang");
  CHECK(j["inference"]["decode_step"]["engine_host_s"].get<double>() == Approx(0.2e-3));
  r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b");
  CHECK(r.err.find("served with vllm on GPUs") != std::string::npos);
  CHECK(run("estimate --task inference --instance g5.xlarge --model llama-3-8b --engine nope").code == 2);
  r = run("estimate --task inference --instance inf2.xlarge --model llama-3-8b --engine vllm");
  CHECK(r.code == 2);
  CHECK(r.err.find("--engine neuron (vLLM or TGI on Neuron)") != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --engine vllm").code == 2);  // serving flag on a training task
  r = run("recommend --model llama-3-8b --task inference --engine neuron --format json");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["recommendation"]["engine"] == "neuron");
  CHECK(run("recommend --params 13B --task lora --framework nope").code == 2);
  CHECK(run("recommend --params 13B --task inference --framework fsdp").code == 2);
  r = run("estimate --instance p5.48xlarge --params 8B --task pretrain --tokens 10B --framework fsdp --precision fp8 --format json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["framework"] == "fsdp");
  r = run("estimate --instance p5.48xlarge --params 8B --task pretrain --tokens 10B --framework fsdp --precision fp8 --explain");
  CHECK(r.out.find("framework factor 0.89 (fsdp)") != std::string::npos);
  // Names are matched case aside; a misspelling gets the nearest names.
  r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --engine VLLM --mode offline --format json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["engine"]["name"] == "vllm");
  r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --engine VLM");
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean: vllm") != std::string::npos);
  r = run("recommend --params 13B --task lora --framework neuron --format json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["recommendation"]["instance"].get<std::string>().rfind("trn", 0) == 0);
}

TEST_CASE("error bands by accelerator and engine (serving) or stack (training), pooled with a note below 3 cases") {
  const auto own = accuracy_band("H100-SXM", "inference", "trtllm");
  REQUIRE(own);
  CHECK(own->group == "H100-SXM dense-model inference with trtllm");
  CHECK(own->cases >= kMinAccuracyCases);
  CHECK(own->note.empty());
  const auto pooled = accuracy_band("A10G", "inference", "sglang");
  REQUIRE(pooled);
  CHECK(pooled->group == "A10G dense-model inference");
  CHECK(pooled->note.find("no published cases with sglang on A10G: pooled with other engines") != std::string::npos);
  // Training bands by stack the same way.
  const auto fsdp = accuracy_band("H100-SXM", "pretrain", "fsdp");
  REQUIRE(fsdp);
  CHECK(fsdp->group == "H100-SXM dense-model pretrain with fsdp");
  CHECK(accuracy_line("A10G", "inference", "tgi-1").find("A10G dense-model inference with tgi-1") != std::string::npos);
}

TEST_CASE("MoE decode on GPUs: routing per MoE layer and the kernels' fixed time in series (gpt-oss-120b at batch 1, hand-computed)") {
  const ModelSpec& m = *find_model_preset("gpt-oss-120b");
  REQUIRE(m.moe_layers() == 36);
  const InferenceEstimate e = at_batch("gpt-oss-120b", "p5.48xlarge", workload("sglang", WeightFormat::bf16), 1, 8);
  CHECK(e.step.moe_routing_s == Approx(36 * 28e-6));
  CHECK(e.step.kernel_floor_s == Approx(36 * 9 * 3e-6));
  // Tiny per-rank weight reads: the kernels' fixed time dominates; it adds to
  // the memory stream, which the kernels run between.
  CHECK(e.step.kernel_floor_s > e.step.weights_read_s + e.step.kv_read_s);
  CHECK(e.step.bound() == "kernel latency");
  CHECK(e.step.accelerator_s() ==
        Approx(std::max(e.step.weights_read_s + e.step.kv_read_s + e.step.moe_permute_s, e.step.compute_s) + e.step.kernel_floor_s + e.step.moe_routing_s +
               e.step.dequant_s + e.step.tensor_parallel_s + e.step.pipeline_p2p_s));
  // The published 3.41 ms per token (SGLang, 8 x H100, bf16; docs/validation.md J18) within 20%.
  CHECK(e.step.total_s() == Approx(3.41e-3).epsilon(0.20));
  // A dense model has no routing; Neuron gets neither term (GPU measurements).
  CHECK(at_batch("llama-3-8b", "p5.48xlarge", workload("vllm"), 1).step.moe_routing_s == 0);
  CHECK(at_batch("llama-3-8b", "inf2.xlarge", workload("neuron"), 1).step.kernel_floor_s == 0);
}

TEST_CASE("multi-head latent attention runs 4 more decode kernels per layer (DeepSeek-V3 at batch 1 on 8 B200, hand-computed)") {
  const ModelSpec& m = *find_model_preset("deepseek-v3");
  REQUIRE(m.uses_mla());
  CHECK(decode_kernels_per_layer(m) == 13);
  CHECK(decode_kernels_per_layer(*find_model_preset("llama-3-70b")) == 9);
  const InferenceEstimate e = at_batch("deepseek-v3", "p6-b200.48xlarge", workload("sglang", WeightFormat::fp8), 1, 8);
  CHECK(e.step.kernel_floor_s == Approx(61 * 13 * 3e-6));
  CHECK(e.step.moe_routing_s == Approx(58 * 28e-6));  // first_k_dense_replace = 3
}

TEST_CASE("expert matrices run as a grouped GEMM: the width factor halves at 1024") {
  const Accelerator& h100 = *cat().find_accelerator("H100-SXM");
  const double f = max_compute_fraction(h100, Precision::bf16);
  // Qwen3-30B-A3B's 768-wide experts with 4096 tokens each.
  CHECK(expert_compute_efficiency(h100, Precision::bf16, 768, 4096) == Approx(f * 768 / (768 + 1024) * 4096 / (4096 + 256)));
  // Dense matrices of the same width do better; very wide experts approach them.
  CHECK(expert_compute_efficiency(h100, Precision::bf16, 768, 4096) < compute_efficiency(h100, Precision::bf16, 768, 4096));
  CHECK(expert_compute_efficiency(h100, Precision::bf16, 14336, 4096) > 0.9 * compute_efficiency(h100, Precision::bf16, 14336, 4096));
}

TEST_CASE("MoE matrices split into dense and routed-expert time (a toy MoE, hand-computed)") {
  ModelSpec m;
  m.name = "toy-moe";
  m.layers = 2, m.hidden = 1024, m.heads = 8, m.kv_heads = 8, m.head_dim = 128, m.ffn = 1024, m.vocab = 1000;
  m.tied_embeddings = true, m.experts = 8, m.active_experts = 2, m.expert_ffn = 1024;
  // Per token: attention 2 x (2*1024*8*128 + 2*1024*8*128) = 8,388,608; tied
  // embeddings 1,024,000; norms 2*1024*2 + 1024 = 5,120; experts 2 layers x 2 x
  // 3*1024*1024 = 12,582,912; routers 2 x 1024*8 = 16,384. Matrix weights: all
  // but the norms = 22,011,904, of which the routed experts are 57.2%.
  CHECK(matmul_params_per_token(m) == Approx(22011904.0));
  const double share = 12582912.0 / 22011904.0;
  CHECK(routed_expert_share(m) == Approx(share));
  const Accelerator& h100 = *cat().find_accelerator("H100-SXM");
  const double peak = *h100.tflops(Precision::bf16) * 1e12, f = max_compute_fraction(h100, Precision::bf16);
  // Prefill or training: 256 tokens per expert, 1024-wide experts (half width factor, half token factor).
  CHECK(matmul_seconds(m, h100, Precision::bf16, 1e12, 0.5, 1, 256) == Approx(1e12 / peak * ((1 - share) / 0.5 + share / (f * 0.5 * 0.5))));
  // Decode: no token-count factor, the width factor only.
  CHECK(matmul_seconds(m, h100, Precision::bf16, 1e12, 0.5, 1, std::nullopt) == Approx(1e12 / peak * ((1 - share) / 0.5 + share / (f * 0.5))));
  // Tensor parallelism narrows each expert: 512 wide at tp 2.
  CHECK(matmul_seconds(m, h100, Precision::bf16, 1e12, 0.5, 2, std::nullopt) ==
        Approx(1e12 / peak * ((1 - share) / 0.5 + share / (f * 512.0 / 1536.0))));
  // A dense model is all dense matrices.
  CHECK(routed_expert_share(*find_model_preset("llama-3-8b")) == 0);
  CHECK(matmul_seconds(*find_model_preset("llama-3-8b"), h100, Precision::bf16, 1e12, 0.5, 1, 256) == Approx(1e12 / (peak * 0.5)));
}

TEST_CASE("MoE prefill runs its experts as a grouped GEMM (Qwen3-30B-A3B on H100)") {
  // Qwen3-30B-A3B's 128 experts see 8/128 of a prompt's tokens each: its
  // prefill takes longer than the same FLOPs at dense efficiency would.
  const ModelSpec& moe = *find_model_preset("qwen3-30b-a3b");
  InferenceWorkload w = workload("vllm");
  w.prompt_tokens = 2048;
  const InferenceEstimate e = at_batch("qwen3-30b-a3b", "p5.48xlarge", w, 1);
  const double ttft = static_batch_ttft_s(moe, w, cluster("p5.48xlarge"), e, 1);
  const Accelerator& h100 = *cat().find_accelerator("H100-SXM");
  const double dense_eff = compute_efficiency(h100, Precision::bf16, moe.hidden, 2048);
  const double matmul_dense_s = 2048 * 2 * matmul_params_per_token(moe) / (*h100.tflops(Precision::bf16) * 1e12 * dense_eff);
  CHECK(ttft > 1.5 * matmul_dense_s);
  CHECK(matmul_seconds(moe, h100, Precision::bf16, 2048 * 2 * matmul_params_per_token(moe), dense_eff, 1, 2048 * 8 / 128.0) > 1.5 * matmul_dense_s);
}

TEST_CASE("estimate --explain says how an MoE model's expert matrices are timed") {
  const Run r = run("-q estimate --task inference --model qwen3-30b-a3b --instance p5.4xlarge --explain");
  REQUIRE(r.code == 0);
  // 48 layers x 8 experts x 3 x 2048 x 768 = 1.81B of its ~3.0B matrix weights per token.
  CHECK(r.out.find("MoE matrices: 60% of the matrix weights a token uses are routed experts (768 wide / tp)") != std::string::npos);
  CHECK(r.out.find("tokens x 8/128 rows each") != std::string::npos);
  CHECK(run("-q estimate --task inference --model llama-3-8b --instance p5.4xlarge --explain").out.find("MoE matrices") == std::string::npos);
}

TEST_CASE("estimate --explain gives the KV tokens a sequence holds as the engine holds them") {
  const std::string args = "-q estimate --task inference --mode offline --model gpt-oss-20b --instance p6-b200.48xlarge --tp 1 "
                           "--prompt-tokens 1024 --output-tokens 8192 --explain --engine ";
  // TensorRT-LLM: the whole request reserved, the sliding-window layers at full length.
  CHECK(run(args + "trtllm").out.find("reserved at admission (prompt + every generated token) = 9216 tokens, the 12 local layers held at full "
                                       "length by the engine") != std::string::npos);
  // vLLM: mean occupancy, (12 x 5120 + 12 x 128) / 24 = 2624 tokens over the layers.
  CHECK(run(args + "vllm").out.find("at mean occupancy (prompt + generated/2) = 5120 tokens, 2624 averaged over the layers") != std::string::npos);
}

TEST_CASE("MoE predictions carry the MoE cases' error band, dense ones their accelerator's") {
  const auto dense = accuracy_band("B200", "inference", "trtllm");
  const auto moe = accuracy_band("B200", "inference", "trtllm", true);
  REQUIRE(dense);
  REQUIRE(moe);
  CHECK(moe->group == "B200 inference, MoE models");
  CHECK(moe->cases >= kMinAccuracyCases);
  CHECK(moe->note.empty());
  CHECK(moe->p90_abs_error > dense->p90_abs_error);  // the MoE rows are the band's widest
  // A dense prediction's band holds dense models' cases only: B200 pre-training
  // without the MoE rows (Qwen3-235B, GPT-OSS, Mixtral, DeepSeek-V3) that run 10-70% off.
  const auto b200_dense = accuracy_band("B200", "pretrain", "megatron");
  const auto b200_moe = accuracy_band("B200", "pretrain", "megatron", true);
  REQUIRE(b200_dense);
  REQUIRE(b200_moe);
  CHECK(b200_dense->group == "B200 dense-model pretrain with megatron");
  CHECK(b200_moe->group == "B200 pretrain, MoE models");
  CHECK(b200_dense->p90_abs_error < b200_moe->p90_abs_error);
  // An accelerator without enough MoE cases: every accelerator's MoE cases, said in the note.
  const auto a10g = accuracy_band("A10G", "inference", "vllm", true);
  REQUIRE(a10g);
  CHECK(a10g->group == "inference, MoE models (all accelerators)");
  CHECK(a10g->note.find("no published MoE inference cases on A10G") != std::string::npos);
  CHECK(accuracy_band("H200", "inference", "trtllm", true)->group == "H200 inference, MoE models");  // InferenceX's DeepSeek-R1 rows
  CHECK(accuracy_line("B200", "inference", "trtllm", true).find("B200 inference, MoE models") != std::string::npos);
  // Fine-tuning has no MoE cases: an MoE fine-tune carries the MoE pre-training band, and says so.
  const auto ft = accuracy_band("H200", "fine-tuning", "megatron", true);
  REQUIRE(ft);
  CHECK(ft->group.find("pretrain, MoE models") != std::string::npos);
  CHECK(ft->note == "no published MoE fine-tuning cases: the MoE pre-training cases' band");
}

TEST_CASE("KV cache by default: fp8 under TensorRT-LLM with fp8 or fp4 weights where there is fp8 math, else 16-bit, and --kv-cache wins") {
  const Accelerator& h100 = cat().accelerator_of(*cat().find_instance("p5.48xlarge"));
  const Accelerator& a100 = cat().accelerator_of(*cat().find_instance("p4de.24xlarge"));
  const EngineProfile& trtllm = *find_engine("trtllm");
  const EngineProfile& vllm = *find_engine("vllm");
  CHECK(serving_kv_cache(h100, trtllm, workload("trtllm", WeightFormat::fp8)) == Precision::fp8);
  CHECK(serving_kv_cache(h100, trtllm, workload("trtllm", WeightFormat::fp4)) == Precision::fp8);
  CHECK(serving_kv_cache(h100, trtllm, workload("trtllm", WeightFormat::bf16)) == Precision::bf16);
  CHECK(serving_kv_cache(h100, trtllm, workload("trtllm", WeightFormat::int4)) == Precision::bf16);
  CHECK(serving_kv_cache(a100, trtllm, workload("trtllm", WeightFormat::fp8)) == Precision::bf16);  // no fp8 math on Ampere
  CHECK(serving_kv_cache(h100, vllm, workload("vllm", WeightFormat::fp8)) == Precision::bf16);
  InferenceWorkload given = workload("trtllm", WeightFormat::fp8);
  given.kv_cache = Precision::bf16;
  CHECK(serving_kv_cache(h100, trtllm, given) == Precision::bf16);
  // An fp8 KV cache asked for on Ampere: TensorRT-LLM has none there and says so; vLLM keeps one.
  InferenceWorkload fp8_on_a100 = workload("trtllm", WeightFormat::bf16);
  fp8_on_a100.kv_cache = Precision::fp8;
  CHECK(serving_accelerator_problem(a100, fp8_on_a100).value_or("").find("fp8 KV cache only on accelerators with fp8 math") != std::string::npos);
  CHECK_FALSE(serving_accelerator_problem(h100, fp8_on_a100));
  InferenceWorkload vllm_fp8_kv = workload("vllm", WeightFormat::bf16);
  vllm_fp8_kv.kv_cache = Precision::fp8;
  CHECK_FALSE(serving_accelerator_problem(a100, vllm_fp8_kv));
  // The estimate holds half the KV bytes per sequence under the default (same batch, same model).
  const InferenceEstimate fp8_kv = at_batch("llama-3-70b", "p5.48xlarge", workload("trtllm", WeightFormat::fp8), 32, 2);
  const InferenceEstimate bf16_kv = at_batch("llama-3-70b", "p5.48xlarge", given, 32, 2);
  CHECK(fp8_kv.precision.kv_cache == Precision::fp8);
  CHECK(fp8_kv.memory.kv_cache_gb == Approx(bf16_kv.memory.kv_cache_gb / 2).epsilon(1e-9));
  CHECK(fp8_kv.max_batch > bf16_kv.max_batch);
}

TEST_CASE("SGLang's eager prefill: a short prompt takes at least layers x kernels x 104 us, and vLLM's graphed prefill has no such floor") {
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.prompt_tokens = 16;
  r.output_tokens = 16;
  r.weights = WeightFormat::fp4;
  r.engine = find_engine("sglang");
  const InferenceWorkload sglang = make_inference_workload(r);
  r.engine = find_engine("vllm");
  const InferenceWorkload vllm = make_inference_workload(r);
  const InferenceEstimate s = at_batch("gpt-oss-120b", "p6-b200.48xlarge", sglang, 1, 8);
  const InferenceEstimate v = at_batch("gpt-oss-120b", "p6-b200.48xlarge", vllm, 1, 8);
  // 36 layers x 9 kernels x 104 us = 33.7 ms, plus the all-reduces on top.
  CHECK(find_engine("sglang")->prefill_launch_s_per_kernel == Approx(104e-6));
  CHECK(s.prefill_s >= 36 * 9 * 104e-6);
  CHECK(v.prefill_s < 0.5 * 36 * 9 * 104e-6);
  CHECK(find_engine("vllm")->prefill_launch_s_per_kernel == 0);
  CHECK(find_engine("trtllm")->prefill_launch_s_per_kernel == 0);
}

// Hostile review: --engine trtllm was accepted on V100 and T4, which
// TensorRT-LLM's supported hardware (Blackwell, Hopper, Ada, Ampere) leaves out.
TEST_CASE("engines: TensorRT-LLM runs on Ampere and newer only, told by bf16 tensor cores") {
  const EngineProfile& trt = *find_engine("trtllm");
  CHECK(trt.ampere_or_newer);
  CHECK_FALSE(find_engine("vllm")->ampere_or_newer);
  for (const char* old : {"T4", "V100-16GB", "V100-32GB"}) {
    const auto p = engine_problem(trt, *cat().find_accelerator(old), WeightFormat::bf16);
    REQUIRE(p);
    CHECK(p->find("engine trtllm runs on Ampere and newer GPUs only") != std::string::npos);
  }
  for (const char* ok : {"A10G", "A100-40GB", "L4", "L40S", "H100-SXM", "B200"}) {
    INFO(ok);
    CHECK_FALSE(engine_problem(trt, *cat().find_accelerator(ok), WeightFormat::bf16));
  }
  const auto est = cli_test::run("estimate --engine trtllm --model llama-3-8b --task inference --instance g4dn.12xlarge");
  CHECK(est.code == 2);
  CHECK(est.err.find("T4 predates them: --engine vllm") != std::string::npos);
}

TEST_CASE("vLLM's release: async scheduling hides its host time from 0.14, earlier releases keep 1.5 ms in series") {
  const EngineProfile& vllm = *find_engine("vllm");
  CHECK(vllm.step_overhead_s == Approx(0.3e-3));
  for (const char* earlier : {"0.13", "v0.13.2", "0.7.3", "0.11.2rc1", "0.6"}) CHECK(engine_release(vllm, earlier, "t").step_overhead_s == Approx(1.5e-3));
  for (const char* current : {"0.14", "0.14.0", "0.20.1+cu128", "1.0"}) CHECK(&engine_release(vllm, current, "t") == &vllm);
  // The same release twice is the same profile; it keeps vLLM's name and everything but the host time.
  const EngineProfile& old = engine_release(vllm, "0.13", "t");
  CHECK(&engine_release(vllm, "0.10.1", "t") == &old);
  CHECK(old.name == "vllm");
  CHECK(old.title.find("0.8 to 0.13") != std::string::npos);
  CHECK(old.max_sequences == vllm.max_sequences);
  CHECK(old.earlier_release);
  CHECK(old.releases.empty());
  CHECK(old.release_profiles.empty());  // a release's profile holds no copies of the others
  CHECK_FALSE(vllm.earlier_release);
  CHECK_THROWS_WITH(engine_release(vllm, "latest", "--engine vllm@latest"),
                    Catch::Contains("--engine vllm@latest: 'latest' is not a release number such as 0.13 or 0.20.1"));
  for (const char* nonsense : {"", "v", "0x10", "1e3", "0.13e5", "0.13.2.4.5", "0.13..1", "99999999999.1", "-1", "0.13+"})
    CHECK_THROWS_AS(engine_release(vllm, nonsense, "t"), InputError);
  // PEP 440's spellings: c for rc, alpha, beta, pre and preview, rev and r for post, an implicit post-release "-1", separators.
  for (const char* tagged : {"0.13.0.dev1", "0.13rc1", "0.13.1.post1", "v0.13+cu128", "0.13.1rc1.post2.dev3", "v0.13.1-cu121", "0.13c1",
                             "0.13-1", "0.13.1-rc.1", "0.13alpha2", "0.13.beta", "0.13pre1", "0.13-rev2", "0.13_dev4"}) {
    CAPTURE(tagged);
    CHECK(&engine_release(vllm, tagged, "t") == &old);
  }
  // One tag of each kind, in PEP 440's order; a container tag's build suffix after "-" starts with a letter.
  for (const char* nonsense : {"0.8.5rcrcrc", "0.13rc1rc2", "0.13dev1rc1", "0.13-1-1", "0.13-", "0.13post1rc1"}) {
    CAPTURE(nonsense);
    CHECK_THROWS_AS(engine_release(vllm, nonsense, "t"), InputError);
  }
  // What a user typed is echoed cut at a character, never inside one.
  try {
    engine_release(vllm, std::string(39, '0') + "\xc3\xa9\xc3\xa9", "t");
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(std::string(39, '0') + "\xc3\xa9...'") != std::string::npos);
  }
  // V0, before 0.8: automatic prefix caching was off by default (on in V1), so --prefix-share has no cache to use.
  CHECK(!engine_release(vllm, "0.7.3", "t").prefix_cache);
  CHECK(old.prefix_cache);
  CHECK(engine_release(vllm, "0.7.3", "t").title.find("V0") != std::string::npos);
  // V0 ran at most 256 sequences on every GPU (VLLM-SEQS); V1 takes 1024 on an H100.
  const Accelerator& h100 = *cat().find_accelerator("H100-SXM");
  CHECK(engine_max_sequences(engine_release(vllm, "0.7.3", "t"), h100, 0) == 256);
  CHECK(engine_max_sequences(old, h100, 0) == 1024);
  CHECK(engine_max_sequences(vllm, h100, 0) == 1024);
  CHECK_THROWS_WITH(engine_release(*find_engine("sglang"), "0.5.6", "--engine sglang@0.5.6"),
                    Catch::Contains("the sglang profile's figures do not change with its release"));
  // A case's engine_version is free text: the release where it names the engine, as written, for engine_release to read.
  CHECK(release_number_in("vLLM 0.20.1+transformers-5.8.1", "vllm") == "0.20.1+transformers-5.8.1");
  CHECK(&engine_release(vllm, "0.20.1+transformers-5.8.1", "t") == &vllm);
  CHECK(release_number_in("vLLM v0.6.0 (--num-scheduler-steps 10)", "vllm") == "v0.6.0");
  CHECK(release_number_in("vllm/vllm-openai:v0.7.3", "vllm") == "v0.7.3");
  CHECK(release_number_in("pip install vllm==0.6.0", "vllm") == "0.6.0");
  CHECK(!release_number_in("not recorded (image null)", "vllm"));
  // The word after the engine's name, not a CUDA version or a date before it, nor a number further on.
  CHECK(release_number_in("CUDA 12.1, vLLM 0.8.5", "vllm") == "0.8.5");
  CHECK(release_number_in("run 2025.10.16 with vllm 0.8.5", "vllm") == "0.8.5");
  CHECK(!release_number_in("vLLM serving Mixtral-8x7B-Instruct-v0.1", "vllm"));
  CHECK(!release_number_in("vLLM, CUDA 12.1", "vllm"));
  CHECK(release_number_in("vLLM V0 engine, CUDA 12.1", "vllm") == "V0");
  CHECK(engine_release(vllm, "V0", "t").title.find("V0") != std::string::npos);
  // Not a release: engine_release refuses it, and the case names its field (validate's test).
  CHECK(release_number_in("vLLM 1e3.1", "vllm") == "1e3.1");
  CHECK_THROWS_AS(engine_release(vllm, "1e3.1", "t"), InputError);
  // A text without the engine's name: its first word, where that is a number.
  CHECK(release_number_in("0.7.3", "vllm") == "0.7.3");
  CHECK(!release_number_in("image 0.7.3", "vllm"));
}

TEST_CASE("cli: --engine vllm@RELEASE times the host per step as that release runs it") {
  auto host_s = [](const char* engine) {
    Run r = run(std::string("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --mode offline --format json --engine ") + engine);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    return std::pair{j["inference"]["decode_step"]["engine_host_s"].get<double>(), j["engine"]["title"].get<std::string>()};
  };
  const auto [now_s, now_title] = host_s("vllm");
  const auto [old_s, old_title] = host_s("vllm@0.13");
  CHECK(old_s - now_s == Approx(1.2e-3));
  CHECK(old_title.find("0.8 to 0.13") != std::string::npos);
  CHECK(host_s("vllm@0.20").first == Approx(now_s));
  // recommend names the release among its assumptions, in text and JSON.
  Run rec = run("recommend --model llama-3-8b --task inference --requests-per-second 2 --engine vllm@0.12 --format json");
  REQUIRE(rec.code == 0);
  const auto rec_json = nlohmann::json::parse(rec.out);
  CHECK(rec_json["assumptions"].dump().find("vLLM V1 0.8 to 0.13") != std::string::npos);
  // Each row names the release too, beside the engine's name.
  CHECK(rec_json["recommendation"]["engine"] == "vllm");
  CHECK(rec_json["recommendation"]["engine_title"].get<std::string>().find("0.8 to 0.13") != std::string::npos);
  CHECK(rec_json["alternatives"]["cheapest"]["engine_title"] == rec_json["recommendation"]["engine_title"]);
  Run r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --engine vllm@nightly");
  CHECK(r.code == 2);
  CHECK(r.err.find("'nightly' is not a release number") != std::string::npos);
  r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --engine vllm@");
  CHECK(r.code == 2);
  r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --engine vllm@0.7.3 --prefix-share 0.5");
  CHECK(r.code == 2);
  CHECK(r.err.find("vllm (vLLM V0 (before 0.8") != std::string::npos);
  // Off by default, not absent: the way out is the current release, and the other engines listed are other engines.
  CHECK(r.err.find("does not reuse a shared prefix as this release runs by default") != std::string::npos);
  CHECK(r.err.find("give the current release (--engine vllm) or another engine that reuses one (sglang") != std::string::npos);
  CHECK(r.err.find("(vllm,") == std::string::npos);
  r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --engine trtllm@1.2");
  CHECK(r.code == 2);
  CHECK(r.err.find("do not change with its release") != std::string::npos);
}

TEST_CASE("validate: a vLLM case's engine_version picks the release it was measured on") {
  auto predicted = [](const char* version) {
    const std::string text = std::string(R"({"cases": [{"id": "V1", "task": "inference", "model": "llama-3-8b", "system": "g5.xlarge",
      "precision": "bf16", "engine": "vllm", "engine_version": ")") + version + R"(", "prompt_tokens": 128, "output_tokens": 128, "batch": 1,
      "metric": "tpot_s", "measured": 0.03, "source": "test", "source_key": "TEST"}]})";
    const auto cases = read_cases("cases.json", text);
    REQUIRE(cases.size() == 1);
    const CaseResult r = predict_case(cases[0], cat());
    REQUIRE(r.predicted);
    return *r.predicted;
  };
  CHECK(predicted("vLLM 0.7.3") - predicted("vLLM 0.20.1") == Approx(1.2e-3).epsilon(0.05));
  CHECK(predicted("not recorded") == Approx(predicted("vLLM 0.20.1")));
  CHECK(predicted("CUDA 12.1, vLLM 0.8.5") == Approx(predicted("vLLM 0.7.3")));
  // A model's version or CUDA's further on is not the engine's release: the current profile.
  CHECK(predicted("vLLM serving Mixtral-8x7B-Instruct-v0.1") == Approx(predicted("vLLM 0.20.1")));
  CHECK(predicted("vLLM, CUDA 12.1") == Approx(predicted("vLLM 0.20.1")));
  CHECK(predicted("vllm/vllm-openai:v0.7.3") == Approx(predicted("vLLM 0.7.3")));
  // A release number that is not one names the case and the field, cut short.
  for (const char* version : {"vLLM 99999999999.1", "vLLM 1e3.1"}) {
    const std::string bad = std::string(R"({"cases": [{"id": "V2", "task": "inference", "model": "llama-3-8b", "system": "g5.xlarge", "precision": "bf16",
    "engine": "vllm", "engine_version": ")") + version + R"(", "prompt_tokens": 128, "output_tokens": 128, "batch": 1,
    "metric": "tpot_s", "measured": 0.03, "source": "test", "source_key": "TEST"}]})";
    CHECK_THROWS_WITH(read_cases("cases.json", bad), Catch::Contains("case V2: field 'engine_version'"));
  }
  // The engine's name ignores case, as --engine does.
  const std::string upper = R"({"cases": [{"id": "V3", "task": "inference", "model": "llama-3-8b", "system": "g5.xlarge", "precision": "bf16",
    "engine": "VLLM", "engine_version": "vLLM 0.7.3", "prompt_tokens": 128, "output_tokens": 128, "batch": 1,
    "metric": "tpot_s", "measured": 0.03, "source": "test", "source_key": "TEST"}]})";
  const auto cases = read_cases("cases.json", upper);
  REQUIRE(cases.size() == 1);
  CHECK(*predict_case(cases[0], cat()).predicted == Approx(predicted("vLLM 0.7.3")));
}
