// Price import from hand-made fixtures in the AWS formats; commitments and discounts.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/catalog/price_import.hpp"
#include "gpuadvisor/catalog/pricing.hpp"
#include "gpuadvisor/validation/validation.hpp"

using namespace gpuadvisor;

namespace {
PriceFile fixture(const std::string& name) {
  const std::string path = std::string(GPUADVISOR_TEST_DATA) + "/prices/" + name;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return {path, ss.str()};
}
CatalogSource embedded() { return {"<embedded catalog>", std::string(embedded_catalog_text())}; }
ImportInputs all_fixtures() {
  ImportInputs in;
  in.as_of = "2026-11-20";
  in.offer_files = {fixture("offer_ec2.json")};
  in.savings_plan_files = {fixture("savings_plans.json")};
  in.spot_histories = {fixture("spot_history.json")};
  in.spot_advisors = {fixture("spot_advisor.json")};
  return in;
}
}  // namespace

TEST_CASE("time-weighted spot average (hand-computed)") {
  // 10 for 2 days, 20 for 1 day, then 30 at the end of the window: (20 + 20) / 3.
  auto t = [](const char* s) { return *parse_utc_timestamp(s); };
  CHECK(time_weighted_average({{t("2026-11-01T00:00:00Z"), 10}, {t("2026-11-03T00:00:00Z"), 20}, {t("2026-11-04T00:00:00Z"), 30}},
                              t("2026-11-04T00:00:00Z")) == Approx(40.0 / 3));
  // Order does not matter; a single point is its own average.
  CHECK(time_weighted_average({{t("2026-11-03T00:00:00Z"), 20}, {t("2026-11-01T00:00:00Z"), 10}}, t("2026-11-04T00:00:00Z")) ==
        Approx((10 * 2 + 20 * 1) / 3.0));
  CHECK(time_weighted_average({{100, 7}}, 100) == 7);
  CHECK(*parse_utc_timestamp("1970-01-02T00:00:00Z") == 86400);
  CHECK(*parse_utc_timestamp("2026-11-01T00:00:00.000Z") == *parse_utc_timestamp("2026-11-01T00:00:00+00:00"));
  CHECK_FALSE(parse_utc_timestamp("2026-13-01T00:00:00Z"));
  CHECK_FALSE(parse_utc_timestamp("yesterday"));
}

TEST_CASE("effective hourly rate of a 1-year all-upfront reservation (hand-computed)") {
  CommitmentQuote q;
  q.usd_per_hour = 0;
  q.upfront_usd = 306600;
  q.term_years = 1;
  CHECK(q.effective_usd_per_hour() == Approx(35.0));  // 306,600 / 8,760 h
  q.usd_per_hour = 10;
  q.term_years = 3;
  CHECK(q.effective_usd_per_hour() == Approx(10 + 306600 / 26280.0));
}

TEST_CASE("import: offer file, savings plans, spot history and advisor into one overlay") {
  ImportResult r = import_prices(embedded(), {}, all_fixtures());
  CHECK(r.prices_written == 13);
  Catalog c = load_catalog(embedded(), {{"imported.json", r.overlay_json}});
  const Instance& p5 = *c.find_instance("p5.48xlarge");
  const RegionPrices& use1 = *p5.prices_in("us-east-1");
  CHECK(*use1.on_demand.usd_per_hour == 54.0);  // not the Capacity Block rate 31.464, not Windows
  CHECK(*use1.capacity_block.usd_per_hour == 31.464);  // the Capacity Block SKU has its own field
  CHECK(use1.capacity_block.source == "IMPORT-OFFER");
  CHECK(use1.on_demand.source == "IMPORT-OFFER");
  CHECK(use1.on_demand.as_of == "2026-11-01");  // the file's publication date
  CHECK(use1.commitments.at("reserved-standard-1yr-all-upfront").effective_usd_per_hour() == Approx(35.0));
  CHECK(use1.commitments.at("reserved-standard-3yr-no-upfront").usd_per_hour == 24.3);
  CHECK(use1.commitments.at("compute-savings-plan-1yr-no-upfront").usd_per_hour == 41.0);
  CHECK(use1.commitments.at("ec2-savings-plan-3yr-all-upfront").usd_per_hour == 22.1);
  CHECK(p5.prices_in("us-west-2")->commitments.at("compute-savings-plan-1yr-no-upfront").usd_per_hour == 41.5);
  // Spot: time-weighted per AZ, lowest AZ as the price, highest as the max.
  CHECK(*use1.spot.usd_per_hour == Approx(13.3333).epsilon(1e-4));
  CHECK(*use1.spot.max_usd_per_hour == 16.0);
  CHECK(use1.spot.interruption_bucket == "15-20%");
  // Cheapest commitment by effective rate.
  std::string which;
  CHECK(*hourly_rate(p5, "us-east-1", Pricing::savings_1y, nullptr, &which) == Approx(35.0));
  CHECK(which == "reserved-standard-1yr-all-upfront");
  CHECK(*hourly_rate(p5, "us-east-1", Pricing::savings_3y) == Approx(22.1));
  // Spot is priced at the typical zone: the midpoint of the lowest and highest, (13.3333 + 16) / 2.
  CHECK(*hourly_rate(p5, "us-east-1", Pricing::spot) == Approx(14.66667).epsilon(1e-4));
  CHECK(*hourly_rate(p5, "us-east-1", Pricing::best) == Approx(14.66667).epsilon(1e-4));
  // A region new to g5.xlarge: on-demand imported, spot explicitly not captured.
  const RegionPrices& euw1 = *c.find_instance("g5.xlarge")->prices_in("eu-west-1");
  CHECK(*euw1.on_demand.usd_per_hour == 1.123);
  CHECK_FALSE(euw1.spot.usd_per_hour);
  CHECK(euw1.spot.status == "not_captured");
  // The report says what matched and what was skipped, and why.
  bool capacity_block = false, local_zone = false;
  for (const auto& l : r.report) {
    if (l.detail.find("Capacity Block rate") != std::string::npos && l.outcome == "matched") capacity_block = true;
    if (l.detail.find("Local Zone") != std::string::npos) local_zone = true;
  }
  CHECK(capacity_block);
  CHECK(local_zone);
}

TEST_CASE("import: malformed and truncated files name the file and the position") {
  auto fails_with = [](ImportInputs in, const std::string& text) {
    try {
      import_prices(embedded(), {}, in);
    } catch (const InputError& e) {
      return std::string(e.what()).find(text) != std::string::npos;
    }
    return false;
  };
  ImportInputs truncated;
  truncated.offer_files = {fixture("offer_truncated.json")};
  CHECK(fails_with(truncated, "offer_truncated.json: not valid JSON at byte"));
  ImportInputs wrong;
  wrong.offer_files = {fixture("offer_wrong_type.json")};
  CHECK(fails_with(wrong, "offer_wrong_type.json: products: expected an object"));
  ImportInputs spot;
  spot.spot_histories = {{"history.json", R"({"SpotPriceHistory": [{"InstanceType": "p5.48xlarge"}]})"}};
  CHECK(fails_with(spot, "history.json: SpotPriceHistory[0]: expected InstanceType"));
  ImportInputs advisor;
  advisor.spot_advisors = {{"advisor.json", R"({"spot_advisor": {"us-east-1": {"Linux": {"p5.48xlarge": {"r": 9}}}}})"}};
  CHECK(fails_with(advisor, "advisor.json: spot_advisor.us-east-1.Linux.p5.48xlarge.r: expected a range index"));
  ImportInputs not_offer;
  not_offer.offer_files = {{"s3.json", R"({"offerCode": "AmazonS3", "products": {}, "terms": {}})"}};
  CHECK(fails_with(not_offer, "offerCode: expected \"AmazonEC2\""));
  ImportInputs negative;
  negative.offer_files = {fixture("offer_ec2.json")};
  const size_t at = negative.offer_files[0].text.find("\"54.0000000000\"");
  REQUIRE(at != std::string::npos);
  negative.offer_files[0].text.insert(at + 1, "-");
  CHECK(fails_with(negative, "terms.OnDemand.SKUP5: expected pricePerUnit.USD as a number string of a price of 0 or more"));
}

TEST_CASE("negotiated discounts scale on-demand and commitments, not spot") {
  Catalog c = load_catalog(embedded());
  const double od = *hourly_rate(*c.find_instance("p5.48xlarge"), "us-east-1", Pricing::on_demand);
  const double spot = *hourly_rate(*c.find_instance("p5.48xlarge"), "us-east-1", Pricing::spot);
  const double g5 = *hourly_rate(*c.find_instance("g5.xlarge"), "us-east-1", Pricing::on_demand);
  Discounts d;
  add_discount(d, "10%");
  add_discount(d, "p5=20%");
  apply_discounts(c, d);
  CHECK(*hourly_rate(*c.find_instance("p5.48xlarge"), "us-east-1", Pricing::on_demand) == Approx(od * 0.8));
  CHECK(*hourly_rate(*c.find_instance("g5.xlarge"), "us-east-1", Pricing::on_demand) == Approx(g5 * 0.9));
  CHECK(*hourly_rate(*c.find_instance("p5.48xlarge"), "us-east-1", Pricing::spot) == spot);
  Discounts bad;
  CHECK_THROWS_AS(add_discount(bad, "120%"), InputError);
  CHECK_THROWS_AS(add_discount(bad, "=5%"), InputError);
  CHECK_THROWS_AS(add_discount(bad, "lots"), InputError);
  add_discount(bad, "zz9=5%");
  CHECK_THROWS_AS(apply_discounts(c, bad), InputError);
}

TEST_CASE("regression (fuzz): an out-of-range number in a price file is bad input") {
  ImportInputs in;
  in.spot_histories = {{"h.json", R"({"SpotPriceHistory": [], "x": 1e605})"}};
  CHECK_THROWS_AS(import_prices(embedded(), {}, in), InputError);
  CHECK_THROWS_AS(read_cases("c.json", R"({"cases": [], "x": -1e999})"), InputError);
}
