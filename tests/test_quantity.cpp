#include <catch2/catch.hpp>

#include "gpuadvisor/errors.hpp"
#include "gpuadvisor/quantity.hpp"

using namespace gpuadvisor;

TEST_CASE("parse_count accepts suffixes, plain and scientific numbers") {
  CHECK(parse_count("13B", "--params") == Approx(13e9));
  CHECK(parse_count("1.5T", "--params") == Approx(1.5e12));
  CHECK(parse_count("500M", "--params") == Approx(5e8));
  CHECK(parse_count("100k", "--params") == Approx(1e5));
  CHECK(parse_count("7e9", "--params") == Approx(7e9));
  CHECK(parse_count("70000000000", "--params") == Approx(7e10));
  CHECK(parse_count(" 8B ", "--params") == Approx(8e9));
}

TEST_CASE("parse_count rejects bad values with the flag's name") {
  for (const char* bad : {"0", "-5", "-13B", "nan", "NaN", "inf", "13X", "", "B", "1e400", "13 B B", "0x10"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_count(bad, "--params"), InputError);
  }
  CHECK_THROWS_WITH(parse_count("13X", "--params"), Catch::Contains("--params") && Catch::Contains("13X"));
  CHECK_THROWS_WITH(parse_count("1e400", "--params"), Catch::Contains("out of range"));
}

TEST_CASE("durations need a unit") {
  CHECK(parse_duration_hours("72h", "--deadline") == Approx(72));
  CHECK(parse_duration_hours("14d", "--deadline") == Approx(336));
  CHECK(parse_duration_hours("90m", "--deadline") == Approx(1.5));
  CHECK(parse_duration_hours("2w", "--deadline") == Approx(336));
  CHECK_THROWS_WITH(parse_duration_hours("72", "--deadline"), Catch::Contains("needs a unit"));
  CHECK_THROWS_AS(parse_duration_hours("3 fortnights", "--deadline"), InputError);
  CHECK_THROWS_AS(parse_duration_hours("-1h", "--deadline"), InputError);
  CHECK_THROWS_AS(parse_duration_hours("0d", "--deadline"), InputError);
}

TEST_CASE("money and memory") {
  CHECK(parse_usd("$5,000", "--budget") == Approx(5000));
  CHECK(parse_usd("12.5k", "--budget") == Approx(12500));
  CHECK(parse_usd("1M", "--budget") == Approx(1e6));
  CHECK_THROWS_AS(parse_usd("five", "--budget"), InputError);
  CHECK_THROWS_AS(parse_usd("-3", "--budget"), InputError);
  CHECK_THROWS_AS(parse_usd("5 EUR", "--budget"), InputError);
  CHECK(parse_memory_gb("80GB", "m") == Approx(80));
  CHECK(parse_memory_gb("80GiB", "m") == Approx(85.899).epsilon(1e-4));
  CHECK(parse_memory_gb("1TB", "m") == Approx(1000));
  CHECK_THROWS_AS(parse_memory_gb("80 bananas", "m"), InputError);
}

TEST_CASE("integers and bounded numbers") {
  CHECK(parse_positive_integer("1024", "--seq-len") == 1024);
  CHECK_THROWS_AS(parse_positive_integer("1.5", "--seq-len"), InputError);
  CHECK_THROWS_AS(parse_positive_integer("0", "--seq-len"), InputError);
  CHECK_THROWS_AS(parse_positive_integer("99999999999999999999", "--seq-len"), InputError);
  CHECK(parse_number("0.5", "--epochs", 0, 10) == Approx(0.5));
  CHECK_THROWS_AS(parse_number("11", "--epochs", 0, 10), InputError);
}
