// Every output is a contract (docs/json.md): one document per run whatever
// fails late, rates at the catalog's precision, finance rows that carry their
// provenance, the gate verdict first in a PR diff, unknown commands and keys
// named, and flags that never do nothing.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.hpp"
#include "test_files.hpp"

using cli_test::run;
namespace fs = std::filesystem;

namespace {

using test_files::TempDir;
using test_files::write;



// The first line of `text` that contains `what`.
std::string line_with(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.find(what) != std::string::npos) return l;
  return "";
}

}  // namespace

TEST_CASE("contracts: every command and format that fails late prints one document or nothing") {
  TempDir t("gpuadvisor_contracts_late");
  const std::string missing = "/nonexistent-gpuadvisor-dir/";
  const std::vector<std::string> late{
      "recommend --params 13B --task lora --chart " + missing + "c.svg",
      "recommend --params 7B --task inference --chart " + missing + "c.svg",
      "recommend --params 7B --task rl --family p5 --chart " + missing + "c.svg",
      "cost --model llama-3-8b --task pretrain --tokens 50B --family p5 --chart " + missing + "c.svg",
      "cost --model llama-3-8b --task inference --requests-per-second 2 --chart " + missing + "c.svg",
      "cost --params 7B --task rl --family p5 --chart " + missing + "c.svg",
      "recommend --params 13B --task lora --emit slurm --emit-dir /proc/gpuadvisor-cannot",
      "estimate --instance p5.48xlarge --params 7B --task lora --emit slurm --emit-dir /proc/gpuadvisor-cannot",
      "prices import --offer-file " + cli_test::data("prices/offer_ec2.json") + " --output " + missing + "o.json",
      "calibrate --output " + missing + "o.json",
  };
  for (const auto& args : late) {
    for (const std::string format : {"json", "csv", "markdown", "table"}) {
      const auto r = run(args + " --format " + format);
      INFO(args << " --format " << format << "\n" << r.out << r.err);
      CHECK(r.code == 2);
      if (format == "json") {
        const auto doc = nlohmann::json::parse(r.out);  // throws on a second document ("Extra data")
        CHECK(doc.contains("error"));
        CHECK(doc.size() == 5);  // schema_version, generated_by, command, error, warnings: nothing of the answer
      } else {
        CHECK(r.out.empty());
      }
    }
  }
}

TEST_CASE("contracts: an unknown command names itself and the nearest command, exit 2, --help or not") {
  const auto j = run("frobnicate --format json");
  CHECK(j.code == 2);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["command"] == "frobnicate");
  CHECK(doc["error"]["kind"] == "input_error");
  const auto near = run("recomend --params 7B --task lora");
  CHECK(near.code == 2);
  CHECK(near.err.find("did you mean 'recommend'?") != std::string::npos);
  const auto help = run("plan --help");
  CHECK(help.code == 2);
  CHECK(help.out.empty());
  CHECK(help.err.find("unknown command 'plan'") != std::string::npos);
  // A global option's value is not taken for the command.
  CHECK(run("--format json models").code == 0);
  CHECK(nlohmann::json::parse(run("--format json catalog show p5.48xlarge").out)["command"] == "catalog show");
}

TEST_CASE("contracts: hourly rates keep the catalog's precision in every document that shows them") {
  const auto show = nlohmann::json::parse(run("catalog show p4d.24xlarge --format json").out);
  CHECK(show["instance"]["prices"]["us-east-1"]["on_demand"]["usd_per_hour"].dump() == "21.957642");
  const auto cost = nlohmann::json::parse(run("cost --instance p4d.24xlarge --count 2 --hours 10 --format json").out);
  CHECK(cost["options"][0]["on_demand_usd_per_hour"].dump() == "21.957642");
  // rate x count x hours is the total to the cent.
  CHECK(cost["options"][0]["on_demand_cost_usd"].get<double>() == Approx(21.957642 * 2 * 10).margin(0.005));
  const auto csv = run("cost --instance p4d.24xlarge --count 2 --hours 10 --format csv").out;
  CHECK(csv.find(",21.957642,") != std::string::npos);
  // A discount's float noise is cut, not the catalog's digits: 21.957642 x 0.8.
  const auto disc = nlohmann::json::parse(run("--discount 20% cost --instance p4d.24xlarge --count 1 --hours 1 --format json").out);
  CHECK(disc["options"][0]["on_demand_usd_per_hour"].dump() == "17.5661136");
}

TEST_CASE("contracts: a comparison's fractions keep 6 significant digits, and the markdown diff starts with the verdict") {
  TempDir t("gpuadvisor_contracts_diff");
  // g6e: on demand at any count, so the cost grows with the tokens (blocks bill whole days).
  const std::string job = "cost --model llama-3-8b --task pretrain --tokens 50B --family g6e";
  const auto base = run("cost --model llama-3-8b --task pretrain --tokens 40B --family g6e --format json");
  REQUIRE(base.code == 0);
  write(t.file("base.json"), base.out);
  const auto j = run(job + " --compare-to " + t.file("base.json") + " --fail-if-increase 10% --format json");
  CHECK(j.code == 4);
  const std::string fraction = nlohmann::json::parse(j.out)["comparison"]["cost_delta_fraction"].dump();
  CHECK(fraction.size() <= 9);  // 0.249995, never 0.24778964385793692
  const auto md = run(job + " --compare-to " + t.file("base.json") + " --fail-if-increase 10% --format markdown");
  CHECK(md.code == 4);
  const auto verdict = md.out.find("**Verdict: FAIL: --fail-if-increase");
  REQUIRE(verdict != std::string::npos);
  CHECK(verdict < md.out.find("| base |"));
  CHECK(line_with(md.out.substr(verdict), "cost +").find("time ") != std::string::npos);
  const auto pass = run(job + " --compare-to " + t.file("base.json") + " --fail-if-increase 50% --format markdown");
  CHECK(pass.code == 0);
  CHECK(pass.out.find("**Verdict: pass (1 gate)**") != std::string::npos);
}

TEST_CASE("contracts: finance rows carry region, price date, Spot Advisor date, channel and pick") {
  for (const std::string args : {"cost --model llama-3-8b --task pretrain --tokens 50B --family p5",
                                 "cost --instance p5.48xlarge --count 4 --hours 100",
                                 "cost --model llama-3-8b --task inference --requests-per-second 2",
                                 "recommend --params 13B --task lora", "recommend --params 7B --task inference"}) {
    INFO(args);
    const auto csv = run(args + " --format csv");
    REQUIRE(csv.code == 0);
    const std::string header = csv.out.substr(0, csv.out.find('\n'));
    for (const char* column : {"region", "prices_as_of", "spot_advisor_as_of", "channel", "pick"})
      CHECK(header.find(column) != std::string::npos);
    const auto doc = nlohmann::json::parse(run(args + " --format json").out);
    const auto& row = doc["options"][0];
    CHECK(row["region"] == "us-east-1");
    CHECK(row["prices_as_of"].get<std::string>().size() == 10);
    CHECK(row.contains("spot_advisor_as_of"));
    // 4 x p5.48xlarge is more than one starts on demand: a Capacity Block delivers it.
    if (args.find("--count 4") != std::string::npos) CHECK(row["channel"] == "capacity-block");
    else if (args.find("--family p5") == std::string::npos) CHECK(row["channel"] == "on-demand");
    else CHECK((row["channel"] == "on-demand" || row["channel"] == "capacity-block"));
    // The text table stays 80 columns: the provenance is in the footer.
    const auto text = run(args);
    CHECK(text.out.find("Spot Advisor interruption ranges as of 20") != std::string::npos);
    CHECK(line_with(text.out, "INSTANCE").find("REGION") == std::string::npos);
  }
  const auto show = run("catalog show p5.48xlarge");
  CHECK(show.out.find("Spot Advisor as of") != std::string::npos);
}

TEST_CASE("contracts: a case file or a model shape with a key gpuadvisor does not know is refused with the nearest key") {
  TempDir t("gpuadvisor_contracts_keys");
  const auto cases = nlohmann::json::parse(cli_test::run("validate --format json").out);
  auto one = [&](const std::string& field, const nlohmann::json& value) {
    nlohmann::json c = {{"id", "t1"}, {"task", "inference"}, {"model", "llama-3-8b"}, {"system", "p5.48xlarge"}, {"precision", "bf16"},
                        {"metric", "tpot_s"}, {"measured", 0.01}, {"counts", "a"}, {"source", "x"}, {"source_key", "x"}, {"usable", true},
                        {"prompt_tokens", 100}, {"output_tokens", 100}, {"batch", 1}, {"tp", 1}};
    c[field] = value;
    write(t.file("cases.json"), nlohmann::json{{"cases", {c}}}.dump());
    return run("validate --cases " + t.file("cases.json"));
  };
  CHECK(one("tp", 1).code == 0);
  const auto typo = one("promt_tokens", 100);
  CHECK(typo.code == 2);
  CHECK(typo.err.find("promt_tokens") != std::string::npos);
  CHECK(typo.err.find("did you mean 'prompt_tokens'?") != std::string::npos);
  CHECK(one("bogus_field", 1).code == 2);
  CHECK(one("layout", nlohmann::json{{"tp", 1}, {"pipeline", 2}}).code == 2);
  CHECK(one("model", nlohmann::json{{"layers", 32}, {"hidden", 4096}, {"heads", 32}, {"ffn", 14336}, {"vocab", 128256}, {"expert", 8}}).code == 2);
  CHECK(cases["cases_total"].get<int>() > 100);  // the bundled cases still read
  // A blank name is a mistake, not the default: left out it is the default.
  for (const char* name : {"engine", "kv_cache"}) {
    const auto blank = one(name, "");
    CHECK(blank.code == 2);
    CHECK(blank.err.find(std::string("field '") + name + "': is empty") != std::string::npos);
  }
  CHECK(one("engine", "vllm").code == 0);
}

TEST_CASE("contracts: flags that shape nothing without another are refused, not ignored") {
  const auto dir = run("recommend --params 13B --task lora --emit-dir /tmp/x");
  CHECK(dir.code == 2);
  CHECK(dir.err.find("--emit-dir") != std::string::npos);
  const auto validate = run("catalog validate " + cli_test::data("minimal_catalog.json") + " --format json");
  CHECK(validate.code == 0);
  CHECK(nlohmann::json::parse(validate.out)["valid"] == true);
}

TEST_CASE("contracts: shape overrides rescale what of the preset they invalidate and say so") {
  const auto r = run("estimate --instance p5.48xlarge --params 22B --layers 48 --hidden 6144 --heads 64 --task lora --format json");
  INFO(r.err);
  CHECK(r.code == 0);
  const auto heads = run("estimate --instance p5.48xlarge --model llama-3-8b --heads 36 --hidden 4608 --task lora -v");
  CHECK(heads.code == 0);
  CHECK(heads.err.find("KV heads set to 36") != std::string::npos);
}

namespace {

// A value for every flag of recommend, cost and estimate that, where the flag
// applies, changes the answer. A flag missing here fails the walk below: a new
// flag gets a value, and so a check that it is never ignored.
const std::map<std::string, std::string>& flag_values() {
  static const std::map<std::string, std::string> v{
      {"--explain", ""}, {"--params", "3B"}, {"--model", "llama-3-70b"}, {"--model-config", cli_test::data("hf_llama2_7b.json")},
      {"--layers", "16"}, {"--hidden", "2048"}, {"--heads", "16"}, {"--kv-heads", "4"}, {"--vocab", "64000"}, {"--task", "finetune"},
      {"--tokens", "30B"}, {"--epochs", "2"}, {"--seq-len", "8192"}, {"--global-batch", "512"}, {"--precision", "fp8"},
      {"--lora-rank", "64"}, {"--lora-targets", "attention"}, {"--no-flash-attention", ""}, {"--framework", "deepspeed"},
      {"--prompt-tokens", "3000"}, {"--prompt-tokens-p95", "12000"}, {"--output-tokens", "700"}, {"--output-tokens-p95", "3000"},
      {"--reasoning-tokens", "2000"}, {"--samples", "4"}, {"--verifier-model", "llama-3-8b"}, {"--requests-per-second", "7"},
      {"--tokens-per-day", "3B"}, {"--target-utilisation", "50%"}, {"--concurrency", "64"}, {"--clients", "8"}, {"--arrival", "gamma:2"}, {"--length-spread", "0.5"}, {"--simulated-requests", "100"}, {"--compiled-batch", "8"}, {"--scheduler-recv-interval", "30"}, {"--max-waiting-tokens", "5"}, {"--max-batched-tokens", "4096"}, {"--attention-dp-balance", "60"},
      {"--max-ttft", "300ms"}, {"--max-tpot", "15ms"}, {"--slo-percentile", "99"}, {"--trace", cli_test::data("trace_chat.jsonl")}, {"--prefix-share", "50%"}, {"--speculative", "mtp:3:0.7"}, {"--min-tokens-per-second-per-user", "60"}, {"--weights", "fp8"},
      {"--kv-cache", "fp8"}, {"--mode", "offline"}, {"--engine", "sglang"}, {"--algorithm", "ppo"}, {"--prompts-per-step", "64"},
      {"--samples-per-prompt", "4"}, {"--response-tokens", "2000"}, {"--response-tokens-max", "8000"}, {"--steps", "50"},
      {"--prompts", "20000"}, {"--reward", "model"}, {"--reward-model", "llama-3-8b"}, {"--placement", "split"}, {"--async", ""},
      {"--policy-update", "lora"}, {"--no-reference", ""}, {"--provision-minutes", "45"}, {"--image-gb", "80"},
      {"--load-gb-per-s", "0.3"}, {"--neuron-compile-minutes", "300"}, {"--resume", ""}, {"--no-overheads", ""},
      {"--sort-by", "time"}, {"--cost-slack", "40%"}, {"--horizon", "1h"}, {"--value-of-time", "5000"}, {"--max-cost-multiple", "0"}, {"--data-region", "us-west-2"}, {"--top", "2"}, {"--all-counts", ""}, {"--max-instances", "1"},
      {"--family", "g6e"}, {"--exclude", "p5"}, {"--region", "us-west-2"}, {"--pricing", "spot"}, {"--deadline", "1h"},
      {"--budget", "5"}, {"--quota-vcpus", "p=0,g=0"}, {"--checkpoint-storage", "efs"}, {"--checkpoint-gb-per-s", "0.5"}, {"--restart-minutes", "40"},
      {"--chart", "@chart"}, {"--emit", "slurm"}, {"--emit-dir", "@dir"}, {"--rank", "2"}, {"--entrypoint", "train.py"},
      {"--image", "me/img:1"}, {"--hf-model", "me/model"}, {"--max-request-tokens", "4096"}, {"--compare-to", "@baseline"}, {"--fail-if-over", "1"}, {"--fail-if-increase", "1%"}, {"--fail-if-pick-changes", ""},
      {"--instance", "g6e.12xlarge"}, {"--count", "2"}, {"--hours", "10"}, {"--tp", "2"}, {"--pp", "2"}, {"--ep", "2"},
      {"--etp", "1"}, {"--vp", "2"}, {"--cp", "2"}, {"--micro-batch", "2"}, {"--zero-stage", "1"}, {"--recompute", "full"},
      {"--recompute-layers", "4"}, {"--batch", "8"}, {"--rollout-instances", "1"}, {"--attention-dp", "2"}};
  return v;
}

std::vector<std::string> command_flags(const std::string& command) {
  const auto help = run(command + " --help").out;
  std::vector<std::string> out;
  static const std::regex flag(R"(^\s+(?:-[a-zA-Z],)?(--[a-z0-9-]+))");
  std::istringstream in(help);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, flag) && m[1] != "--help") out.push_back(m[1]);
  }
  return out;
}

bool given_in(const std::string& args, const std::string& flag) { return (" " + args + " ").find(" " + flag + " ") != std::string::npos; }

}  // namespace

// Each flag of each command, added alone to a working command line, either
// changes the answer (stdout and exit code; a file for --chart and --emit) or
// is refused with exit 2 naming it. None is accepted and ignored.
TEST_CASE("contracts: no flag is silently ignored (every flag of every command, each kind of job)") {
  TempDir t("gpuadvisor_contracts_flags");
  const std::vector<std::string> bases{
      "recommend --model llama-3-8b --task lora --family p5,g6e,trn1",
      "recommend --model llama-3-8b --task inference --family g6e,p5,inf2",
      "recommend --params 1B --task rl --family p5 --steps 20",
      "cost --model llama-3-8b --task lora --family p5,g6e,trn1",
      "cost --model llama-3-8b --task inference --family g6e,p5,inf2",
      "cost --instance p5.48xlarge --count 1 --hours 100",
      "cost --model llama-3-8b --task lora --instance p5.48xlarge --count 1",
      "estimate --instance p5.48xlarge --model llama-3-8b --task lora",
      "estimate --instance g6e.12xlarge --model llama-3-8b --task inference",
  };
  const auto base_doc = run("cost --model llama-3-8b --task lora --family p5 --format json");
  write(t.file("baseline.json"), base_doc.out);
  std::vector<std::string> ignored;
  for (const auto& base : bases) {
    const auto before = run(base + " --format json");
    REQUIRE(before.code == 0);
    const std::string command = base.substr(0, base.find(' '));
    for (const auto& flag : command_flags(command)) {
      if (given_in(base, flag)) continue;
      const auto it = flag_values().find(flag);
      INFO(command << " " << flag);
      REQUIRE(it != flag_values().end());  // a new flag: give it a value above
      std::string value = it->second;
      const std::string chart = t.file("c.svg"), dir = t.file("emit");
      if (value == "@chart") value = chart;
      if (value == "@dir") value = dir;
      if (value == "@baseline") value = t.file("baseline.json");
      const std::string extra = flag == "--emit" ? " --emit-dir " + dir : "";
      fs::remove_all(chart), fs::remove_all(dir);
      const auto after = run(base + " " + flag + (value.empty() ? "" : " " + value) + extra + " --format json");
      const bool refused = after.code == 2 && after.err.find(flag) != std::string::npos;
      const bool wrote = (flag == "--chart" && fs::exists(chart)) || (flag == "--emit" && fs::exists(dir) && !fs::is_empty(dir));
      // --explain writes its formulas to stderr beside a JSON document.
      const bool changed = after.code != before.code || after.out != before.out || (flag == "--explain" && after.err != before.err);
      if (!refused && !wrote && !(changed && after.code != 2)) ignored.push_back(base + "  " + flag + " " + value + "  (exit " + std::to_string(after.code) + ")");
    }
  }
  for (const auto& x : ignored) UNSCOPED_INFO("ignored: " << x);
  CHECK(ignored.empty());
}
