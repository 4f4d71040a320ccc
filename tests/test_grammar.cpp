// End-to-end: one grammar for quantities on every flag (docs/cli.md §Quantities).
// Each case was a defect of a hostile-input review: it failed before the fix.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"

using cli_test::Run;
using cli_test::run;

namespace {
// Exit 2, nothing on stdout, and stderr naming the flag and saying `why`.
void check_refused(const std::string& args, const std::string& flag, const std::string& why) {
  INFO(args);
  const Run r = run(args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(flag) != std::string::npos);
  CHECK(r.err.find(why) != std::string::npos);
}

const std::string kReservation = "cost --instance p5.48xlarge --hours 100";
const std::string kLora = "estimate --instance p5.48xlarge --model llama-3-8b --task lora --tokens 10M";
const std::string kServe = "estimate --task inference --instance p5.48xlarge --model llama-3-8b";
const std::string kRl = "estimate --task rl --instance p5.48xlarge --model qwen2.5-7b";
}  // namespace

TEST_CASE("grammar: integer flags are decimal: 010 and 0x10 are refused, not octal 8 and hex 16") {
  check_refused(kReservation + " --count 010", "--count", "'010' is not a decimal whole number");
  check_refused(kReservation + " --count 0x10", "--count", "'0x10' is not a decimal whole number");
  check_refused(kReservation + " --count=010", "--count", "'010' is not a decimal whole number");
  check_refused(kLora + " --layers 010", "--layers", "'010' is not a decimal whole number");
  check_refused(kReservation + " --count 1.5", "--count", "--count: '1.5' is not a whole number");
  check_refused(kReservation + " --count 1e1", "--count", "is not a decimal whole number");
  Run ten = run(kReservation + " --count 10 --format json");
  REQUIRE(ten.code == 0);
  CHECK(nlohmann::json::parse(ten.out)["options"][0]["count"] == 10);
}

TEST_CASE("grammar: every integer flag of every command takes the same decimal grammar") {
  const char* lora = "estimate --instance p5.48xlarge --model llama-3-8b --task lora";
  const std::pair<std::string, const char*> flags[] = {
      {"recommend --params 7B --task lora", "--top"},       {"recommend --params 7B --task lora", "--max-instances"},
      {"recommend --params 7B --task lora", "--rank"},      {"recommend --params 7B --task lora", "--lora-rank"},
      {"cost --instance p5.48xlarge --hours 100", "--count"}, {lora, "--count"},
      {lora, "--hidden"},  {lora, "--heads"},   {lora, "--kv-heads"},     {lora, "--vocab"},
      {lora, "--tp"},      {lora, "--pp"},      {lora, "--ep"},           {lora, "--etp"},
      {lora, "--vp"},      {lora, "--cp"},      {lora, "--micro-batch"},  {lora, "--zero-stage"},
      {lora, "--recompute-layers"}, {lora, "--batch"}, {lora, "--rollout-instances"},
      {"catalog", "--min-accelerators"},          {"prices fetch --output /nonexistent/p.json", "--timeout"},
      {"prices fetch --output /nonexistent/p.json", "--retries"}};
  for (const auto& [command, flag] : flags) {
    check_refused(command + " " + flag + " 010", flag, "'010' is not a decimal whole number");
    check_refused(command + " " + flag + " 0x1", flag, "'0x1' is not a decimal whole number");
  }
}

TEST_CASE("grammar: a refused integer is a JSON error document with --format json") {
  Run r = run(kReservation + " --count 010 --format json");
  CHECK(r.code == 2);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["error"]["kind"] == "input_error");
  CHECK(doc["error"]["message"].get<std::string>().find("--count: '010'") != std::string::npos);
}

TEST_CASE("grammar: commas are refused on money as on every other flag") {
  check_refused("recommend --params 7B --task lora --budget 1,5", "--budget", "commas are not accepted");
  check_refused("recommend --params 7B --task lora --budget '$5,000'", "--budget", "commas are not accepted");
  // Amounts past any bill: an hour at 1e305 USD overflowed into a false "no known price".
  check_refused("recommend --params 7B --task lora --value-of-time 1e305", "--value-of-time", "more than any bill");
  check_refused("recommend --params 7B --task lora --budget 2e15", "--budget", "at most 1e15 USD");
  // A daily volume out of range names the flag given, not the rate it becomes.
  check_refused("recommend --params 7B --task inference --tokens-per-day 1e20", "--tokens-per-day", "requests/s, outside [1e-09, 1e+09]");
  check_refused("recommend --params 7B --task lora --fail-if-over 1,5", "--fail-if-over", "commas are not accepted");
  check_refused("cost --instance p5.48xlarge --count 1 --hours 10 --fail-if-over 1,5", "--fail-if-over", "commas are not accepted");
  check_refused("catalog --max-price 1,5", "--max-price", "commas are not accepted");
  check_refused("recommend --params 7B --task lora --tokens 1,000,000", "--tokens", "commas are not accepted");
  // Without commas money still reads dollars and suffixes.
  Run r = run("catalog --max-price 15 --format json");
  REQUIRE(r.code == 0);
  Run k = run("catalog --max-price 0.015k --format json");
  REQUIRE(k.code == 0);
  CHECK(r.out == k.out);
}

TEST_CASE("grammar: M and m are a million, never minutes, minutes are min") {
  check_refused("cost --instance p5.48xlarge --count 1 --hours 1M", "--hours", "write 1min");
  check_refused("cost --instance p5.48xlarge --count 1 --hours 90m", "--hours", "write 90min");
  check_refused("recommend --params 7B --task lora --deadline 1M", "--deadline", "write 1min");
  check_refused(kServe + " --max-ttft 1m", "--max-ttft", "write 1min");
  check_refused(kServe + " --max-tpot 1M", "--max-tpot", "write 1min");
  Run r = run("cost --instance p5.48xlarge --count 1 --hours 90min --format json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["options"][0]["hours"] == 1.5);
}

TEST_CASE("grammar: counts of discrete things refuse fractions and take suffixes") {
  check_refused(kRl + " --steps 1.5", "--steps", "--steps: '1.5' is not a whole number");
  check_refused(kRl + " --prompt-tokens 1.5", "--prompt-tokens", "is not a whole number");
  check_refused(kRl + " --response-tokens 100.5", "--response-tokens", "is not a whole number");
  check_refused(kRl + " --response-tokens-max 2000.5", "--response-tokens-max", "is not a whole number");
  check_refused(kRl + " --prompts 10.5 --epochs 1", "--prompts", "is not a whole number");
  check_refused(kServe + " --prompt-tokens 1.5", "--prompt-tokens", "is not a whole number");
  check_refused(kServe + " --prompt-tokens-p95 1.5", "--prompt-tokens-p95", "is not a whole number");
  check_refused(kServe + " --output-tokens 1.5", "--output-tokens", "is not a whole number");
  check_refused(kServe + " --output-tokens-p95 1.5", "--output-tokens-p95", "is not a whole number");
  check_refused(kServe + " --reasoning-tokens 1.5", "--reasoning-tokens", "is not a whole number");
  check_refused(kServe + " --samples 1.5", "--samples", "is not a whole number");
  check_refused("estimate --instance p5.48xlarge --model llama-3-8b --task lora --tokens 1.5", "--tokens", "is not a whole number");
  check_refused(kLora + " --global-batch 1.5", "--global-batch", "is not a whole number");
  // A fraction of a suffix is whole: 1.5K tokens is 1,500.
  Run k = run(kServe + " --prompt-tokens 1.5K --format json");
  Run n = run(kServe + " --prompt-tokens 1500 --format json");
  REQUIRE(k.code == 0);
  CHECK(k.out == n.out);
  CHECK(run(kServe + " --reasoning-tokens 0").code == 0);
}

TEST_CASE("grammar: zero is refused where it means nothing, naming the flag") {
  // Before: 0 meant "not given", so these ran with exit 0 as if the flag were absent.
  for (const char* flag : {"--layers", "--hidden", "--heads", "--kv-heads", "--vocab", "--tp", "--pp", "--ep", "--etp", "--vp", "--cp",
                           "--micro-batch", "--batch", "--rollout-instances", "--lora-rank", "--count"})
    check_refused(kLora + " " + flag + " 0", flag, "0 is not allowed");
  check_refused(kLora + " --layers 0 --hidden 0", "--layers", "0 is not allowed");
  for (const char* flag : {"--top", "--max-instances", "--rank"})
    check_refused(std::string("recommend --params 7B --task lora ") + flag + " 0", flag, "0 is not allowed");
  check_refused(kReservation + " --count 0", "--count", "0 is not allowed");
  check_refused(kLora + " --tp -2", "--tp", "must be at least 1");
  // Zero is a value on these.
  CHECK(run(kLora + " --zero-stage 0").code == 0);
  CHECK(run("catalog --min-accelerators 0").code == 0);
}
