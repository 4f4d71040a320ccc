// Every JSON document the CLI writes validates against its published schema
// (docs/schema/*.schema.json), checked with Python's jsonschema.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cli_run.hpp"

using cli_test::run;

namespace {

std::string python() { return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"; }

// Runs the validator on a document; returns its stderr when invalid.
bool valid(const std::string& schema, const std::string& document_path) {
  const std::string src = GPUADVISOR_SOURCE_DIR;
  const std::string cmd = python() + " " + src + "/scripts/check_schema.py " + src + "/docs/schema/" + schema + ".schema.json " + document_path;
  return std::system(cmd.c_str()) == 0;
}

bool output_valid(const std::string& schema, const std::string& args, int expected_code = 0) {
  const auto r = run(args + " --format json");
  INFO(args << "\n" << r.err);
  CHECK(r.code == expected_code);
  const std::string path = "gpuadvisor_test_schema_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << r.out;
  const bool ok = valid(schema, path);
  std::remove(path.c_str());
  return ok;
}

}  // namespace

TEST_CASE("JSON outputs validate against docs/schema") {
  CHECK(output_valid("recommend", "recommend --params 13B --task lora"));
  CHECK(output_valid("recommend", "recommend --params 7B --task inference"));
  CHECK(output_valid("recommend", "recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d"));
  CHECK(output_valid("cost", "cost --model llama-3-8b --task pretrain --tokens 50B --family p5"));
  CHECK(output_valid("cost", "cost --instance p5.48xlarge --count 4 --hours 100"));
  CHECK(output_valid("cost", "cost --model llama-3-8b --task inference --requests-per-second 2"));
  CHECK(output_valid("estimate", "estimate --instance p5.48xlarge --params 7B --task lora"));
  CHECK(output_valid("estimate", "estimate --task inference --instance g6e.xlarge --model llama-3-8b"));
  CHECK(output_valid("recommend", "recommend --params 7B --task rl --family p5"));
  CHECK(output_valid("cost", "cost --params 7B --task rl --algorithm ppo --reward model --reward-model 7B --family p5"));
  CHECK(output_valid("estimate", "estimate --task rl --instance p5.48xlarge --count 2 --params 7B --placement split"));
  CHECK(output_valid("catalog", "catalog"));
  CHECK(output_valid("validate", "validate"));
  CHECK(output_valid("error", "recommend --params 13Q --task lora", 2));
  CHECK(output_valid("error", "estimate --instance g5.2xlarge --count 1 --params 13B --task lora", 3));
  CHECK(output_valid("error", "recommend --params 13B --task lora --budget 1", 3));
  // The other commands share the envelope.
  CHECK(output_valid("envelope", "models"));
  CHECK(output_valid("envelope", "catalog show p5.48xlarge"));
  CHECK(output_valid("envelope", "calibrate --leave-one-source-out"));
  // The overlay goes to a file of the test's own: a test never writes to a device path (as root, a rename over /dev/null replaced it).
  const std::string overlay = "gpuadvisor_test_schema_overlay_" + std::to_string(getpid()) + ".json";
  CHECK(output_valid("envelope", "prices import --offer-file " + cli_test::data("prices/offer_ec2.json") + " --output " + overlay));
  std::remove(overlay.c_str());
}

TEST_CASE("overlays the CLI writes validate against docs/schema/overlay") {
  const std::string out = "gpuadvisor_test_overlay_" + std::to_string(getpid()) + ".json";
  REQUIRE(run("prices import --offer-file " + cli_test::data("prices/offer_ec2.json") + " --spot-advisor " +
              cli_test::data("prices/spot_advisor.json") + " --output " + out)
              .code == 0);
  CHECK(valid("overlay", out));
  REQUIRE(run("calibrate --output " + out).code == 0);
  CHECK(valid("overlay", out));
  std::remove(out.c_str());
  // A schema that bites: a document missing a required key fails.
  const std::string bad = "gpuadvisor_test_bad_" + std::to_string(getpid()) + ".json";
  std::ofstream(bad) << R"({"schema_version": 1, "command": "recommend"})";
  CHECK_FALSE(valid("error", bad));
  std::remove(bad.c_str());
}
