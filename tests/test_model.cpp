#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/workload/model.hpp"

using namespace gpuadvisor;

namespace {
std::string data(const std::string& name) { return std::string(GPUADVISOR_TEST_DATA) + "/" + name; }
double params(const char* name) { return find_model_preset(name)->total_params(); }
}  // namespace

TEST_CASE("preset parameter counts match the published models") {
  // Exact Hugging Face counts for the Llama family (no biases).
  CHECK(params("llama-2-7b") == 6738415616.0);
  CHECK(params("llama-2-13b") == 13015864320.0);
  CHECK(params("llama-2-70b") == 68976648192.0);
  CHECK(params("llama-3-8b") == 8030261248.0);
  CHECK(params("llama-3-70b") == 70553706496.0);
  // Llama 3.1 keeps Llama 3's shapes (the Hugging Face model cards' 8.03B and 70.6B).
  CHECK(params("llama-3.1-8b") == params("llama-3-8b"));
  CHECK(params("llama-3.1-70b") == params("llama-3-70b"));
  // Published headline sizes.
  CHECK(params("llama-3.1-405b") == Approx(405.85e9).epsilon(0.002));
  CHECK(params("mistral-7b") == Approx(7.24e9).epsilon(0.002));
  CHECK(params("mixtral-8x7b") == Approx(46.70e9).epsilon(0.002));
  CHECK(find_model_preset("mixtral-8x7b")->active_params() == Approx(12.88e9).epsilon(0.005));
  CHECK(params("mixtral-8x22b") == Approx(140.6e9).epsilon(0.005));
  CHECK(params("qwen2.5-7b") == Approx(7.62e9).epsilon(0.01));   // Qwen reports 7.61B (with qkv biases)
  CHECK(params("qwen2.5-72b") == Approx(72.7e9).epsilon(0.01));
  CHECK(params("gpt3-175b") == Approx(175e9).epsilon(0.01));
  CHECK(params("deepseek-v3") == Approx(671e9).epsilon(0.005));  // without the 14B MTP module
  CHECK(find_model_preset("deepseek-v3")->active_params() == Approx(37e9).epsilon(0.02));
  CHECK(params("nemotron-4-340b") == Approx(341e9).epsilon(0.01));
  CHECK(model_presets().size() >= 14);
}

TEST_CASE("a bare parameter count takes the nearest family's shape and says so") {
  ModelSpec m = model_from_param_count(13e9);
  CHECK(m.total_params() == Approx(13e9).epsilon(0.03));
  CHECK(m.hidden == 5120);
  REQUIRE_FALSE(m.assumptions.empty());
  CHECK(m.assumptions.front().find("llama-2-13b") != std::string::npos);
  for (double p : {1e8, 1e9, 3e9, 30e9, 150e9, 1e12, 100e12}) {
    INFO(p);
    ModelSpec x = model_from_param_count(p);
    CHECK(x.total_params() == Approx(p).epsilon(0.15));
  }
  CHECK_THROWS_AS(model_from_param_count(0), InputError);
  CHECK_THROWS_AS(model_from_param_count(1e16), InputError);
}

TEST_CASE("Hugging Face config.json") {
  std::vector<std::string> warnings;
  ModelSpec m = model_from_hf_config(data("hf_llama2_7b.json"), warnings);
  CHECK(m.total_params() == 6738415616.0);
  REQUIRE(warnings.size() == 1);  // my_custom_flag is reported, rope_theta is not
  CHECK(warnings[0].find("my_custom_flag") != std::string::npos);
  warnings.clear();
  ModelSpec mx = model_from_hf_config(data("hf_mixtral.json"), warnings);
  CHECK(mx.is_moe());
  CHECK(mx.total_params() == Approx(46.70e9).epsilon(0.002));
  CHECK_THROWS_WITH(model_from_hf_config(data("hf_bad_kv_heads.json"), warnings), Catch::Contains("multiple of kv_heads"));
  CHECK_THROWS_WITH(model_from_hf_config(data("hf_missing_layers.json"), warnings), Catch::Contains("num_hidden_layers"));
  CHECK_THROWS_WITH(model_from_hf_config(data("nope.json"), warnings), Catch::Contains("cannot open"));
  CHECK_THROWS_WITH(model_from_hf_config(data("bad_truncated.json"), warnings), Catch::Contains("not valid JSON"));
}

TEST_CASE("shape overrides") {
  ModelSpec m = *find_model_preset("llama-2-7b");
  apply_overrides(m, ShapeOverrides{16, 0, 0, 0, 0});
  CHECK(m.layers == 16);
  CHECK_FALSE(m.assumptions.empty());
  ModelSpec bad = *find_model_preset("llama-2-7b");
  CHECK_THROWS_AS(apply_overrides(bad, ShapeOverrides{0, 4100, 0, 0, 0}), InputError);  // 4100 % 32 heads != 0
}

TEST_CASE("regression (fuzz): numbers beyond double range are bad input, not a crash") {
  for (const char* name : {"fuzz_hf_number_overflow.json", "fuzz_hf_crash_2.json"}) {
    std::vector<std::string> warnings;
    INFO(name);
    CHECK_THROWS_AS(model_from_hf_config(std::string(GPUADVISOR_TEST_DATA) + "/" + name, warnings), InputError);
  }
  std::vector<std::string> warnings;
  CHECK_THROWS_AS(model_from_hf_config_text(R"({"num_hidden_layers": 1e605})", "c.json", warnings), InputError);
  CHECK_THROWS_AS(load_catalog({"c.json", R"({"schema_version": 1e999})"}), InputError);
}

namespace {
ModelSpec fixture(const std::string& name) {
  std::vector<std::string> warnings;
  ModelSpec m = model_from_hf_config(data("hf-configs/" + name + ".json"), warnings);
  INFO(name);
  CHECK(warnings.empty());  // every key of these real configs is understood or known to be irrelevant
  return m;
}
}  // namespace

TEST_CASE("modern configs (tests/data/hf-configs): published totals within 1%, layer maps read from the config") {
  // Published totals: model cards and reports (tests/data/hf-configs/PROVENANCE.md §3).
  const ModelSpec maverick = fixture("Llama-4-Maverick-17B-128E");
  CHECK(maverick.total_params() == Approx(400e9).epsilon(0.01));  // "400B total"; not ~770B (every layer MoE)
  CHECK(maverick.active_params() == Approx(17e9).epsilon(0.03));  // "17B active" (with the embedding)
  CHECK(maverick.dense_layers == 24);                              // interleave_moe_layer_step 2
  CHECK(maverick.ffn == 16384);                                   // intermediate_size_mlp
  CHECK(maverick.expert_ffn == 8192);
  CHECK(maverick.shared_experts == 1);
  CHECK(maverick.sliding_layers == 36);                           // chunked attention, 3 of every 4 layers
  CHECK(maverick.sliding_window == 8192);
  // Scout's published 109B counts the vision encoder (about 1.9B); the language model alone is 107.8B.
  const ModelSpec scout = fixture("Llama-4-Scout-17B-16E");
  CHECK(scout.total_params() == Approx(109e9).epsilon(0.015));
  CHECK(scout.dense_layers == 0);
  CHECK(fixture("gpt-oss-120b").total_params() == Approx(116.83e9).epsilon(0.01));
  CHECK(fixture("gpt-oss-20b").total_params() == Approx(20.91e9).epsilon(0.01));
  CHECK(fixture("Qwen3-30B-A3B").total_params() == Approx(30.5e9).epsilon(0.01));
  CHECK(fixture("Qwen3-235B-A22B").total_params() == Approx(235e9).epsilon(0.01));
  CHECK(fixture("DeepSeek-V3").total_params() == Approx(671e9).epsilon(0.01));
  // Gemma 3 27B: 1,416M embedding + 25,600M non-embedding (Gemma 3 report, Table 1); defaults filled in.
  const ModelSpec gemma = fixture("gemma-3-27b-it");
  CHECK(gemma.total_params() == Approx(27.016e9).epsilon(0.01));
  CHECK(gemma.vocab == 262208);
  CHECK(gemma.tied_embeddings);
  CHECK(gemma.gated_mlp);
  CHECK(gemma.sliding_layers == 52);  // one full layer in 6 of 62
  CHECK(gemma.sliding_window == 1024);
  const ModelSpec oss = fixture("gpt-oss-120b");
  CHECK(oss.sliding_layers == 18);  // layer_types alternates sliding and full
  CHECK(oss.sliding_window == 128);
  CHECK(oss.dense_layers == 0);
  CHECK(oss.active_experts == 4);
  CHECK(oss.native_weights == "fp4");                               // quantization_config mxfp4
  CHECK(oss.expert_bias);   // GptOssExperts: biases on every expert matrix (no config key)
  CHECK(oss.clamped_glu);   // swiglu_limit 7.0
  CHECK_FALSE(fixture("Qwen3-30B-A3B").expert_bias);
  CHECK_FALSE(fixture("Qwen3-30B-A3B").clamped_glu);
  CHECK(fixture("DeepSeek-V3").native_weights == "fp8");
  CHECK(maverick.native_weights.empty());
  // The presets carry the same shapes.
  for (auto [preset, file] : {std::pair{"llama-4-scout", "Llama-4-Scout-17B-16E"}, std::pair{"llama-4-maverick", "Llama-4-Maverick-17B-128E"},
                              std::pair{"gpt-oss-20b", "gpt-oss-20b"}, std::pair{"gpt-oss-120b", "gpt-oss-120b"},
                              std::pair{"qwen3-30b-a3b", "Qwen3-30B-A3B"}, std::pair{"qwen3-235b-a22b", "Qwen3-235B-A22B"},
                              std::pair{"gemma-3-27b", "gemma-3-27b-it"}, std::pair{"deepseek-v3", "DeepSeek-V3"}}) {
    INFO(preset);
    const ModelSpec f = fixture(file);
    REQUIRE(find_model_preset(preset));
    CHECK(find_model_preset(preset)->total_params() == Approx(f.total_params()).epsilon(1e-9));
    CHECK(find_model_preset(preset)->active_params() == Approx(f.active_params()).epsilon(1e-9));
    CHECK(find_model_preset(preset)->attended_tokens(65536) == Approx(f.attended_tokens(65536)));
    CHECK(find_model_preset(preset)->native_weights == f.native_weights);
    CHECK(find_model_preset(preset)->expert_bias == f.expert_bias);
    CHECK(find_model_preset(preset)->clamped_glu == f.clamped_glu);
  }
}

TEST_CASE("presets published under a second name carry the shapes of the model they are: Llama 3.3 70B, DeepSeek-R1") {
  for (auto [preset, same] : {std::pair{"llama-3.3-70b", "llama-3.1-70b"}, std::pair{"deepseek-r1", "deepseek-v3"}}) {
    INFO(preset);
    REQUIRE(find_model_preset(preset));
    const ModelSpec& a = *find_model_preset(preset);
    const ModelSpec& b = *find_model_preset(same);
    CHECK(a.total_params() == b.total_params());
    CHECK(a.active_params() == b.active_params());
    CHECK(a.context_length == b.context_length);
    CHECK(a.native_weights == b.native_weights);
  }
  CHECK(find_model_preset("deepseek-r1")->total_params() == Approx(671e9).epsilon(0.01));  // 671B total (arXiv:2501.12948)
  CHECK(find_model_preset("deepseek-r1")->active_params() == Approx(37e9).epsilon(0.03));  // 37B activated per token
}

TEST_CASE("KV-cache bytes per token of the modern configs (hand-computed), and local attention caps them") {
  // 2 (K, V) x layers x KV heads x head_dim x 2 bytes.
  CHECK(kv_cache_bytes_per_token(fixture("Llama-4-Maverick-17B-128E"), Precision::bf16, 1) == 2.0 * 48 * 8 * 128 * 2);
  CHECK(kv_cache_bytes_per_token(fixture("gpt-oss-120b"), Precision::bf16, 1) == 2.0 * 36 * 8 * 64 * 2);
  CHECK(kv_cache_bytes_per_token(fixture("gemma-3-27b-it"), Precision::bf16, 1) == 2.0 * 62 * 16 * 128 * 2);
  CHECK(kv_cache_bytes_per_token(fixture("Qwen3-30B-A3B"), Precision::bf16, 1) == 2.0 * 48 * 4 * 128 * 2);
  CHECK(kv_cache_bytes_per_token(fixture("DeepSeek-V3"), Precision::bf16, 1) == 61.0 * (512 + 64) * 2);  // MLA latent
  // Local layers stop caching at their window: Gemma 3 at 32k tokens holds 10 full layers x 32,768 + 52 x 1,024.
  const ModelSpec gemma = fixture("gemma-3-27b-it");
  CHECK(gemma.attended_tokens(32768) * gemma.layers == Approx(10.0 * 32768 + 52.0 * 1024));
  CHECK(gemma.attended_tokens(512) == 512);  // below the window every layer sees everything
  const ModelSpec oss = fixture("gpt-oss-120b");
  CHECK(oss.attended_tokens(8192) * oss.layers == Approx(18.0 * 8192 + 18.0 * 128));
  // Summed over sequences (the serving simulator's steps): the sum of the
  // contexts and of the contexts cut at the window give the same total.
  const std::vector<double> contexts{17, 128, 129.5, 4096, 20000};
  double each = 0, whole = 0, windowed = 0;
  for (const double c : contexts) {
    each += oss.attended_tokens(c);
    whole += c;
    windowed += std::min(c, 128.0);
  }
  CHECK(oss.attended_tokens_of_sums(whole, windowed) == Approx(each));
  CHECK(find_model_preset("llama-3-8b")->attended_tokens_of_sums(whole, 0) == whole);  // no sliding layers: the contexts
}

TEST_CASE("Llama-4-Maverick in fp8 fits one p5.48xlarge with room for a KV cache") {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  const Instance* p5 = c.find_instance("p5.48xlarge");
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.weights = WeightFormat::fp8;
  std::string problem;
  const InferenceEstimate e = estimate_inference(fixture("Llama-4-Maverick-17B-128E"), make_inference_workload(r),
                                                 Cluster{p5, &c.accelerator_of(*p5), 1}, ServingLayout{8, 1}, std::nullopt, &problem);
  INFO(problem);
  CHECK(e.fits());
  CHECK(e.max_batch >= 64);  // 1,024 + 256-token requests
}
