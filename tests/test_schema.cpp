// Every JSON document the CLI writes validates against its published schema
// (docs/schema/*.schema.json), and every schema refuses a corrupted document:
// each field given the wrong type, each object an unknown key, each required
// key removed (scripts/check_schema.py --mutate, Python's jsonschema).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using cli_test::run;

namespace {

std::string python() { return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

// Runs the checker on a document (with "--mutate " in `mode`, the corruptions too).
bool checked(const std::string& schema, const std::string& document_path, const std::string& mode = "") {
  const std::string src = GPUADVISOR_SOURCE_DIR;
  const std::string cmd = python() + " " + src + "/scripts/check_schema.py " + mode + src + "/docs/schema/" + schema + ".schema.json " +
                          document_path + " >/dev/null";
  return std::system(cmd.c_str()) == 0;
}

std::string temp_name(const std::string& what) { return "gpuadvisor_test_schema_" + what + "_" + std::to_string(getpid()) + ".json"; }

bool output_checked(const std::string& schema, const std::string& args, int expected_code, const std::string& mode) {
  const auto r = run(args + " --format json");
  INFO(args << "\n" << r.err);
  CHECK(r.code == expected_code);
  const std::string path = temp_name("doc");
  std::ofstream(path) << r.out;
  const bool ok = checked(schema, path, mode);
  std::remove(path.c_str());
  return ok;
}

bool output_valid(const std::string& schema, const std::string& args, int expected_code = 0) {
  return output_checked(schema, args, expected_code, "");
}

// Valid, and every corruption of it refused.
bool output_strict(const std::string& schema, const std::string& args, int expected_code = 0) {
  return output_checked(schema, args, expected_code, "--mutate ");
}

}  // namespace

TEST_CASE("JSON outputs validate against docs/schema") {
  CHECK(output_valid("recommend", "recommend --params 13B --task lora"));
  CHECK(output_valid("recommend", "recommend --params 7B --task inference"));
  CHECK(output_valid("recommend", "recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d"));
  CHECK(output_valid("recommend", "recommend --params 7B --task rl --family p5"));
  CHECK(output_valid("recommend", "recommend --model mixtral-8x7b --task lora --pricing spot --all-counts"));
  CHECK(output_valid("recommend", "recommend --model llama-3-8b --task inference --requests-per-second 20 --pricing spot"));
  CHECK(output_valid("cost", "cost --model llama-3-8b --task pretrain --tokens 50B --family p5"));
  CHECK(output_valid("cost", "cost --instance p5.48xlarge --count 4 --hours 100"));
  CHECK(output_valid("cost", "cost --model llama-3-8b --task inference --requests-per-second 2"));
  CHECK(output_valid("cost", "cost --params 7B --task rl --algorithm ppo --reward model --reward-model 7B --family p5"));
  CHECK(output_valid("cost", "cost --model llama-3-70b --task finetune --tokens 2B --family p5,p4d --pricing spot"));
  CHECK(output_valid("estimate", "estimate --instance p5.48xlarge --params 7B --task lora"));
  CHECK(output_valid("estimate", "estimate --task inference --instance g6e.xlarge --model llama-3-8b"));
  CHECK(output_valid("estimate", "estimate --task rl --instance p5.48xlarge --count 2 --params 7B --placement split"));
  CHECK(output_valid("estimate", "estimate --instance p4d.24xlarge --count 4 --model mixtral-8x7b --task pretrain --tokens 100B"));
  CHECK(output_valid("catalog", "catalog"));
  CHECK(output_valid("catalog-show", "catalog show inf2.48xlarge"));
  CHECK(output_valid("models", "models"));
  CHECK(output_valid("validate", "validate"));
  CHECK(output_valid("calibrate", "calibrate"));
  CHECK(output_valid("error", "recommend --params 13Q --task lora", 2));
  CHECK(output_valid("error", "estimate --instance g5.2xlarge --count 1 --params 13B --task lora", 3));
  CHECK(output_valid("error", "recommend --params 13B --task lora --budget 1", 3));
  CHECK(output_valid("error", "cost --model llama-3-8b --task inference --requests-per-second 2 --chart /nonexistent-dir/c.svg", 2));
  // The other commands share the envelope.
  CHECK(output_valid("envelope", "models"));
  CHECK(output_valid("envelope", "catalog show p5.48xlarge"));
  CHECK(output_valid("envelope", "calibrate --leave-one-source-out"));
  CHECK(output_valid("envelope", "--version"));
  // The overlay goes to a file of the test's own: a test never writes to a device path (as root, a rename over /dev/null replaced it).
  const std::string overlay = temp_name("overlay");
  CHECK(output_valid("prices-import", "prices import --offer-file " + cli_test::data("prices/offer_ec2.json") + " --output " + overlay));
  std::remove(overlay.c_str());
}

TEST_CASE("the schemas take the serving documents a hostile review found them refusing") {
  CHECK(output_valid("recommend", "recommend --model llama-3-8b --task inference --mode offline"));  // no TPOT target: nulls
  CHECK(output_valid("recommend", "recommend --model llama-3-8b --task inference --output-tokens 1 --requests-per-second 2"));
  CHECK(output_valid("cost", "cost --model llama-3-8b --task inference"));  // the fastest unpriced row, unsimulated
  CHECK(output_valid("cost", "cost --model llama-3-8b --task inference --requests-per-second 2 --slo-percentile mean"));
  CHECK(output_valid("cost", "cost --model llama-3-8b --task inference --reasoning-tokens 500 --requests-per-second 2"));
  CHECK(output_valid("estimate", "estimate --task inference --instance inf2.48xlarge --model mixtral-8x7b --requests-per-second 5"));
}

TEST_CASE("every command's schema refuses its document corrupted one field at a time") {
  CHECK(output_strict("recommend", "recommend --params 13B --task lora"));
  CHECK(output_strict("recommend", "recommend --params 7B --task inference"));
  CHECK(output_strict("recommend", "recommend --params 7B --task rl --family p5"));
  CHECK(output_strict("cost", "cost --model llama-3-8b --task pretrain --tokens 50B --family p5"));
  CHECK(output_strict("cost", "cost --instance p5.48xlarge --count 4 --hours 100"));
  CHECK(output_strict("cost", "cost --model llama-3-8b --task inference --requests-per-second 2"));
  CHECK(output_strict("estimate", "estimate --instance p5.48xlarge --params 7B --task lora"));
  CHECK(output_strict("estimate", "estimate --task inference --instance g6e.xlarge --model llama-3-8b"));
  CHECK(output_strict("estimate", "estimate --task rl --instance p5.48xlarge --count 2 --params 7B --placement split"));
  CHECK(output_strict("catalog", "catalog"));
  CHECK(output_strict("catalog-show", "catalog show p4d.24xlarge"));
  CHECK(output_strict("catalog-validate", "catalog validate " + cli_test::data("minimal_catalog.json")));
  CHECK(output_strict("models", "models"));
  CHECK(output_strict("validate", "validate"));
  CHECK(output_strict("calibrate", "calibrate --leave-one-source-out"));
  CHECK(output_strict("calibrate", "calibrate --leave-one-family-out --jobs 2"));
  CHECK(output_strict("error", "estimate --instance g5.2xlarge --count 1 --params 13B --task lora", 3));
  const std::string overlay = temp_name("overlay");
  CHECK(output_strict("prices-import", "prices import --offer-file " + cli_test::data("prices/offer_ec2.json") + " --output " + overlay));
  std::remove(overlay.c_str());
}

TEST_CASE("the schemas refuse the corruptions a user found: a cost as text, a costed document without gates") {
  const auto r = run("cost --model llama-3-8b --task pretrain --tokens 50B --family p5 --format json");
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  const std::string path = temp_name("corrupt");
  auto check = [&](nlohmann::json d) {
    std::ofstream(path) << d.dump();
    const bool ok = checked("cost", path);
    std::remove(path.c_str());
    return ok;
  };
  CHECK(check(doc));
  nlohmann::json lots = doc;
  lots["options"][0]["on_demand_cost_usd"] = "lots";
  CHECK_FALSE(check(lots));
  nlohmann::json no_gates = doc;
  no_gates.erase("gates");
  CHECK_FALSE(check(no_gates));
  nlohmann::json extra = doc;
  extra["options"][1]["surprise"] = 1;
  CHECK_FALSE(check(extra));
}

TEST_CASE("overlays the CLI writes validate against docs/schema/overlay") {
  const std::string out = temp_name("overlay_written");
  REQUIRE(run("prices import --offer-file " + cli_test::data("prices/offer_ec2.json") + " --spot-advisor " +
              cli_test::data("prices/spot_advisor.json") + " --output " + out)
              .code == 0);
  CHECK(checked("overlay", out));
  REQUIRE(run("calibrate --output " + out).code == 0);
  CHECK(checked("overlay", out));
  std::remove(out.c_str());
  // A schema that bites: a document missing a required key fails.
  const std::string bad = temp_name("bad");
  std::ofstream(bad) << R"({"schema_version": 1, "command": "recommend"})";
  CHECK_FALSE(checked("error", bad));
  std::remove(bad.c_str());
}
