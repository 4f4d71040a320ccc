// `prices fetch` against a local server laid out like the AWS bulk endpoint,
// and the streaming import of an offer file in the real schema with
// look-alike rows around known marker prices.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_run.hpp"
#include "http_server.hpp"

using cli_test::run;

namespace {

namespace fs = std::filesystem;

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/gpuadvisor_fetch_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An offer file with the four marker rates (p5.48xlarge 55.0411, p4d.24xlarge
// 21.9577, g5.xlarge 1.0069, inf2.xlarge 0.7587 in us-east-1) and their look-alikes.
std::string make_offer(const std::string& dir, int megabytes) {
  const std::string path = dir + "/offer.json";
  REQUIRE(std::system((std::string(GPUADVISOR_MAKE_OFFER) + " " + path + " " + std::to_string(megabytes)).c_str()) == 0);
  return path;
}

const char* kOfferPath = "/offers/v1.0/aws/AmazonEC2/20261101000000/us-east-1/index.json";
const char* kSavingsPath = "/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/20261101000000/us-east-1/index.json";

// The bulk endpoint's layout: indexes that point at the regional files.
void serve_prices(test_http::Server& s, const std::string& offer_body, test_http::Behaviour offer_behaviour = test_http::Behaviour::normal) {
  s.add("/offers/v1.0/aws/AmazonEC2/current/region_index.json",
        {R"({"regions": {"us-east-1": {"regionCode": "us-east-1", "currentVersionUrl": ")" + std::string(kOfferPath) + R"("}}})"});
  s.add(kOfferPath, {offer_body, "\"offer-v1\"", offer_behaviour});
  s.add("/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json",
        {R"({"regions": [{"regionCode": "us-east-1", "versionUrl": ")" + std::string(kSavingsPath) + R"("}]})"});
  s.add(kSavingsPath, {slurp(cli_test::data("prices/savings_plans.json")), "\"sp-v1\""});
  s.add("/spot-advisor-data.json", {slurp(cli_test::data("prices/spot_advisor.json")), "\"advisor-v1\""});
}

std::string fetch_args(const test_http::Server& s, const TempDir& t, const std::string& limits = "--retries 1 --timeout 2") {
  return "prices fetch --region us-east-1 --base-url " + s.url() + " --spot-advisor-url " + s.url() + "/spot-advisor-data.json --download-dir " +
         t.path + "/downloads " + limits;
}

double on_demand(const std::string& overlay, const char* instance, const std::string& env = "GPUADVISOR_TODAY=2026-12-01") {
  auto r = run((overlay.empty() ? "" : "--catalog-add " + overlay + " ") + "catalog show " + instance + " --format json", env);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out)["instance"]["prices"]["us-east-1"]["on_demand"]["usd_per_hour"].get<double>();
}

}  // namespace

TEST_CASE("streaming import: exactly the marker prices come out of an offer file full of look-alikes") {
  TempDir t;
  const std::string offer = make_offer(t.path, 24);
  CHECK(fs::file_size(offer) > 20'000'000);
  const std::string out = t.path + "/prices.json";
  auto r = run("prices import --offer-file " + offer + " --output " + out + " --format json");
  REQUIRE(r.code == 0);
  CHECK(on_demand(out, "p5.48xlarge") == 55.0411);
  CHECK(on_demand(out, "p4d.24xlarge") == 21.9577);
  CHECK(on_demand(out, "g5.xlarge") == 1.0069);
  CHECK(on_demand(out, "inf2.xlarge") == 0.7587);
  // Capacity Block SKUs land in their own field; the reserved term's upfront is spread over the year.
  const auto overlay = nlohmann::json::parse(slurp(out));
  for (const auto& i : overlay["instances"]) {
    const auto& use1 = i["prices"]["us-east-1"];
    CHECK(use1["capacity_block"]["usd_per_hour"] == 12.34);
    CHECK(use1["commitments"]["reserved-standard-1yr-all-upfront"]["upfront_usd"] == 8760.0);
  }
  // Every skipped class is counted.
  const auto report = nlohmann::json::parse(r.out)["report"];
  std::set<std::string> skipped;
  for (const auto& l : report)
    if (l["outcome"] == "skipped") skipped.insert(l["detail"].get<std::string>());
  for (const char* why : {"operating system Windows", "operating system RHEL", "operating system SUSE", "not shared tenancy (dedicated or host)",
                          "pre-installed software (e.g. SQL Server)", "bring-your-own-license",
                          "capacity reservation look-alike (not capacitystatus=Used)", "instance type not in the catalog"})
    CHECK(skipped.count(why) == 1);
}

TEST_CASE("prices fetch: downloads through the indexes, and an unchanged file is not downloaded again") {
  TempDir t;
  test_http::Server s;
  serve_prices(s, slurp(make_offer(t.path, 2)));
  const std::string out = t.path + "/prices.json";
  auto first = run(fetch_args(s, t) + " --output " + out + " --format json");
  REQUIRE(first.code == 0);
  CHECK(on_demand(out, "p5.48xlarge") == 55.0411);
  CHECK(nlohmann::json::parse(slurp(out))["prices_as_of"] == "2026-12-01");
  auto second = run(fetch_args(s, t) + " --output " + out + " --format json");
  REQUIRE(second.code == 0);
  CHECK(s.route(kOfferPath).requests == 2);
  CHECK(s.route(kOfferPath).full_bodies == 1);  // the revisit was answered 304
  bool unchanged = false;
  const auto doc = nlohmann::json::parse(second.out);
  for (const auto& f : doc["files"])
    if (f["kind"] == "offer file") unchanged = f["outcome"] == "unchanged";
  CHECK(unchanged);
  CHECK(on_demand(out, "p5.48xlarge") == 55.0411);
}

TEST_CASE("prices fetch: without --output the cached prices are what every command uses, and say so") {
  TempDir t;
  test_http::Server s;
  serve_prices(s, slurp(make_offer(t.path, 1)));
  const std::string env = "GPUADVISOR_TODAY=2026-12-01 XDG_CACHE_HOME=" + t.path + "/cache";
  auto fetched = run(fetch_args(s, t), env);
  INFO(fetched.err);
  REQUIRE(fetched.code == 0);
  CHECK(fs::exists(t.path + "/cache/gpuadvisor/prices.json"));
  CHECK(on_demand("", "p5.48xlarge", env) == 55.0411);
  auto doc = nlohmann::json::parse(run("catalog show p5.48xlarge --format json", env).out);
  CHECK(doc["catalog"]["prices_origin"].get<std::string>().find("fetched") != std::string::npos);
  CHECK(doc["catalog"]["prices_as_of"] == "2026-12-01");
  auto ignored = run("--no-cache-prices catalog show p5.48xlarge --format json", env);
  CHECK(nlohmann::json::parse(ignored.out)["instance"]["prices"]["us-east-1"]["on_demand"]["usd_per_hour"] == 55.04);
  auto table = run("recommend --params 7B --task lora --top 1", env);
  CHECK(table.out.find("prices as of 2026-12-01, fetched") != std::string::npos);
}

TEST_CASE("prices fetch: a transient 500 is retried") {
  TempDir t;
  test_http::Server s;
  serve_prices(s, slurp(make_offer(t.path, 1)), test_http::Behaviour::fail_once);
  auto r = run(fetch_args(s, t) + " --output " + t.path + "/prices.json");
  CHECK(r.code == 0);
  CHECK(s.route(kOfferPath).requests == 2);
}

TEST_CASE("prices fetch: failures exit 2 with a clear message and lose nothing") {
  TempDir t;
  const std::string out = t.path + "/prices.json";
  std::ofstream(out) << "{\"description\": \"the previous prices\"}\n";
  SECTION("a truncated body") {
    test_http::Server s;
    serve_prices(s, slurp(make_offer(t.path, 1)), test_http::Behaviour::truncate);
    auto r = run(fetch_args(s, t) + " --output " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find("truncated") != std::string::npos);
  }
  SECTION("a server that never answers") {
    test_http::Server s;
    serve_prices(s, "{}", test_http::Behaviour::hang);
    auto r = run(fetch_args(s, t, "--retries 0 --timeout 1") + " --output " + out);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("timed out") != std::string::npos);
  }
  SECTION("a file of another service") {
    test_http::Server s;
    serve_prices(s, R"({"offerCode": "AmazonS3", "products": {}, "terms": {}})");
    auto r = run(fetch_args(s, t) + " --output " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find("expected \"AmazonEC2\"") != std::string::npos);
  }
  SECTION("a region the index does not have") {
    test_http::Server s;
    serve_prices(s, "{}");
    auto r = run(fetch_args(s, t) + " --region eu-west-9 --output " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find("no offer file for region 'eu-west-9'") != std::string::npos);
  }
  SECTION("an HTTP error") {
    test_http::Server s;
    auto r = run(fetch_args(s, t) + " --output " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find("HTTP 404") != std::string::npos);
  }
  CHECK(slurp(out) == "{\"description\": \"the previous prices\"}\n");
}
