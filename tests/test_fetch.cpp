// `prices fetch` against a local server laid out like the AWS bulk endpoint,
// and the streaming import of an offer file in the real schema with
// look-alike rows around known marker prices.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
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
    std::string tmpl = (fs::temp_directory_path() / "gpuadvisor_fetch_XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()));
    path = tmpl;
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

std::string fetch_args(const test_http::Server& s, const TempDir& t, const std::string& limits = "--retries 1 --timeout 2 --deadline 30") {
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

TEST_CASE("prices fetch: failures exit 2, or 5 where asking again may succeed, with a clear message and lose nothing") {
  TempDir t;
  const std::string out = t.path + "/prices.json";
  std::ofstream(out) << "{\"description\": \"the previous prices\"}\n";
  SECTION("a truncated body") {
    test_http::Server s;
    serve_prices(s, slurp(make_offer(t.path, 1)), test_http::Behaviour::truncate);
    auto r = run(fetch_args(s, t) + " --output " + out);
    CHECK(r.code == 5);  // a cut-off body: asking again may get it whole
    CHECK(r.err.find("truncated") != std::string::npos);
  }
  SECTION("a server that never answers") {
    test_http::Server s;
    serve_prices(s, "{}", test_http::Behaviour::hang);
    auto r = run(fetch_args(s, t, "--retries 0 --timeout 1 --deadline 30") + " --output " + out);
    INFO(r.err);
    CHECK(r.code == 5);  // unavailable: a CI job retries this, not a bad flag
    CHECK(r.err.find("timed out") != std::string::npos);
    auto j = run(fetch_args(s, t, "--retries 0 --timeout 1 --deadline 30") + " --output " + out + " --format json");
    CHECK(j.code == 5);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["error"]["kind"] == "unavailable");
    CHECK(doc["error"]["exit_code"] == 5);
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

// ---- Hardening: every fetch ends by its deadline and never poisons the cache ----

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every file of a directory with its content, to check that a failed fetch changed nothing.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != ".lock") out[e.path().filename().string()] = slurp(e.path().string());
  return out;
}

const char* kEc2IndexPath = "/offers/v1.0/aws/AmazonEC2/current/region_index.json";

std::string ec2_index_to(const std::string& url) {
  return R"({"regions": {"us-east-1": {"regionCode": "us-east-1", "currentVersionUrl": ")" + url + R"("}}})";
}

// Two fetches at once, each with its own stderr file.
std::pair<cli_test::Run, cli_test::Run> run_together(const std::string& a, const std::string& b, const TempDir& t) {
  auto start = [&](const std::string& args, const std::string& err) {
    const std::string cmd = "GPUADVISOR_TODAY=2026-12-01 XDG_CACHE_HOME=/nonexistent-gpuadvisor-cache " + std::string(GPUADVISOR_BINARY) + " " +
                            args + " 2>" + err;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    return p;
  };
  auto finish = [](FILE* p, const std::string& err) {
    std::string out;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
    const int status = pclose(p);
    return cli_test::Run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, slurp(err)};
  };
  const std::string err_a = t.path + "/a.err", err_b = t.path + "/b.err";
  FILE* pa = start(a, err_a);
  FILE* pb = start(b, err_b);
  cli_test::Run ra = finish(pa, err_a), rb = finish(pb, err_b);
  return {ra, rb};
}

}  // namespace

TEST_CASE("prices fetch: a 304 when nothing is cached is a failed attempt with a clear message, not a crash", "[fetch]") {
  TempDir t;
  test_http::Server s;
  serve_prices(s, slurp(make_offer(t.path, 1)));
  s.add(kEc2IndexPath, {ec2_index_to(kOfferPath), "\"index-v1\"", test_http::Behaviour::always_304});
  auto r = run(fetch_args(s, t, "--retries 1 --timeout 2 --deadline 30") + " --output " + t.path + "/prices.json");
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("HTTP 304") != std::string::npos);
  CHECK(r.err.find("no cached copy was offered") != std::string::npos);
  CHECK(r.err.find("filesystem error") == std::string::npos);
  CHECK(s.route(kEc2IndexPath).requests == 2);  // retried like any failed attempt
  CHECK(!fs::exists(t.path + "/prices.json"));
}

TEST_CASE("prices fetch: two fetches into one download directory at once run in turn and both succeed", "[fetch]") {
  TempDir t;
  test_http::Server s;
  serve_prices(s, slurp(make_offer(t.path, 1)), test_http::Behaviour::slow);
  const std::string args = fetch_args(s, t, "--retries 0 --timeout 5 --deadline 60");
  auto [a, b] = run_together(args + " --output " + t.path + "/a.json", args + " --output " + t.path + "/b.json", t);
  INFO(a.err);
  INFO(b.err);
  CHECK(a.code == 0);
  CHECK(b.code == 0);
  CHECK(on_demand(t.path + "/a.json", "p5.48xlarge") == 55.0411);
  CHECK(on_demand(t.path + "/b.json", "p5.48xlarge") == 55.0411);
  for (const auto& [name, text] : snapshot(t.path + "/downloads")) CHECK(name[0] != '.');  // no temporary left behind
}

TEST_CASE("prices fetch: a redirect loop, a drip, a dead server or a broken body ends within the deadline and keeps the cache", "[fetch]") {
  TempDir t;
  test_http::Server s;
  const std::string offer = slurp(make_offer(t.path, 1)), out = t.path + "/prices.json";
  serve_prices(s, offer);
  REQUIRE(run(fetch_args(s, t) + " --output " + out).code == 0);
  const auto before = snapshot(t.path + "/downloads");
  const std::string overlay_before = slurp(out);
  std::string limits = "--retries 1 --timeout 1 --deadline 8", expected;
  double bound_s = 8 + 2;
  int code = 2;  // an answer that asking again will not change; 5 where the network or the server's load failed
  using B = test_http::Behaviour;
  SECTION("a redirect to itself, forever") {
    s.add(kOfferPath, {offer, "\"offer-v2\"", B::redirect_self});
    limits = "--retries 1 --timeout 1 --deadline 8", expected = "more than 5 redirects";
  }
  SECTION("a drip of about 3 bytes/s") {
    s.add(kOfferPath, {offer, "\"offer-v2\"", B::drip});
    limits = "--retries 0 --timeout 1 --deadline 30", expected = "fewer than 1000 bytes/s", bound_s = 6, code = 5;
  }
  SECTION("a server that never answers, retried until the deadline") {
    s.add(kOfferPath, {offer, "\"offer-v2\"", B::hang});
    limits = "--retries 8 --timeout 2 --deadline 3", expected = "the --deadline of 3 s ran out", bound_s = 5, code = 5;
  }
  SECTION("an HTML page with valid validators") {
    s.add(kOfferPath, {"<html><body>Service Unavailable</body></html>", "\"offer-v2\""});
    expected = "not a usable offer file: not valid JSON";
  }
  SECTION("a gzip body with valid validators") {
    s.add(kOfferPath, {std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8) + "xyz", "\"offer-v2\""});
    expected = "not a usable offer file";
  }
  SECTION("a connection closed mid-body without Content-Length") {
    s.add(kOfferPath, {offer, "\"offer-v2\"", B::close_mid_body});
    expected = "not a usable offer file: not valid JSON";
  }
  const auto start = std::chrono::steady_clock::now();
  auto r = run(fetch_args(s, t, limits) + " --output " + out);
  INFO(r.err);
  CHECK(seconds_since(start) < bound_s);
  CHECK(r.code == code);
  CHECK(r.err.find(expected) != std::string::npos);
  CHECK(r.err.find("the previous prices are kept") != std::string::npos);
  CHECK(snapshot(t.path + "/downloads") == before);
  CHECK(slurp(out) == overlay_before);
  // The next good fetch succeeds (the kept validators still match: 304).
  s.add(kOfferPath, {offer, "\"offer-v1\""});
  auto good = run(fetch_args(s, t) + " --output " + out);
  INFO(good.err);
  CHECK(good.code == 0);
  CHECK(on_demand(out, "p5.48xlarge") == 55.0411);
}

TEST_CASE("prices fetch: index URLs and redirects stay on the index's host unless --allow-host", "[fetch]") {
  TempDir t;
  test_http::Server s, other;
  const std::string offer = slurp(make_offer(t.path, 1)), out = t.path + "/prices.json";
  serve_prices(s, offer);
  other.add("/evil/index.json", {offer, "\"evil-v1\""});
  const std::string other_hp = other.url().substr(std::string("http://").size());
  SECTION("a userinfo trick is a path on the index's host") {
    s.add(kEc2IndexPath, {ec2_index_to("@" + other_hp + "/evil/index.json")});
    auto r = run(fetch_args(s, t) + " --output " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find("HTTP 404") != std::string::npos);
  }
  SECTION("another host is refused, and allowed with --allow-host") {
    s.add(kEc2IndexPath, {ec2_index_to("//" + other_hp + "/evil/index.json")});
    auto r = run(fetch_args(s, t) + " --output " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find("refused (pass --allow-host " + other_hp + " if you trust it)") != std::string::npos);
    CHECK(other.route("/evil/index.json").requests == 0);
    auto allowed = run(fetch_args(s, t) + " --allow-host " + other_hp + " --output " + out);
    INFO(allowed.err);
    CHECK(allowed.code == 0);
    CHECK(other.route("/evil/index.json").requests == 1);
  }
  SECTION("a redirect to another host is refused, and followed without validators with --allow-host") {
    REQUIRE(run(fetch_args(s, t) + " --output " + out).code == 0);
    s.add(kOfferPath, {offer, "\"offer-v1\"", test_http::Behaviour::redirect, other.url() + "/evil/index.json"});
    auto r = run(fetch_args(s, t) + " --output " + out);
    CHECK(r.code == 2);
    CHECK(r.err.find("redirects to " + other.url() + "/evil/index.json, another host") != std::string::npos);
    CHECK(other.route("/evil/index.json").requests == 0);
    auto allowed = run(fetch_args(s, t) + " --allow-host 127.0.0.1:" + other_hp.substr(other_hp.find(':') + 1) + " --output " + out);
    INFO(allowed.err);
    CHECK(allowed.code == 0);
    CHECK(s.route(kOfferPath).last_if_none_match == "\"offer-v1\"");  // the cached file's own host gets them
    CHECK(other.route("/evil/index.json").requests == 1);
    CHECK(other.route("/evil/index.json").last_if_none_match.empty());
  }
}

TEST_CASE("prices fetch: a cached file that fails its check is discarded and downloaded again", "[fetch]") {
  TempDir t;
  test_http::Server s;
  serve_prices(s, slurp(make_offer(t.path, 1)));
  const std::string out = t.path + "/prices.json", cached = t.path + "/downloads/ec2_us-east-1.json";
  REQUIRE(run(fetch_args(s, t) + " --output " + out).code == 0);
  const std::string broken = "<html>an older version kept this</html>", stale = t.path + "/downloads/.ec2_us-east-1.json.Ab12Cd";
  std::ofstream(cached) << broken;
  std::ofstream(stale) << "a killed run's temporary";
  SECTION("validators that match the broken file") {
    std::ofstream(cached + ".validators.json") << nlohmann::json{{"etag", "\"offer-v1\""}, {"bytes", broken.size()}}.dump();
    auto r = run(fetch_args(s, t) + " --output " + out);
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.err.find("discarded with its validators, downloading it again") != std::string::npos);
  }
  SECTION("validators of another file (written without the size, or for another size)") {
    std::ofstream(cached + ".validators.json") << nlohmann::json{{"etag", "\"offer-v1\""}}.dump();
    auto r = run(fetch_args(s, t) + " --output " + out);
    INFO(r.err);
    CHECK(r.code == 0);
  }
  CHECK(s.route(kOfferPath).last_if_none_match.empty());
  CHECK(s.route(kOfferPath).full_bodies == 2);
  CHECK(on_demand(out, "p5.48xlarge") == 55.0411);
  CHECK(!fs::exists(stale));
}

TEST_CASE("prices fetch: a partial fetch keeps what the cache holds (kept (cached))", "[fetch]") {
  TempDir t;
  test_http::Server s;
  serve_prices(s, slurp(make_offer(t.path, 1)));
  const std::string out = t.path + "/prices.json";
  REQUIRE(run(fetch_args(s, t) + " --output " + out).code == 0);
  auto r = run(fetch_args(s, t) + " --no-spot-advisor --no-savings-plans --output " + out + " --format json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto overlay = nlohmann::json::parse(slurp(out));
  CHECK(overlay["sources"].contains("IMPORT-SPOT-ADVISOR"));
  CHECK(overlay["sources"].contains("IMPORT-SP"));
  CHECK(overlay["sources"].contains("IMPORT-OFFER"));
  std::set<std::string> kept;
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& f : doc["files"])
    if (f["outcome"] == "kept") kept.insert(f["kind"].get<std::string>());
  CHECK(kept == std::set<std::string>{"spot advisor", "savings plans file"});
  auto table = run(fetch_args(s, t) + " --no-spot-advisor --output " + out);
  CHECK(table.out.find("kept (cached)") != std::string::npos);
}

TEST_CASE("prices fetch: a region index larger than 8 MB is refused without reading it whole", "[fetch]") {
  TempDir t;
  test_http::Server s;
  serve_prices(s, "{}");
  s.add(kEc2IndexPath, {std::string(9'000'000, '['), "\"index-v1\""});
  auto r = run(fetch_args(s, t, "--retries 0 --timeout 2 --deadline 30") + " --output " + t.path + "/prices.json");
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("larger than the 8 MB allowed for the EC2 region index") != std::string::npos);
  CHECK(!fs::exists(t.path + "/downloads/ec2_region_index.json"));
}

TEST_CASE("prices fetch: an ETag of raw bytes (invalid UTF-8) costs a later download, not a crash (found by fuzz_fetch)", "[fetch]") {
  TempDir t;
  test_http::Server s;
  serve_prices(s, slurp(make_offer(t.path, 1)));
  s.add(kOfferPath, {slurp(make_offer(t.path, 1)), "\"e1\xff\xff\"", test_http::Behaviour::normal});
  const std::string out = t.path + "/prices.json";
  const auto r = run(fetch_args(s, t) + " --output " + out);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(on_demand(out, "p5.48xlarge") == 55.0411);
  CHECK_FALSE(fs::exists(t.path + "/downloads/ec2_us-east-1.json.validators.json"));  // not kept: it could not be sent back as it came
}

TEST_CASE("libcurl is loaded by the fetch commands only, not at every start") {
  // The dynamic loader lists every library it loads under LD_DEBUG=libs.
  auto r = cli_test::run("catalog --format csv", "LD_DEBUG=libs GPUADVISOR_TODAY=2026-12-01");
  REQUIRE(r.code == 0);
  CHECK(r.err.find("libstdc++") != std::string::npos);  // the listing is there
  CHECK(r.err.find("libcurl") == std::string::npos);
  // A fetch loads it (and fails cleanly here: nothing listens on port 9).
  auto f = cli_test::run("prices fetch --region us-east-1 --base-url http://127.0.0.1:9 --retries 0 --deadline 5 --no-spot-advisor --no-savings-plans",
                         "LD_DEBUG=libs XDG_CACHE_HOME=/tmp/gpuadvisor-curl-load-test GPUADVISOR_TODAY=2026-12-01");
  CHECK(f.err.find("libcurl") != std::string::npos);
  std::filesystem::remove_all("/tmp/gpuadvisor-curl-load-test");
}

TEST_CASE("the top-level --help lists exit code 5 beside 0-4") {
  const auto help = run("--help");
  CHECK(help.code == 0);
  CHECK(help.out.find("5 unavailable") != std::string::npos);
}
