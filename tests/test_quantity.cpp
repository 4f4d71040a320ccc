#include <catch2/catch.hpp>

#include <cmath>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/quantity.hpp"

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
  CHECK(parse_duration_hours("90min", "--deadline") == Approx(1.5));
  CHECK(parse_duration_hours("2w", "--deadline") == Approx(336));
  CHECK_THROWS_WITH(parse_duration_hours("72", "--deadline"), Catch::Contains("needs a unit"));
  CHECK_THROWS_AS(parse_duration_hours("3 fortnights", "--deadline"), InputError);
  CHECK_THROWS_AS(parse_duration_hours("-1h", "--deadline"), InputError);
  CHECK_THROWS_AS(parse_duration_hours("0d", "--deadline"), InputError);
  // A thousand years at most: `--deadline 1e300h` printed a day count of 300 digits.
  CHECK(parse_duration_hours("1000y", "--deadline") == Approx(8760000));
  CHECK_THROWS_WITH(parse_duration_hours("1e300h", "--deadline"), Catch::Contains("longer than 1000 years"));
  CHECK_THROWS_WITH(parse_duration_hours("1001y", "--horizon"), Catch::Contains("--horizon"));
}

TEST_CASE("money and memory") {
  CHECK(parse_usd("$5000", "--budget") == Approx(5000));
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

TEST_CASE("commas are refused on every quantity, money included") {
  // Before: parse_usd dropped commas, so "1,5" was 15 (and 1.5 in a comma-decimal locale's eyes).
  for (const char* bad : {"1,5", "$5,000", "5,000", "1,5k"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_usd(bad, "--budget"), Catch::Contains("--budget") && Catch::Contains("commas are not accepted"));
  }
  CHECK_THROWS_WITH(parse_count("1,000", "--tokens"), Catch::Contains("commas are not accepted"));
  CHECK_THROWS_WITH(parse_number("1,5", "--epochs", 0, 10), Catch::Contains("commas are not accepted"));
  CHECK_THROWS_WITH(parse_duration_hours("1,5h", "--deadline"), Catch::Contains("commas are not accepted"));
  CHECK_THROWS_WITH(parse_memory_gb("1,5GB", "m"), Catch::Contains("commas are not accepted"));
  CHECK_THROWS_WITH(parse_positive_integer("1,000", "--samples"), Catch::Contains("commas are not accepted"));
}

TEST_CASE("money takes the count suffixes") {
  CHECK(parse_usd("5k", "--budget") == Approx(5000));
  CHECK(parse_usd("1.5M", "--budget") == Approx(1.5e6));
  CHECK(parse_usd("2B", "--budget") == Approx(2e9));
  CHECK(parse_usd("$5000", "--budget") == Approx(5000));
  CHECK(parse_usd("5000 USD", "--budget") == Approx(5000));
  CHECK_THROWS_AS(parse_usd("5X", "--budget"), InputError);
}

TEST_CASE("M and m are not minutes in durations and latencies") {
  // Before: "1M" was one minute here and a million on counts.
  for (const char* bad : {"1M", "1m", "90m", "2 m"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_duration_hours(bad, "--hours"), Catch::Contains("--hours") && Catch::Contains("min"));
    CHECK_THROWS_WITH(parse_latency_s(bad, "--max-ttft"), Catch::Contains("--max-ttft") && Catch::Contains("min"));
  }
  CHECK_THROWS_WITH(parse_duration_hours("1M", "--hours"), Catch::Contains("write 1min"));
  CHECK_THROWS_WITH(parse_duration_hours("2 m", "--hours"), Catch::Contains("write 2min"));
  CHECK(parse_duration_hours("90min", "--deadline") == Approx(1.5));
  CHECK(parse_duration_hours("30minutes", "--deadline") == Approx(0.5));
  CHECK(parse_duration_hours("1MIN", "--deadline") == Approx(1.0 / 60));
  CHECK(parse_latency_s("1min", "--max-ttft") == Approx(60));
  CHECK(parse_latency_s("200ms", "--max-ttft") == Approx(0.2));
  CHECK(parse_latency_s("50us", "--max-tpot") == Approx(5e-5));
}

TEST_CASE("a leading zero is refused: 010 is octal 8 to some tools") {
  for (const char* bad : {"010", "-010", "00", "007"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_decimal_integer(bad, "--count"), Catch::Contains("--count") && Catch::Contains("is not a decimal whole number"));
  }
  CHECK_THROWS_WITH(parse_decimal_integer("010", "--count"), Catch::Contains("'010' is not a decimal whole number"));
  CHECK_THROWS_AS(parse_count("010", "--tokens"), InputError);
  CHECK_THROWS_AS(parse_count("010B", "--params"), InputError);
  CHECK_THROWS_AS(parse_usd("$010", "--budget"), InputError);
  CHECK_THROWS_AS(parse_duration_hours("07h", "--deadline"), InputError);
  CHECK(parse_count("0.5B", "--params") == Approx(5e8));  // a zero before the point is not a leading zero
  CHECK(parse_number("0.25", "--epochs", 0, 10) == Approx(0.25));
}

TEST_CASE("integers are decimal digits only") {
  CHECK(parse_decimal_integer("10", "--count") == 10);
  CHECK(parse_decimal_integer("0", "--zero-stage") == 0);
  CHECK(parse_decimal_integer("-1", "--zero-stage") == -1);
  CHECK(parse_decimal_integer(" 8 ", "--count") == 8);
  for (const char* bad : {"0x10", "0X10", "1e3", "8k", "+5", "", "-", "ten", "1 000", "99999999999999999999"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_decimal_integer(bad, "--count"), InputError);
  }
  CHECK_THROWS_WITH(parse_decimal_integer("0x10", "--count"), Catch::Contains("'0x10' is not a decimal whole number"));
  CHECK_THROWS_WITH(parse_decimal_integer("1.5", "--count"), Catch::Contains("--count: '1.5' is not a whole number"));
  CHECK_THROWS_WITH(parse_decimal_integer("99999999999999999999", "--count"), Catch::Contains("out of range"));
  CHECK_THROWS_AS(parse_positive_integer("010", "--samples"), InputError);
  CHECK_THROWS_WITH(parse_positive_integer("-3", "--samples"), Catch::Contains("at least 1"));
}

TEST_CASE("whole counts take suffixes and refuse fractions") {
  CHECK(parse_whole_count("1.5K", "--steps") == 1500);
  CHECK(parse_whole_count("1.1K", "--steps") == 1100);
  CHECK(parse_whole_count("4.1K", "--steps") == 4100);
  CHECK(parse_whole_count("0.3M", "--prompts") == 300000);
  CHECK(parse_whole_count("1.5T", "--tokens") == 1.5e12);
  CHECK(parse_whole_count("7e3", "--steps") == 7000);
  CHECK(parse_whole_count("200", "--steps") == 200);
  for (const char* bad : {"1.5", "0.5", "1.0001K", "1.0000000000001", "0", "-2", "nan", "1,5"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_whole_count(bad, "--steps"), InputError);
  }
  CHECK_THROWS_WITH(parse_whole_count("1.5", "--prompt-tokens"), Catch::Contains("--prompt-tokens: '1.5' is not a whole number"));
  // A whole count is exactly an integer, even for products of a fraction and a suffix.
  for (const char* t : {"1.1K", "2.3M", "0.7B", "9.99K", "123.456K"}) {
    INFO(t);
    const double v = parse_whole_count(t, "--steps");
    CHECK(v == std::floor(v));
  }
}
