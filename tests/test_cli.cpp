// End-to-end: runs the gpuadvisor binary and checks output, formats and exit codes.
#include <array>
#include <cmath>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli_run.hpp"
#include "test_files.hpp"
#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/physics/interruption.hpp"
#include "gpuadvisor/report/report.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/workload/model.hpp"
#include <fmt/format.h>

using cli_test::Run;
using cli_test::run;
using cli_test::data;

TEST_CASE("cli: --version names the catalog and its price date") {
  Run r = run("--version");
  CHECK(r.code == 0);
  CHECK(r.out.find("catalog 2026.11.0") != std::string::npos);
  CHECK(r.out.find("prices as of 2026-11-29") != std::string::npos);
  // A script that asks for JSON gets one document in the envelope, either order of the flags.
  for (const char* line : {"--version --format json", "--format json --version", "--format=json --version"}) {
    Run j = run(line);
    INFO(line);
    REQUIRE(j.code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["command"] == "version");
    CHECK(doc["version"] == std::string(gpuadvisor::tool_version()));
    CHECK(doc["catalog"]["version"] == "2026.11.0");
    CHECK(doc["catalog"]["prices_as_of"] == "2026-11-29");
  }
}

TEST_CASE("cli: catalog --format json lists every family and round-trips prices") {
  Run r = run("catalog --format json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema_version"] == 2);
  CHECK(j["currency"] == "USD");
  CHECK(j["catalog"]["prices_as_of"] == "2026-11-29");
  CHECK(j["generated_by"].get<std::string>().rfind("gpuadvisor ", 0) == 0);
  std::set<std::string> names;
  for (const auto& row : j["instances"]) names.insert(row["instance"].get<std::string>());
  for (const char* n : {"g4dn.xlarge", "g5.xlarge", "g6.xlarge", "g6e.xlarge", "inf2.xlarge", "trn1.2xlarge", "trn1n.32xlarge",
                        "trn2.48xlarge", "p3.2xlarge", "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.4xlarge", "p5.48xlarge",
                        "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge", "p6e-gb200.36xlarge"})
    CHECK(names.count(n) == 1);
  for (const auto& row : j["instances"])
    if (row["instance"] == "p5.48xlarge") CHECK(row["on_demand_usd_per_hour"] == 55.04);
}

TEST_CASE("cli: catalog CSV has one header and parses") {
  Run r = run("catalog --format csv --family g5");
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  CHECK(line.rfind("instance,accelerator,accelerator_count", 0) == 0);
  const size_t columns = std::count(line.begin(), line.end(), ',') + 1;
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    CHECK(size_t(std::count(line.begin(), line.end(), ',') + 1) == columns);
  }
  CHECK(rows == 8);
  CHECK(r.out.find("g5.xlarge,A10G,1,22") != std::string::npos);
}

TEST_CASE("cli: catalog filters, sorting and errors") {
  Run r = run("catalog --min-accelerator-memory 141GB --format csv");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("p5en.48xlarge") != std::string::npos);
  CHECK(r.out.find("p5.48xlarge,") == std::string::npos);
  Run s = run("catalog --sort-by on_demand_usd_per_hour --format csv --efa");
  CHECK(s.code == 0);
  CHECK(run("catalog --sort-by nonsense").code == 2);
  CHECK(run("catalog --max-price lots").code == 2);
  Run show = run("catalog show p5.48xlarg");
  CHECK(show.code == 2);
  CHECK(show.err.find("did you mean: p5.48xlarge") != std::string::npos);
  Run ok = run("catalog show p5.48xlarge --format json");
  REQUIRE(ok.code == 0);
  auto j = nlohmann::json::parse(ok.out);
  CHECK(j["accelerator"]["dense_tflops"]["bf16"] == 989.5);
  CHECK(j["sources"].contains("AWS-AC"));
  CHECK(run("catalog --format yaml").code == 2);
  Run family = run("catalog --family p5,zz");  // a misspelt family is an error, not an empty list
  CHECK(family.code == 2);
  CHECK(family.err.find("no instance family 'zz' in the catalog (it has: ") != std::string::npos);
  CHECK(family.err.find("p5e") != std::string::npos);
  CHECK(run("recommend --params 7B --family zz").code == 2);
  // An empty item in a list is refused by its own flag, not by the next flag taken as its value.
  for (const std::string args : {"catalog --family , --format json", "recommend --params 7B --family , --top 2", "catalog --family g5,,p5",
                                 "recommend --params 7B --exclude=p5, --top 2", "recommend --params 7B --region us-east-1,",
                                 "recommend --params 7B --region ,us-east-1", "recommend --params 7B --region us-east-1,,us-west-2"}) {
    Run empty_item = run(args);
    CHECK(empty_item.code == 2);
    CHECK(empty_item.err.find(": empty item in '") != std::string::npos);
    CHECK(empty_item.err.find("'--top'") == std::string::npos);
    CHECK(empty_item.err.find("'--format'") == std::string::npos);
  }
  CHECK(run("catalog --family p5 --format csv").code == 0);
  // A region without prices is refused as recommend refuses it, not a list of "unknown" prices.
  Run nowhere = run("catalog --region nowhere");
  CHECK(nowhere.code == 2);
  CHECK(nowhere.err.find("--region: 'nowhere' has no prices in this catalog") != std::string::npos);
}

TEST_CASE("cli: malformed catalogs exit 2 naming the file, entry and field") {
  Run r = run("catalog --catalog " + data("bad_missing_field.json"));
  CHECK(r.code == 2);
  CHECK(r.err.find("bad_missing_field.json") != std::string::npos);
  CHECK(r.err.find("'test.8x'") != std::string::npos);
  CHECK(r.err.find("'vcpus'") != std::string::npos);
  Run v = run("catalog validate " + data("bad_negative_price.json"));
  CHECK(v.code == 2);
  CHECK(run("catalog validate " + data("minimal_catalog.json")).code == 0);
  CHECK(run("catalog validate --overlay " + data("overlay_team.json")).code == 0);
  Run env = run("catalog", "GPUADVISOR_TODAY=2026-12-01 GPUADVISOR_CATALOG=" + data("minimal_catalog.json"));
  CHECK(env.code == 0);
  CHECK(env.out.find("test.8x") != std::string::npos);
  CHECK(run("catalog --catalog /no/such/file.json").code == 2);
}

TEST_CASE("cli: --catalog-add overrides a price") {
  Run r = run("catalog --family p5 --format json --catalog-add " + data("overlay_team.json"));
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  for (const auto& row : j["instances"])
    if (row["instance"] == "p5.48xlarge") CHECK(row["on_demand_usd_per_hour"] == 40.0);
}

TEST_CASE("cli: stale prices warn once on stderr") {
  Run r = run("catalog --family p5", "GPUADVISOR_TODAY=2027-06-01");
  CHECK(r.code == 0);
  const auto first = r.err.find("days old");
  REQUIRE(first != std::string::npos);
  CHECK(r.err.find("days old", first + 1) == std::string::npos);
  CHECK(r.err.find("gpuadvisor: warning:") != std::string::npos);
  CHECK(run("catalog --family p5").err.find("days old") == std::string::npos);
}

TEST_CASE("cli: recommend 13B LoRA, as JSON, deterministic") {
  Run a = run("recommend --params 13B --task lora --format json");
  REQUIRE(a.code == 0);
  auto j = nlohmann::json::parse(a.out);
  CHECK(j["command"] == "recommend");
  REQUIRE(j["options"].size() == 10);
  for (const char* k : {"instance", "count", "layout", "memory_per_accelerator_gb", "bound", "step_time_s", "tokens_per_second", "mfu",
                        "total_hours", "on_demand_cost_usd", "spot_cost_usd", "usd_per_million_tokens"})
    CHECK(j["options"][0].contains(k));
  CHECK_FALSE(j["assumptions"].empty());
  CHECK(j["cannot_run"].is_array());
  Run b = run("recommend --params 13B --task lora --format json");
  CHECK(a.out == b.out);
  Run t = run("recommend --params 13B --task lora");
  CHECK(t.code == 0);
  CHECK(t.out.find("Cannot run it") != std::string::npos);
  CHECK(t.err.find("assumption: shape assumed from the nearest preset llama-2-13b") != std::string::npos);
}

TEST_CASE("cli: bad input exits 2 with one clear line") {
  for (const char* args : {"recommend --params 13X --task lora", "recommend --params 0", "recommend --params -5", "recommend --params nan",
                           "recommend --params 1e400", "recommend --params 1e20", "recommend --params 13B --task dance",
                           "recommend --model llama-9", "recommend --params 13B --model llama-2-7b", "recommend",
                           "recommend --params 13B --deadline 72", "recommend --params 13B --budget five",
                           "recommend --params 13B --precision fp3", "recommend --params 13B --sort-by mood",
                           "recommend --params 13B --seq-len 0", "recommend --params 13B --global-batch 1.5",
                           "recommend --params 13B --family z9", "recommend --params 13B --top 0",
                           "estimate --instance p5.48xlarge --model llama-2-7b --tp 3",
                           "estimate --instance p9.48xlarge --model llama-2-7b", "estimate --model llama-2-7b",
                           "estimate --instance p4d.24xlarge --model llama-2-7b --precision fp8",
                           "estimate --instance p5.48xlarge --model llama-2-7b --recompute sometimes",
                           "recommend --model-config /no/such/config.json", "frobnicate",
                           "recommend --params 13B --task lora --lora-rank 0", "recommend --params 13B --epochs 0",
                           "recommend --params 13B --max-instances 0", "recommend --params 13B --pricing cheap",
                           "recommend --params 13B --lora-targets everything", "recommend --params 13B --exclude zz9",
                           "catalog --min-accelerators -1", "catalog --accelerator Z80",
                           "estimate --instance p5.48xlarge --model llama-2-7b --count 0",
                           "estimate --instance p5.48xlarge --model llama-2-7b --zero-stage 5",
                           "estimate --instance inf2.xlarge --model llama-2-7b",
                           "recommend --model-config " GPUADVISOR_TEST_DATA "/hf_bad_kv_heads.json"}) {
    INFO(args);
    Run r = run(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_FALSE(r.err.empty());
  }
}

TEST_CASE("cli: a serving pick whose optimistic band could carry it past the time-per-token target says what target keeps it") {
  const std::string ask = "recommend --model llama-3-8b --task inference --requests-per-second 2 --max-tpot 40ms -q --family inf2";
  Run r = run(ask);
  REQUIRE(r.code == 0);
  // An Inferentia2 pick near a 40 ms target: the band of Inferentia2 with the
  // Neuron engine leans optimistic (the bundled cases out of their family).
  const auto band = gpuadvisor::accuracy_band("Inferentia2", "inference", "neuron", false);
  REQUIRE(band);
  REQUIRE(band->median_signed_error > 0.05);
  CHECK(r.out.find(fmt::format("--max-tpot {:.0f}ms keeps the target", 40 / (1 + band->p90_abs_error))) != std::string::npos);
  // JSON says the same for scripts.
  Run j = run(ask + " --format json");
  REQUIRE(j.code == 0);
  const auto margin = nlohmann::json::parse(j.out)["recommendation"]["tpot_margin"];
  REQUIRE(margin.is_object());
  CHECK(margin["max_tpot_s"].get<double>() == Approx(0.040));
  CHECK(margin["suggested_max_tpot_s"].get<double>() == Approx(0.040 / (1 + band->p90_abs_error)).epsilon(1e-5));
  CHECK(margin["predicted_tpot_s"].get<double>() * (1 + margin["p90_abs_error"].get<double>()) > 0.040);
  CHECK(margin["exceeds_target_at_p90"] == true);
  CHECK(margin["leans_optimistic"] == true);
  // A dense pick whose band does not lean optimistic has no such line; its
  // JSON margin still gives the p90 check for a CI gate.
  CHECK(run("recommend --params 7B --task inference -q").out.find("margin:") == std::string::npos);
  const auto dense = nlohmann::json::parse(run("recommend --params 7B --task inference -q --format json").out)["recommendation"]["tpot_margin"];
  REQUIRE(dense.is_object());
  CHECK(dense["leans_optimistic"] == false);
  CHECK(dense["exceeds_target_at_p90"] ==
        (dense["predicted_tpot_s"].get<double>() * (1 + dense["p90_abs_error"].get<double>()) > dense["max_tpot_s"].get<double>()));
  // Offline (no target): null.
  CHECK(nlohmann::json::parse(run("recommend --params 7B --task inference --mode offline -q --format json").out)["recommendation"]["tpot_margin"].is_null());
}

TEST_CASE("cli: catalog show says a type sold only through Capacity Blocks is not sold on demand") {
  for (const char* type : {"p6e-gb200.36xlarge", "p5e.48xlarge", "trn2.48xlarge"}) {
    const Run r = run(std::string("catalog show ") + type);
    CHECK(r.out.find("on demand: not sold") != std::string::npos);
    CHECK(r.out.find("available on demand") == std::string::npos);
    CHECK(r.out.find("instances at once") == std::string::npos);
  }
  CHECK(run("catalog show p5.48xlarge").out.find("on demand: about 2 instances at once") != std::string::npos);
  // Spot as every cost prices it (the typical zone, as `catalog` lists it), with the zones' range beside it;
  // it showed the cheapest zone's $17.63 where `catalog` and `cost` use $21.69.
  const std::string listed = run("catalog --family p5 --format csv").out;
  const size_t row = listed.find("\np5.48xlarge,");
  REQUIRE(row != std::string::npos);
  std::vector<std::string> cells;
  std::stringstream line(listed.substr(row + 1, listed.find('\n', row + 1) - row - 1));
  for (std::string cell; std::getline(line, cell, ',');) cells.push_back(cell);
  REQUIRE(cells.size() > 12);
  const std::string shown = run("catalog show p5.48xlarge").out;
  CHECK(shown.find(fmt::format("${:.2f}/h in a typical zone (zones $", std::stod(cells[12]))) != std::string::npos);
}

TEST_CASE("cli: a family with no price is no pick, exit 3, and a training job is told the fastest unpriced option's time") {
  const Run t = run("recommend --model llama-3-70b --task pretrain --tokens 1T --family trn2 -q --format json");
  CHECK(t.code == 3);
  const auto e = nlohmann::json::parse(t.out)["error"];
  CHECK(e["kind"] == "nothing_fits");
  const std::string msg = e["message"];
  CHECK(msg.find("no known on-demand price") != std::string::npos);
  CHECK(msg.find("the fastest, unpriced: ") != std::string::npos);
  CHECK(msg.find("x trn2.48xlarge, ") != std::string::npos);
  CHECK(msg.find("latency targets") == std::string::npos);  // not a serving job
  const Run s = run("recommend --model llama-3-8b --task inference --family trn2 -q --format json");
  CHECK(s.code == 3);
  CHECK(nlohmann::json::parse(s.out)["error"]["message"].get<std::string>().find("latency targets") != std::string::npos);
}

TEST_CASE("cli: a deadline met only at the prediction, not at its p90 error, is said in the why line and in deadline_margin") {
  // With a slack given, the slack rule picks among the options that meet the deadline at the prediction.
  const std::string base = "recommend --model llama-3-70b --task finetune --tokens 200M --cost-slack 20% -q";
  const auto tight_doc = nlohmann::json::parse(run(base + " --deadline 1h --format json").out);
  const auto tight = tight_doc["recommendation"];
  // ... and in warnings, which a script reads (exit 0 still: the deadline is met at the prediction).
  REQUIRE(tight_doc["warnings"].size() == 1);
  CHECK(tight_doc["warnings"][0].get<std::string>().find("deadline at the prediction") != std::string::npos);
  const auto d = tight["deadline_margin"];
  REQUIRE(d.is_object());
  CHECK(d["deadline_hours"] == Approx(1.0));
  CHECK(d["predicted_hours"].get<double>() <= 1.0);
  CHECK(d["hours_at_p90"].get<double>() == Approx(d["predicted_hours"].get<double>() * (1 + d["p90_abs_error"].get<double>())).epsilon(1e-4));
  CHECK(d["exceeds_deadline_at_p90"] == (d["hours_at_p90"].get<double>() > 1.0));
  CHECK(d["exceeds_deadline_at_p90"] == true);
  CHECK(tight["why"].get<std::string>().find("not at its p90 error") != std::string::npos);
  const auto loose = nlohmann::json::parse(run(base + " --deadline 3d --format json").out)["recommendation"];
  CHECK(loose["deadline_margin"]["exceeds_deadline_at_p90"] == false);
  CHECK(nlohmann::json::parse(run(base + " --deadline 3d --format json").out)["warnings"].empty());
  CHECK(loose["why"].get<std::string>().find("p90") == std::string::npos);
  CHECK(nlohmann::json::parse(run(base + " --format json").out)["recommendation"]["deadline_margin"].is_null());
}

TEST_CASE("cli: under the deadline rule the rows met only at the prediction are listed last, flagged and named under the table") {
  const std::string base = "recommend --params 70B --task pretrain --tokens 1T --deadline 30d --all-counts --family p5 -q";
  const auto doc = nlohmann::json::parse(run(base + " --format json").out);
  const auto& rows = doc["options"];
  REQUIRE(rows.size() >= 2);
  std::vector<int> missed;
  bool seen_missed = false;
  const double p90 = doc["recommendation"]["deadline_margin"]["p90_abs_error"].get<double>();  // one type: one band
  for (const auto& o : rows) {
    const bool misses = o["misses_deadline_at_p90"].get<bool>();
    if (misses) missed.push_back(o["rank"].get<int>());
    // Recomputed from the band: predicted x (1 + p90) beyond 30 days.
    CHECK(misses == (o["total_hours"].get<double>() * (1 + p90) > 30 * 24));
    CHECK((!seen_missed || misses));  // once a missed row is listed, every row after it misses too
    seen_missed = seen_missed || misses;
  }
  REQUIRE_FALSE(missed.empty());
  CHECK(doc["recommendation"]["deadline_margin"]["exceeds_deadline_at_p90"] == false);
  const std::string text = run(base).out;
  CHECK(text.find(fmt::format("Row {} meets the 30.0 d deadline at the prediction but not at its p90 error", missed.front())) != std::string::npos);
  CHECK(text.find("ranked the pick first, then the rest cheapest first (the deadline rule") != std::string::npos);
  // Without a deadline the flag is null.
  const auto plain = nlohmann::json::parse(run("recommend --params 13B --task lora -q --format json").out);
  CHECK(plain["options"][0]["misses_deadline_at_p90"].is_null());
}

TEST_CASE("cli: an offline service's pick is the cheapest unless --cost-slack buys speed") {
  const std::string base = "recommend --model gpt-oss-120b --task inference --mode offline --tokens-per-day 2B -q --format json";
  const auto plain = nlohmann::json::parse(run(base).out);
  CHECK(plain["request"]["cost_slack"] == 0.0);
  CHECK(plain["recommendation"]["instance"] == plain["alternatives"]["cheapest"]["instance"]);
  CHECK(plain["recommendation"]["why"].get<std::string>().find("offline, so no speed is bought") != std::string::npos);
  const auto slack = nlohmann::json::parse(run(base + " --cost-slack 20%").out);
  CHECK(slack["request"]["cost_slack"] == Approx(0.2));
  CHECK(slack["recommendation"]["costs"]["on_demand_usd_per_month"].get<double>() >=
        plain["recommendation"]["costs"]["on_demand_usd_per_month"].get<double>());
  // Online keeps the 20% default.
  CHECK(nlohmann::json::parse(run("recommend --params 7B --task inference -q --format json").out)["request"]["cost_slack"] == Approx(0.2));
}

TEST_CASE("cli: --etp folds the experts over the tensor-parallel ranks, shown in the layout, the JSON and the Megatron flags") {
  const std::string base = "estimate --instance p5.48xlarge --count 32 --model qwen3-235b-a22b --precision fp8 --global-batch 8192 "
                           "--tp 2 --pp 8 --vp 4 --ep 32 --micro-batch 1";
  // Without folding, ep 32 does not fit in dp 16: the search folds by itself.
  Run searched = run(base);
  CHECK(searched.code == 0);
  CHECK(searched.out.find("TP2 PP8 DP16 VP4 EP32 ETP1") != std::string::npos);
  Run j = run(base + " --etp 1 --format json");
  REQUIRE(j.code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["layout"]["etp"] == 1);
  CHECK(doc["layout"]["ep"] == 32);
  // Pinned to the unfolded default, no layout exists.
  Run pinned = run(base + " --etp 2");
  CHECK(pinned.code == 2);
  CHECK(pinned.err.find("ep 32 does not divide dp 16") != std::string::npos);
  for (const char* bad : {" --etp 3", " --etp -1"}) {
    Run r = run(base + bad);
    CHECK(r.code == 2);
  }
  CHECK(run(base + " --etp 3").err.find("--etp 3 must divide --tp 2") != std::string::npos);
  Run inference = run("estimate --task inference --instance p5.48xlarge --model qwen3-235b-a22b --etp 1");
  CHECK(inference.code == 2);
  CHECK(inference.err.find("--etp is a training flag") != std::string::npos);
  Run dense = run("estimate --instance p5.48xlarge --model llama-3-70b --tp 2 --etp 1");
  CHECK(dense.code == 2);
  CHECK(dense.err.find("etp") != std::string::npos);
}

TEST_CASE("cli: a misspelt --task gets the nearest tasks") {
  Run r = run("recommend --params 13B --task lroa");
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean: lora") != std::string::npos);
  CHECK(run("recommend --params 13B --task sft").err.find("is --task finetune") != std::string::npos);
  // Whole numbers out of range are echoed as typed.
  CHECK(run("recommend --model llama-3-8b --task inference --samples 2147483648").err.find("--samples: 2147483648 is too large") != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task inference --samples 1000000000").err.find("--samples: 1000000000 is outside [1, 10000]") !=
        std::string::npos);
  CHECK(run("recommend --params 13B --task GRPO").err.find("is --task rl") != std::string::npos);
  CHECK(run("recommend --params 13B --task serve").err.find("is --task inference") != std::string::npos);
}

TEST_CASE("cli: text that is not UTF-8 in a flag, a name or a file still gives one JSON error document") {
  // Bytes 0xFF 0xFE (printf's octal escapes: the tests' shell is sh).
  for (const std::string args : {"--format json recommend --model \"$(printf '\\377\\376')\" --task lora",
                                 "--format json recommend --params 13B --task lora --family \"$(printf '\\377')\"",
                                 "--format json estimate --instance \"p5$(printf '\\377')\" --params 7B",
                                 "--format json \"recom$(printf '\\377')\""}) {
    const Run r = run(args);
    CHECK(r.code == 2);
    const auto doc = nlohmann::json::parse(r.out);  // one document, the bad bytes replaced
    CHECK(doc["error"]["kind"] == "input_error");
    CHECK(doc["error"]["message"].get<std::string>().find("\xEF\xBF\xBD") != std::string::npos);  // U+FFFD
  }
  CHECK(run("estimate --instance P5.48XLARGE --params 7B").err.find("did you mean: p5.48xlarge") != std::string::npos);  // case ignored
}

TEST_CASE("cli: a pick that fills its memory with a large micro-batch names the same cluster at a smaller one") {
  // From a blind trial: an 8B on B200 at micro-batch 8 fills 99%; the memory line sent the buyer to a dearer type.
  const std::string args = "recommend --model llama-3-8b --task pretrain --tokens 1T --deadline 30d --family p5,p5en,p6-b200";
  const auto rec = nlohmann::json::parse(run(args + " --format json").out)["recommendation"];
  const auto& x = rec["roomier_micro_batch"];
  REQUIRE(x.is_object());
  const int pick_mb = rec["layout"]["micro_batch"].get<int>();
  CHECK(x["micro_batch"].get<int>() < pick_mb);
  CHECK(pick_mb % x["micro_batch"].get<int>() == 0);
  CHECK(x["memory_share"].get<double>() <= 0.9);
  CHECK(x["total_hours"].get<double>() >= rec["total_hours"].get<double>());        // fewer sequences per pass: not faster
  CHECK(x["total_hours"].get<double>() < 1.1 * rec["total_hours"].get<double>());   // ... and not much slower for an 8B
  const Run t = run(args);
  CHECK(t.out.find(fmt::format("at micro-batch {} (not {}) is at", x["micro_batch"].get<int>(), pick_mb)) != std::string::npos);
  // A pick with room has none.
  CHECK(nlohmann::json::parse(run("recommend --params 13B --task lora --format json").out)["recommendation"]["roomier_micro_batch"].is_null());
}

TEST_CASE("cli: an unknown --model suggests the presets that begin with it first") {
  Run r = run("estimate --model llama-4 --task inference --instance p5.48xlarge");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown model 'llama-4'") != std::string::npos);
  CHECK(r.err.find("llama-4-scout") != std::string::npos);
  CHECK(r.err.find("llama-4-maverick") != std::string::npos);
  Run typo = run("estimate --model llama-3-8 --task inference --instance p5.48xlarge");
  CHECK(typo.err.find("did you mean: llama-3-8b") != std::string::npos);
  Run far = run("estimate --model lama-3-8b --task inference --instance p5.48xlarge");
  CHECK(far.err.find("did you mean: llama-3-8b") != std::string::npos);  // no prefix match: edit distance as before
}

TEST_CASE("cli: when no option meets a latency target, each instance's rejection names its fastest layout, as the summary does") {
  Run r = run("recommend --model gpt-oss-120b --task inference --max-tpot 2ms -q");
  CHECK(r.code == 3);
  const auto summary = r.err.find("the fastest option, ");
  REQUIRE(summary != std::string::npos);
  const std::string option = r.err.substr(summary + 20, r.err.find(", reaches", summary) - summary - 20);  // "p6-b300.48xlarge with tp 1"
  const std::string instance = option.substr(0, option.find(" with "));
  const std::string tp = option.substr(option.find(" with ") + 6);
  CHECK(r.err.find("  " + instance + ": " + tp + ": ") != std::string::npos);
}

TEST_CASE("cli: nothing fits exits 3 and says why") {
  Run r = run("recommend --model llama-3.1-405b --task pretrain --family g4dn --max-instances 1");
  CHECK(r.code == 3);
  CHECK(r.err.find("g4dn") != std::string::npos);
  CHECK(r.err.find("needs") != std::string::npos);
}

TEST_CASE("cli: estimate JSON keys that scripts rely on") {
  Run r = run("estimate --instance p5.48xlarge --count 8 --model llama-3-70b --task pretrain --seq-len 8192 --global-batch 128 "
              "--precision fp8 --tp 4 --pp 4 --micro-batch 1 --zero-stage 1 --recompute selective --format json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["layout"]["tp"] == 4);
  CHECK(j["layout"]["pp"] == 4);
  CHECK(j["layout"]["dp"] == 4);
  CHECK(j["layout"]["recompute"] == "selective");
  for (const char* k : {"tokens_per_second", "tokens_per_second_per_accelerator", "model_tflops_per_accelerator"})
    CHECK(j["throughput"][k].is_number());
  CHECK(j["mfu"].is_number());
  CHECK(j["step_time_s"].is_number());
  CHECK(j["memory"]["per_accelerator_gb"].is_number());
  CHECK(j["fits"].is_boolean());
  CHECK(j["time"]["total_hours"].is_number());
  CHECK(j["cost"]["on_demand_usd"].is_number());
  CHECK(j["precision"] == "fp8");
  CHECK(j["layout"]["cp"] == 1);
  CHECK(j["time"]["context_parallel_s"] == 0);
  // A layout that does not divide the GPUs.
  CHECK(run("estimate --instance p5.48xlarge --count 1 --model llama-3-70b --tp 4 --pp 3 --micro-batch 1 --zero-stage 1 --recompute full").code == 2);
  // Context parallelism: given, it shows in the layout; a sequence that does not split is bad input.
  Run cp = run("estimate --instance p5.48xlarge --count 2 --model llama-3-8b --task pretrain --seq-len 32768 --global-batch 16 --cp 4 --format json");
  REQUIRE(cp.code == 0);
  CHECK(nlohmann::json::parse(cp.out)["layout"]["cp"] == 4);
  Run bad = run("estimate --instance p5.48xlarge --model llama-3-8b --task pretrain --seq-len 8190 --cp 2");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("2 x cp") != std::string::npos);
  CHECK(run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --cp 2").code == 2);
  // Block recompute: given with full recompute it shows in the layout; without it, bad input.
  Run rl = run("estimate --instance p5.48xlarge --count 4 --model llama-3-70b --task pretrain --seq-len 8192 --global-batch 64 "
               "--recompute full --recompute-layers 10 --format json");
  REQUIRE(rl.code == 0);
  CHECK(nlohmann::json::parse(rl.out)["layout"]["recompute_layers"] == 10);
  CHECK(run("estimate --instance p5.48xlarge --model llama-3-8b --task pretrain --recompute-layers 4").code == 2);
  CHECK(run("estimate --instance p5.48xlarge --model llama-3-8b --task pretrain --recompute none --recompute-layers 4").code == 2);
  Run wide = run("estimate --instance p5.48xlarge --model llama-3-8b --task pretrain --seq-len 32768 --cp 4 --tp 4");
  CHECK(wide.code == 2);
  CHECK(wide.err.find("does not divide the 8 accelerators") != std::string::npos);
  Run pp3 = run("estimate --instance p5.48xlarge --model llama-3-8b --task pretrain --pp 3");
  CHECK(pp3.code == 2);
  CHECK(pp3.err.find("--pp 3 does not divide the 8 accelerators") != std::string::npos);
}

TEST_CASE("cli: estimate at a fixed batch that misses a latency target shows the estimate, names the target and exits 3") {
  // One A10G prefills 1024 tokens of an 8B model in about 0.5 s: past the
  // 500 ms chat default of its size class, inside a 2 s target. A default target is reported,
  // not refused (the serving-under-load issue): exit 0, the miss said first.
  Run r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1");
  CHECK(r.code == 0);
  CHECK(r.out.rfind("Misses the default latency targets (", 0) == 0);
  CHECK(r.out.find("at batch 1 the time") != std::string::npos);
  CHECK(r.out.find("the time to first token is") != std::string::npos);
  CHECK(r.out.find("(target 500 ms)") != std::string::npos);
  CHECK(r.out.find("time per output token") != std::string::npos);
  // A target the user set gates.
  r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --max-ttft 300ms --max-tpot 40ms");
  CHECK(r.code == 3);
  CHECK(r.err.find("at batch 1 the time to first token is") != std::string::npos);
  CHECK(r.err.find("(target 300 ms)") != std::string::npos);
  CHECK(r.err.find("time per output token is") == std::string::npos);  // met, so not named
  CHECK(run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --max-ttft 2s").code == 0);
  // A target below what the format's decimals show keeps its figures: not "target 0 ms".
  r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --max-ttft 1us --max-tpot 500us");
  CHECK(r.err.find("(target 0.001 ms)") != std::string::npos);
  CHECK(r.err.find("(target 0.5 ms)") != std::string::npos);
  // With a load the table sizes a service that cannot meet the targets: it says so first.
  r = run("estimate --task inference --instance g6.xlarge --model llama-3-8b --requests-per-second 2 --max-tpot 40ms --max-ttft 450ms");
  CHECK(r.code == 3);
  CHECK(r.out.rfind("MISSES ITS LATENCY TARGETS (", 0) == 0);
  r = run("estimate --task inference --instance g6.xlarge --model llama-3-8b --requests-per-second 2 --format json");
  CHECK(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["targets_missed"].get<std::string>().find("target") != std::string::npos);
}

TEST_CASE("cli: a reasoning model served without --reasoning-tokens says its hidden tokens are not counted, once") {
  const std::string said = "no hidden reasoning tokens: deepseek-r1 thinks before it answers by default";
  Run r = run("estimate --model deepseek-r1 --task inference --instance p5en.48xlarge");
  REQUIRE(r.code == 0);
  const size_t at = r.err.find(said);
  REQUIRE(at != std::string::npos);
  CHECK(r.err.find(said, at + 1) == std::string::npos);  // said once
  CHECK(r.err.find("set --reasoning-tokens N") != std::string::npos);
  // In the JSON's assumptions too.
  Run j = run("estimate --model deepseek-r1 --task inference --instance p5en.48xlarge --format json");
  REQUIRE(j.code == 0);
  bool listed = false;
  const auto doc = nlohmann::json::parse(j.out);
  for (const auto& a : doc["assumptions"]) listed = listed || a.get<std::string>().find(said) != std::string::npos;
  CHECK(listed);
  // A count given, 0 included, is the user's: nothing to say. A model that does not think says nothing.
  CHECK(run("estimate --model deepseek-r1 --task inference --instance p5en.48xlarge --reasoning-tokens 0").err.find("hidden reasoning") == std::string::npos);
  CHECK(run("estimate --model deepseek-r1 --task inference --instance p5en.48xlarge --reasoning-tokens 2k").err.find("no hidden reasoning") ==
        std::string::npos);
  CHECK(run("estimate --model llama-3-8b --task inference --instance g6e.xlarge").err.find("hidden reasoning") == std::string::npos);
  CHECK(run("estimate --model gpt-oss-20b --task inference --instance g6e.xlarge").err.find("gpt-oss-20b thinks before it answers") != std::string::npos);
  // The presets that think say where that comes from.
  for (const char* name : {"deepseek-r1", "gpt-oss-20b", "gpt-oss-120b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b"}) {
    INFO(name);
    CHECK(gpuadvisor::find_model_preset(name)->reasoning);
  }
  CHECK_FALSE(gpuadvisor::find_model_preset("deepseek-v3")->reasoning);
  CHECK_FALSE(gpuadvisor::find_model_preset("llama-3.1-70b")->reasoning);
  // A shape written by hand (a validation case's model) takes the field as a boolean, and says so otherwise.
  const std::string shape = R"({"layers": 32, "hidden": 4096, "heads": 32, "ffn": 14336, "vocab": 128256, "reasoning": )";
  CHECK(gpuadvisor::model_from_shape_json(shape + "true}", "case X").reasoning);
  // A shape of 824 parameters (a hostile review's case) is a typo, as --params 1K is.
  CHECK_THROWS_WITH(gpuadvisor::model_from_shape_json(R"({"layers": 1, "hidden": 8, "heads": 1, "ffn": 16, "vocab": 10})", "case T"),
                    Catch::Contains("case T: 824 parameters is below the 1e+06 a foundation model has"));
  try {
    gpuadvisor::model_from_shape_json(shape + "\"yes\"}", "case X");
    FAIL("a non-boolean reasoning field was taken");
  } catch (const gpuadvisor::InputError& e) {
    CHECK(std::string(e.what()).find("case X: field 'reasoning': expected true or false") != std::string::npos);
  }
}

TEST_CASE("cli: with hidden reasoning tokens the pick says when the first visible token comes") {
  Run r = run("recommend --model llama-3-8b --task inference --reasoning-tokens 2000 --family p5");
  REQUIRE(r.code == 0);
  const auto at = r.out.find("first visible token: after about ");
  REQUIRE(at != std::string::npos);
  // TTFT plus 2000 steps of tens of milliseconds: seconds, not milliseconds.
  CHECK(r.out.find(" s (TTFT, then 2000 hidden reasoning tokens", at) != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task inference --family p5").out.find("first visible token") == std::string::npos);
  // With a load the pick is simulated: the line is the simulated first visible
  // token at the targets' percentile, the same figure as the JSON's.
  Run sim = run("recommend --model llama-3-8b --task inference --reasoning-tokens 2000 --family p5 --requests-per-second 2");
  REQUIRE(sim.code == 0);
  CHECK(sim.out.find("first visible token: p90 ") != std::string::npos);
  Run json = run("recommend --model llama-3-8b --task inference --reasoning-tokens 2000 --family p5 --requests-per-second 2 --format json");
  REQUIRE(json.code == 0);
  const auto visible = nlohmann::json::parse(json.out)["recommendation"]["percentiles"]["first_visible_s"];
  const auto ttft = nlohmann::json::parse(json.out)["recommendation"]["percentiles"]["ttft_s"];
  CHECK(visible["p90"].get<double>() > ttft["p90"].get<double>() + 2000 * 0.002);  // 2000 hidden tokens at 2 ms or more each
  CHECK(sim.out.find(fmt::format("p90 {:.1f} s", visible["p90"].get<double>())) != std::string::npos);
  CHECK(nlohmann::json::parse(json.out)["recommendation"]["first_visible_s"].get<double>() == Approx(visible["mean"].get<double>()));
  // Without a load (analytic) the JSON carries the text's figure too: TTFT + 2000 x TPOT.
  Run analytic = run("recommend --model llama-3-8b --task inference --reasoning-tokens 2000 --family p5 --format json");
  REQUIRE(analytic.code == 0);
  const auto pick = nlohmann::json::parse(analytic.out)["recommendation"];
  CHECK(pick["first_visible_s"].get<double>() == Approx(pick["ttft_s"].get<double>() + 2000 * pick["tpot_s"].get<double>()).epsilon(1e-4));
  CHECK(r.out.find(fmt::format("after about {:.1f} s", pick["first_visible_s"].get<double>())) != std::string::npos);
  CHECK(nlohmann::json::parse(run("recommend --model llama-3-8b --task inference --family p5 --format json").out)["recommendation"]["first_visible_s"].is_null());
  // $/M OUT is per visible token; an API bills the hidden ones too: the price per generated token beside it.
  const auto priced = nlohmann::json::parse(json.out)["recommendation"];
  const double multiplier = nlohmann::json::parse(json.out)["workload"]["test_time_multiplier"].get<double>();
  CHECK(multiplier == Approx((256.0 + 2000) / 256));
  CHECK(priced["usd_per_million_generated_tokens"].get<double>() ==
        Approx(priced["costs"]["usd_per_million_output_tokens"].get<double>() / multiplier).epsilon(1e-4));
  CHECK(sim.out.find("  per generated token: $") != std::string::npos);
  CHECK(nlohmann::json::parse(run("recommend --model llama-3-8b --task inference --family p5 --format json").out)["recommendation"]["usd_per_million_generated_tokens"].is_null());
}

TEST_CASE("cli: a serving pick that runs its weights weight-only says so") {
  // A100 has no fp8 tensor cores: fp8 weights are dequantised for bf16 math.
  Run r = run("recommend --model llama-3-8b --task inference --weights fp8 --family p4d");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("weights: fp8 in memory, dequantised to bf16 for the math") != std::string::npos);
  r = run("recommend --model llama-3-8b --task inference --weights fp8 --family p5");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("dequantised") == std::string::npos);  // H100 runs fp8 math
}

TEST_CASE("cli: CSV and JSON rows mark the pick, whatever the order") {
  for (const std::string cmd : {"recommend --params 13B --task lora --sort-by cost --top 100", "recommend --params 7B --task inference --sort-by time --top 100"}) {
    Run j = run(cmd + " --format json");
    REQUIRE(j.code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    int picks = 0;
    for (const auto& row : doc["options"])
      if (row["pick"].get<bool>()) {
        ++picks;
        CHECK(row["instance"] == doc["recommendation"]["instance"]);
      }
    CHECK(picks == 1);
    Run csv = run(cmd + " --format csv");
    REQUIRE(csv.code == 0);
    CHECK(csv.out.substr(0, csv.out.find('\n')).find(",pick") != std::string::npos);
  }
}

TEST_CASE("cli: a pick beyond on demand is headlined in Capacity Blocks, rows carry the channel in JSON and CSV, spot shows its zones") {
  const Run text = run("recommend --params 70B --task pretrain --tokens 1T --deadline 30d");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("in Capacity Blocks\n") != std::string::npos);
  CHECK(text.out.find(" VIA") != std::string::npos);
  const auto j = nlohmann::json::parse(run("recommend --params 70B --task pretrain --tokens 1T --deadline 30d --format json").out);
  CHECK(j["recommendation"]["channel"] == "capacity-block");
  CHECK(j["recommendation"]["costs"]["ranked_usd"] == j["recommendation"]["channel_cost_usd"]);
  for (const auto& row : j["options"]) {
    CHECK(row.contains("channel"));
    CHECK(row.contains("channel_cost_usd"));
    if (row["channel"] == "capacity-block" && !row["channel_rate_unknown"].get<bool>())
      CHECK(row["ranked_cost_usd"] == row["channel_cost_usd"]);
  }
  const Run csv = run("recommend --params 70B --task pretrain --tokens 1T --deadline 30d --format csv");
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  for (const char* column : {"ranked_cost_usd", "channel", "channel_cost_usd", "channel_rate_unknown", "channel_note", "spot_offered"})
    CHECK(header.find(column) != std::string::npos);
  // The spot rate is the typical zone's, with the zones' range beside it.
  const auto cost = nlohmann::json::parse(run("cost --model llama-3-8b --task lora --family p5 --exclude p5.4xlarge --format json").out);
  const auto& row = cost["options"][0];
  REQUIRE(row["instance"] == "p5.48xlarge");
  CHECK(row["spot_usd_per_hour"].get<double>() ==
        Approx((row["spot_lowest_zone_usd_per_hour"].get<double>() + row["spot_highest_zone_usd_per_hour"].get<double>()) / 2));
}

TEST_CASE("cli: a baseline of schema version 1 still compares, one of a version to come is refused") {
  test_files::TempDir t("gpuadvisor_schema_versions");
  auto base = nlohmann::json::parse(run("recommend --params 13B --task lora --format json").out);
  REQUIRE(base["schema_version"] == 2);
  base["schema_version"] = 1;
  std::ofstream(t.file("v1.json")) << base.dump();
  CHECK(run("recommend --params 13B --task lora --compare-to " + t.file("v1.json")).code == 0);
  base["schema_version"] = 3;
  std::ofstream(t.file("v3.json")) << base.dump();
  const Run v3 = run("recommend --params 13B --task lora --compare-to " + t.file("v3.json"));
  CHECK(v3.code == 2);
  CHECK(v3.err.find("schema_version 3") != std::string::npos);
}

TEST_CASE("cli: a reservation under a pricing with no rate exits 3 with the reason, never on-demand figures") {
  const Run r = run("cost --instance p5.48xlarge --count 2 --hours 100 --pricing savings-1y");
  CHECK(r.code == 3);
  CHECK(r.out.empty());
  CHECK(r.err.find("savings-1y") != std::string::npos);
  CHECK(r.err.find("prices import") != std::string::npos);
}

TEST_CASE("cli: --quota-vcpus leaves out what the account cannot start on demand and names the quota to raise") {
  // p=192: one p5.48xlarge (192 vCPUs) on demand; two need a Capacity Block; g=0: no G instance on demand.
  const auto j = nlohmann::json::parse(run("recommend --params 13B --task lora --all-counts --top 500 --quota-vcpus p=192,g=0 --format json").out);
  bool saw_block = false;
  for (const auto& row : j["options"]) {
    INFO(row["instance"] << " x " << row["count"]);
    CHECK(row["instance"].get<std::string>().rfind("g", 0) != 0);  // G and VT quota 0: none on demand, no blocks sold
    if (row["instance"] == "p5.48xlarge" && row["count"].get<int>() == 2) {
      CHECK(row["channel"] == "capacity-block");
      saw_block = true;
    }
    if (row["instance"] == "p5.48xlarge" && row["count"].get<int>() == 1) CHECK(row["channel"] == "on-demand");
  }
  CHECK(saw_block);
  // A pick in a Capacity Block because the quota leaves it out on demand says so (not "cost less in Capacity Blocks").
  const auto none = nlohmann::json::parse(run("recommend --params 13B --task lora --quota-vcpus 0 --format json").out);
  REQUIRE(none["recommendation"]["channel"] == "capacity-block");
  const std::string note = none["recommendation"]["capacity"]["note"].get<std::string>();
  CHECK(note.find("on demand needs ") != std::string::npos);
  CHECK(note.find("--quota-vcpus does not limit Capacity Blocks: buy 1 Capacity Block") != std::string::npos);
  CHECK(note.find("cost less") == std::string::npos);
  bool named = false;
  for (const auto& x : j["cannot_run"])
    named = named || x["reason"].get<std::string>().find("Running On-Demand G and VT instances' (L-DB2E81BA)") != std::string::npos;
  CHECK(named);
  // A reservation past the quota of a type Capacity Blocks do not sell: exit 3 naming the quota.
  const Run g = run("cost --instance g6e.48xlarge --count 2 --hours 10 --quota-vcpus g=192");
  CHECK(g.code == 3);
  CHECK(g.err.find("needs 384 vCPUs") != std::string::npos);
  CHECK(run("recommend --params 13B --task lora --quota-vcpus x=5").code == 2);
  CHECK(run("recommend --params 13B --task lora --quota-vcpus p=-1").code == 2);
  CHECK(run("recommend --params 13B --task lora --quota-vcpus p=1,p=2").code == 2);
  CHECK(run("recommend --params 7B --task inference --quota-vcpus 384").code == 2);  // services: refused, not ignored
}

TEST_CASE("cli: from a hostile review: spot above its count says why, a spot pick's Kubernetes nodes are spot, an unknown EFA count says so") {
  const Run spot = run("cost --instance p5.48xlarge --count 300 --hours 100 --pricing spot");
  CHECK(spot.code == 3);
  CHECK(spot.err.find("not offered on spot") != std::string::npos);
  test_files::TempDir t("gpuadvisor_spot_emit");
  REQUIRE(run("recommend --params 70B --task pretrain --tokens 200B --pricing spot --emit k8s --emit-dir " + t.file("k8s")).code == 0);
  std::ifstream job(t.file("k8s") + "/pytorchjob.yaml");
  const std::string text((std::istreambuf_iterator<char>(job)), std::istreambuf_iterator<char>());
  CHECK(text.find("karpenter.sh/capacity-type: spot") != std::string::npos);
  // p6-b300's EFA interface count is not in the catalog: the files say so rather than expecting 1 as if known.
  REQUIRE(run("recommend --params 70B --task pretrain --tokens 1T --deadline 30d --exclude trn1 --emit skypilot --emit-dir " + t.file("sky")).code == 0);
  std::ifstream task(t.file("sky") + "/task.yaml");
  const std::string sky((std::istreambuf_iterator<char>(task)), std::istreambuf_iterator<char>());
  if (sky.find("p6-b300") != std::string::npos) CHECK(sky.find("interface count is not in") != std::string::npos);
}

TEST_CASE("cli: the JSON request names the pick rule that decided and the deadline") {
  auto request = [](const std::string& args) {
    return nlohmann::json::parse(run("recommend --params 8B --task pretrain --tokens 1T --format json " + args).out)["request"];
  };
  CHECK(request("")["pick_rule"] == "value-of-time");
  CHECK(request("")["deadline_hours"].is_null());
  CHECK(request("--deadline 14d")["pick_rule"] == "deadline");
  CHECK(request("--deadline 14d")["deadline_hours"] == 336);
  CHECK(request("--deadline 14d --cost-slack 0.2")["pick_rule"] == "value-of-time");
  CHECK(request("--value-of-time 0")["pick_rule"] == "slack");
}

TEST_CASE("cli: a spot run that stays cheaper at any interruption rate reads 'spot always', not 'never'") {
  // Two p5.48xlarge at most: above the usual spot count spot is not offered at all.
  Run r = run("cost --model llama-3-8b --task pretrain --tokens 10B --family p5 --all-counts");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("spot always") != std::string::npos);
  CHECK(r.out.find(" never\n") == std::string::npos);
  // For programs: 1 (cheaper at any rate up to 100% a month), apart from an unknown range (null).
  const auto rows = nlohmann::json::parse(run("cost --model llama-3-8b --task pretrain --tokens 10B --family p5 --all-counts --format json").out)["options"];
  bool always = false;
  for (const auto& row : rows)
    if (row["instance"] == "p5.48xlarge" && row["spot_offered"] == true) always = always || row["break_even_monthly_interruption"] == 1.0;
  CHECK(always);
  for (const auto& row : rows)
    if (row["spot_expected_cost_usd"].is_null()) CHECK(row["break_even_monthly_interruption"].is_null());
}

TEST_CASE("cli: the Chinchilla token default is written in T past a trillion") {
  Run r = run("estimate --instance p5.48xlarge --count 8 --model llama-3-70b --task pretrain");
  CHECK(r.err.find("1.41T training tokens: 20 tokens per parameter") != std::string::npos);
  CHECK(r.err.find("e+03B") == std::string::npos);
  r = run("estimate --instance p5.48xlarge --model llama-3-8b --task pretrain");
  CHECK(r.err.find("161B training tokens") != std::string::npos);
}

TEST_CASE("cli: a misspelt flag gets the nearest flag of its command") {
  Run r = run("recommend --parms 7B");
  CHECK(r.code == 2);
  CHECK(r.err.find("--parms: did you mean --params?") != std::string::npos);
  r = run("prices fetch --regoin us-east-1");
  CHECK(r.code == 2);
  CHECK(r.err.find("--regoin: did you mean --region?") != std::string::npos);
  r = run("recommend --xyzzy 3");
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean") == std::string::npos);  // nothing close: no guess
  // A missing required option does not hide the unknown flag that caused it (hostile review).
  r = run("estimate --bogus");
  CHECK(r.code == 2);
  CHECK(r.err.find("--bogus is not an option of `estimate`") != std::string::npos);
  r = run("estimate --instnace p5.48xlarge --params 7B");
  CHECK(r.err.find("--instnace: did you mean --instance?") != std::string::npos);
  CHECK(r.err.find("--instnace is not an option") != std::string::npos);
  r = run("recommend --params 7B --task lora --deadline 2 days");  // the shell split the duration
  CHECK(r.code == 2);
  CHECK(r.err.find("write a duration as one word: '2days'") != std::string::npos);
  r = run("recommend --parms 7B --format json");
  CHECK(nlohmann::json::parse(r.out)["error"]["message"].get<std::string>().find("did you mean --params?") != std::string::npos);
  r = run("recommend --model llama-3-8b --task inference --requests-per-second 0");
  CHECK(r.code == 2);
  CHECK(r.err.find("--requests-per-second: 0 must be greater than 0") != std::string::npos);
}

TEST_CASE("cli: estimate --task inference JSON keys that scripts rely on") {
  Run r = run("estimate --task inference --instance p5.48xlarge --model llama-3-70b --weights fp8 --requests-per-second 4 --format json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"ttft_s", "tpot_s", "output_tokens_per_second", "latency_s", "tokens_per_second_per_user", "utilisation"})
    CHECK(j["inference"][k].is_number());
  CHECK(j["inference"]["max_batch"].is_number_integer());
  CHECK(j["inference"]["replicas"].get<int>() >= 1);
  CHECK(j["cost"]["usd_per_million_output_tokens"].is_number());
  CHECK(j["cost"]["on_demand_usd_per_month"].is_number());
  CHECK(j["precision"]["compute"] == "fp8");
  CHECK(j["workload"]["task"] == "inference");
  CHECK(j["software"] == "CUDA");
  Run neuron = run("estimate --task inference --instance inf2.xlarge --model llama-2-7b --mode offline --format json");
  REQUIRE(neuron.code == 0);
  CHECK(nlohmann::json::parse(neuron.out)["software"] == "Neuron SDK");
}

TEST_CASE("cli: recommend --task inference ranks by cost and reports the test-time multiplier") {
  Run r = run("recommend --task inference --model llama-3-8b --samples 4 --reasoning-tokens 1000 --output-tokens 250 --format json "
              "--sort-by cost-per-token");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["workload"]["test_time_multiplier"] == 20);
  CHECK(j["request"]["sort_by"] == "cost-per-token");
  REQUIRE(j["options"].size() >= 2);
  double last = 0;
  for (const auto& o : j["options"]) {
    if (o["usd_per_million_output_tokens"].is_null()) continue;
    CHECK(o["usd_per_million_output_tokens"].get<double>() >= last);
    last = o["usd_per_million_output_tokens"].get<double>();
  }
  CHECK(r.err.find("20.00x") != std::string::npos);
}

TEST_CASE("cli: an impossible latency target exits 3 and names the best achievable figure") {
  Run r = run("recommend --task inference --model llama-2-70b --max-tpot 1ms");
  CHECK(r.code == 3);
  CHECK(r.err.find("reaches") != std::string::npos);
  CHECK(r.err.find("ms per output token") != std::string::npos);
}

TEST_CASE("cli: inference input errors exit 2") {
  const char* bad[] = {
      "recommend --task inference --model llama-2-7b --weights int3",
      "recommend --task inference --model llama-2-7b --kv-cache int8",
      "recommend --task inference --model llama-2-7b --mode batchy",
      "recommend --task inference --model llama-2-7b --max-tpot 50",
      "recommend --task inference --model llama-2-7b --max-ttft -1s",
      "recommend --task inference --model llama-2-7b --max-tpot 50ms --min-tokens-per-second-per-user 20",
      "recommend --task inference --model llama-2-7b --requests-per-second 0",
      "recommend --task inference --model llama-2-7b --requests-per-second nan",
      "recommend --task inference --model llama-2-7b --requests-per-second 1 --tokens-per-day 1B",
      "recommend --task inference --model llama-2-7b --prompt-tokens 1000 --prompt-tokens-p95 500",
      "recommend --task inference --model llama-2-7b --samples 0",
      "recommend --task inference --model llama-2-7b --output-tokens 1e400",
      "recommend --task inference --model llama-2-7b --concurrency -3",
      "recommend --task inference --model llama-2-7b --tokens 1B",
      "recommend --task inference --model llama-2-7b --deadline 3d",
      "recommend --task pretrain --model llama-2-7b --prompt-tokens 100",
      "estimate --task inference --model llama-2-7b --instance p5.48xlarge --count 2",
      "estimate --task inference --model llama-2-7b --instance p5.48xlarge --tp 3",
      "estimate --task lora --model llama-2-7b --instance p5.48xlarge --batch 8",
      "recommend --task inferenze --model llama-2-7b",
  };
  for (const char* args : bad) {
    Run r = run(args);
    INFO(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("error") != std::string::npos);
  }
}

TEST_CASE("cli: bad files and repeated or empty flags exit 2 with a clear message") {
  // A directory, a file over the size limit, deep nesting, an unknown top-level key.
  Run dir = run("--catalog . catalog");
  CHECK(dir.code == 2);
  CHECK(dir.err.find("is a directory") != std::string::npos);
  const std::string big = "gpuadvisor_test_big_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream f(big, std::ios::binary);
    f << "{";
    f.seekp(33'000'000);
    f << "}";
  }
  Run large = run("--catalog " + big + " catalog");
  std::remove(big.c_str());
  CHECK(large.code == 2);
  CHECK(large.err.find("larger than") != std::string::npos);
  const std::string deep = "gpuadvisor_test_deep_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream f(deep);
    f << std::string(100000, '[') << std::string(100000, ']');
  }
  Run nested = run("--catalog " + deep + " catalog");
  Run nested_config = run("recommend --task lora --model-config " + deep);
  std::remove(deep.c_str());
  CHECK(nested.code == 2);
  CHECK(nested_config.code == 2);
  Run unknown_key = run("--catalog " + data("bad_unknown_top_key.json") + " catalog");
  CHECK(unknown_key.code == 2);
  CHECK(unknown_key.err.find("unknown top-level key") != std::string::npos);
  Run twice = run("recommend --params 13B --params 7B --task lora");
  CHECK(twice.code == 2);
  Run empty = run("recommend --params '' --task lora");
  CHECK(empty.code == 2);
  CHECK(empty.err.find("--params: empty value") != std::string::npos);
  CHECK(run("recommend --params 13B --task lora --deadline ''").code == 2);
  CHECK(run("recommend --params 100T --task lora --max-instances 1").code == 3);  // huge but valid: nothing fits, no crash
}

TEST_CASE("cli: cost prints the finance table in csv and json, and refuses bad storage") {
  Run csv = run("cost --model llama-3-8b --task pretrain --tokens 50B --family p5 --format csv");
  REQUIRE(csv.code == 0);
  CHECK(csv.out.rfind("instance,count,hours,ranked_cost_usd,channel,setup_hours,on_demand_usd_per_hour,on_demand_cost_usd", 0) == 0);
  CHECK(csv.out.find("channel_cost_usd,channel_rate_unknown,channel_note,spot_offered") != std::string::npos);
  CHECK(csv.out.find("spot_expected_cost_usd") != std::string::npos);
  CHECK(csv.out.find("break_even_monthly_interruption") != std::string::npos);
  Run json = run("cost --model llama-3-8b --task pretrain --tokens 50B --family p5 --format json");
  REQUIRE(json.code == 0);
  auto j = nlohmann::json::parse(json.out);
  CHECK(j["command"] == "cost");
  CHECK(j["currency"] == "USD");
  CHECK(j["options"][0]["on_demand_cost_usd"].is_number());
  const Run floppy = run("cost --model llama-3-8b --task pretrain --checkpoint-storage floppy");
  CHECK(floppy.code == 2);
  CHECK(floppy.err.find("is not one of auto, s3, fsx-lustre, efs, local-nvme") != std::string::npos);
  // `auto`, the default, may be given by name; it is S3 on any count and task, and what was chosen stays chosen.
  const std::string lora = "recommend --params 13B --task lora --format json";
  CHECK(run(lora + " --checkpoint-storage auto").out == run(lora).out);
  using gpuadvisor::CheckpointStorage;
  for (int instances : {1, 2, 5, 128})
    for (auto task : {gpuadvisor::Task::pretrain, gpuadvisor::Task::finetune, gpuadvisor::Task::lora})
      CHECK(gpuadvisor::storage_for(CheckpointStorage::automatic, instances, task) == CheckpointStorage::s3);
  CHECK(gpuadvisor::checkpoint_write_gb_per_s(CheckpointStorage::automatic, 128, gpuadvisor::Task::pretrain) == 128.0);
  CHECK(gpuadvisor::storage_for(CheckpointStorage::efs, 1, gpuadvisor::Task::pretrain) == CheckpointStorage::efs);
  CHECK(gpuadvisor::storage_for(CheckpointStorage::fsx_lustre, 4, gpuadvisor::Task::lora) == CheckpointStorage::fsx_lustre);
  CHECK(gpuadvisor::storage_for(CheckpointStorage::fsx_lustre, 128, gpuadvisor::Task::pretrain) == CheckpointStorage::fsx_lustre);
  CHECK(run("cost --model llama-3-8b --task pretrain --restart-minutes -5").code == 2);
  CHECK(run("cost --model llama-3-8b --task pretrain --family z9").code == 2);  // checked as in recommend
  CHECK(run("estimate --instance p5.48xlarge --model llama-3-8b --pp 1 --vp 2").code == 2);
  CHECK(run("estimate --instance p5.48xlarge --model llama-3-8b --vp -1").code == 2);
  CHECK(run("calibrate --output /nonexistent-dir/fit.json").code == 2);
  CHECK(run("cost --model llama-3-8b --task pretrain --exclude z9").code == 2);
}

TEST_CASE("cli: cost --task inference gives the finance table of a service") {
  Run r = run("cost --task inference --model llama-3-8b --requests-per-second 20 --format csv");
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("instance,layout,replicas,instances,utilisation,on_demand_usd_per_hour,service_on_demand_usd_per_hour,on_demand_usd_per_month,spot_usd_per_month", 0) == 0);
  CHECK(r.out.find("savings_1y_usd_per_month") != std::string::npos);
  CHECK(run("cost --task inference --model llama-3-8b --instance p5.48xlarge").code == 2);
  CHECK(run("cost --task inference --model llama-3-8b --tokens 1B").code == 2);
}

TEST_CASE("cli: prices import writes an overlay that the catalog accepts, and never half-writes") {
  const std::string out = "gpuadvisor_test_overlay_" + std::to_string(getpid()) + ".json";
  Run r = run("prices import --offer-file " + data("prices/offer_ec2.json") + " --savings-plans-file " + data("prices/savings_plans.json") +
              " --spot-history " + data("prices/spot_history.json") + " --spot-advisor " + data("prices/spot_advisor.json") + " --output " + out +
              " --as-of 2026-11-20 --format csv");
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("file,kind,outcome,detail,count", 0) == 0);
  CHECK(r.out.find("Capacity Block") != std::string::npos);
  CHECK(run("catalog validate --overlay " + out).code == 0);
  // With commitment rates imported, cost's notes no longer say the commitment columns are unknown (a trial found no reason given).
  const std::string no_rates = "The catalog has no Savings Plan or Reserved Instance rate in us-east-1, so the commitment columns (--wide) are unknown";
  CHECK(run("cost --model llama-3-8b --task pretrain --tokens 50B --family p5").out.find(no_rates) != std::string::npos);
  // A service's commitment columns show without --wide, and the note names them as shown (a trial read "(--wide)" beside columns in view).
  CHECK(run("cost --model llama-3-8b --task inference --requests-per-second 2")
            .out.find("rate in us-east-1, so the 1Y/MO and 3Y/MO columns are unknown: `gpuadvisor prices fetch` (AWS's public price files") !=
        std::string::npos);
  CHECK(run("--catalog-add " + out + " cost --model llama-3-8b --task pretrain --tokens 50B --family p5").out.find(no_rates) == std::string::npos);
  Run cost = run("--catalog-add " + out + " cost --model llama-3-8b --task pretrain --tokens 50B --family p5 --pricing savings-1y --format json");
  REQUIRE(cost.code == 0);
  auto j = nlohmann::json::parse(cost.out);
  CHECK(j["options"][0]["savings_1y_usd_per_hour"] == 35.0);
  CHECK(j["options"][0]["savings_1y_break_even_utilisation"].get<double>() == Approx(35.0 / 54.0).epsilon(1e-4));
  // The commitment channel names the instrument, term, payment option and upfront cash.
  CHECK(j["recommendation"]["channel"] == "savings-1y");
  const std::string note = j["recommendation"]["channel_note"];
  CHECK(note.find("Standard Reserved Instances, 1 year, all upfront") != std::string::npos);
  CHECK(note.find("upfront for") != std::string::npos);
  // A truncated file: exit 2, the position named, and the previous output left whole.
  Run bad = run("prices import --offer-file " + data("prices/offer_truncated.json") + " --output " + out);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("not valid JSON at byte") != std::string::npos);
  CHECK(run("catalog validate --overlay " + out).code == 0);
  std::remove(out.c_str());
  CHECK(run("prices import --output " + out).code == 2);  // no input files
  // A price dated after today would make every later command refuse the overlay: the import is refused, nothing written.
  Run ahead = run("prices import --spot-advisor " + data("prices/spot_advisor.json") + " --as-of 2026-12-09 --output " + out);
  CHECK(ahead.code == 2);
  CHECK(ahead.err.find("the imported prices would be refused by every command: ") != std::string::npos);
  CHECK(ahead.err.find("is in the future (today is 2026-12-01)") != std::string::npos);
  CHECK(!std::ifstream(out).good());
  const std::string future_spot = "gpuadvisor_test_future_spot_" + std::to_string(getpid()) + ".json";
  std::ofstream(future_spot) << R"({"SpotPriceHistory": [{"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", )"
                                R"("ProductDescription": "Linux/UNIX", "SpotPrice": "10.0", "Timestamp": "2999-11-01T00:00:00Z"}]})";
  CHECK(run("prices import --spot-history " + future_spot + " --output " + out).code == 2);
  CHECK(!std::ifstream(out).good());
  // Two prices for one zone at one instant are ambiguous, as two on-demand rates are; the last one was taken silently.
  std::ofstream(future_spot) << R"({"SpotPriceHistory": [)"
                                R"({"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX", "SpotPrice": "20.0", "Timestamp": "2026-11-01T00:00:00Z"},)"
                                R"({"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "ProductDescription": "Linux/UNIX", "SpotPrice": "40.0", "Timestamp": "2026-11-01T00:00:00Z"}]})";
  Run ambiguous = run("prices import --spot-history " + future_spot + " --output " + out);
  CHECK(ambiguous.code == 2);
  CHECK(ambiguous.err.find("a second spot price for p5.48xlarge in us-east-1a at 2026-11-01T00:00:00Z ($40 against $20); the file is ambiguous") !=
        std::string::npos);
  // The overlay is never written over a file it reads.
  const std::string copy = "gpuadvisor_test_offer_copy_" + std::to_string(getpid()) + ".json";
  std::ofstream(copy) << test_files::slurp(data("prices/offer_ec2.json"));
  Run over = run("prices import --offer-file " + copy + " --output " + copy);
  CHECK(over.code == 2);
  CHECK(over.err.find("it is the input file") != std::string::npos);
  CHECK(test_files::slurp(copy) == test_files::slurp(data("prices/offer_ec2.json")));
  std::remove(copy.c_str());
  std::remove(future_spot.c_str());
  CHECK(run("prices import --spot-advisor " + data("prices/spot_advisor.json") + " --as-of 2026-12-02 --output " + out).code == 0);  // a day's grace
  std::remove(out.c_str());
  CHECK(run("prices import --spot-history " + data("prices/spot_history.json") + " --output /nonexistent-dir/x.json").code == 2);
  CHECK(run("cost --model llama-3-8b --task pretrain --pricing savings-5y").code == 2);
  CHECK(run("--discount 150% catalog").code == 2);
  // A bare number is a fraction: "10" meant as ten percent is told how to write it.
  Run bare = run("--discount p5=10 catalog");
  CHECK(bare.code == 2);
  CHECK(bare.err.find("for 10 percent write 'p5=10%'") != std::string::npos);
  CHECK(run("--discount 150 catalog").err.find("'150' is outside [0, 1] (a fraction: 0.15 is 15% off)") != std::string::npos);
  CHECK(run("--discount 0.1 catalog").code == 0);
  Run twice = run("--discount p5=20% --discount p5=10% catalog");  // one would silently override the other
  CHECK(twice.code == 2);
  CHECK(twice.err.find("'p5=10%' gives family 'p5' a second discount") != std::string::npos);
  CHECK(run("--discount 10% --discount 15% catalog").code == 2);
  CHECK(run("--discount 10% --discount p5=20% catalog").code == 0);  // a family's own beside the catch-all
  // A discount is said wherever the prices' origin is: the footer and JSON catalog.prices_origin.
  Run discounted = run("--discount p5=20% cost --instance p5.48xlarge --count 4 --hours 100");
  CHECK(discounted.out.find("with --discount p5=20% off on-demand and commitment rates (spot and Capacity Block rates at list)") != std::string::npos);
  const Run too_much = run("--discount 95.5% catalog");
  CHECK(too_much.code == 2);
  CHECK(too_much.err.find("'95.5%' is more than 95% off: no negotiated rate is") != std::string::npos);
  CHECK(nlohmann::json::parse(run("--discount 15% cost --instance p5.48xlarge --count 4 --hours 100 --format json").out)["catalog"]["prices_origin"]
            .get<std::string>()
            .find("--discount 15%") != std::string::npos);
}

TEST_CASE("cli: --chart writes an SVG for recommend, cost and inference") {
  const std::string svg = "gpuadvisor_test_chart_" + std::to_string(getpid()) + ".svg";
  for (const std::string args : {"recommend --model llama-3-8b --task lora --family p5 --family g6e", "cost --model llama-3-8b --task lora --family p5",
                                 "recommend --model llama-3-8b --task inference --family g6e"}) {
    Run r = run(args + " --chart " + svg);
    INFO(args);
    REQUIRE(r.code == 0);
    std::ifstream f(svg);
    std::stringstream ss;
    ss << f.rdbuf();
    CHECK(ss.str().find("<svg") != std::string::npos);
    CHECK(ss.str().find("class=\"pareto\"") != std::string::npos);
    CHECK(ss.str().find("on-demand") != std::string::npos);
    CHECK(ss.str().find("spot") != std::string::npos);
    std::remove(svg.c_str());
  }
  {
    // The fastest within the cost ceiling is named as such: a trial read "fastest" beside a point five times slower than one drawn.
    REQUIRE(run("recommend --model llama-3.1-8b --task finetune --tokens 20B --chart " + svg).code == 0);
    std::ifstream f(svg);
    std::stringstream ss;
    ss << f.rdbuf();
    CHECK(ss.str().find(">fastest within 2x the cheapest price<") != std::string::npos);
    CHECK(ss.str().find(">fastest<") == std::string::npos);
    std::remove(svg.c_str());
  }
  CHECK(run("recommend --model llama-3-8b --task lora --chart /nonexistent-dir/c.svg").code == 2);
  // A name for another format is refused before any work: the file would be SVG whatever its name.
  const std::string png = "gpuadvisor_test_chart_" + std::to_string(getpid()) + ".png";
  Run refused = run("cost --instance p5.48xlarge --count 4 --hours 100 --chart " + png);
  CHECK(refused.code == 2);
  CHECK(refused.err.find("charts are SVG") != std::string::npos);
  CHECK_FALSE(std::ifstream(png).good());
  CHECK(run("cost --instance p5.48xlarge --count 4 --hours 100 --chart Upper.SVG").code == 0);
  std::remove("Upper.SVG");
}

TEST_CASE("cli: calibrate --leave-one-family-out: families held out, exclusive with sources, --jobs needs a fold") {
  Run f = run("calibrate --leave-one-family-out --format json");
  REQUIRE(f.code == 0);
  auto j = nlohmann::json::parse(f.out);
  CHECK(j["leave_one_family_out_summary"]["cases"].get<int>() > 300);
  bool nvidia = false;
  for (const auto& row : j["leave_one_family_out"]) nvidia = nvidia || row["family"] == "NVIDIA";
  CHECK(nvidia);
  CHECK(j["leave_one_family_out_cases"][0].contains("family"));
  CHECK(run("calibrate --leave-one-family-out --leave-one-source-out").code == 2);
  Run jobs = run("calibrate --jobs 2");
  CHECK(jobs.code == 2);
  CHECK(jobs.err.find("--jobs needs --leave-one-source-out or --leave-one-family-out") != std::string::npos);
  CHECK(run("calibrate --leave-one-family-out --jobs 0").code == 2);
  // --output fits all the cases: not with a fold (it was silently ignored).
  CHECK(run("calibrate --leave-one-family-out --output /tmp/never-written-" + std::to_string(getpid()) + ".json").code == 2);
  // Nothing to fold is an error, so no empty bands file is written.
  const std::string empty = "gpuadvisor_test_empty_cases_" + std::to_string(getpid()) + ".json";
  const std::string bands = "gpuadvisor_test_bands_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream f(empty);
    f << R"({"cases": []})";
  }
  Run none = run("calibrate --measurements " + empty + " --leave-one-family-out --write-accuracy " + bands);
  CHECK(none.code == 2);
  CHECK(none.err.find("the 'cases' list is empty") != std::string::npos);
  CHECK_FALSE(std::ifstream(bands).good());
  std::remove(empty.c_str());
}

TEST_CASE("cli: validate and calibrate") {
  Run v = run("validate --format json");
  REQUIRE(v.code == 0);
  auto j = nlohmann::json::parse(v.out);
  CHECK(j["command"] == "validate");
  CHECK(j["cases_total"].get<int>() >= 80);
  CHECK(j["summary"][0]["group"] == "all");
  CHECK(j["summary"][0]["median_abs_error"].is_number());
  CHECK(j["cases"][0]["error"].is_number());
  Run md = run("validate --format markdown");
  CHECK(md.code == 0);
  CHECK(md.out.find("| ID |") != std::string::npos);
  const std::string cases = "gpuadvisor_test_cases_" + std::to_string(getpid()) + ".json";
  const std::string overlay = "gpuadvisor_test_fit_" + std::to_string(getpid()) + ".json";
  {
    std::ofstream f(cases);
    f << R"({"cases": [
      {"id": "A", "task": "pretrain", "model": "llama-3-8b", "system": "p5.48xlarge", "instances": 1, "precision": "bf16", "seq_len": 8192,
       "global_batch": 64, "metric": "tokens_per_second_per_gpu", "measured": 5000, "source": "our run", "source_key": "US"},
      {"id": "B", "task": "pretrain", "model": "llama-3-8b", "system": "p5.48xlarge", "instances": 2, "precision": "bf16", "seq_len": 8192,
       "global_batch": 128, "metric": "tokens_per_second_per_gpu", "measured": 4800, "source": "our run", "source_key": "US"}]})";
  }
  Run c = run("calibrate --measurements " + cases + " --output " + overlay);
  CHECK(c.code == 0);
  CHECK(c.err.find("median |error|") != std::string::npos);
  CHECK(run("catalog validate --overlay " + overlay).code == 0);
  Run with = run("--catalog-add " + overlay + " validate --cases " + cases + " --format json");
  REQUIRE(with.code == 0);
  Run without = run("validate --cases " + cases + " --format json");
  REQUIRE(without.code == 0);
  // The fit moves toward the runs (two cases: the prior still pulls, docs/validation.md §Fitted parameters;
  // these runs sit 37% below the catalog's prediction, and the prior holds back part of the way).
  const double before = nlohmann::json::parse(without.out)["summary"][0]["median_abs_error"].get<double>();
  const double after = nlohmann::json::parse(with.out)["summary"][0]["median_abs_error"].get<double>();
  CHECK(after < before * 0.6);
  std::remove(overlay.c_str());
  {
    // A source key with a quote and a backslash still gives valid JSON.
    std::ofstream f(cases);
    f << R"({"cases": [{"id": "Q", "task": "pretrain", "model": "llama-3-8b", "system": "p5.48xlarge", "precision": "bf16", "seq_len": 8192,
       "global_batch": 64, "metric": "tokens_per_second_per_gpu", "measured": 5000, "source": "x", "source_key": "A\"B\\C"}]})";
  }
  Run quoted = run("validate --cases " + cases + " --format json");
  REQUIRE(quoted.code == 0);
  CHECK(nlohmann::json::parse(quoted.out)["summary"][1]["group"] == "task: pretrain");
  CHECK(nlohmann::json::parse(quoted.out)["summary"].back()["group"] == "source: A\"B\\C");
  {
    std::ofstream f(cases);
    f << R"({"cases": [{"id": "Z", "task": "pretrain"}]})";
  }
  Run bad = run("validate --cases " + cases);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("case Z") != std::string::npos);
  {
    // An integer above the signed range is refused as written, not read as -1.
    std::ofstream f(cases);
    f << R"({"cases": [{"id": "U", "task": "pretrain", "model": "llama-3-8b", "system": "p5.48xlarge", "instances": 18446744073709551615,
       "precision": "bf16", "seq_len": 8192, "global_batch": 64, "metric": "tokens_per_second_per_gpu", "measured": 5000, "source": "x",
       "source_key": "X"}]})";
  }
  Run huge = run("validate --cases " + cases);
  std::remove(cases.c_str());
  CHECK(huge.code == 2);
  CHECK(huge.err.find("18446744073709551615 is outside [1, 1000000]") != std::string::npos);
  CHECK(run("validate --cases /nonexistent.json").code == 2);
}

TEST_CASE("cli: a service sized without a load says when another instance is cheaper per token") {
  const auto j = nlohmann::json::parse(run("recommend --params 7B --task inference --format json").out);
  const std::string why = j["recommendation"]["why"];
  const double pick_per_token = j["recommendation"]["costs"]["usd_per_million_output_tokens"];
  double lowest = pick_per_token;
  for (const auto& row : j["options"])
    if (row["usd_per_million_output_tokens"].is_number()) lowest = std::min(lowest, row["usd_per_million_output_tokens"].get<double>());
  REQUIRE(lowest < pick_per_token);  // the smallest bill is not the cheapest per token here
  CHECK(why.find("with no load given this is the smallest bill") != std::string::npos);
  // With a load the pick is sized for it, and the note is not given.
  CHECK(nlohmann::json::parse(run("recommend --params 7B --task inference --requests-per-second 5 --format json").out)["recommendation"]["why"]
            .get<std::string>().find("no load given") == std::string::npos);
}

TEST_CASE("cli: an offline pick busy part of the day gets the hours a batch job needs") {
  Run r = run("recommend --model gpt-oss-120b --task inference --mode offline --tokens-per-day 4B --format json");
  REQUIRE(r.code == 0);
  const auto pick = nlohmann::json::parse(r.out)["recommendation"];
  REQUIRE(pick["batch_hours_per_day"].is_number());
  CHECK(pick["batch_hours_per_day"].get<double>() == Approx(24 * pick["utilisation"].get<double>()));
  CHECK(pick["utilisation"].get<double>() < 0.9);
  CHECK(run("recommend --model gpt-oss-120b --task inference --mode offline --tokens-per-day 4B").out.find("  batch: ") != std::string::npos);
  // Online, or without a volume, there is none.
  CHECK(nlohmann::json::parse(run("recommend --model llama-3-8b --task inference --requests-per-second 5 --format json").out)["recommendation"]["batch_hours_per_day"].is_null());
}

TEST_CASE("cli: --pricing best serves a standing service on demand or under a commitment, never spot, and names which") {
  const std::string serve = "cost --model llama-3-70b --task inference --requests-per-second 20 ";
  const auto best = nlohmann::json::parse(run(serve + "--pricing best --format json").out);
  const auto on_demand = nlohmann::json::parse(run(serve + "--format json").out);
  REQUIRE(best["options"].size() > 0);
  for (const auto& o : best["options"]) CHECK(o["channel"] == "on-demand");  // no commitment rate is bundled
  // The same pick and month as on demand: spot (about a fifth of it for p6-b200) is not taken.
  CHECK(best["recommendation"]["instance"] == on_demand["recommendation"]["instance"]);
  CHECK(best["recommendation"]["costs"]["ranked_usd_per_month"] == on_demand["recommendation"]["costs"]["ranked_usd_per_month"]);
  // A commitment rate imported is taken where cheaper, and the headline names it.
  const std::string overlay = "gpuadvisor_test_serve_commit_" + std::to_string(getpid()) + ".json";
  std::ofstream(overlay) << R"({"instances": [{"name": "p6-b200.48xlarge", "prices": {"us-east-1": {"commitments": {
      "compute-savings-plan-3yr-no-upfront": {"usd_per_hour": 60.0, "as_of": "2026-11-01", "source": "TEAM"}}}}}],
      "sources": {"TEAM": {"title": "test", "url": "https://example.invalid"}}})";
  const Run committed = run("--catalog-add " + overlay + " " + serve + "--pricing best");
  const Run committed_csv = run("--catalog-add " + overlay + " " + serve + "--pricing best --format csv");
  std::remove(overlay.c_str());
  CHECK(committed.out.rfind("Recommended: 1 x p6-b200.48xlarge", 0) == 0);
  CHECK(committed.out.find("$43,200/month savings-3y") != std::string::npos);  // 60 x 720 h
  CHECK(committed_csv.out.find(",savings-3y,true") != std::string::npos);
}

TEST_CASE("cli: --pricing best takes spot only within the usual spot count, and a larger job the channel that delivers it") {
  const auto small = nlohmann::json::parse(run("recommend --params 13B --task lora --pricing best --format json").out);
  REQUIRE(small["recommendation"]["channel"] == "spot");
  CHECK(small["recommendation"]["count"].get<int>() <= 2);
  CHECK(small["recommendation"]["capacity"]["beyond_on_demand"] == false);  // spot's own advice, not a block to buy
  const auto big = nlohmann::json::parse(run("recommend --model llama-3-70b --task pretrain --tokens 200B --pricing best --all-counts --format json").out);
  for (const auto& row : big["options"]) {
    INFO(row["instance"] << " x " << row["count"]);
    if (row["instance"].get<std::string>().rfind("p5.48", 0) == 0 && row["count"].get<int>() > 2) {
      CHECK(row["channel"] != "spot");
      CHECK(row["spot_offered"] == false);
      CHECK(row["spot_cost_usd"].is_null());
    }
  }
}

TEST_CASE("cli: a pick that fills its memory names the first option with room") {
  // By money alone the pick is the option that fills its memory.
  Run r = run("recommend --params 13B --task finetune --value-of-time 0");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(run("recommend --params 13B --task finetune --value-of-time 0 --format json").out);
  REQUIRE(j["options"][0]["pick"] == true);
  REQUIRE(j["options"][0]["memory_percent"].get<double>() >= 0.97);  // a fraction, despite the name
  CHECK(r.out.find("  memory: 100% of each accelerator's under the model") != std::string::npos);
  CHECK(r.out.find("the first option with room is ") != std::string::npos);
  CHECK(run("recommend --params 13B --task lora").out.find("  memory: ") == std::string::npos);  // 93%: no line
}

TEST_CASE("cli: when no service meets the time to first token, the message says so, not the time per token") {
  Run r = run("recommend --model llama-3.1-70b --task inference --prompt-tokens 32768 --requests-per-second 1");
  CHECK(r.code == 3);
  CHECK(r.err.find("the time to first token is the limit") != std::string::npos);
  CHECK(r.err.find("ms per output token") == std::string::npos);
  Run tpot = run("recommend --model llama-3-70b --task inference --max-tpot 2ms");
  CHECK(tpot.code == 3);
  CHECK(tpot.err.find("ms per output token") != std::string::npos);
}

TEST_CASE("cli: a mean request longer than the model's context is refused, not priced") {
  Run prompt = run("recommend --model llama-3-8b --task inference --requests-per-second 5 --prompt-tokens 9000");
  CHECK(prompt.code == 2);
  CHECK(prompt.err.find("longer than llama-3-8b's context length of 8192 tokens") != std::string::npos);
  Run reasoning = run("estimate --model llama-3-8b --task inference --instance p5.4xlarge --reasoning-tokens 8000");
  CHECK(reasoning.code == 2);
  CHECK(reasoning.err.find("--reasoning-tokens") != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task inference --requests-per-second 5 --prompt-tokens 7000 --output-tokens 1000").code == 0);
  // Nor a p95 request past it (5% of requests rejected), nor a trace holding one (hostile review: both were simulated).
  Run p95 = run("recommend --model llama-3-8b --task inference --requests-per-second 4 --output-tokens 1000 --output-tokens-p95 7500");
  CHECK(p95.code == 2);
  CHECK(p95.err.find("p95 request") != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task inference --requests-per-second 4 --output-tokens-p95 3000").code == 0);
  test_files::TempDir dir("gpuadvisor_context_trace");
  test_files::write(dir.file("t.jsonl"), "{\"arrival_s\": 0, \"prompt_tokens\": 100, \"output_tokens\": 10}\n"
                                         "{\"arrival_s\": 1, \"prompt_tokens\": 9000, \"output_tokens\": 10}\n"
                                         "{\"arrival_s\": 2, \"prompt_tokens\": 100, \"output_tokens\": 10}\n");
  Run trace = run("recommend --model llama-3-8b --task inference --trace " + dir.file("t.jsonl"));
  CHECK(trace.code == 2);
  CHECK(trace.err.find("1 of its 3 requests are longer") != std::string::npos);
  CHECK(run("recommend --model llama-3.1-8b --task inference --trace " + dir.file("t.jsonl")).code == 0);  // 128k context
}

TEST_CASE("cli: serving on a GPU without bf16 says fp16, as it runs") {
  const auto t4 = nlohmann::json::parse(run("recommend --params 7B --task inference --family g4dn --format json").out);
  CHECK(t4["options"][0]["precision"] == "fp16 (kv fp16)");  // T4: no bf16
  const auto a10g = nlohmann::json::parse(run("recommend --params 7B --task inference --family g5 --format json").out);
  CHECK(a10g["options"][0]["precision"] == "bf16 (kv bf16)");
}

TEST_CASE("cli: at scale the pick says what hardware failures and checkpoints add") {
  // Checkpoints to the 6 GB/s file system (S3, the default, writes 1 GB/s per instance and adds less).
  const std::string job = "recommend --model deepseek-v3 --task pretrain --tokens 1T --checkpoint-storage fsx-lustre";
  Run big = run(job);
  REQUIRE(big.code == 0);
  const auto j = nlohmann::json::parse(run(job + " --format json").out);
  const auto& row = j["options"][0];
  REQUIRE(row["pick"] == true);
  const double headline = row["on_demand_cost_usd"], expected = j["recommendation"]["costs"]["on_demand_expected_usd"];
  REQUIRE(expected > 1.1 * headline);
  CHECK(big.out.find("  failures: with hardware failures") != std::string::npos);
  CHECK(big.out.find(fmt::format("{:.0f}% more", (expected / headline - 1) * 100)) != std::string::npos);
  CHECK(run("recommend --params 13B --task lora").out.find("  failures: ") == std::string::npos);  // one instance, an hour: nothing to add
}

TEST_CASE("cli: a step larger than the tokens to train on is warned about") {
  Run r = run("estimate --instance p5.48xlarge --count 1 --params 7B --task lora --tokens 1M --global-batch 64 --seq-len 32768 --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  bool warned = false;
  for (const auto& w : j["warnings"]) warned = warned || w.get<std::string>().find("runs 1 step, 2.1x the data") != std::string::npos;
  CHECK(warned);
  CHECK(nlohmann::json::parse(run("estimate --instance p5.48xlarge --count 1 --params 7B --task lora --format json").out)["warnings"].empty());
}

TEST_CASE("cli: cost prices a given run (instance, count, hours)") {
  Run r = run("cost --model llama-3-70b --task pretrain --instance p5.48xlarge --count 16 --hours 10d --format json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["options"].size() == 1);
  CHECK(j["options"][0]["hours"] == 240);
  CHECK(j["options"][0]["on_demand_cost_usd"].get<double>() == Approx(55.04 * 16 * 240));
  // 16 is beyond what one starts on demand: ranked at a 10-day Capacity Block (hours given: no margin), no spot.
  CHECK(j["options"][0]["channel"] == "capacity-block");
  CHECK(j["options"][0]["channel_cost_usd"].get<double>() == Approx(41.528 * 16 * 240));
  CHECK(j["options"][0]["spot_cost_usd"].is_null());
  const auto two = nlohmann::json::parse(run("cost --model llama-3-70b --task pretrain --instance p5.48xlarge --count 2 --hours 10d --format json").out);
  CHECK(two["options"][0]["spot_expected_cost_usd"].get<double>() > two["options"][0]["spot_cost_usd"].get<double>());
  // Without --hours the model's hours are estimated; one p5 cannot hold 70B pre-training.
  CHECK(run("cost --model llama-3-70b --task pretrain --instance p5.48xlarge").code == 3);
  CHECK(run("cost --model llama-3-70b --task pretrain --instance p9.huge --hours 3h").code == 2);
  CHECK(run("cost --model llama-3-70b --task pretrain --instance p5.48xlarge --hours 3h --count 0").code == 2);
  // Hours given without a model have no interruption figures: spot ranks (and gates) at its snapshot cost.
  // Spot at the typical zone: (17.63 + 25.75) / 2 x 2 x 100 h.
  Run spot_gate = run("cost --instance p5.48xlarge --count 2 --hours 100 --pricing spot --fail-if-over 4000");
  CHECK(spot_gate.code == 4);
  CHECK(spot_gate.err.find("the pick costs $4,338.00") != std::string::npos);
  // Its JSON carries the gates, as every gated document does.
  Run gated_json = run("cost --instance p5.48xlarge --count 4 --hours 100 --fail-if-over 19000 --format json");
  CHECK(gated_json.code == 4);
  const auto gj = nlohmann::json::parse(gated_json.out);
  REQUIRE(gj["gates"].is_array());
  CHECK(gj["gates"][0]["passed"] == false);
  // The limit and the cost compare in cents, as both are printed: a pick at the limit to the cent passes, a cent under fails
  // (a hostile review: "the pick costs $36.40, over the $36.40 limit").
  const std::string lora = "recommend --params 13B --task lora --format json";
  const double cents = std::round(nlohmann::json::parse(run(lora).out)["recommendation"]["costs"]["ranked_usd"].get<double>() * 100);
  CHECK(run(lora + fmt::format(" --fail-if-over {:.2f}", cents / 100)).code == 0);
  CHECK(run(lora + fmt::format(" --fail-if-over {:.2f}", (cents - 1) / 100)).code == 4);
  // A bare number is hours, so a bad one is out of range, not missing a unit.
  for (const char* bad : {"-100", "1e9"}) {
    Run out_of_range = run(std::string("cost --instance p5.48xlarge --count 4 --hours ") + bad);
    CHECK(out_of_range.code == 2);
    CHECK(out_of_range.err.find("is outside") != std::string::npos);
  }
  CHECK(run("cost --instance p5.48xlarge --count 4 --hours 1.5e2").code == 0);
  // The thousand years hold with a unit as without (a hostile review: 9000000 ran, 9000000h was refused).
  CHECK(run("cost --instance g5.xlarge --count 1 --hours 9000000").code == 2);
  CHECK(run("cost --instance g5.xlarge --count 1 --hours 9000000h").code == 2);
  CHECK(run("cost --instance g5.xlarge --count 1 --hours 8760000").code == 0);
}

TEST_CASE("cli: recommend names one pick, why, and the alternatives") {
  Run t = run("recommend --params 13B --task lora");
  REQUIRE(t.code == 0);
  CHECK(t.out.rfind("Recommended: ", 0) == 0);
  CHECK(t.out.find("  why: ") != std::string::npos);
  CHECK(t.out.find("  cheapest: ") != std::string::npos);
  CHECK(t.out.find("  fastest: ") != std::string::npos);
  CHECK(t.out.find("x the pick's price)") != std::string::npos);  // a fastest run at several times the pick's money says so
  Run j = run("recommend --params 13B --task lora --format json");
  REQUIRE(j.code == 0);
  auto doc = nlohmann::json::parse(j.out);
  const auto& rec = doc["recommendation"];
  CHECK(rec["accelerators"].get<int>() <= 16);
  CHECK_FALSE(rec["why"].get<std::string>().empty());
  CHECK(rec["setup_hours"].get<double>() > 0);
  CHECK(rec["total_hours"].get<double>() <= 2);  // the wait is weighed: not 9.8 h to save $23
  // ... and within twice the cheapest (the capacity issue's acceptance), the value of time named.
  const double cheapest_usd = doc["alternatives"]["cheapest"]["costs"]["ranked_usd"].get<double>();
  CHECK(rec["costs"]["ranked_usd"].get<double>() <= 2 * cheapest_usd);
  CHECK(rec["why"].get<std::string>().find("--value-of-time") != std::string::npos);
  CHECK(doc["request"]["max_cost_multiple"] == 2);
  for (const auto& o : doc["options"])  // a faster option left out by the ceiling is still listed
    if (o["instance"] == "p6-b200.48xlarge") CHECK(o["ranked_cost_usd"].get<double>() > 2 * cheapest_usd);
  CHECK(rec["why"].get<std::string>().find("p6-b200.48xlarge") != std::string::npos);  // named as what the ceiling left out
  // The fastest one would weigh is within the ceiling; the fastest at any price (thousands of times the pick's) comes after it.
  const auto& alt = doc["alternatives"];
  REQUIRE(alt["fastest_within_cost_ceiling"].is_object());
  CHECK(alt["fastest_within_cost_ceiling"]["costs"]["ranked_usd"].get<double>() <= 2 * cheapest_usd);
  CHECK(alt["fastest"]["costs"]["ranked_usd"].get<double>() > 2 * cheapest_usd);
  CHECK(alt["fastest_within_cost_ceiling"]["total_hours"].get<double>() > alt["fastest"]["total_hours"].get<double>());
  CHECK(alt["fastest_within_cost_ceiling"]["total_hours"].get<double>() <= rec["total_hours"].get<double>());
  const std::string fastest_line = t.out.substr(t.out.find("  fastest: "), t.out.find('\n', t.out.find("  fastest: ")) - t.out.find("  fastest: "));
  CHECK(fastest_line.find("(the fastest within 2x the cheapest price, --max-cost-multiple); at any price: ") != std::string::npos);
  CHECK(fastest_line.find("g6e.12xlarge") < fastest_line.find("at any price"));
  CHECK(fastest_line.find("no usual count known") != std::string::npos);  // its on-demand count is not known
  const auto unbounded = nlohmann::json::parse(run("recommend --params 13B --task lora --max-cost-multiple 0 --format json").out);
  CHECK(unbounded["recommendation"]["costs"]["ranked_usd"].get<double>() > 2 * cheapest_usd);
  CHECK(unbounded["alternatives"]["fastest_within_cost_ceiling"].is_null());  // no ceiling: the fastest is the fastest
  CHECK(unbounded["recommendation"]["why"].get<std::string>().find("--max-cost-multiple") == std::string::npos);
  for (const char* bad : {"0.5", "-1", "x", "2000"}) {
    const Run r = run(std::string("recommend --params 13B --task lora --max-cost-multiple ") + bad);
    CHECK(r.code == 2);
    CHECK(r.err.find("--max-cost-multiple") != std::string::npos);
  }
  CHECK(run("cost --instance p5.48xlarge --count 4 --hours 100 --max-cost-multiple 3").code == 2);
  CHECK(doc["options"][0]["instance"] == rec["instance"]);
  const auto by_money = nlohmann::json::parse(run("recommend --params 13B --task lora --value-of-time 0 --format json").out);
  CHECK(by_money["recommendation"]["costs"]["ranked_usd"].get<double>() <=
        1.3 * by_money["alternatives"]["cheapest"]["costs"]["ranked_usd"].get<double>());
  std::set<std::string> types;
  for (const auto& o : doc["options"]) CHECK(types.insert(o["instance"].get<std::string>()).second);
  // No "0m" anywhere: durations read "26 s", "4 min", "11.2 h".
  for (const char* args : {"recommend --params 13B --task lora --all-counts --top 400", "recommend --params 13B --task lora --tokens 1M"}) {
    Run r = run(args);
    CHECK(r.out.find(" 0m ") == std::string::npos);
    CHECK(r.out.find("0m\n") == std::string::npos);
  }
}

TEST_CASE("cli: the acceptance answers of the recommendations issue") {
  auto doc = [](const std::string& args) {
    Run r = run(args + " --format json");
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  CHECK(doc("recommend --params 7B --task inference")["recommendation"]["costs"]["ranked_usd_per_month"].get<double>() < 1500);
  CHECK(doc("recommend --params 70B --task pretrain --tokens 1T --deadline 30d")["recommendation"]["total_hours"].get<double>() <= 720);
  auto est = doc("estimate --instance p4d.24xlarge --params 13B --task lora --tokens 1M");
  CHECK(est["time"]["setup_hours"].get<double>() > 0);
  CHECK(est["time"]["setup"]["image_pull_s"].get<double>() == 300);
  CHECK(est["time"]["total_hours"].get<double>() == Approx(est["time"]["train_hours"].get<double>() + est["time"]["setup_hours"].get<double>()).epsilon(1e-4));
}

TEST_CASE("cli: cost prices a reservation without a model and works the hours out with one") {
  Run r = run("cost --instance p5.48xlarge --count 4 --hours 100");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("$22,016") != std::string::npos);
  Run j = run("cost --instance p5.48xlarge --count 4 --hours 100h --format json");
  REQUIRE(j.code == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["options"][0]["on_demand_cost_usd"].get<double>() == Approx(22016));
  CHECK(doc["recommendation"]["capacity"]["beyond_on_demand"] == true);
  Run hours = run("cost --instance p5.48xlarge --count 16 --model llama-3-70b --task pretrain --tokens 200B --format json");
  REQUIRE(hours.code == 0);
  CHECK(nlohmann::json::parse(hours.out)["options"][0]["hours"].get<double>() > 24);
  CHECK(run("cost --instance p5.48xlarge --count 4").code == 2);             // no model, no hours
  CHECK(run("cost --instance p5.48xlarge --hours 10 --tokens 1B").code == 2);  // a workload flag needs the model
  // Deadline and budget, like recommend.
  // 4 x p5 is bought as a 5-day Capacity Block: 41.528 x 4 x 120 h = $19,933.44.
  CHECK(run("cost --instance p5.48xlarge --count 4 --hours 100 --budget 19k").code == 3);
  CHECK(run("cost --instance p5.48xlarge --count 4 --hours 100 --budget 20k").code == 0);
  CHECK(run("cost --model llama-3-8b --task lora --deadline 2min --family g5").code == 3);
}

TEST_CASE("cli: CSV without a pick still gives the table, its money columns empty") {
  for (const char* command : {"cost --params 70B --task lora", "recommend --params 70B --task lora",
                              "cost --model llama-3-8b --task inference", "recommend --model llama-3-8b --task inference"}) {
    INFO(command);
    Run r = run(std::string(command) + " --pricing savings-1y --format csv");
    CHECK(r.code == 3);
    std::istringstream lines(r.out);
    std::string header, first;
    std::getline(lines, header);
    std::getline(lines, first);
    CHECK(header.find("instance,") != std::string::npos);
    CHECK(first.find("xlarge") != std::string::npos);  // a row, not only the header
  }
}

TEST_CASE("cli: a pricing model without data says so, and there is no pick to make") {
  Run r = run("recommend --params 7B --task lora --pricing savings-1y --format json");
  CHECK(r.code == 3);
  CHECK(r.err.find("--pricing savings-1y") != std::string::npos);
  auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["warnings"].size() >= 1);
  CHECK(doc["warnings"][0].get<std::string>().find("no commitment price") != std::string::npos);
  CHECK(doc["error"]["message"].get<std::string>().find("prices import") != std::string::npos);
  // With imported commitment rates the same request has a pick.
  const std::string overlay = "gpuadvisor_test_commit_" + std::to_string(getpid()) + ".json";
  std::ofstream(overlay) << R"({"instances": [{"name": "p5.48xlarge", "prices": {"us-east-1": {"commitments": {
      "compute-savings-plan-1yr-no-upfront": {"usd_per_hour": 40.0, "as_of": "2026-11-01", "source": "TEAM"}}}}}],
      "sources": {"TEAM": {"title": "test", "url": "https://example.invalid"}}})";
  Run ok = run("--catalog-add " + overlay + " recommend --params 7B --task lora --pricing savings-1y --format json");
  // A commitment discounts on-demand usage and delivers no capacity: beyond
  // p5's usual on-demand count (2) it prices nothing, and says why.
  Run big = run("--catalog-add " + overlay + " cost --model llama-3-8b --task pretrain --tokens 1T --family p5 --pricing savings-1y --all-counts --format json");
  // The headline's cost is the run's share of a term: the term signed is said beside it.
  Run text = run("--catalog-add " + overlay + " recommend --params 7B --task lora --pricing savings-1y");
  std::remove(overlay.c_str());
  const int count = nlohmann::json::parse(ok.out)["recommendation"]["count"];
  CHECK(text.out.find(fmt::format("commitment: the cost is the run's hours at the 1-year rate ($40.00/h an instance), as if the rest of the term "
                                  "is used by other work; {} x p5.48xlarge commits ${} a month for 12 months", count,
                                  gpuadvisor::format_thousands(40.0 * count * 720, 0))) != std::string::npos);
  CHECK(run("recommend --params 7B --task lora").out.find("commitment:") == std::string::npos);
  REQUIRE(ok.code == 0);
  CHECK(nlohmann::json::parse(ok.out)["recommendation"]["instance"] == "p5.48xlarge");
  REQUIRE(big.code == 0);
  const auto doc_big = nlohmann::json::parse(big.out);
  CHECK(doc_big["recommendation"]["count"].get<int>() <= 2);
  int beyond = 0;
  for (const auto& o : doc_big["options"])
    if (o["instance"] == "p5.48xlarge" && o["count"].get<int>() > 2) {
      ++beyond;
      CHECK(o["ranked_cost_usd"].is_null());
      CHECK(o["channel_note"].get<std::string>().find("not under a commitment") == 0);
    }
  CHECK(beyond > 0);
}

TEST_CASE("cli: serving latency is at the load's operating point, not at the capacity batch") {
  Run r = run("recommend --model mixtral-8x7b --task inference --requests-per-second 5 --all-counts --top 200 --format json");
  REQUIRE(r.code == 0);
  auto doc = nlohmann::json::parse(r.out);
  for (const auto& o : doc["options"]) {
    CHECK(o["batch"].get<int>() <= o["max_batch"].get<int>());
    // Sized by simulation: the p90 time per token within Mixtral's size class's 30 ms.
    REQUIRE(o["slo_percentile"] == 90);
    CHECK(o["tpot_at_slo_s"].get<double>() <= 0.030 + 1e-9);
  }
  // A lightly loaded big GPU runs a small batch, so its time per token is far below the 200 ms target.
  const auto& fastest = doc["alternatives"]["fastest"];
  CHECK(fastest["tpot_s"].get<double>() < 0.05);
  CHECK(fastest["batch_at_load"].get<int>() < 64);
}

TEST_CASE("cli: with --format json every exit 2 and 3 is one JSON document") {
  Run fits = run("estimate --instance g5.2xlarge --count 1 --params 13B --task lora --format json");
  CHECK(fits.code == 3);
  auto e3 = nlohmann::json::parse(fits.out);
  CHECK(e3["schema_version"] == 2);
  CHECK(e3["error"]["exit_code"] == 3);
  CHECK(e3["error"]["kind"] == "nothing_fits");
  CHECK(e3["error"]["memory_need_gb"].get<double>() > e3["error"]["capacity_gb"].get<double>());
  CHECK(fits.err.find("gpuadvisor: error:") != std::string::npos);
  Run bad = run("recommend --params 13Q --task lora --format json");
  CHECK(bad.code == 2);
  auto e2 = nlohmann::json::parse(bad.out);
  CHECK(e2["error"]["exit_code"] == 2);
  CHECK(e2["error"]["kind"] == "input_error");
  CHECK(e2["error"]["message"].get<std::string>().find("13Q") != std::string::npos);
  Run unknown_flag = run("recommend --params 13B --bogus --format json");
  CHECK(unknown_flag.code == 2);
  CHECK(nlohmann::json::parse(unknown_flag.out)["error"]["kind"] == "input_error");
  Run none = run("recommend --params 13B --task lora --budget 1 --format json");
  CHECK(none.code == 3);
  // The message gives what the least option costs, so the next --budget is not a guess.
  const auto cheapest = nlohmann::json::parse(run("recommend --params 13B --task lora --format json").out)["alternatives"]["cheapest"];
  CHECK(nlohmann::json::parse(none.out)["error"]["message"].get<std::string>().find(
            fmt::format("the cheapest option --budget left out costs ${:.2f}", cheapest["costs"]["ranked_usd"].get<double>())) != std::string::npos);
  CHECK(nlohmann::json::parse(none.out)["error"]["cannot_run"].size() > 10);
  // A service under a budget nothing meets names the budget, not the load (no --max-instances would help).
  const Run broke = run("recommend --model llama-3-8b --task inference --requests-per-second 5 --budget 1 -q");
  CHECK(broke.code == 3);
  CHECK(broke.err.find("the budget of $1.00 per month (--budget) is the limit") != std::string::npos);
  CHECK(broke.err.find("--max-instances allows more") == std::string::npos);
  // Each type is named by its cheapest layout over the budget (not the last one tried), in the money format of every output.
  const Run over = run("recommend --model llama-3-70b --task inference --requests-per-second 20 --budget 50k -q --format json");
  const auto over_doc = nlohmann::json::parse(over.out);
  int p5en = 0;
  for (const auto& reject : over_doc["error"]["cannot_run"])
    if (reject["instance"] == "p5en.48xlarge") {
      ++p5en;
      CHECK(reject["reason"] == "2 instances at tp 4 (its cheapest layout): $91,146 per month is over the $50,000 budget");
    }
  CHECK(p5en == 1);
  CHECK(over_doc["error"]["message"].get<std::string>().find("the budget of $50,000 per month") != std::string::npos);
  // A budget every service is under is not the limit, whatever else is: here the instance count.
  const Run crowded = run("recommend --model llama-3-8b --task inference --requests-per-second 2000 --max-instances 1 --budget 10000000 -q");
  CHECK(crowded.code == 3);
  CHECK(crowded.err.find("(--budget) is the limit") == std::string::npos);
  // Likewise the shortest run a --deadline left out, so the next --deadline is not a guess.
  const Run hurried = run("recommend --params 13B --task lora --deadline 1min --format json");
  CHECK(hurried.code == 3);
  const std::string hurried_msg = nlohmann::json::parse(hurried.out)["error"]["message"];
  CHECK(hurried_msg.find("the fastest option --deadline left out takes ") != std::string::npos);
  const std::string said = "the fastest with a known price ";  // here the fastest of all (GB200) has no price
  const size_t at = hurried_msg.find(said);
  REQUIRE(at != std::string::npos);
  std::istringstream taken(hurried_msg.substr(at + said.size()));
  double value = 0;
  std::string unit;
  taken >> value >> unit;
  unit = unit.substr(0, unit.find_first_of(";,"));  // "min;"
  REQUIRE(value > 0);
  // A tenth more than that is met, and half of it is not.
  CHECK(run(fmt::format("recommend --params 13B --task lora --deadline {}{} -q", value * 1.1, unit)).code == 0);
  CHECK(run(fmt::format("recommend --params 13B --task lora --deadline {}{} -q", value * 0.5, unit)).code == 3);
  Run csv = run("recommend --params 13B --task lora --budget 1 --format csv");
  CHECK(csv.code == 3);
  CHECK(csv.out.rfind("rank,instance,count", 0) == 0);
  // A budget of the cheapest cost as printed (in cents) is met; a cent less is not, and the message gives cents.
  const auto doc = nlohmann::json::parse(run("recommend --params 13B --task lora --format json").out);
  const double cheapest_cents = std::round(doc["alternatives"]["cheapest"]["costs"]["ranked_usd"].get<double>() * 100);
  CHECK(run(fmt::format("recommend --params 13B --task lora --budget {:.2f}", cheapest_cents / 100)).code == 0);
  const Run short_by_a_cent = run(fmt::format("recommend --params 13B --task lora --budget {:.2f}", (cheapest_cents - 1) / 100));
  CHECK(short_by_a_cent.code == 3);
  CHECK(short_by_a_cent.err.find(fmt::format("over the ${:.2f} budget (cheapest ${:.2f}", (cheapest_cents - 1) / 100, cheapest_cents / 100)) !=
        std::string::npos);
}

TEST_CASE("cli: inputs that cannot be what the user meant are warned about") {
  Run tokens = run("recommend --params 7B --task lora --tokens 100 --format json");
  REQUIRE(tokens.code == 0);
  CHECK(tokens.err.find("did you mean 100M or 100B") != std::string::npos);
  CHECK(nlohmann::json::parse(tokens.out)["warnings"].size() == 1);
  // The suggestion is one the tool takes: "1.5K" suggested "1.5KM", an unknown suffix.
  Run suffixed = run("recommend --params 7B --task lora --tokens 1.5K --top 1");
  REQUIRE(suffixed.code == 0);
  CHECK(suffixed.err.find("did you mean 1500M or 1500B?") != std::string::npos);
  CHECK(run("recommend --params 7B --task lora --tokens 1500M --top 1").code == 0);
  Run task = run("recommend --params 7B --tokens 10B");
  CHECK(task.err.find("no --task given: pre-training assumed") != std::string::npos);
  Run typo = run("recommend --model llama-3-7b --task lora");
  CHECK(typo.code == 2);
  CHECK(typo.err.find("did you mean: ") != std::string::npos);
  CHECK(typo.err.find("llama-3-8b") != std::string::npos);
  Run seq = run("estimate --instance p5.48xlarge --params 7B --task lora --seq-len 8k --format json");
  REQUIRE(seq.code == 0);
  CHECK(nlohmann::json::parse(seq.out)["workload"]["seq_len"] == 8192);
}

TEST_CASE("cli: the new flags refuse bad values with exit 2 and name the flag") {
  const std::pair<const char*, const char*> cases[] = {
      {"recommend --params 7B --task lora --cost-slack lots", "--cost-slack"},
      {"recommend --params 7B --task lora --cost-slack 2000%", "--cost-slack"},
      {"recommend --params 7B --task inference --target-utilisation 0", "--target-utilisation"},
      {"recommend --params 7B --task inference --target-utilisation 150%", "--target-utilisation"},
      {"recommend --params 7B --task lora --provision-minutes -1", "--provision-minutes"},
      {"recommend --params 7B --task lora --image-gb x", "--image-gb"},
      {"recommend --params 7B --task lora --load-gb-per-s 0", "--load-gb-per-s"},
      {"estimate --instance p5.48xlarge --params 7B --task lora --checkpoint-storage tape", "--checkpoint-storage"},
      {"estimate --instance p5.48xl --params 7B --task lora", "did you mean"},
      {"cost --instance p5.48xlarge --count 4 --hours 100 --fail-if-over lots", "--fail-if-over"},
      {"recommend --params 7B --task inference --provision-minutes 5", "--provision-minutes"},
      {"prices fetch --timeout 0 --output /tmp/x.json", "--timeout"},
      {"prices fetch --retries 99 --output /tmp/x.json", "--retries"}};
  for (const auto& [args, flag] : cases) {
    const Run r = run(args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(flag) != std::string::npos);
  }
}

TEST_CASE("cli: the parser's own errors carry the tool's prefix and exit 2, in JSON too") {
  Run r = run("recommend --params 13B --task lora --deadline 3 weeks");
  CHECK(r.code == 2);
  CHECK(r.err.find("gpuadvisor: error: The following argument was not expected: weeks") != std::string::npos);
  CHECK(r.err.find("Run with --help") != std::string::npos);
  r = run("recommend --nope --format json");
  CHECK(r.code == 2);
  CHECK(nlohmann::json::parse(r.out)["error"]["kind"] == "input_error");
}

TEST_CASE("cli: serving figures a person reads: prices without exponents, seconds past one second, a fixed batch labelled as given") {
  Run r = run("estimate --task inference --instance p5.48xlarge --model llama-3-70b --requests-per-second 0.01");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("e+0") == std::string::npos);
  {
    // $ per million output tokens at a trickle of load: thousands, with separators.
    const size_t at = r.out.find("per million output tokens");
    REQUIRE(at != std::string::npos);
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    CHECK(line.find(',') != std::string::npos);
  }
  r = run("estimate --task inference --instance p5.48xlarge --model llama-3-70b --requests-per-second 20 --batch 16");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("sequences in flight (--batch)") != std::string::npos);
  r = run("estimate --task inference --instance inf2.48xlarge --model llama-3-8b --tp 4");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("runtime reserve (Neuron runtime)") != std::string::npos);
}

TEST_CASE("cli: the horizon: a 405B run on 15T tokens picks within 90 days, and a job nothing finishes in time exits 3 naming the fastest") {
  Run big = run("recommend --model llama-3.1-405b --task pretrain --tokens 15T --max-instances 4096 --format json");
  REQUIRE(big.code == 0);
  const auto j = nlohmann::json::parse(big.out);
  CHECK(j["request"]["horizon_hours"] == 2160);
  CHECK(j["recommendation"]["total_hours"].get<double>() <= 2160);
  CHECK(j["alternatives"]["cheapest"]["total_hours"].get<double>() <= 2160);
  CHECK(j["options_beyond_horizon"].get<int>() > 0);
  // At most 8 instances, 70B on 15T tokens takes years: no pick, the fastest named with the --horizon that takes it.
  Run none = run("recommend --params 70B --task pretrain --tokens 15T --max-instances 8");
  CHECK(none.code == 3);
  CHECK(none.err.find("within the 90.0 d horizon") != std::string::npos);
  CHECK(none.err.find("the fastest is 8 x ") != std::string::npos);
  CHECK(none.err.find("--horizon ") != std::string::npos);
  CHECK(run("recommend --params 70B --task pretrain --tokens 15T --max-instances 8 --horizon 3y").code == 0);  // years as printed
  // Bad values name the flag (exit 2); 0 is a value of time (money alone).
  for (const char* bad : {"--horizon 0d", "--horizon 90", "--horizon soon", "--value-of-time cheap", "--value-of-time -5", "--value-of-time ''"})
    CHECK(run(std::string("recommend --params 13B --task lora ") + bad).code == 2);
  CHECK(run("recommend --params 13B --task lora --horizon soon").err.find("--horizon") != std::string::npos);
  CHECK(run("recommend --params 13B --task lora --value-of-time cheap").err.find("--value-of-time") != std::string::npos);
  const Run money = run("recommend --params 13B --task lora --value-of-time 0");
  CHECK(money.code == 0);
  CHECK(money.out.rfind("Recommended: 1 x g6e.xlarge", 0) == 0);  // by money alone: the old pick
  // Not a flag for a service, a reservation or a given run.
  CHECK(run("recommend --params 7B --task inference --horizon 30d").code == 2);
  CHECK(run("cost --instance p5.48xlarge --count 4 --hours 100 --value-of-time 10").code == 2);
  CHECK(run("cost --model llama-3-8b --task lora --instance p5.48xlarge --count 1 --horizon 30d").code == 2);
}

TEST_CASE("cli: a DeepSeek-V3 service considers expert-parallel and attention-DP layouts and names the pick's (the MoE issue's acceptance)") {
  const Run r = run("recommend --model deepseek-v3 --task inference --requests-per-second 10 --format json");
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  const auto layout = doc["recommendation"]["layout"];
  CHECK(layout["ep"].get<int>() == layout["tp"].get<int>());  // the pick is expert parallel
  CHECK(layout["text"].get<std::string>().find("EP") != std::string::npos);
  CHECK(run("recommend --model deepseek-v3 --task inference --requests-per-second 10 -q").out.find("EP8, 1 replica") != std::string::npos);
  // Every layout is a row with --all-counts: TP, TP with EP, and DP attention with EP, on one type.
  const auto all = nlohmann::json::parse(run("recommend --model deepseek-v3 --task inference --requests-per-second 10 --family p5en --all-counts --format json").out);
  std::set<std::string> layouts;
  for (const auto& o : all["options"]) layouts.insert(o["layout"].get<std::string>());
  CHECK(layouts == std::set<std::string>{"TP8", "TP8 EP8", "DP8 EP8"});
}

TEST_CASE("cli: estimate takes an MoE service's --ep and --attention-dp, and refuses them where they mean nothing") {
  const Run dep = run("estimate --instance p5en.48xlarge --model deepseek-v3 --task inference --tp 8 --ep 8 --attention-dp 8 --format json");
  REQUIRE(dep.code == 0);
  const auto layout = nlohmann::json::parse(dep.out)["layout"];
  CHECK(layout["attention_dp"].get<int>() == 8);
  CHECK(layout["text"] == "DP8 EP8");
  const Run dense = run("estimate --instance p5en.48xlarge --model llama-3-8b --task inference --ep 2");
  CHECK(dense.code == 2);
  CHECK(dense.err.find("--ep: expert and attention data parallelism are for mixture-of-experts models") != std::string::npos);
  const Run uneven = run("estimate --instance p5en.48xlarge --model deepseek-v3 --task inference --tp 8 --ep 4");
  CHECK(uneven.code == 2);
  CHECK(uneven.err.find("ep 4 must equal tp 8") != std::string::npos);
  const Run tgi = run("estimate --instance p5en.48xlarge --model deepseek-v3 --task inference --engine tgi --tp 8 --ep 8");
  CHECK(tgi.code == 2);
  CHECK(tgi.err.find("engine tgi runs MoE experts tensor parallel only") != std::string::npos);
  // Without --tp the sizes the instance offers are tried; none fits what was asked: exit 2 all the same.
  for (const char* bad : {"--ep 3", "--attention-dp 3", "--ep 8 --engine tgi", "--tp 8 --ep 8 --attention-dp 2 --engine trtllm"}) {
    const Run r = run(std::string("estimate --instance p5en.48xlarge --model deepseek-v3 --task inference ") + bad);
    INFO(bad);
    CHECK(r.code == 2);
  }
  CHECK(run("estimate --instance p5en.48xlarge --model deepseek-v3 --task inference --ep 3").err.find("ep 3 must equal tp 8") != std::string::npos);
  CHECK(run("estimate --instance inf2.48xlarge --model mixtral-8x7b --task inference --attention-dp 2").err.find("tensor parallel only") !=
        std::string::npos);
  // Nothing fits: the layout needing the least memory says why (TP8 EP8's 84.1 GB, not DP8 EP8's 100.7 GB).
  const Run p5 = run("estimate --instance p5.48xlarge --model deepseek-v3 --task inference --tp 8 --ep 8");
  CHECK(p5.code == 3);
  CHECK(p5.err.find("tp 8 ep 8: weights 84.1 GB") != std::string::npos);
  const Run training = run("estimate --instance p5en.48xlarge --model deepseek-v3 --task pretrain --tokens 1B --attention-dp 2");
  CHECK(training.code == 2);
  CHECK(training.err.find("--attention-dp applies to --task inference") != std::string::npos);
}

TEST_CASE("cli: a service with a load is also sized as disaggregated prefill and decode pools, said beside the pick and never ranked") {
  const Run r = run("recommend --model deepseek-v3 --task inference --requests-per-second 10 -q");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("  disaggregated: ") != std::string::npos);
  CHECK(r.out.find(" prefill (") != std::string::npos);
  const auto doc = nlohmann::json::parse(run("recommend --model deepseek-v3 --task inference --requests-per-second 10 --format json").out);
  const auto d = doc["alternatives"]["disaggregated"];
  REQUIRE(d.is_object());
  CHECK(d["prefill"]["instances"].get<int>() >= 1);
  CHECK(d["decode"]["instances"].get<int>() >= 1);
  CHECK(d["decode"]["layout"]["text"].is_string());
  CHECK(d["ttft_s"].get<double>() > d["kv_transfer_s"].get<double>());
  // Without a load there is none.
  CHECK(nlohmann::json::parse(run("recommend --model deepseek-v3 --task inference --format json").out)["alternatives"]["disaggregated"].is_null());
}

TEST_CASE("cli: a reasoning service is sized on a simulation that reaches its steady state (one p6-b200 looked enough on 1,000 requests)") {
  const auto doc = nlohmann::json::parse(run("recommend --model deepseek-v3 --task inference --requests-per-second 10 --reasoning-tokens 2000 --format json").out);
  CHECK(doc["recommendation"]["replicas"].get<int>() >= 2);
  CHECK(doc["recommendation"]["utilisation"].get<double>() <= 1.0);
}


TEST_CASE("cli: the rest of the bill: the pick's storage, transfer and job total, and every row's in CSV and JSON") {
  const Run t = run("recommend --params 13B --task lora --data-region us-west-2");
  REQUIRE(t.code == 0);
  // 28 GB in S3 for 35 minutes is a fraction of a cent: "under $0.01", never a "$0.00" that reads as free.
  CHECK(t.out.find("\n  storage: under $0.01 over the run: S3 ") != std::string::npos);
  CHECK(t.out.find("storage $0.00") == std::string::npos);
  CHECK(run("recommend --params 70B --task pretrain --tokens 1T --deadline 30d").out.find("\n  storage: $") != std::string::npos);
  CHECK(t.out.find("\n  transfer: the data and the weights (26.2 GB) in from us-west-2, $0.52") != std::string::npos);
  CHECK(t.out.find("\n  job total: $") != std::string::npos);
  // One instance: no 48 TiB file system for a 35-minute job, S3 alone (--checkpoint-storage auto).
  CHECK(t.out.find("FSx") == std::string::npos);
  const auto j = nlohmann::json::parse(run("recommend --params 13B --task lora --data-region us-west-2 --format json").out);
  const auto& bill = j["recommendation"]["bill"];
  CHECK(bill["working_store"].is_null());
  CHECK(bill["storage_usd"].get<double>() == Approx(bill["s3_usd"].get<double>()));
  // Asked for, the file system is billed, and the line names the cheaper store.
  const Run fsx = run("recommend --params 13B --task lora --checkpoint-storage fsx-lustre");
  CHECK(fsx.out.find("FSx for Lustre") != std::string::npos);
  CHECK(fsx.out.find("--checkpoint-storage s3") != std::string::npos);
  // Several instances write to S3 too: no 49.2 TiB file system at $10 an hour on a 2-instance bill,
  // whose faster checkpoints would save cents an hour; asked for, it is billed.
  const auto many = nlohmann::json::parse(run("cost --instance p5en.48xlarge --count 2 --model llama-3-8b --task pretrain --tokens 50B --format json").out);
  CHECK(many["recommendation"]["bill"]["working_store"].is_null());
  const auto shared = nlohmann::json::parse(
      run("cost --instance p5en.48xlarge --count 2 --model llama-3-8b --task pretrain --tokens 50B --checkpoint-storage fsx-lustre --format json").out);
  CHECK(shared["recommendation"]["bill"]["working_store"] == "fsx-lustre");
  CHECK(shared["recommendation"]["bill"]["storage_usd"].get<double>() > 10 * many["recommendation"]["bill"]["storage_usd"].get<double>());
  const Run big = run("recommend --model llama-3-8b --task pretrain");
  CHECK(big.out.find("FSx") == std::string::npos);
  CHECK(big.out.find("storage: $") != std::string::npos);
  CHECK(bill["transfer_usd"].get<double>() == Approx(0.52));
  CHECK(bill["total_usd"].get<double>() == Approx(j["recommendation"]["costs"]["ranked_usd"].get<double>() + bill["storage_usd"].get<double>() +
                                                  bill["transfer_usd"].get<double>()).margin(0.011));
  CHECK(j["request"]["data_region"] == "us-west-2");
  for (const auto& o : j["options"]) CHECK(o["total_usd"].get<double>() > o["ranked_cost_usd"].get<double>());
  const Run csv = run("recommend --params 13B --task lora --format csv");
  CHECK(csv.out.find("storage_usd,transfer_usd,total_usd") != std::string::npos);
  // Where a rate is not in the catalog the total is unknown, said so, never $0.
  const Run west = run("recommend --params 13B --task lora --region us-west-2");
  CHECK(west.out.find("storage: unknown over the run (a storage rate for us-west-2 is not in the catalog)") != std::string::npos);
  CHECK(west.out.find("job total: unknown") != std::string::npos);
  for (const char* bad : {"--data-region US", "--data-region 'us west'", "--data-region ''", "--data-region -", "--data-region x-y",
                          "--data-region 1-2-3", "--data-region us-"}) {
    const Run r = run(std::string("recommend --params 13B --task lora ") + bad);
    CHECK(r.code == 2);
    CHECK(r.err.find("--data-region") != std::string::npos);
  }
  CHECK(run("recommend --params 7B --task inference --data-region us-west-2").code == 2);
  CHECK(run("cost --instance p5.48xlarge --count 4 --hours 100 --data-region us-west-2").code == 2);
}

TEST_CASE("cli: --region any ranks a training job in every priced region and moves the data where it must") {
  const auto doc = [](const std::string& args) {
    const Run r = run(args + " --format json");
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto any = doc("recommend --params 13B --task lora --region any");
  REQUIRE(any["regions"].size() == 2);
  CHECK(any["request"]["regions"] == nlohmann::json({"us-east-1", "us-west-2"}));
  CHECK(any["regions"][0]["chosen"] == true);  // a tie: the order given
  // The data in us-west-2: its own region wins the tie, and us-east-1 carries moving it in.
  const auto west = doc("recommend --params 13B --task lora --region any --data-region us-west-2");
  CHECK(west["regions"][1]["region"] == "us-west-2");
  CHECK(west["regions"][1]["chosen"] == true);
  CHECK(west["regions"][0]["transfer_usd"].get<double>() == Approx(0.52));
  CHECK(west["options"][0]["region"] == "us-west-2");  // the rows are the chosen region's
  const Run text = run("recommend --params 13B --task lora --region us-east-1,us-west-2 --data-region us-west-2");
  CHECK(text.out.find("  regions (2 ranked): us-east-1: 1 x p5en.48xlarge") != std::string::npos);
  CHECK(text.out.find("+ $0.52 moving the data in; us-west-2 (the data's): the pick") != std::string::npos);
  CHECK(run("recommend --params 13B --task lora").out.find("regions:") == std::string::npos);  // one region: no line
  CHECK_FALSE(doc("recommend --params 13B --task lora").contains("regions"));
  // The data where no transfer rate is known (eu-west-1): the same unknown in every region decides nothing, the price does
  // (p6-b300: one on demand in us-west-2 against a block of three in us-east-1), whatever the order given.
  for (const char* order : {"any", "us-west-2,us-east-1"}) {
    const auto far = doc(std::string("recommend --params 13B --task lora --family p6-b300 --data-region eu-west-1 --region ") + order);
    REQUIRE(far["regions"].size() == 2);
    for (const auto& x : far["regions"])
      if (x["chosen"] == true) CHECK(x["region"] == "us-west-2");
  }
  // Bad lists and the commands that price one region exit 2, naming the flag.
  for (const char* bad : {"recommend --params 13B --task lora --region us-east-1,eu-west-9", "recommend --params 13B --task lora --region eu-west-1", "recommend --params 13B --task lora --region us-east-1,us-east-1",
                          "recommend --params 7B --task inference --region any", "recommend --params 1B --task rl --region any",
                          "cost --params 7B --task lora --region any", "recommend --params 13B --task lora --region ,",
                          "recommend --params 13B --task lora --region ,,", "cost --instance p5.48xlarge --count 1 --hours 100 --region ,",
                          "estimate --model llama-3-8b --task lora --instance p5.48xlarge --region any"}) {
    const Run r = run(bad);
    CHECK(r.code == 2);
    CHECK(r.err.find("--region") != std::string::npos);
  }
}

TEST_CASE("cli: an online service on one instance says it has no failover and what a second copy costs") {
  const Run one = run("recommend --model deepseek-v3 --task inference --requests-per-second 10");
  REQUIRE(one.code == 0);
  CHECK(one.out.find("  redundancy: the whole service is one instance: ") != std::string::npos);
  CHECK(one.out.find("a second copy for failover is 2 x p6-b200.48xlarge, $164,063/month") != std::string::npos);  // 2 x $82,031.6
  CHECK(run("recommend --params 7B --task inference --requests-per-second 2").out.find("redundancy:") == std::string::npos);  // two instances
  // The second copy's price is twice the monthly bill, rounded once: $4,953.6 a month is $9,907 for two, not 2 x $4,954.
  const std::string eight = "recommend --model llama-3-8b --task inference --requests-per-second 20 --prefix-share 70%";
  const Run text = run(eight), json = run(eight + " --format json");
  REQUIRE(text.code == 0);
  REQUIRE(json.code == 0);
  const double monthly = nlohmann::json::parse(json.out)["recommendation"]["costs"]["ranked_usd_per_month"].get<double>();
  REQUIRE(std::fmod(monthly, 1.0) > 0.5);  // where the two roundings differ
  CHECK(text.out.find(fmt::format("a second copy for failover is 2 x p5.4xlarge, ${}/month", gpuadvisor::format_thousands(std::round(2 * monthly)))) !=
        std::string::npos);
  // The JSON says it too: the fleet, the doubled count and its price; null where the fleet has two instances or more.
  const auto redundancy = nlohmann::json::parse(json.out)["recommendation"]["redundancy"];
  CHECK(redundancy["fleet"] == "one instance");
  CHECK(redundancy["failover_instances"] == 2);
  CHECK(redundancy["failover_usd_per_month"].get<double>() == Approx(std::round(2 * monthly)));
  const Run two = run("recommend --params 7B --task inference --requests-per-second 2 --format json");
  REQUIRE(two.code == 0);
  CHECK(nlohmann::json::parse(two.out)["recommendation"]["redundancy"].is_null());
  CHECK(run("recommend --model llama-3-8b --task inference --mode offline --tokens-per-day 1B").out.find("redundancy:") == std::string::npos);
}

TEST_CASE("cli: --kv-cache auto is the default, the estimate says the KV precision it took, and a bad value names auto") {
  const std::string base = "estimate --task inference --model llama-3-70b --instance p5.48xlarge --tp 2 --engine trtllm --weights fp8 --format json";
  Run by_default = run(base);
  Run named = run(base + " --kv-cache auto");
  Run sixteen = run(base + " --kv-cache bf16");
  REQUIRE(by_default.code == 0);
  CHECK(by_default.out == named.out);
  const auto d = nlohmann::json::parse(by_default.out), s = nlohmann::json::parse(sixteen.out);
  CHECK(d["workload"]["kv_cache"] == "auto");
  CHECK(d["precision"]["kv_cache"] == "fp8");
  CHECK(s["precision"]["kv_cache"] == "bf16");
  // The default is said once, as an assumption, and not when --kv-cache is given.
  CHECK(d["assumptions"].dump().find("quantise the KV cache unless told otherwise") != std::string::npos);
  CHECK(s["assumptions"].dump().find("quantise the KV cache unless told otherwise") == std::string::npos);
  Run bad = run("recommend --task inference --model llama-2-7b --kv-cache int8");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("auto, bf16, fp8") != std::string::npos);
}

TEST_CASE("cli: the fastest alternative is the fastest priced one, and an unpriced option that finishes sooner is named beside it") {
  Run t = run("recommend --params 70B --task pretrain --tokens 1T --deadline 30d");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("reserved at the on-demand rate (not the count of the table's p6-b200.48xlarge row; --all-counts lists every count); "
                   "sooner at a price the catalog lacks: 512 x p6-b300.48xlarge, ") != std::string::npos);
  Run j = run("recommend --params 70B --task pretrain --tokens 1T --deadline 30d --format json");
  REQUIRE(j.code == 0);
  const auto alt = nlohmann::json::parse(j.out)["alternatives"];
  REQUIRE(alt["fastest_unpriced"].is_object());
  CHECK(alt["fastest_unpriced"]["total_hours"].get<double>() < alt["fastest"]["total_hours"].get<double>());
  CHECK(alt["fastest_unpriced"]["costs"]["ranked_usd"].is_null());
  CHECK(alt["fastest"]["costs"]["ranked_usd"].is_number());
  // Where the fastest option has a price, there is none.
  Run lora = run("recommend --params 13B --task lora --family p5,g6e --format json");
  REQUIRE(lora.code == 0);
  CHECK(nlohmann::json::parse(lora.out)["alternatives"]["fastest_unpriced"].is_null());
}

TEST_CASE("cli: the option at the usual count is labelled on demand only where it is bought on demand") {
  // p6-b300 has no on-demand rate: its two-instance option is priced at a Capacity Block, and says so.
  Run t = run("cost --model llama-3-70b --task pretrain --tokens 200B --family p6-b300");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("  at the usual count: 2 x p6-b300.48xlarge") != std::string::npos);
  CHECK(t.out.find("in Capacity Blocks (about 2 is the most one usually starts at once; the catalog has no on-demand rate for it)") != std::string::npos);
  CHECK(t.out.find("  on demand: 2 x") == std::string::npos);
  const auto doc = nlohmann::json::parse(run("cost --model llama-3-70b --task pretrain --tokens 200B --family p6-b300 --format json").out);
  CHECK(doc["alternatives"]["on_demand"]["channel"] == "capacity-block");  // the JSON key keeps its name; the channel says how it is bought
}

TEST_CASE("cli: under --pricing spot, a type with a spot rate but no interruption range says why its cost is unknown") {
  const Run spot = run("recommend --params 8B --task finetune --pricing spot");
  REQUIRE(spot.code == 0);
  const std::string said = "have a spot rate but no Spot Advisor interruption range, so their expected spot cost is unknown";
  const auto at = spot.out.find(said);
  REQUIRE(at != std::string::npos);
  const std::string named = spot.out.substr(spot.out.rfind('\n', at) + 1, at - spot.out.rfind('\n', at) - 1);
  CHECK(named.find("p6-b200.48xlarge") != std::string::npos);  // $21.01/h on spot, no Spot Advisor bucket
  CHECK(named.find("p6-b300.48xlarge") == std::string::npos);  // no spot rate at all: nothing to explain
  CHECK(named.find("p5en.48xlarge") == std::string::npos);     // ranked
  CHECK(run("recommend --params 8B --task finetune").out.find(said) == std::string::npos);  // on demand: no spot ranking to explain
}

TEST_CASE("cli: --pricing spot names the pick bought another way where it costs less (a 70B on 1T tokens)") {
  const Run spot = run("recommend --params 70B --task pretrain --tokens 1T --pricing spot --format json");
  REQUIRE(spot.code == 0);
  const auto j = nlohmann::json::parse(spot.out);
  const auto& pick = j["recommendation"];
  const auto& other = j["alternatives"]["other_channels"];
  REQUIRE(other.is_object());
  CHECK(pick["channel"] == "spot");  // the pick stays what was asked for
  CHECK(other["channel"] != "spot");
  CHECK(other["costs"]["ranked_usd"].get<double>() < pick["costs"]["ranked_usd"].get<double>());
  const Run text = run("recommend --params 70B --task pretrain --tokens 1T --pricing spot");
  CHECK(text.out.find("  bought another way: ") != std::string::npos);
  // Its price is already the expected one: the interruptions it counts (more than 10% with checkpoints to the
  // 6 GB/s file system), not an on-demand figure beside it.
  const Run fsx = run("recommend --params 70B --task pretrain --tokens 1T --pricing spot --checkpoint-storage fsx-lustre");
  CHECK(fsx.out.find("  interruptions: the spot price is the expected cost with reclaims and hardware failures") != std::string::npos);
  CHECK(fsx.out.find("at the on-demand rate, ") == std::string::npos);
  // Not under the other pricings: there is nothing to compare.
  CHECK(nlohmann::json::parse(run("recommend --params 70B --task pretrain --tokens 1T --format json").out)["alternatives"]["other_channels"].is_null());
}

TEST_CASE("cli: validate says why a case has no prediction, and names the file and case of a bad model shape") {
  test_files::TempDir t("gpuadvisor_validate_labels");
  const std::string c =
      R"({"id":"t1","task":"inference","model":"llama-3-8b","system":"p5.48xlarge","instances":1,"precision":"bf16","metric":"tpot_s",)"
      R"("measured":0.01,"prompt_tokens":1024,"output_tokens":256,"batch":8,"tp":3,"source":"x","source_key":"x"})";
  const std::string path = t.file("tp3.json");
  test_files::write(path, R"({"schema_version":1,"cases":[)" + c + "]}");
  const Run r = run("validate --cases " + path + " --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const std::string note = j["cases"][0]["note"];
  CHECK(note.find("the case's layout is not one the model runs") != std::string::npos);  // not "does not fit in memory"
  CHECK(note.find("tp 3") != std::string::npos);
  CHECK(run("validate --cases " + path).out.find("no prediction") != std::string::npos);
  // A shape object with hidden 0: the message says which file and case.
  std::string shape = c;
  shape.replace(shape.find(R"("llama-3-8b")"), 12,
                R"({"name":"x","layers":32,"hidden":0,"heads":0,"kv_heads":8,"ffn":14336,"vocab":128256})");
  const std::string bad = t.file("shape.json");
  test_files::write(bad, R"({"schema_version":1,"cases":[)" + shape + "]}");
  const Run s = run("validate --cases " + bad);
  CHECK(s.code == 2);
  CHECK(s.err.find("case t1") != std::string::npos);
  CHECK(s.err.find("hidden must be a positive integer") != std::string::npos);
}

TEST_CASE("cli: an estimate whose replica meets the targets but whose load cannot be sized says so, not that it misses the defaults") {
  const Run r = run("estimate --task inference --model llama-3-8b --instance p5.48xlarge --requests-per-second 1e6 --max-ttft 1s --max-tpot 50ms");
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("Cannot size a service for this load", 0) == 0);
  CHECK(r.out.find("default latency targets") == std::string::npos);
  // Past what the simulated search sizes, the service rows are the analytic count: said, not called one replica's figures.
  CHECK(r.out.find("by simulation (") != std::string::npos);
  CHECK(r.out.find("the service and cost rows below are the analytic count at 80% utilisation, not checked against the targets") != std::string::npos);
}

TEST_CASE("cli: --compare-to warns when the baseline's costs are at another pricing or region, and --format is read in any case") {
  test_files::TempDir t("gpuadvisor_compare_terms");
  const std::string base = t.file("spot.json");
  test_files::write(base, run("recommend --params 13B --task lora --pricing spot --format json").out);
  const Run r = run("recommend --params 13B --task lora --format json --compare-to " + base);
  REQUIRE(r.code == 0);
  bool warned = false;
  const auto j = nlohmann::json::parse(r.out);  // held: a range-for over a temporary's member would dangle
  for (const auto& w : j["warnings"])
    warned = warned || w.get<std::string>().find("the baseline's costs are spot in us-east-1, this run's on-demand in us-east-1") != std::string::npos;
  CHECK(warned);
  const std::string same = t.file("od.json");
  test_files::write(same, run("recommend --params 13B --task lora --format json").out);
  CHECK(nlohmann::json::parse(run("recommend --params 13B --task lora --format json --compare-to " + same).out)["warnings"].empty());
  // JSON as json: one document, also on an error.
  CHECK(nlohmann::json::parse(run("recommend --params 13B --task lora --format JSON").out)["command"] == "recommend");
  const Run bad = run("recommend --params 13B --task lora --format JSON --gpus 3");
  CHECK(bad.code == 2);
  CHECK(nlohmann::json::parse(bad.out)["error"].is_object());
}

TEST_CASE("cli: --max-batched-tokens sets the engine's step budget: checked, said, in the JSON and the launch command, refused where there is none") {
  const std::string base = "estimate --instance p5.48xlarge --model llama-3-70b --task inference --tp 8 --clients 32 --prompt-tokens 1000 "
                           "--output-tokens 64";
  for (const char* bad : {" --max-batched-tokens 63", " --max-batched-tokens 1048577", " --max-batched-tokens 2k5", " --max-batched-tokens 0"}) {
    INFO(bad);
    CHECK(run(base + bad).code == 2);
  }
  const Run hf = run(base + " --engine hf --max-batched-tokens 4096");
  CHECK(hf.code == 2);
  CHECK(hf.err.find("--max-batched-tokens: hf runs one batch at a time and has no token budget per step") != std::string::npos);
  const Run said = run(base + " --max-batched-tokens 2048");
  REQUIRE(said.code == 0);
  CHECK(said.err.find("the engine schedules at most 2048 tokens a step, decode tokens and prompt chunks together") != std::string::npos);
  const Run sglang = run(base + " --engine sglang --max-batched-tokens 2048");
  REQUIRE(sglang.code == 0);
  CHECK(sglang.err.find("2048 tokens a step, prompt chunks in steps of their own (sglang runs prefill and decode steps apart)") != std::string::npos);
  auto estimate = [&](const std::string& extra) {
    const Run r = run(base + " --format json" + extra);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto small = estimate(" --max-batched-tokens 1024"), own = estimate("");
  CHECK(small["workload"]["max_batched_tokens"] == 1024);
  CHECK(own["workload"]["max_batched_tokens"].is_null());
  // 32 prompts of 1,000 tokens at once: a step takes about one of them, not eight.
  auto ttft = [](const nlohmann::json& j, const char* at) { return j["inference"]["at_load"]["percentiles"]["ttft_s"][at].get<double>(); };
  CHECK(ttft(small, "p99") > ttft(own, "p99"));
  // The server's command carries the budget the estimate ran at.
  test_files::TempDir t("gpuadvisor_test_budget");
  const std::string dir = t.file("emit");
  REQUIRE(run("recommend --model llama-3-8b --task inference --requests-per-second 20 --max-batched-tokens 4096 --emit k8s --emit-dir " + dir).code == 0);
  const std::string text = test_files::slurp(dir + "/deployment.yaml");
  CHECK(text.find("--max-num-batched-tokens 4096 ") != std::string::npos);
  // Without a load too: a prompt longer than the budget prefills in chunks, and
  // no more sequences decode than the budget has tokens for (vLLM refuses
  // max_num_seqs above max_num_batched_tokens).
  const std::string alone = "estimate --instance p5.48xlarge --model llama-3-8b --task inference --tp 1 --format json";
  const auto wide = nlohmann::json::parse(run(alone).out)["inference"], narrow = nlohmann::json::parse(run(alone + " --max-batched-tokens 64").out)["inference"];
  CHECK(narrow["max_batch"].get<int>() <= 64);
  CHECK(narrow["ttft_s"].get<double>() > 2 * wide["ttft_s"].get<double>());  // 1,024 prompt tokens in 16 passes
  CHECK(nlohmann::json::parse(run(alone + " --max-batched-tokens 2k").out)["workload"]["max_batched_tokens"] == 2000);  // read as --prompt-tokens is
  const std::string seqs_dir = t.file("seqs");
  REQUIRE(run("estimate --instance p5.48xlarge --model llama-3-8b --task inference --tp 1 --max-batched-tokens 64 --emit k8s --emit-dir " + seqs_dir).code == 0);
  const std::string seqs = test_files::slurp(seqs_dir + "/serve_commands.sh");
  const auto at = seqs.find("--max-num-seqs ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stoi(seqs.substr(at + 15)) <= 64);
  // TGI's server takes it as --max-batch-prefill-tokens.
  const std::string tgi_dir = t.file("tgi");
  REQUIRE(run("estimate --instance g6e.xlarge --model llama-3-8b --task inference --engine tgi --max-batched-tokens 4096 --emit k8s --emit-dir " + tgi_dir).code == 0);
  const std::string tgi = test_files::slurp(tgi_dir + "/serve_commands.sh");
  CHECK(tgi.find("--max-batch-prefill-tokens 4096 ") != std::string::npos);
}

TEST_CASE("cli: --attention-dp-balance is TensorRT-LLM's, needs attention data parallelism, is said and holds prompts under load") {
  const std::string base = "estimate --instance p6-b200.48xlarge --model deepseek-v3 --task inference --tp 8 --ep 8 --weights fp8 "
                           "--requests-per-second 1 --prompt-tokens 922 --output-tokens 922 --max-ttft 20s --max-tpot 1s";  // targets one replica meets
  const Run other = run(base + " --attention-dp 8 --attention-dp-balance 60");
  CHECK(other.code == 2);
  CHECK(other.err.find("--attention-dp-balance: 60 is TensorRT-LLM's attention_dp_config") != std::string::npos);
  const Run no_dp = run(base + " --engine trtllm --attention-dp-balance 60");
  CHECK(no_dp.code == 2);
  CHECK(no_dp.err.find("give --attention-dp N") != std::string::npos);
  for (const char* bad : {" 0", " 1001", " 2.5"}) CHECK(run(base + " --engine trtllm --attention-dp 8 --attention-dp-balance" + bad).code == 2);
  auto estimate = [&](const std::string& extra) {
    const Run r = run(base + " --engine trtllm --attention-dp 8 --format json" + extra);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto held = estimate(" --attention-dp-balance 60"), free = estimate("");
  CHECK(held["workload"]["attention_dp_balance_iters"] == 60);
  CHECK(free["workload"]["attention_dp_balance_iters"].is_null());
  auto queue = [](const nlohmann::json& j) { return j["inference"]["at_load"]["percentiles"]["queue_s"]["mean"].get<double>(); };
  // One request a second among some 18 in flight: each held to the next timeout, about 30 steps of some 21 ms.
  CHECK(queue(held) > queue(free) + 0.3);
  CHECK(run(base + " --engine trtllm --attention-dp 8 --attention-dp-balance 60").err.find("TensorRT-LLM balances its attention data-parallel ranks") !=
        std::string::npos);
  // A dense model has no attention data-parallel layouts: refused, not ignored.
  const Run dense = run("recommend --model llama-3-8b --task inference --engine trtllm --requests-per-second 10 --attention-dp-balance 60");
  CHECK(dense.code == 2);
  CHECK(dense.err.find("--attention-dp-balance: llama-3-8b is dense") != std::string::npos);
  // The launch files' TensorRT-LLM options carry the balance the estimate simulated.
  test_files::TempDir t("gpuadvisor_test_balance");
  REQUIRE(run(base + " --engine trtllm --attention-dp 8 --attention-dp-balance 60 --emit k8s --emit-dir " + t.file("emit")).code == 0);
  const std::string text = test_files::slurp(t.file("emit") + "/serve_commands.sh");
  CHECK(text.find("attention_dp_config:\\n  enable_balance: true\\n  timeout_iters: 60\\n  batching_wait_iters: 0\\n") != std::string::npos);
}

TEST_CASE("cli: --scheduler-recv-interval is SGLang's, refused without it, and lengthens time to first token under load") {
  const std::string base = "estimate --instance p6-b200.48xlarge --model deepseek-v3 --task inference --tp 8 --weights fp8 --clients 64 "
                           "--prompt-tokens 922 --output-tokens 922 --length-spread 0.111";
  const Run other = run(base + " --scheduler-recv-interval 30");
  CHECK(other.code == 2);
  CHECK(other.err.find("--scheduler-recv-interval: 30 is SGLang's server setting; give --engine sglang") != std::string::npos);
  CHECK(run(base + " --engine sglang --scheduler-recv-interval 0").code == 2);
  CHECK(run(base + " --engine sglang --scheduler-recv-interval 1001").code == 2);
  CHECK(run(base + " --engine sglang --scheduler-recv-interval 2.5").code == 2);
  auto ttft = [&](const std::string& extra) {
    const Run r = run(base + " --engine sglang --format json" + extra);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out)["inference"]["at_load"]["percentiles"]["ttft_s"]["mean"].get<double>();
  };
  const Run said = run(base + " --engine sglang --scheduler-recv-interval 30");
  CHECK(said.err.find("SGLang takes in new requests every 30 decode steps") != std::string::npos);
  CHECK(ttft(" --scheduler-recv-interval 30") > ttft("") + 0.1);  // about 15 steps of some 27 ms waited
  CHECK(ttft(" --scheduler-recv-interval 1") == ttft(""));
  // An option rejected for meeting the targets only nearly idle names the wait, and the setting that shortens it.
  const Run slow = run("recommend --model llama-3-8b --task inference --requests-per-second 5 --engine sglang --scheduler-recv-interval 100");
  REQUIRE(slow.code == 0);
  CHECK(slow.out.find("SGLang's wait of up to 100 decode steps for its next look included; a faster layout, a smaller "
                      "--scheduler-recv-interval, or a looser") != std::string::npos);
}

TEST_CASE("cli: estimate's CSV is one table: its accuracy band and notes are rows, not prose after it") {
  for (const std::string job : {"estimate --model gpt-oss-20b --instance p5.48xlarge", "estimate --task inference --model llama-3-8b --instance p5.48xlarge --clients 4",
                                "estimate --task rl --instance p5.48xlarge --model qwen2.5-7b"}) {
    INFO(job);
    const Run r = run(job + " -q --format csv");
    REQUIRE(r.code == 0);
    std::istringstream in(r.out);
    std::string line;
    int rows = 0;
    bool band = false;
    while (std::getline(in, line)) {
      ++rows;
      CHECK(line.rfind("accuracy:", 0) != 0);
      CHECK(line.rfind("note:", 0) != 0);
      band = band || line.rfind("accuracy,error band,", 0) == 0;
    }
    CHECK(rows > 5);
    CHECK(band);
    // The text keeps its line under the table.
    CHECK(run(job + " -q").out.find("\naccuracy: +-") != std::string::npos);
  }
}

TEST_CASE("cli: --explain and the JSON say which limit sets the max batch") {
  const std::string base = "estimate --model llama-3.1-8b --task inference --instance p5.48xlarge";
  struct Limit {
    std::string flags, text, token;
  };
  // Llama-3.1-8B on 8 H100s: the KV cache holds about 3,800 sequences, so each limit below it binds.
  for (const Limit& l : {Limit{"", "runs at most (vllm's sequence limit): 1024", "engine_sequence_limit"},
                         Limit{" --concurrency 64", "runs at most (--concurrency): 64", "concurrency"},
                         Limit{" --max-batched-tokens 128", "runs at most (--max-batched-tokens 128 / 1 token a sequence per step): 128", "max_batched_tokens"},
                         Limit{" --speculative ngram:3:0.5 --max-batched-tokens 128",
                               "runs at most (--max-batched-tokens 128 / 4 tokens a sequence per step): 32", "max_batched_tokens"}}) {
    CAPTURE(l.flags);
    const Run text = run(base + l.flags + " --explain"), json = run(base + l.flags + " --format json");
    REQUIRE(text.code == 0);
    CHECK(text.out.find(l.text) != std::string::npos);
    const auto inference = nlohmann::json::parse(json.out)["inference"];
    CHECK(inference["max_batch_limit"] == l.token);
    CHECK(inference["max_batch_by_memory"].get<int>() > inference["max_batch"].get<int>());
  }
  // Neuron's compiled decode graph runs its batch, whatever memory holds.
  const std::string neuron = "estimate --model llama-3.1-8b --task inference --instance inf2.48xlarge --compiled-batch 8";
  CHECK(run(neuron + " --explain").out.find("runs at most (the batch the decode graph was compiled for): 8") != std::string::npos);
  CHECK(nlohmann::json::parse(run(neuron + " --format json").out)["inference"]["max_batch_limit"] == "compiled_batch");
  // Llama-3.1-70B at 100k-token prompts on 8 A100 40GB: 4 sequences fit, memory binds, and the line names no limit.
  const std::string tight = "estimate --model llama-3.1-70b --task inference --instance p4d.24xlarge --prompt-tokens 100000";
  const Run text = run(tight + " --explain"), json = run(tight + " --format json");
  REQUIRE(text.code == 0);
  const auto inference = nlohmann::json::parse(json.out)["inference"];
  CHECK(inference["max_batch_limit"] == "memory");
  CHECK(inference["max_batch_by_memory"] == inference["max_batch"]);
  CHECK(text.out.find("runs at most") == std::string::npos);
}

TEST_CASE("cli: --prefix-share holds only where the engine caches prefixes") {
  // An engine without a prefix cache is refused, not credited with one.
  for (const std::string engine : {"hf", "gpt-fast", "tgi-1"}) {
    const Run r = run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --clients 4 --prefix-share 0.5 -q --engine " + engine);
    CHECK(r.code == 2);
    CHECK(r.err.find("has no prefix cache") != std::string::npos);
    // The engines named instead are those whose profile has one (data/engines.json).
    CHECK(r.err.find("a shared prefix (vllm, sglang, trtllm, tgi)") != std::string::npos);
  }
  const Run neuron = run("estimate --task inference --instance inf2.48xlarge --model llama-3-8b --clients 4 --prefix-share 0.5 -q");
  CHECK(neuron.code == 2);
  CHECK(neuron.err.find("--prefix-share on inf2.48xlarge: neuron has no prefix cache") != std::string::npos);
  CHECK(neuron.err.find("no engine on neuron has one here; leave --prefix-share out") != std::string::npos);  // no CUDA engine named on Inferentia
  // The engines with one take it: a shorter prefill.
  for (const std::string engine : {"vllm", "sglang", "trtllm", "tgi"}) {
    const std::string base = "estimate --task inference --instance p5.48xlarge --model llama-3-8b --prompt-tokens 4000 -q --format json --engine " + engine;
    const auto with = nlohmann::json::parse(run(base + " --prefix-share 0.5").out)["inference"];
    const auto without = nlohmann::json::parse(run(base).out)["inference"];
    CHECK(with["ttft_s"].get<double>() < without["ttft_s"].get<double>());
    // The assumption credits the engine asked for, not vLLM's feature.
    const Run said = run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --prefix-share 0.5 --engine " + engine);
    CHECK(said.err.find("(--prefix-share; " + engine + "'s prefix cache)") != std::string::npos);
  }
  // A prefill computes one token at least: the prefix the assumption states is the one the estimate holds.
  const std::string tiny = "estimate --task inference --instance g6e.xlarge --model llama-3-8b --prefix-share 0.99 --explain --prompt-tokens ";
  const Run two = run(tiny + "2");
  CHECK(two.err.find("a 1-token prefix (99% of the mean prompt, all but the token a prefill must compute)") != std::string::npos);
  CHECK(two.out.find("shared prefix = 1 prompt tokens") != std::string::npos);
  const Run one = run(tiny + "1");
  CHECK(one.code == 0);
  CHECK(one.err.find("leaves no token to share: every prefill computes its whole prompt") != std::string::npos);
  CHECK(one.out.find("shared prefix =") == std::string::npos);
  // recommend over a family whose engine has none sizes it on whole prompts, and says so.
  const std::string rec = "recommend --task inference --model llama-3-8b --requests-per-second 5 --family inf2 -q --format json";
  const auto shared = nlohmann::json::parse(run(rec + " --prefix-share 0.5").out);
  const auto plain = nlohmann::json::parse(run(rec).out);
  CHECK(shared["recommendation"]["instance"] == plain["recommendation"]["instance"]);
  CHECK(shared["recommendation"]["ttft_s"] == plain["recommendation"]["ttft_s"]);
  bool said = false;
  for (const auto& n : shared["notes"]) said = said || n.get<std::string>().find("has no prefix cache") != std::string::npos;
  CHECK(said);
}

TEST_CASE("cli: --max-waiting-tokens sets TGI's router hold, on engines whose router holds prompts only") {
  const std::string base = "estimate --task inference --instance p5.48xlarge --model llama-3-8b --tp 1 --requests-per-second 40 -q --format json";
  const Run vllm = run(base + " --max-waiting-tokens 5");
  CHECK(vllm.code == 2);
  CHECK(vllm.err.find("--max-waiting-tokens: 5 is TGI's router setting, for an engine whose router holds prompts (tgi-1); engine here: the default") !=
        std::string::npos);
  CHECK(run(base + " --engine tgi-1 --max-waiting-tokens 0").code == 2);
  CHECK(run(base + " --engine tgi-1 --max-waiting-tokens 1001").code == 2);
  const auto held = nlohmann::json::parse(run(base + " --engine tgi-1").out);
  const auto brief = nlohmann::json::parse(run(base + " --engine tgi-1 --max-waiting-tokens 2").out);
  CHECK(held["workload"]["max_waiting_tokens"] == 20);  // TGI 1.x's default (data/engines.json)
  CHECK(brief["workload"]["max_waiting_tokens"] == 2);
  CHECK(nlohmann::json::parse(run(base).out)["workload"]["max_waiting_tokens"].is_null());
  // The default hold is said, as every default is.
  const std::string said = run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --tp 1 --engine tgi-1").err;
  CHECK(said.find("tgi-1's router lets a waiting prompt join a decoding batch after at most 20 decode steps (TGI's default; "
                  "--max-waiting-tokens)") != std::string::npos);
  // A shorter hold: prompts join the decoding batch sooner.
  CHECK(brief["inference"]["at_load"]["ttft_s"].get<double>() < 0.7 * held["inference"]["at_load"]["ttft_s"].get<double>());
}

TEST_CASE("cli: an engine that prefills whole prompts takes no --max-batched-tokens below the prompt") {
  const std::string base = "estimate --task inference --model llama-3-8b --prompt-tokens 1024 --clients 4 -q --max-batched-tokens ";
  for (const std::string engine : {"tgi-1", "neuron"}) {
    const std::string instance = engine == "neuron" ? " --instance inf2.48xlarge" : " --instance p5.48xlarge";
    const Run low = run(base + "64 --engine " + engine + instance);
    CHECK(low.code == 2);
    CHECK(low.err.find("prefills each prompt whole") != std::string::npos);
    CHECK(run(base + "2048 --engine " + engine + instance).code == 0);
  }
  CHECK(run(base + "64 --engine tgi --instance p5.48xlarge").code == 0);  // chunks: ceil(1024 / 64) passes
}

TEST_CASE("cli: a closed loop of --clients is refused with best-of-N samples, which the simulator does not run") {
  const Run r = run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --samples 8 --clients 4 -q");
  CHECK(r.code == 2);
  CHECK(r.err.find("--clients 4: best-of-N samples") != std::string::npos);
  CHECK(run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --samples 8 --requests-per-second 2 -q").code == 0);
}

TEST_CASE("cli: recommend and cost take at most 20000 --simulated-requests, estimate up to 1000000") {
  for (const std::string cmd : {"recommend", "cost"}) {
    const Run big = run(cmd + " --task inference --model llama-3-8b --requests-per-second 5 --family g6e -q --simulated-requests 20001");
    CHECK(big.code == 2);
    CHECK(big.err.find("at most 20000") != std::string::npos);
  }
  CHECK(run("recommend --task inference --model llama-3-8b --requests-per-second 5 --family g6e -q --simulated-requests 20000").code == 0);
  CHECK(run("estimate --task inference --model llama-3-8b --instance g6e.xlarge --requests-per-second 1 -q --simulated-requests 20001").code == 0);
}

TEST_CASE("cli: a load beyond the replicas the search simulates says so, and the analytic count it shows is the one it names") {
  const Run r = run("estimate --task inference --instance p5.48xlarge --model llama-3-70b --requests-per-second 40000 -q --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out)["inference"];
  const int replicas = j["replicas"].get<int>();
  CHECK(replicas > 4096);
  const std::string text = run("estimate --task inference --instance p5.48xlarge --model llama-3-70b --requests-per-second 40000 -q").out;
  CHECK(text.find(fmt::format("the load needs about {} replicas at 80% utilisation (analytic), more than the 4096 replicas the search simulates", replicas)) !=
        std::string::npos);
  CHECK(text.find("the most the instance limit allows") == std::string::npos);
}

TEST_CASE("cli: a load that cannot be served names its shape: a trace's bursts") {
  test_files::TempDir dir("gpuadvisor_bursty");
  auto bursts = [&](int each) {
    std::string t;
    for (int i = 0; i < 2 * each; ++i)
      t += fmt::format("{{\"arrival_s\": {}, \"prompt_tokens\": 1000, \"output_tokens\": 200}}\n", i < each ? 0 : 3600);
    const std::string file = dir.file(fmt::format("b{}.jsonl", each));
    test_files::write(file, t);
    return file;
  };
  // Two bursts of 1,000 prompts an hour apart on at most 16 replicas: 60 or
  // more arrive together at each, and their TTFT misses 500 ms.
  const Run r = run("recommend --task inference --model llama-3-8b -q --max-instances 2 --trace " + bursts(1000));
  REQUIRE(r.code == 3);
  CHECK(r.err.find("on average, as the trace records it (its bursts included) is the limit") != std::string::npos);
  // Bursts of 300 with no such limit are served: a few replicas share each
  // burst (they were refused while the search probed 4,096 replicas, most of
  // which the 600 requests left idle).
  const Run served = run("recommend --task inference --model llama-3-8b -q --trace " + bursts(300));
  CHECK(served.code == 0);
  CHECK(served.out.rfind("Recommended: ", 0) == 0);
}

TEST_CASE("cli: cost for hours given prints no memory share it has no estimate of, and bills the expected costs as the run is billed") {
  const std::string job = "cost --model llama-3-8b --task pretrain --tokens 1M --instance p5.48xlarge --count 1 -q";
  for (const std::string hours : {" --hours 10", " --hours 1s"}) {
    INFO(hours);
    const Run text = run(job + hours);
    REQUIRE(text.code == 0);
    CHECK(text.out.find("nan") == std::string::npos);  // once: "memory: -nan% of each accelerator's"
    CHECK(text.out.find("memory:") == std::string::npos);
    const Run json = run(job + hours + " --format json");
    REQUIRE(json.code == 0);
    const auto doc = nlohmann::json::parse(json.out);
    const auto& costs = doc["recommendation"]["costs"];
    // The expected cost (failures and restarts included) is never below the
    // cost of the run itself: both at EC2's 60 s minimum (it was $0.02 against $0.92).
    CHECK(costs["on_demand_expected_usd"].get<double>() >= costs["on_demand_usd"].get<double>());
    CHECK(costs["spot_expected_usd"].get<double>() >= costs["spot_usd"].get<double>());
  }
}

TEST_CASE("cli: short answers are not refused as a nearly idle service when their typical request is well within the targets") {
  auto monthly = [](const std::string& outputs) {
    const Run r = run("recommend --model llama-3-8b --task inference --requests-per-second 20 -q --format json" + outputs);
    REQUIRE(r.code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    return doc["recommendation"]["costs"]["ranked_usd_per_month"].get<double>();
  };
  // Three-token answers cost more than 256-token ones (each gap between their
  // tokens may hold another prompt's prefill), but not the 4x of a fleet
  // picked because the cheaper ones, meeting the targets with their typical
  // request at 9 ms of the 30 ms per token, were called nearly idle.
  CHECK(monthly(" --output-tokens 3") <= 2.5 * monthly(""));
  const Run r = run("recommend --model llama-3-8b --task inference --requests-per-second 20 --output-tokens 3 -q --format json");
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& rejected : doc["cannot_run"]) {
    const std::string reason = rejected.dump();
    if (reason.find("nearly idle") == std::string::npos) continue;
    INFO(reason);
    CHECK(reason.find("its typical request takes") != std::string::npos);
  }
}

TEST_CASE("cli: an RL rollout longer than the policy's context is refused, as a served request is") {
  for (const std::string job : {"recommend --model llama-3-8b --task rl --prompt-tokens 1000000", "recommend --model llama-3-8b --task rl --response-tokens 100000",
                                "estimate --task rl --instance p5.48xlarge --model llama-3-8b --prompt-tokens 7000 --response-tokens 1024"}) {
    INFO(job);
    const Run r = run(job + " -q");
    CHECK(r.code == 2);
    CHECK(r.err.find("longer than llama-3-8b's context length of 8192 tokens") != std::string::npos);
  }
  // The longest rollout is what must fit: a mean of 4,000 with the default longest of twice it does not, a longest given that fits does.
  CHECK(run("recommend --model llama-3-8b --task rl --response-tokens 4000 -q").code == 2);
  CHECK(run("recommend --model llama-3-8b --task rl --response-tokens 4000 --response-tokens-max 7000 -q").code == 0);
  CHECK(run("recommend --model llama-3-8b --task rl -q").code == 0);
}

TEST_CASE("cli: under a load, estimate's --batch caps the simulated engine too: the replicas and the utilisation are one replica's") {
  const Run r = run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --tp 1 --batch 1 --requests-per-second 100 --format json");
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  const auto& inference = doc["inference"];
  // Once: 8 replicas sized by a simulation of the engine's own 1,024 sequences, at 2808% of batch 1's capacity.
  CHECK(inference["utilisation"].get<double>() <= 1.0);
  CHECK(inference["at_load"]["mean_sequences"].get<double>() <= 1.0 + 1e-9);
  CHECK(inference["replicas"].get<int>() * inference["requests_per_second"].get<double>() >= 100);
  CHECK(r.err.find("the engine runs at most --batch 1 sequence at a time (as --concurrency 1)") != std::string::npos);
}

TEST_CASE("cli: a request's samples beyond the batch run in waves: its latency is the last wave's, not one sequence's") {
  const Run r = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --samples 1000 -q --format json");
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  const auto& e = doc["inference"];
  const int batch = e["batch"].get<int>();
  REQUIRE(batch < 1000);
  // 1,000 samples of 256 tokens at the replica's generated tokens/s take about
  // that long (it read 7.7 s, one sample's latency, against some 380 s).
  CHECK(e["latency_s"].get<double>() >= 0.95 * 1000 * 256 / e["output_tokens_per_second"].get<double>());
  const Run text = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --samples 1000 -q");
  CHECK(text.out.find(fmt::format("waves x generated tokens - 1) x TPOT: 1000 samples, {} at a time", batch)) != std::string::npos);
  // Samples the batch holds at once: one wave, as before.
  const Run four = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --samples 4 -q");
  CHECK(four.out.find("TTFT + (generated tokens - 1) x TPOT") != std::string::npos);
}

TEST_CASE("cli: a batch above --concurrency names the limit it exceeds, and a batch job's monthly cost is never $0.00") {
  const Run over = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --batch 100 --concurrency 10 -q");
  CHECK(over.code == 3);
  CHECK((over.out + over.err).find("batch 100 exceeds the engine's sequence limit of 10 (--concurrency)") != std::string::npos);
  CHECK((over.out + over.err).find("KV cache per accelerator; 10 sequences fit") == std::string::npos);  // memory holds far more
  const Run trickle = run("recommend --model deepseek-v3 --task inference --mode offline --tokens-per-day 1 -q");
  REQUIRE(trickle.code == 0);
  CHECK(trickle.out.find("$0.00/month") == std::string::npos);
  CHECK(trickle.out.find("under $0.01/month") != std::string::npos);
}

TEST_CASE("cli: one-token answers with a length spread stay one token: no time per token the service does not bind") {
  const Run r = run("recommend --model llama-3-8b --task inference --requests-per-second 5 --output-tokens 1 --length-spread 0.99 -q");
  REQUIRE(r.code == 0);
  const std::string first = r.out.substr(0, r.out.find('\n'));
  INFO(first);
  CHECK(first.find("per token") == std::string::npos);  // it read "p90 162 ms per token" beside "meets the latency targets"
  CHECK(first.find("request latency") != std::string::npos);
}

// A p95 no set of whole-token requests of that mean has is refused (hostile
// review: --output-tokens 1 --output-tokens-p95 5 dropped the TPOT target of a
// one-token service while the simulator drew outputs of up to five tokens),
// and one wider than any lognormal of its mean says the p95 the simulator
// draws instead (--output-tokens 100 --output-tokens-p95 390 is the widest).
TEST_CASE("cli: a p95 length must describe requests of its mean") {
  const std::string serve = "recommend --model llama-3-8b --task inference --requests-per-second 5 ";
  Run one = run(serve + "--output-tokens 1 --output-tokens-p95 5");
  CHECK(one.code == 2);
  CHECK(one.err.find("--output-tokens-p95: 5 cannot be the 95th percentile of requests averaging 1 token:") != std::string::npos);
  CHECK(one.err.find("the mean is at least 1.2; give a p95 of at most 1 or a larger --output-tokens") != std::string::npos);
  Run wide = run(serve + "--prompt-tokens 100 --prompt-tokens-p95 1982");  // 20 x 100 - 19 = 1981
  CHECK(wide.code == 2);
  CHECK(wide.err.find("--prompt-tokens-p95: 1982 cannot be") != std::string::npos);
  CHECK(run(serve + "--prompt-tokens 100 --prompt-tokens-p95 1981 --output-tokens 100").code == 0);
  Run beyond = run(serve + "--output-tokens 300 --output-tokens-p95 1500");
  CHECK(beyond.code == 0);
  CHECK(beyond.err.find("output lengths: a p95 of 1500 tokens is 5.0x the mean of 300, wider than any lognormal of that mean reaches "
                        "(3.87x): the simulator draws the widest, a p95 of about 1160 tokens") != std::string::npos);
  CHECK(run(serve + "--output-tokens 300 --output-tokens-p95 1150").err.find("wider than any lognormal") == std::string::npos);
  // Without a load no lengths are drawn, and nothing is said.
  CHECK(run("recommend --model llama-3-8b --task inference --output-tokens 300 --output-tokens-p95 1500").err.find("lognormal") == std::string::npos);
}

// Best-of-N samples and a verifier are not simulated: the assumptions said the
// targets bound at the p90 of the simulated requests while estimate warned the
// figures were analytic (blind read of a --samples run), and --slo-percentile
// was taken and had no effect.
TEST_CASE("cli: targets of an unsimulated best-of-N service bind at the means, as said") {
  const std::string serve = "recommend --model qwen3-32b --task inference --requests-per-second 5 --reasoning-tokens 4000 ";
  Run samples = run(serve + "--samples 4");
  CHECK(samples.code == 0);
  CHECK(samples.err.find("simulated requests") == std::string::npos);
  CHECK(samples.err.find("the time-per-output-token target applies to the mean: best-of-N samples and a verifier are not simulated") !=
        std::string::npos);
  Run plain = run(serve);
  CHECK(plain.err.find("the latency targets bind at the p90 of the simulated requests") != std::string::npos);
  Run percentile = run(serve + "--samples 4 --slo-percentile 99");
  CHECK(percentile.code == 2);
  CHECK(percentile.err.find("--slo-percentile binds the targets at a percentile of the simulated latencies, and best-of-N samples are not "
                            "simulated") != std::string::npos);
  Run verifier = run(serve + "--samples 4 --verifier-model llama-3-8b --slo-percentile 99");
  CHECK(verifier.code == 2);
  CHECK(verifier.err.find("a verifier is not simulated") != std::string::npos);
}

// A pick sized by simulation shows the bands of the simulated figures against
// measurements under a load (never fitted), beside the analytic band: TTFT
// under load misses by far more than the pooled band says.
TEST_CASE("cli: a simulated serving pick shows its accuracy at load, by metric") {
  Run loaded = run("recommend --model deepseek-v3 --task inference --requests-per-second 10");
  CHECK(loaded.code == 0);
  const auto at = loaded.out.find("\n  accuracy at load: TTFT +-");
  REQUIRE(at != std::string::npos);
  const std::string line = loaded.out.substr(at + 1, loaded.out.find('\n', at + 1) - at - 1);
  CHECK(line.find("typically optimistic: faster than measured), TPOT +-") != std::string::npos);
  CHECK(line.find("p90 |error| over 54 published measurements under load on B200, never fitted") != std::string::npos);
  Run json = run("--format json recommend --model deepseek-v3 --task inference --requests-per-second 10");
  const auto doc = nlohmann::json::parse(json.out);
  const auto& bands = doc["recommendation"]["accuracy_at_load"];
  CHECK(bands["ttft_s"]["cases"] == 54);
  CHECK(bands["ttft_s"]["median_signed_error"].get<double>() > 0.05);
  CHECK(bands["e2e_s"]["group"] == "B200");
  // No load: nothing simulated, no such band.
  Run idle = run("recommend --model deepseek-v3 --task inference");
  CHECK(idle.out.find("accuracy at load") == std::string::npos);
  const auto idle_doc = nlohmann::json::parse(run("--format json recommend --model deepseek-v3 --task inference").out);
  CHECK(idle_doc["recommendation"]["accuracy_at_load"].is_null());
}

// From a hostile-input review and a blind trial (2026-12-06): what the
// answer said disagreed with what it did, or hid what a user must know.
TEST_CASE("cli: offline targets bind at the analytic means, as the assumption now says") {
  Run offline = run("recommend --task inference --model llama-3-70b --requests-per-second 4 --mode offline --max-tpot 20ms");
  CHECK(offline.code == 0);
  CHECK(offline.err.find("simulated requests, queueing included") == std::string::npos);
  CHECK(offline.err.find("offline: the latency targets apply to the analytic means at the load, and replicas are sized by utilisation") !=
        std::string::npos);
  const auto doc = nlohmann::json::parse(run("--format json recommend --task inference --model llama-3-70b --requests-per-second 4 --mode offline "
                                             "--max-tpot 20ms").out);
  CHECK(doc["recommendation"]["sized_by"] == "utilisation");
}

TEST_CASE("cli: a reasoning model's headline carries its first visible token") {
  Run r = run("recommend --model deepseek-r1 --task inference --requests-per-second 2 --reasoning-tokens 4k");
  CHECK(r.code == 0);
  const std::string first = r.out.substr(0, r.out.find('\n'));
  INFO(first);
  const auto at = first.find("p90 first visible token ");
  REQUIRE(at != std::string::npos);
  CHECK(first.find("p90 TTFT") < at);
  // The headline's figure is the detail line's p90.
  const std::string seconds = first.substr(at + 24, first.find(',', at) - at - 24);
  CHECK(r.out.find("  first visible token: p90 " + seconds + ", mean") != std::string::npos);
  CHECK(run("recommend --model deepseek-r1 --task inference --requests-per-second 2").out.find("first visible token") == std::string::npos);
}

TEST_CASE("cli: a word where a duration, latency or amount goes says which forms are taken") {
  CHECK(run("recommend --model llama-3-8b --task lora --deadline today").err.find(
            "--deadline: 'today' is not a number (a duration: a number and a unit, e.g. 8h, 90min, 14d or 2w)") != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task inference --max-ttft fast").err.find("(a latency: a number and a unit, e.g. 200ms or 2s)") !=
        std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task lora --budget lots").err.find("(an amount in USD, e.g. 5000, 12.5k or $1M)") != std::string::npos);
}

TEST_CASE("cli: a precision the accelerator lacks is said where the estimate substitutes one") {
  Run t4 = run("estimate --instance g4dn.xlarge --params 1B --task lora --precision bf16");
  CHECK(t4.code == 0);
  CHECK(t4.out.find("bf16 asked: T4 has no bf16 matrix path, so fp16 (with loss scaling)") != std::string::npos);
  CHECK(run("estimate --instance p5.48xlarge --params 1B --task lora --precision bf16").out.find("asked:") == std::string::npos);
}

TEST_CASE("cli: fine-tuning past the checkpoint's context says it is context extension") {
  Run past = run("recommend --model llama-3-8b --task finetune --seq-len 32k");
  CHECK(past.code == 0);
  CHECK(past.err.find("sequence length 32768 is beyond llama-3-8b's context of 8192 tokens: training at it extends the context (rotary positions "
                      "past the context need RoPE scaling, e.g. YaRN), priced here as plain finetune at that length") != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task lora --seq-len 8192").err.find("beyond") == std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task pretrain --seq-len 32k --tokens 1B").err.find("is beyond") == std::string::npos);  // a new model's own context
}

// Hostile review: estimate priced 8 x p5.48xlarge at the on-demand rate
// without a word, where cost ranks the same count at a Capacity Block
// ($15,947 for 2 days) because 8 is beyond the usual on-demand count.
TEST_CASE("cli: estimate says what buys a count beyond the usual on-demand limit, as cost prices it") {
  const std::string job = " --instance p5.48xlarge --count 8 --model llama-3-70b --task pretrain --precision fp8 --tokens 10B";
  Run est = run("estimate" + job);
  CHECK(est.code == 0);
  const auto at = est.out.find("\ncost        capacity");
  REQUIRE(at != std::string::npos);
  const std::string row = est.out.substr(at + 1, est.out.find('\n', at + 1) - at - 1);
  CHECK(row.find("8 x p5.48xlarge is more than one can usually start on demand (about 2): buy 1 Capacity Block of 2 days (about $15,947") !=
        std::string::npos);
  Run cost = run("cost" + job);
  CHECK(cost.out.find("$15,947 in Capacity Blocks") != std::string::npos);  // the same block
  const auto doc = nlohmann::json::parse(run("--format json estimate" + job).out);
  CHECK(doc["cost"]["capacity"]["channel"] == "capacity block/reservation");
  const auto two = nlohmann::json::parse(run("--format json estimate --instance p5.48xlarge --count 2 --model llama-3-70b --task pretrain "
                                             "--precision fp8 --tokens 10B").out);
  CHECK(two["cost"]["capacity"].is_null());
  CHECK(run("estimate --instance p5.48xlarge --count 2 --model llama-3-70b --task pretrain --precision fp8 --tokens 10B").out.find("cost        capacity") ==
        std::string::npos);
}

// Blind trial: --pricing spot picked 128 x g5.48xlarge for a 7B pre-training
// with no word on whether 128 of them can be had at once on spot (g5 has no
// known usual count, so spot is offered at any count).
TEST_CASE("cli: a spot pick of many instances with no usual count says nothing vouches for that many at once") {
  Run spot = run("recommend --params 7B --task pretrain --tokens 2T --pricing spot");
  CHECK(spot.code == 0);
  CHECK(spot.out.find("Recommended: 128 x g5.48xlarge") == 0);
  CHECK(spot.out.find("  capacity: no usual count is known for g5.48xlarge: 128 instances on spot at once may not be there to be had, and a "
                      "synchronous job runs only with every node (EC2's Spot placement score for 128 x g5.48xlarge") != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task lora --pricing spot").out.find("capacity:") == std::string::npos);  // one instance
}

// Hostile review: --params 1M priced a 17M-parameter model with only an
// info line; a count the shape cannot reach now warns.
TEST_CASE("cli: --params below the smallest shape warns that the larger shape is what is priced") {
  Run tiny = run("recommend --params 1M --task lora");
  CHECK(tiny.code == 0);
  CHECK(tiny.err.find("warning: --params 1M: the smallest shape built has 17.2M parameters (16.4M of them the 32000-token vocabulary's "
                      "embeddings), and is what is priced") != std::string::npos);
  CHECK(run("recommend --params 7B --task lora").err.find("smallest shape") == std::string::npos);
  CHECK(run("recommend --params 1M --vocab 1000 --task lora").err.find("smallest shape") == std::string::npos);  // the user's own shape
}

TEST_CASE("cli: a release at or after the current profile says which figures it runs") {
  // vllm@9.9 ran the current profile with no word of it, where an earlier release is named in an assumption.
  for (const char* release : {"9.9", "0.14rc1", "0.20.1"}) {
    CAPTURE(release);
    const Run r = run(std::string("estimate --instance g5.12xlarge --params 7B --task inference --engine vllm@") + release);
    REQUIRE(r.code == 0);
    CHECK(r.err.find(std::string("served with vllm at the current profile's figures: vLLM V1 (0.14 and later")) != std::string::npos);
    CHECK(r.err.find(std::string("(--engine vllm@") + release + "; every release from the newest profiled on") != std::string::npos);
  }
  CHECK(run("estimate --instance g5.12xlarge --params 7B --task inference --engine vllm").err.find("current profile's figures") == std::string::npos);
  // A 5,000-character --engine is echoed shortened.
  const Run long_engine = run("estimate --instance g5.12xlarge --params 7B --task inference --engine vllm@0." + std::string(5000, '1') + "x");
  CHECK(long_engine.code == 2);
  CHECK(long_engine.err.size() < 300);
}

TEST_CASE("cli: --prefix-share is in the JSON workload") {
  const std::string base = "estimate --instance p5.48xlarge --model llama-3-8b --task inference --prompt-tokens 1000 --format json";
  const auto with = nlohmann::json::parse(run(base + " --prefix-share 0.5").out)["workload"];
  CHECK(with["prefix_share"].get<double>() == Approx(0.5));
  CHECK(with["prefix_tokens"] == 500);
  const auto without = nlohmann::json::parse(run(base).out)["workload"];
  CHECK(without["prefix_share"].get<double>() == 0);
  CHECK(without["prefix_tokens"] == 0);
  // The share of the mean prompt, at most all but the token a prefill computes.
  CHECK(nlohmann::json::parse(run(base + " --prefix-share 0.99").out)["workload"]["prefix_tokens"] == 990);
  const std::string one = "estimate --instance p5.48xlarge --model llama-3-8b --task inference --prompt-tokens 2 --format json --prefix-share 0.99";
  CHECK(nlohmann::json::parse(run(one).out)["workload"]["prefix_tokens"] == 1);
}

TEST_CASE("cli: a shape from --params has head counts that divide, and a rejection says what does not") {
  // --params 1B was scaled to 17 heads, which no tensor-parallel degree divides: trn1 refused it as "needs 5.4 GB, has 34.4 GB".
  const Run one = run("estimate --params 1B --task lora --instance trn1.2xlarge");
  REQUIRE(one.code == 0);
  CHECK(one.err.find("hidden 2048, 16 heads (16 KV)") != std::string::npos);
  // Grouped-query presets keep their 8 KV heads across sizes, as Llama 3 does at 8B, 70B and 405B.
  CHECK(run("estimate --params 175B --task pretrain --instance p5.48xlarge --count 64").err.find("96 heads (8 KV)") != std::string::npos);
  CHECK(run("estimate --params 1T --task pretrain --instance p5.48xlarge --count 512").err.find("176 heads (8 KV)") != std::string::npos);
  // A shape that fits in memory but divides over nothing is refused for that, not for memory.
  const Run odd = run("cost --params 1B --heads 17 --kv-heads 17 --hidden 2176 --task lora --tokens 100M --family trn1");
  CHECK(odd.code == 3);
  const std::string said = odd.out + odd.err;
  CHECK(said.find("fits in memory (") != std::string::npos);
  CHECK(said.find("but no parallel layout divides its 17 heads (17 KV)") != std::string::npos);
  CHECK(said.find("GB per accelerator with up to") == std::string::npos);
  // And the error's advice starts with the shape, not with a lighter task or more instances.
  CHECK(odd.err.find("(some types hold it in memory, but no layout divides its heads, layers and global batch: set --heads, --layers or "
                     "--global-batch; else try --task qlora") != std::string::npos);
  const Run big = run("recommend --params 405B --task lora --family g5 --max-instances 1");
  CHECK(big.code == 3);
  CHECK(big.err.find("no layout divides") == std::string::npos);  // memory, not the shape, stops a 405B on g5
}

TEST_CASE("cli: --explain says how the replicas were counted") {
  // Sized by simulation, the line gave the utilisation formula's name to the simulation's count: ceil(1 / 16.2) is 1, not 3.
  const Run bursty = run("recommend --params 7B --task inference --requests-per-second 1 --arrival gamma:10 --explain");
  REQUIRE(bursty.code == 0);
  const std::regex simulated("replicas = the fewest whose simulated p90 latencies meet the targets at 1 requests/s \\(the sizing: line; "
                             "methodology §Serving under load\\), rounded up to whole instances = ([0-9]+) on [0-9]+ instance\\(s\\); at 80% "
                             "utilisation the formula ceil\\(load / \\(requests/s per replica x utilisation\\)\\) would give ([0-9]+)");
  std::smatch m;
  REQUIRE(std::regex_search(bursty.out, m, simulated));
  CHECK(std::stoi(m[1].str()) > std::stoi(m[2].str()));  // the burst needs more than the mean load does
  CHECK(bursty.out.find("  sizing: " + m[1].str() + " replicas: the fewest whose simulated p90") != std::string::npos);
  // Offline, the formula is the count, with its figures.
  const Run offline = run("recommend --params 7B --task inference --requests-per-second 20 --mode offline --explain");
  REQUIRE(offline.code == 0);
  CHECK(std::regex_search(offline.out, std::regex("replicas = ceil\\(load 20 / \\(requests/s per replica [0-9.]+ x utilisation 1\\.00\\)\\), "
                                                  "rounded up to whole instances = [0-9]+ on [0-9]+ instance\\(s\\)")));
  // Without a load: one instance's slots.
  CHECK(run("recommend --params 7B --task inference --explain").out.find("replicas = the replica slots of one instance (no load given)") !=
        std::string::npos);
}

TEST_CASE("cli: a cheapest or fastest option at a count its type's row does not show says so") {
  // `cheapest: 64 x trn1.32xlarge ... $1,332,345` stood above a table whose trn1.32xlarge row was 128 at $1,434,833:
  // a table pasted into a spreadsheet lost the cheapest option.
  const std::string job = "cost --params 70B --task pretrain --tokens 1T";
  const Run r = run(job);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("  cheapest: 64 x trn1.32xlarge") != std::string::npos);
  CHECK(r.out.find("(not the count of the table's trn1.32xlarge row; --all-counts lists every count)") != std::string::npos);
  CHECK(r.out.find("\ntrn1.32xlarge     128 ") != std::string::npos);  // the row it is not
  // Every count listed: nothing to say.
  CHECK(run(job + " --all-counts").out.find("not the count of the table's") == std::string::npos);
  // The pick is always its type's row.
  CHECK(run("recommend --params 13B --task lora").out.find("not the count of the table's") == std::string::npos);
}

TEST_CASE("cli: markdown keeps the pick's lines apart: the headline a paragraph, the indented lines list items") {
  const Run md = run("recommend --params 13B --task lora --format markdown");
  REQUIRE(md.code == 0);
  // The headline, then a blank line, then the why line as a list item (not "  why:", which a renderer joins to the headline).
  CHECK(md.out.rfind("Recommended: ", 0) == 0);
  CHECK(md.out.find("on-demand\n\n- why: ") != std::string::npos);
  CHECK(md.out.find("\n  why: ") == std::string::npos);
  CHECK(md.out.find("\n- cheapest: ") != std::string::npos);
  CHECK(md.out.find("\n| # | INSTANCE ") != std::string::npos);  // the table stays a table
  CHECK(gpuadvisor::markdown_text("Head\n  a: 1\n  b: 2\n\nNote\n") == "Head\n\n- a: 1\n- b: 2\n\nNote\n\n");
}

TEST_CASE("cli: --explain keeps a CSV or markdown stdout one document") {
  // A hostile review: the formulas landed in the CSV on stdout, rows of 0-4 fields after a 37-column table.
  for (const std::string cmd : {"recommend --model llama-3-8b --task pretrain --tokens 10B --explain",
                                "estimate --instance p5.48xlarge --count 8 --params 7B --task pretrain --explain"}) {
    const Run csv = run(cmd + " --format csv");
    REQUIRE(csv.code == 0);
    CHECK(csv.out.find("MFU = ") == std::string::npos);
    CHECK(csv.err.find("MFU = ") != std::string::npos);
    const Run md = run(cmd + " --format markdown");
    REQUIRE(md.code == 0);
    CHECK(md.out.find("MFU = ") == std::string::npos);
    // The text table keeps them on stdout.
    CHECK(run(cmd).out.find("MFU = ") != std::string::npos);
  }
}

TEST_CASE("cli: a spot pick is held to its deadline at the time its spot cost pays for") {
  // A blind trial: 512 x g5.48xlarge "16.0 d" against a 21-day deadline, its spot cost billed for 408 h (17.0 d) with reclaims.
  const std::string job = "recommend --params 7B --task pretrain --tokens 2T --deadline 21d --pricing spot";
  const Run json = run(job + " --format json");
  REQUIRE(json.code == 0);
  const auto p = nlohmann::json::parse(json.out)["recommendation"];
  REQUIRE(p["costs"]["ranked_pricing"] == "spot");
  const double uninterrupted = p["total_hours"], expected = p["deadline_margin"]["predicted_hours"];
  CHECK(expected > uninterrupted * 1.03);
  // The spot cost is the rate for those expected hours.
  CHECK(p["costs"]["spot_expected_usd"].get<double>() / p["costs"]["spot_usd"].get<double>() == Approx(expected / uninterrupted).epsilon(0.01));
  CHECK(p["deadline_margin"]["hours_at_p90"].get<double>() == Approx(expected * (1 + p["deadline_margin"]["p90_abs_error"].get<double>())));
  const Run text = run(job);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("d expected with reclaims (") != std::string::npos);
  CHECK(text.out.find("d uninterrupted), $") != std::string::npos);
  // On demand the headline keeps the one prediction.
  const Run on_demand = run("recommend --params 7B --task pretrain --tokens 2T --deadline 21d");
  CHECK(on_demand.out.find("expected with reclaims") == std::string::npos);
}

TEST_CASE("cli: a type over the budget at a priced count says so, not that its price is unknown") {
  // A blind trial: p6-b300 (blocks priced, on demand not) read "price unknown, so the budget cannot be checked" while the
  // summary named its $452,874 option as the cheapest the budget left out.
  const Run r = run("recommend --params 30B --task pretrain --tokens 1T --deadline 30d --budget 400k --precision fp8");
  REQUIRE(r.code == 3);
  const std::string said = r.out + r.err;
  CHECK(said.find("p6-b300.48xlarge: over the $400,000 budget (cheapest $") != std::string::npos);
  CHECK(said.find("p6-b300.48xlarge: price unknown") == std::string::npos);
  // A type with no priced count at all still says its price is unknown.
  CHECK(said.find("p5e.48xlarge: price unknown, so the budget cannot be checked") != std::string::npos);
  // With both limits, the deadline's hint says whether a later deadline helps within the budget (the trial read 30.3 d as "a day later").
  CHECK(r.err.find("the fastest option --deadline left out takes 30.") != std::string::npos);
  CHECK(r.err.find(", and none it left out is within the $400,000 budget") != std::string::npos);
  const Run wider = run("recommend --params 30B --task pretrain --tokens 1T --deadline 30d --budget 600k");
  REQUIRE(wider.code == 3);
  CHECK(std::regex_search(wider.err, std::regex(", the fastest within the \\$600,000 budget [0-9.]+ d;")));
}

TEST_CASE("cli: training in fp4 warns that its convergence is not predicted") {
  const Run fp4 = run("recommend --params 8B --task pretrain --tokens 100B --precision fp4 --format json");
  REQUIRE(fp4.code == 0);
  const auto warnings = nlohmann::json::parse(fp4.out)["warnings"];
  bool said = false;
  for (const auto& w : warnings) said |= w.get<std::string>().find("--precision fp4: training in 4 bits (NVFP4) is recent") == 0;
  CHECK(said);
  CHECK(run("recommend --params 8B --task pretrain --tokens 100B --precision fp8").err.find("4 bits") == std::string::npos);
}

TEST_CASE("cli: --emit-dir creates its last directory, never a missing parent") {
  // A hostile review, as root: `--emit-dir /nonexistent/sub` made a new tree at the root of the file system.
  test_files::TempDir t("gpuadvisor_emit_dir");
  const std::string job = "recommend --task inference --model llama-3-8b --requests-per-second 5 --emit k8s --emit-dir ";
  const Run deep = run(job + t.file("missing/sub"));
  CHECK(deep.code == 2);
  CHECK(deep.err.find("the directory " + t.file("missing") + " does not exist") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(t.file("missing")));
  REQUIRE(run(job + t.file("new") + "/").code == 0);  // a trailing slash names the same directory
  CHECK(std::filesystem::exists(t.file("new") + "/deployment.yaml"));
}

TEST_CASE("cli: a simulated service's launch files start the engine at the sequence limit the simulator ran with") {
  // The capacity batch (113 on p5.4xlarge) is the analytic sizing's; the replicas were sized by simulating the engine's own
  // limit, and a server capped at 113 would queue requests the simulation ran.
  const std::string service = "--model llama-3-8b --task inference --requests-per-second 5";
  test_files::TempDir t("gpuadvisor_test_seqs");
  const std::string dir = t.file("emit");
  const Run pick = run("recommend --format json --emit k8s --emit-dir " + dir + " " + service);
  REQUIRE(pick.code == 0);
  const std::string instance = nlohmann::json::parse(pick.out)["recommendation"]["instance"].get<std::string>();
  const auto estimate = nlohmann::json::parse(run("estimate --format json --instance " + instance + " " + service).out)["inference"];
  const int simulated_limit = estimate["at_load"]["engine_limits"]["max_sequences"].get<int>();
  REQUIRE(simulated_limit > estimate["batch"].get<int>());
  const std::string commands = test_files::slurp(dir + "/serve_commands.sh");
  CHECK(commands.find(fmt::format("--max-num-seqs {} ", simulated_limit)) != std::string::npos);
  CHECK(commands.find(fmt::format("--max-running-requests {} ", simulated_limit)) != std::string::npos);
}

TEST_CASE("cli: an RL update split over context-parallel ranks keeps them in verl's arguments (a blind trial: CP2 was dropped)") {
  const std::string rl = "recommend --model llama-3.1-8b --task rl --prompts-per-step 256 --samples-per-prompt 8 --prompt-tokens 512 "
                         "--response-tokens 2048 --response-tokens-max 8192 --steps 300";
  const auto doc = nlohmann::json::parse(run(rl + " --format json").out);
  const int cp = doc["recommendation"]["layout"]["cp"].get<int>();
  REQUIRE(cp > 1);  // 8,192-token responses on 40 GB A100s: the update splits each sequence
  test_files::TempDir t("gpuadvisor_test_verl_cp");
  const std::string dir = t.file("emit");
  REQUIRE(run(rl + " --emit slurm --emit-dir " + dir).code == 0);
  const std::string args = test_files::slurp(dir + "/verl_args.txt");
  CHECK(args.find(fmt::format("actor_rollout_ref.actor.ulysses_sequence_parallel_size={}\n", cp)) != std::string::npos);
  CHECK(args.find(fmt::format("actor_rollout_ref.ref.ulysses_sequence_parallel_size={}\n", cp)) != std::string::npos);
  CHECK(args.find(fmt::format(" CP {} ", cp)) != std::string::npos);
}

TEST_CASE("cli: --no-overheads refuses the overhead flags it would ignore (a hostile review: accepted, output unchanged)") {
  for (const char* flag : {"--provision-minutes 500", "--image-gb 1000", "--load-gb-per-s 0.1", "--neuron-compile-minutes 90", "--resume"}) {
    const Run both = run(std::string("recommend --params 13B --task lora --no-overheads ") + flag);
    CHECK(both.code == 2);
    CHECK(both.err.find("--no-overheads counts the training steps only, so " + std::string(flag).substr(0, std::string(flag).find(' '))) !=
          std::string::npos);
  }
  CHECK(run("recommend --params 13B --task lora --no-overheads").code == 0);
}

TEST_CASE("cli: a long-context job is searched past one sequence per instance (a hostile review: 32 instances called fastest)") {
  // 4M tokens a step at 128k tokens is a global batch of 32 sequences: the count search stopped at 32 instances, though
  // context parallelism splits each sequence over more ranks (estimate --count 128 ran it in 35 h against 5.4 d).
  const auto doc = nlohmann::json::parse(
      run("recommend --model llama-3-8b --task pretrain --tokens 1T --max-instances 4096 --seq-len 128k --family p6-b200 --format json").out);
  const auto& pick = doc["recommendation"];
  CHECK(pick["count"].get<int>() > doc["workload"]["global_batch"].get<int>());
  CHECK(pick["layout"]["cp"].get<int>() > 1);
  CHECK(pick["total_hours"].get<double>() < 48);
  // Without a long sequence, no more than a sequence per instance: pipeline stages past it left a stage fewer micro-batches
  // than stages, and a 1-hour deadline picked 384 p4d.24xlarge for a 200M-token 70B fine-tune.
  const auto short_doc = nlohmann::json::parse(run("recommend --model llama-3-70b --task finetune --tokens 200M --deadline 1h --format json").out);
  CHECK(short_doc["recommendation"]["count"].get<int>() <= short_doc["workload"]["global_batch"].get<int>());
}

TEST_CASE("cli: past the horizon, only the hints that would change the answer, and tokens x epochs within the token limit") {
  // A million epochs of 1e17 tokens: refused as --tokens 1e23 would be (it priced a 9-digit year count at one day's block).
  const Run epochs = run("recommend --params 7B --task finetune --tokens 1e17 --epochs 1000000");
  CHECK(epochs.code == 2);
  CHECK(epochs.err.find("--tokens x --epochs: 1e+17 x 1e+06 = 1e+23 tokens is over the 1e+17 limit") != std::string::npos);
  // 18,599 years: no --horizon takes it (at most a thousand years); the fastest is at the 8-instance cap, so more may help.
  const Run capped = run("recommend --params 70B --task pretrain --tokens 1e17 --max-instances 8");
  CHECK(capped.code == 3);
  CHECK(capped.err.find("--horizon") == capped.err.find("--horizon); the fastest"));  // named once, as the constraint
  CHECK(capped.err.find("give more --max-instances") != std::string::npos);
  // The fastest at 128 of 4,096 allowed: more instances would not help, a longer horizon would.
  const Run long_context = run("recommend --model deepseek-v3 --task pretrain --tokens 15T --seq-len 128k --max-instances 4096");
  CHECK(long_context.code == 3);
  CHECK(long_context.err.find("d accepts it") != std::string::npos);
  CHECK(long_context.err.find("--max-instances") == std::string::npos);
}

TEST_CASE("cli: estimate across instances without EFA gives the figures and says recommend would not (a hostile review)") {
  const Run no_efa = run("estimate --instance g5.xlarge --count 64 --model llama-3-8b --task finetune --format json");
  REQUIRE(no_efa.code == 0);
  const auto warnings = nlohmann::json::parse(no_efa.out)["warnings"];
  CHECK(std::any_of(warnings.begin(), warnings.end(),
                    [](const auto& w) { return w.template get<std::string>().find("g5.xlarge has no EFA") != std::string::npos; }));
  const Run one = run("estimate --instance g5.xlarge --count 1 --model llama-3-8b --task lora --format json");
  CHECK(one.out.find("no EFA") == std::string::npos);
  const Run efa = run("estimate --instance p5.48xlarge --count 4 --model llama-3-8b --task finetune --format json");
  CHECK(efa.out.find("no EFA") == std::string::npos);
}

TEST_CASE("cli: fp8 weights serve the publisher's fp8 checkpoint where the preset names one (a blind trial: bf16 quantised at load)") {
  test_files::TempDir t("gpuadvisor_test_fp8_ckpt");
  const std::string service = "recommend --model qwen3-235b-a22b --task inference --requests-per-second 4 --prompt-tokens 2000 "
                              "--output-tokens 500 --max-ttft 1s --emit slurm --emit-dir ";
  REQUIRE(run(service + t.file("fp8") + " --weights fp8").code == 0);
  const std::string fp8 = test_files::slurp(t.file("fp8") + "/serve_commands.sh");
  CHECK(fp8.find("vllm serve Qwen/Qwen3-235B-A22B-FP8 ") != std::string::npos);
  CHECK(fp8.find("the publisher's fp8 checkpoint of Qwen/Qwen3-235B-A22B") != std::string::npos);
  REQUIRE(run(service + t.file("bf16")).code == 0);
  CHECK(test_files::slurp(t.file("bf16") + "/serve_commands.sh").find("vllm serve Qwen/Qwen3-235B-A22B ") != std::string::npos);
  // --hf-model still names exactly what is served.
  REQUIRE(run(service + t.file("own") + " --weights fp8 --hf-model me/qwen-fp8").code == 0);
  CHECK(test_files::slurp(t.file("own") + "/serve_commands.sh").find("vllm serve me/qwen-fp8 ") != std::string::npos);
}

TEST_CASE("cli: a flag given twice is named in the tool's words (a blind trial read the parser's 'At Most 1 required')") {
  const Run twice = run("recommend --params 13B --params 7B --task lora");
  CHECK(twice.code == 2);
  CHECK(twice.err.find("--params is given 2 times; give it once") != std::string::npos);
  const Run json = run("recommend --params 13B --task lora --task qlora --format json");
  CHECK(json.code == 2);
  CHECK(nlohmann::json::parse(json.out)["error"]["message"].get<std::string>().find("--task is given 2 times; give it once") != std::string::npos);
}

TEST_CASE("cli: estimate names the Capacity Block of a type with no on-demand rate, as cost prices it (a hostile review)") {
  const std::string job = "--instance p6-b300.48xlarge --model llama-3-8b --task finetune --format json";
  const auto estimate = nlohmann::json::parse(run("estimate " + job).out);
  const auto& capacity = estimate["cost"]["capacity"];
  REQUIRE(capacity.is_object());
  CHECK(capacity["channel"] == "capacity block");
  CHECK(capacity["note"].get<std::string>().find("has no on-demand rate in us-east-1") != std::string::npos);
  // The block's cost in the note is cost's figure for the same run.
  const auto cost = nlohmann::json::parse(run("cost --count 1 " + job).out);
  const double usd = cost["recommendation"]["costs"]["ranked_usd"].get<double>();
  CHECK(capacity["note"].get<std::string>().find(fmt::format("about ${}", gpuadvisor::format_thousands(usd, 0))) != std::string::npos);
  // A priced type within the usual count still has none.
  CHECK(nlohmann::json::parse(run("estimate --instance p5.48xlarge --model llama-3-8b --task finetune --format json").out)["cost"]["capacity"].is_null());
}

TEST_CASE("cli: estimate's launch files name the Capacity Block that delivers the count, as recommend's do (a hostile review)") {
  test_files::TempDir t("gpuadvisor_test_estimate_channel");
  const std::string job = "estimate --model llama-3-70b --task pretrain --tokens 10B --emit skypilot --instance p5.48xlarge --emit-dir ";
  REQUIRE(run(job + t.file("eight") + " --count 8").code == 0);
  const std::string eight = test_files::slurp(t.file("eight") + "/task.yaml");
  CHECK(eight.find("YOUR_CAPACITY_RESERVATION_ID") != std::string::npos);
  CHECK(eight.find("capacity-block") != std::string::npos);
  REQUIRE(run(job + t.file("two") + " --count 2").code == 0);
  const std::string two = test_files::slurp(t.file("two") + "/task.yaml");
  CHECK(two.find("YOUR_CAPACITY_RESERVATION_ID") == std::string::npos);
  CHECK(two.find("on-demand") != std::string::npos);
}

TEST_CASE("cli: estimate refuses layout flags no layout can take as bad input, naming them (a hostile review: exit 3, a generic reason)") {
  const std::string job = "estimate --instance p5.48xlarge --model llama-3-8b --task pretrain --tokens 10B ";
  const std::pair<const char*, const char*> cases[] = {
      {"--pp 1 --recompute full --recompute-layers 33", "--recompute-layers 33: a pipeline stage holds 32 of llama-3-8b's 32 layers"},
      {"--pp 2 --recompute full --recompute-layers 17", "a pipeline stage holds 16 of llama-3-8b's 32 layers at --pp 2"},
      {"--micro-batch 2048", "--micro-batch 2048 is more than the global batch of 1024 sequences"},
      {"--zero-stage 3 --pp 2", "--zero-stage 3 with --pp 2: ZeRO stage 2 and 3 cannot be combined with pipeline parallelism"}};
  for (const auto& [flags, message] : cases) {
    const Run r = run(job + flags);
    CHECK(r.code == 2);
    CHECK(r.err.find(message) != std::string::npos);
  }
  CHECK(run(job + "--recompute full --recompute-layers 32").code == 0);
}

TEST_CASE("cli: a large model served in bf16 by default is told of fp8 (a blind trial: twice the price, nothing said)") {
  const auto big = nlohmann::json::parse(run("recommend --model qwen3-235b-a22b --task inference --requests-per-second 4 --format json").out);
  const auto said = [](const nlohmann::json& doc, const std::string& text) {
    for (const auto& a : doc["assumptions"])
      if (a.get<std::string>().find(text) != std::string::npos) return true;
    return false;
  };
  CHECK(said(big, "--weights fp8 halves their memory"));
  CHECK(said(big, "its publisher's fp8 checkpoint: Qwen/Qwen3-235B-A22B-FP8"));
  // Not for a small model, nor where fp8 was asked for.
  CHECK_FALSE(said(nlohmann::json::parse(run("recommend --model llama-3-8b --task inference --format json").out), "--weights fp8 halves"));
  CHECK_FALSE(said(nlohmann::json::parse(run("recommend --model qwen3-235b-a22b --task inference --requests-per-second 4 --weights fp8 --format json").out),
                   "--weights fp8 halves"));
}

TEST_CASE("cli: --compare-to reads back the tool's own document whose cost rounds to $0.00 (a hostile review: refused)") {
  test_files::TempDir t("gpuadvisor_test_zero_base");
  const std::string overlay = t.file("cheap.json");
  std::ofstream(overlay) << R"({"sources": {"TEAM": {"title": "a test rate", "url": "https://intranet.example/rates"}},
 "instances": [{"name": "p5.4xlarge", "prices": {"us-east-1": {"on_demand": {"usd_per_hour": 0.0001, "as_of": "2026-11-20", "source": "TEAM"}}}}]})";
  const std::string reservation = "cost --instance p5.4xlarge --count 1 --hours 1 --catalog-add " + overlay;
  const Run base = run(reservation + " --format json");
  REQUIRE(base.code == 0);
  REQUIRE(nlohmann::json::parse(base.out)["recommendation"]["costs"]["ranked_usd"].get<double>() == 0.0);
  const std::string base_file = t.file("base.json");
  std::ofstream(base_file) << base.out;
  const Run again = run(reservation + " --compare-to " + base_file);
  CHECK(again.code == 0);
  CHECK(again.err.find("--compare-to") == std::string::npos);
}

TEST_CASE("cli: --params out of range is quoted as typed (a hostile review: 999999 read '1e+06 is too small ... at least 1M')") {
  const Run small = run("recommend --params 999999 --task lora");
  CHECK(small.code == 2);
  CHECK(small.err.find("--params: 999999 is too small for a transformer (at least 1M)") != std::string::npos);
  const Run big = run("recommend --params 1.0000001e15 --task lora");
  CHECK(big.code == 2);
  CHECK(big.err.find("--params: 1.0000001e15 exceeds the supported 1e+15") != std::string::npos);
}

TEST_CASE("cli: a bare --cost-slack above 1 is refused as ambiguous, as --discount's is (a hostile review: 5 silently meant 500%)") {
  const Run bare = run("recommend --params 13B --task lora --cost-slack 5");
  CHECK(bare.code == 2);
  CHECK(bare.err.find("--cost-slack: '5' is read as a fraction of the cheapest price (0.2 is 20%), and 5 would be 500%; write 5% for 5 percent") !=
        std::string::npos);
  CHECK(run("recommend --params 13B --task lora --cost-slack 0.5").code == 0);
  CHECK(run("recommend --params 13B --task lora --cost-slack 1").code == 0);
  CHECK(run("recommend --params 13B --task lora --cost-slack 500%").code == 0);
}
