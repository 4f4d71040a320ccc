#include <catch2/catch.hpp>

#include "gpuadvisor/catalog.hpp"
#include "gpuadvisor/errors.hpp"
#include "gpuadvisor/model.hpp"

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
