// `prices fetch --capacity-blocks` against a local EC2 Query API endpoint on
// 127.0.0.1 that answers with recorded DescribeCapacityBlockOfferings XML:
// paged offerings, expired and refused credentials, throttling, no
// offerings, a malformed body. Credentials come from the child's own
// environment or a temporary credentials file, never from the real ~/.aws.
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "cli_run.hpp"
#include "gpuadvisor/catalog/capacity_block_fetch.hpp"
#include "http_server.hpp"
#include "loopback.hpp"

using cli_test::run;

namespace {

namespace fs = std::filesystem;

struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuadvisor_cb_XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()));
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// ---- A scripted EC2 endpoint: each POST is recorded and answered by the script ----

struct Ec2Request {
  std::string head, body;
  std::string header(std::string name) const {  // case-insensitive, as HTTP header names are
    std::string lower = head;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto at = lower.find("\r\n" + name + ":");
    if (at == std::string::npos) return "";
    const auto start = head.find_first_not_of(' ', at + 3 + name.size());
    return head.substr(start, head.find("\r\n", start) - start);
  }
};
struct Ec2Reply {
  int status = 200;
  std::string body;
};

class Ec2Server {
 public:
  using Script = std::function<Ec2Reply(const Ec2Request&, int index)>;
  explicit Ec2Server(Script script) : script_(std::move(script)) {
    fd_ = test_http::listen_on_loopback(port_);
    thread_ = std::thread([this] { serve(); });
  }
  ~Ec2Server() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::vector<Ec2Request> requests() {
    std::lock_guard<std::mutex> l(m_);
    return requests_;
  }

 private:
  Script script_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex m_;
  std::vector<Ec2Request> requests_;

  static bool readable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, ms) > 0;
  }
  void serve() {
    while (!stop_) {
      if (!readable(fd_, 50)) continue;
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      handle(c);
      close(c);
    }
  }
  // Headers, then Content-Length bytes of body; every wait bounded.
  void handle(int c) {
    std::string data;
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    Ec2Request req;
    while (std::chrono::steady_clock::now() < deadline) {
      const auto end = data.find("\r\n\r\n");
      if (end != std::string::npos) {
        req.head = data.substr(0, end + 2);
        const std::string length = req.header("Content-Length");
        const size_t want = length.empty() ? 0 : std::stoul(length);
        if (data.size() >= end + 4 + want) {
          req.body = data.substr(end + 4, want);
          break;
        }
      }
      if (!readable(c, 100)) continue;
      const ssize_t n = recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      data.append(buf, static_cast<size_t>(n));
    }
    int index;
    {
      std::lock_guard<std::mutex> l(m_);
      index = static_cast<int>(requests_.size());
      requests_.push_back(req);
    }
    const Ec2Reply r = script_(req, index);
    const std::string reason = r.status == 200 ? "OK" : r.status == 503 ? "Service Unavailable" : "Bad Request";
    const std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason + "\r\nContent-Type: text/xml;charset=UTF-8\r\nContent-Length: " +
                            std::to_string(r.body.size()) + "\r\nConnection: close\r\n\r\n" + r.body;
    size_t sent = 0;
    while (sent < out.size()) {
      const ssize_t n = send(c, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }
};

// ---- Recorded responses (EC2 Query API 2016-11-15, ids shortened) ----

std::string offering(const std::string& id, const std::string& type, int count, int hours, int minutes, const std::string& fee,
                     const std::string& zone, const std::string& start, const std::string& end) {
  return "<item><capacityBlockOfferingId>" + id + "</capacityBlockOfferingId><instanceType>" + type +
         "</instanceType><availabilityZone>" + zone + "</availabilityZone><instanceCount>" + std::to_string(count) +
         "</instanceCount><startDate>" + start + "</startDate><endDate>" + end + "</endDate><capacityBlockDurationHours>" +
         std::to_string(hours) + "</capacityBlockDurationHours><capacityBlockDurationMinutes>" + std::to_string(minutes) +
         "</capacityBlockDurationMinutes><upfrontFee>" + fee + "</upfrontFee><currencyCode>USD</currencyCode><tenancy>default</tenancy></item>";
}

std::string offerings_page(const std::string& items, const std::string& next_token = "") {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DescribeCapacityBlockOfferingsResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\n"
         "    <requestId>3e2c2d1c-6a2f-4b7e-9d0a-5f6c1e2b7a90</requestId>\n    <capacityBlockOfferingSet>" +
         items + "</capacityBlockOfferingSet>\n" + (next_token.empty() ? "" : "    <nextToken>" + next_token + "</nextToken>\n") +
         "</DescribeCapacityBlockOfferingsResponse>\n";
}

std::string ec2_error(const std::string& code, const std::string& message) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>" + code + "</Code><Message>" + message +
         "</Message></Error></Errors><RequestID>7b1c9f2e-0d3a-4c55-8e61-2a9f0b4d6c13</RequestID></Response>";
}

// p5.48xlarge, 4 instances, 7 days: page 1 at $31.464 and $33 an instance-hour
// (the second block 167 h 30 min), page 2 at $30.125, the cheapest.
const std::string kToken = "eyJ2IjoiMiIsImMiOiJwYWdlMiJ9+/=";
const std::string kPage1 = offerings_page(
    offering("cbr-0a1b2c3d4e5f60001", "p5.48xlarge", 4, 168, 0, "21143.81", "us-east-1a", "2026-12-05T11:30:00Z", "2026-12-12T11:30:00Z") +
        offering("cbr-0a1b2c3d4e5f60002", "p5.48xlarge", 4, 167, 30, "22110.00", "us-east-1b", "2026-12-06T12:00:00Z", "2026-12-13T11:30:00Z"),
    "eyJ2IjoiMiIsImMiOiJwYWdlMiJ9+/=");
const std::string kPage2 =
    offerings_page(offering("cbr-0a1b2c3d4e5f60003", "p5.48xlarge", 4, 168, 0, "20244.00", "us-east-1d", "2026-12-09T11:30:00Z", "2026-12-16T11:30:00Z"));
const std::string kEmpty = offerings_page("");
constexpr double kCheapestRate = 30.125;  // 20244 / (4 x 168)

// Answers p5.48xlarge with two pages and any other type with none.
Ec2Reply paged(const Ec2Request& r, int) {
  if (r.body.find("InstanceType=p5.48xlarge") == std::string::npos) return {200, kEmpty};
  return {200, r.body.find("NextToken=") == std::string::npos ? kPage1 : kPage2};
}

// The child's environment: a cache and a HOME of the test's own, credentials
// only as given (the developer's AWS_* variables are blanked: empty is unset).
std::string env_of(const TempDir& t, const std::string& credentials) {
  return "GPUADVISOR_TODAY=2026-12-01 XDG_CACHE_HOME=" + t.path + "/cache HOME=" + t.path +
         " AWS_ACCESS_KEY_ID= AWS_SECRET_ACCESS_KEY= AWS_SESSION_TOKEN= AWS_PROFILE= AWS_SHARED_CREDENTIALS_FILE= " + credentials;
}
const std::string kEnvCredentials = "AWS_ACCESS_KEY_ID=AKIDEXAMPLETEST AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIbPxRfiCYEXAMPLEKEY AWS_SESSION_TOKEN=FwoGZXIvYXdzEXAMPLETOKEN";

std::string cb_args(const Ec2Server& s, const std::string& more = "--instance-type p5.48xlarge") {
  return "prices fetch --capacity-blocks --region us-east-1 --count 4 --days 7 --endpoint-url " + s.url() + " --retries 1 --timeout 5 --deadline 30 " + more;
}

std::string cache_of(const TempDir& t) { return t.path + "/cache/gpuadvisor/prices.json"; }

// A cached overlay from an earlier fetch: a negotiated g5.xlarge rate dated 2026-11-30.
const std::string kCachedOverlay = R"({
 "description": "prices fetched by `gpuadvisor prices fetch` on 2026-11-30",
 "prices_as_of": "2026-11-30",
 "sources": { "TEAM": { "title": "Our rate sheet", "url": "https://intranet.example/rates" } },
 "instances": [ { "name": "g5.xlarge", "prices": { "us-east-1": { "on_demand": { "usd_per_hour": 0.9, "as_of": "2026-11-30", "source": "TEAM" } } } } ]
}
)";

nlohmann::json shown(const TempDir& t, const char* instance) {
  auto r = run(std::string("catalog show ") + instance + " --format json", env_of(t, ""));
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out)["instance"]["prices"];
}

}  // namespace

TEST_CASE("capacity blocks: two pages of offerings become the cheapest rate, signed with SigV4 and the session token") {
  TempDir t;
  Ec2Server s(paged);
  spit(cache_of(t), kCachedOverlay);
  auto r = run(cb_args(s, "--instance-type p5.48xlarge --instance-type p4d.24xlarge --format json"), env_of(t, kEnvCredentials));
  INFO(r.err);
  REQUIRE(r.code == 0);

  const auto requests = s.requests();
  REQUIRE(requests.size() == 3);  // p5 page 1 and 2, p4d
  const std::regex signed_by(R"(^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLETEST/\d{8}/us-east-1/ec2/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$)");
  for (const auto& q : requests) {
    INFO(q.head);
    CHECK(q.head.rfind("POST / HTTP/1.1\r\n", 0) == 0);
    CHECK(std::regex_match(q.header("Authorization"), signed_by));
    CHECK(q.header("x-amz-security-token") == "FwoGZXIvYXdzEXAMPLETOKEN");
    CHECK(!q.header("x-amz-date").empty());
    for (const char* p : {"Action=DescribeCapacityBlockOfferings", "Version=2016-11-15", "InstanceCount=4", "CapacityDurationHours=168", "MaxResults="})
      CHECK(q.body.find(p) != std::string::npos);
  }
  CHECK(requests[0].body.find("NextToken") == std::string::npos);
  CHECK(requests[1].body.find("NextToken=eyJ2IjoiMiIsImMiOiJwYWdlMiJ9%2B%2F%3D") != std::string::npos);  // the token, form-encoded
  CHECK(requests[2].body.find("InstanceType=p4d.24xlarge") != std::string::npos);

  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["rates_written"] == 1);
  REQUIRE(doc["offerings"].size() == 2);
  CHECK(doc["offerings"][0]["usd_per_hour"] == kCheapestRate);
  CHECK(doc["offerings"][0]["offering_count"] == 3);
  CHECK(doc["offerings"][1]["outcome"] == "no_offerings");

  // Merged into the cache: what it held stays, the rate and its provenance are added.
  const auto overlay = nlohmann::json::parse(slurp(cache_of(t)));
  CHECK(overlay["prices_as_of"] == "2026-11-30");
  CHECK(overlay["sources"].contains("TEAM"));
  const auto p5 = shown(t, "p5.48xlarge");
  const auto& block = p5["us-east-1"]["capacity_block"];
  CHECK(block["usd_per_hour"] == kCheapestRate);
  CHECK(block["as_of"] == "2026-12-01");
  CHECK(block["source"] == "EC2-CB-OFFERINGS");
  for (const char* s : {"2026-12-09T11:30:00Z", "2026-12-16T11:30:00Z", "us-east-1d", "$20244.00", "fetched 2026-12-01", "3 Capacity Block offering"})
    CHECK(block["note"].get<std::string>().find(s) != std::string::npos);
  CHECK(shown(t, "g5.xlarge")["us-east-1"]["on_demand"]["usd_per_hour"] == 0.9);
  // p4d had no offerings: its rates are the built-in catalog's, untouched.
  const auto p4d = shown(t, "p4d.24xlarge");
  auto built_in = run("--no-cache-prices catalog show p4d.24xlarge --format json", env_of(t, ""));
  REQUIRE(built_in.code == 0);
  for (const char* region : {"us-east-1", "us-west-2"}) {
    CHECK(p4d[region]["capacity_block"] == nlohmann::json::parse(built_in.out)["instance"]["prices"][region]["capacity_block"]);
    CHECK(p4d[region]["capacity_block"]["source"] != "EC2-CB-OFFERINGS");
  }

  // People see it where Capacity Block rates are shown.
  auto table = run("catalog show p5.48xlarge", env_of(t, ""));
  REQUIRE(table.code == 0);
  CHECK(table.out.find("us-east-1 capacity block") != std::string::npos);
  CHECK(table.out.find("$30.125/h as of 2026-12-01") != std::string::npos);
}

TEST_CASE("capacity blocks: credentials from the shared credentials file and its profile") {
  TempDir t;
  Ec2Server s(paged);
  const std::string file = t.path + "/credentials";
  spit(file, "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = secret1\n\n# the team's\n[team]\n"
             "aws_access_key_id=AKIDTEAMPROFILE\naws_secret_access_key=secret2\n");
  SECTION("the named profile") {
    auto r = run(cb_args(s), env_of(t, "AWS_SHARED_CREDENTIALS_FILE=" + file + " AWS_PROFILE=team"));
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(s.requests().front().header("Authorization").rfind("AWS4-HMAC-SHA256 Credential=AKIDTEAMPROFILE/", 0) == 0);
    CHECK(s.requests().front().header("x-amz-security-token").empty());  // none in the file
  }
  SECTION("default, from HOME/.aws/credentials") {
    spit(t.path + "/.aws/credentials", slurp(file));
    auto r = run(cb_args(s), env_of(t, ""));
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(s.requests().front().header("Authorization").rfind("AWS4-HMAC-SHA256 Credential=AKIDDEFAULT/", 0) == 0);
  }
  SECTION("a profile the file does not have") {
    auto r = run(cb_args(s), env_of(t, "AWS_SHARED_CREDENTIALS_FILE=" + file + " AWS_PROFILE=nope"));
    CHECK(r.code == 2);
    CHECK(r.err.find("no profile [nope]") != std::string::npos);
    CHECK(s.requests().empty());
    CHECK(!fs::exists(cache_of(t)));
  }
}

TEST_CASE("capacity blocks: without credentials it says how to supply them and changes nothing") {
  TempDir t;
  Ec2Server s(paged);
  spit(cache_of(t), kCachedOverlay);
  auto r = run(cb_args(s), env_of(t, ""));
  CHECK(r.code == 2);
  CHECK(r.err.find("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") != std::string::npos);
  CHECK(r.err.find("~/.aws/credentials") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
  CHECK(s.requests().empty());
  CHECK(slurp(cache_of(t)) == kCachedOverlay);
  auto half = run(cb_args(s), env_of(t, "AWS_ACCESS_KEY_ID=AKIDONLY"));
  CHECK(half.code == 2);
  CHECK(half.err.find("only AWS_ACCESS_KEY_ID is set") != std::string::npos);
}

TEST_CASE("capacity blocks: refused or expired credentials name the EC2 error and leave the cache byte-identical") {
  struct Case {
    int status;
    const char* code;
    const char* message;
    const char* says;
  };
  const Case c = GENERATE(Case{400, "ExpiredToken", "The security token included in the request is expired", "have expired"},
                          Case{400, "RequestExpired", "Request has expired.", "have expired"},
                          Case{401, "AuthFailure", "AWS was not able to validate the provided access credentials", "refused the credentials"},
                          Case{403, "UnauthorizedOperation", "You are not authorized to perform this operation.",
                               "may not call ec2:DescribeCapacityBlockOfferings"});
  TempDir t;
  Ec2Server s([&](const Ec2Request&, int) { return Ec2Reply{c.status, ec2_error(c.code, c.message)}; });
  spit(cache_of(t), kCachedOverlay);
  auto r = run(cb_args(s), env_of(t, kEnvCredentials));
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(c.code) != std::string::npos);
  CHECK(r.err.find(c.says) != std::string::npos);
  CHECK(r.err.find("the previous prices are kept") != std::string::npos);
  CHECK(s.requests().size() == 1);  // not retried
  CHECK(slurp(cache_of(t)) == kCachedOverlay);
}

TEST_CASE("capacity blocks: throttling is retried with backoff, and throttling that lasts is an error that keeps the cache") {
  TempDir t;
  spit(cache_of(t), kCachedOverlay);
  const std::string throttled = ec2_error("RequestLimitExceeded", "Request limit exceeded.");
  SECTION("503 RequestLimitExceeded, then the offerings") {
    Ec2Server s([&](const Ec2Request& q, int i) { return i == 0 ? Ec2Reply{503, throttled} : paged(q, i); });
    auto r = run(cb_args(s), env_of(t, kEnvCredentials));
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(s.requests().size() == 3);  // the throttled page 1, page 1, page 2
    CHECK(shown(t, "p5.48xlarge")["us-east-1"]["capacity_block"]["usd_per_hour"] == kCheapestRate);
  }
  SECTION("always throttled") {
    Ec2Server s([&](const Ec2Request&, int) { return Ec2Reply{503, throttled}; });
    const auto start = std::chrono::steady_clock::now();
    auto r = run(cb_args(s), env_of(t, kEnvCredentials));
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(900));  // the backoff waited
    CHECK(r.code == 5);  // unavailable: worth retrying later, unlike a bad flag (2)
    CHECK(r.err.find("RequestLimitExceeded") != std::string::npos);
    CHECK(r.err.find("throttling") != std::string::npos);
    CHECK(r.err.find("after 2 attempts") != std::string::npos);
    CHECK(s.requests().size() == 2);  // --retries 1
    CHECK(slurp(cache_of(t)) == kCachedOverlay);
  }
}

TEST_CASE("capacity blocks: no offerings says so and deletes nothing, a malformed answer is an error") {
  TempDir t;
  spit(cache_of(t), kCachedOverlay);
  SECTION("no offerings") {
    Ec2Server s([&](const Ec2Request&, int) { return Ec2Reply{200, kEmpty}; });
    auto r = run(cb_args(s), env_of(t, kEnvCredentials));
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.err.find("no Capacity Block offerings of 4 instance(s) for 7 days in us-east-1") != std::string::npos);
    CHECK(r.err.find("the cached prices are unchanged") != std::string::npos);
    CHECK(slurp(cache_of(t)) == kCachedOverlay);
  }
  SECTION("malformed XML") {
    const std::string body = GENERATE(std::string("<DescribeCapacityBlockOfferingsResponse><capacityBlockOfferingSet><item><instanceType>p5.48xlarge"),
                                      std::string("<html><body>Service Unavailable</body></html>"),
                                      offerings_page("<item><instanceType>p5.48xlarge</instanceType><instanceCount>4</instanceCount></item>"));
    Ec2Server s([&](const Ec2Request&, int) { return Ec2Reply{200, body}; });
    auto r = run(cb_args(s), env_of(t, kEnvCredentials));
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("not a usable DescribeCapacityBlockOfferings response") != std::string::npos);
    CHECK(slurp(cache_of(t)) == kCachedOverlay);
  }
}

TEST_CASE("capacity blocks: flags are checked before anything is sent") {
  TempDir t;
  Ec2Server s(paged);
  auto refused = [&](const std::string& args, const char* says) {
    auto r = run(args, env_of(t, kEnvCredentials));
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(says) != std::string::npos);
  };
  refused("prices fetch --capacity-blocks --region us-east-1 --count 4 --days 7 --endpoint-url http://example.com/", "neither an https URL nor http://127.0.0.1");
  refused("prices fetch --capacity-blocks --region us-east-1 --days 7", "needs --count N and --days D");
  refused("prices fetch --capacity-blocks --region us-east-1 --count 65 --days 7 --endpoint-url " + s.url(), "--count: 65 is not 1-64");
  refused("prices fetch --capacity-blocks --region us-east-1 --count 1 --days 15 --endpoint-url " + s.url(), "--days: 15 is not a Capacity Block length");
  refused(cb_args(s, "--instance-type p5.48xlarg"), "did you mean p5.48xlarge");
  refused(cb_args(s, "--start-date-range 2026-13-01"), "--start-date-range");
  refused("prices fetch --region us-east-1 --count 4", "--count is a --capacity-blocks option");
  refused(cb_args(s, "--base-url http://127.0.0.1:1"), "--base-url is for the public price files");
  CHECK(s.requests().empty());
  CHECK(!fs::exists(cache_of(t)));
  // --help teaches the flags.
  auto help = run("prices fetch --help");
  for (const char* f : {"--capacity-blocks", "--count", "--days", "--instance-type", "--endpoint-url", "--start-date-range", "AWS_PROFILE"})
    CHECK(help.out.find(f) != std::string::npos);
}

TEST_CASE("capacity blocks: the date range is sent as EC2 takes it") {
  TempDir t;
  Ec2Server s(paged);
  auto r = run(cb_args(s, "--instance-type p5.48xlarge --start-date-range 2026-12-05 --end-date-range 2026-12-31T12:00:00Z"), env_of(t, kEnvCredentials));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(s.requests().front().body.find("StartDateRange=2026-12-05T00%3A00%3A00Z") != std::string::npos);
  CHECK(s.requests().front().body.find("EndDateRange=2026-12-31T12%3A00%3A00Z") != std::string::npos);
}

TEST_CASE("capacity blocks: a later price-file fetch keeps the fetched rates") {
  TempDir t;
  Ec2Server ec2(paged);
  REQUIRE(run(cb_args(ec2), env_of(t, kEnvCredentials)).code == 0);
  // The public price files, whose offer file has its own Capacity Block rate (12.34) for p5.48xlarge.
  const std::string offer = t.path + "/offer.json";
  REQUIRE(std::system((std::string(GPUADVISOR_MAKE_OFFER) + " " + offer + " 1").c_str()) == 0);
  test_http::Server prices;
  const char* offer_path = "/offers/v1.0/aws/AmazonEC2/20261101000000/us-east-1/index.json";
  prices.add("/offers/v1.0/aws/AmazonEC2/current/region_index.json",
             {R"({"regions": {"us-east-1": {"regionCode": "us-east-1", "currentVersionUrl": ")" + std::string(offer_path) + R"("}}})"});
  prices.add(offer_path, {slurp(offer)});
  auto r = run("prices fetch --region us-east-1 --no-savings-plans --no-spot-advisor --retries 0 --deadline 30 --base-url " + prices.url(),
               env_of(t, ""));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto p5 = shown(t, "p5.48xlarge")["us-east-1"];
  CHECK(p5["on_demand"]["usd_per_hour"] == 55.0411);  // the offer file's
  CHECK(p5["capacity_block"]["usd_per_hour"] == kCheapestRate);  // the live offering's, kept
  CHECK(p5["capacity_block"]["source"] == "EC2-CB-OFFERINGS");
}

TEST_CASE("capacity blocks: the XML reader") {
  using namespace gpuadvisor;
  const auto page = parse_offerings_page(kPage1);
  REQUIRE(page.offerings.size() == 2);
  CHECK(page.next_token == kToken);
  CHECK(page.offerings[1].duration_hours == 167.5);
  CHECK(page.offerings[1].usd_per_instance_hour() == Approx(33.0));
  CHECK(page.offerings[0].availability_zone == "us-east-1a");
  CHECK(parse_offerings_page(kEmpty).offerings.empty());
  CHECK(parse_offerings_page("<DescribeCapacityBlockOfferingsResponse><capacityBlockOfferingSet/></DescribeCapacityBlockOfferingsResponse>").offerings.empty());
  CHECK_THROWS(parse_offerings_page("<DescribeCapacityBlockOfferingsResponse>"));
  CHECK_THROWS(parse_offerings_page(offerings_page("<item><instanceType>p5.48xlarge</instanceType>")));
  CHECK_THROWS(parse_offerings_page(offerings_page(offering("x", "p5.48xlarge", 4, 168, 0, "-1", "a", "s", "e"))));
  CHECK_THROWS(parse_offerings_page(offerings_page(offering("x", "p5.48xlarge", 0, 168, 0, "10", "a", "s", "e"))));
  const auto e = parse_ec2_error(ec2_error("ExpiredToken", "The security token &amp; its &lt;date&gt;"));
  REQUIRE(e);
  CHECK(e->code == "ExpiredToken");
  CHECK(e->message == "The security token & its <date>");
  CHECK(!parse_ec2_error(kPage1));
}
