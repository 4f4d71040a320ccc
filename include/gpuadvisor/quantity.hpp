// Parsing of human-written quantities: counts with K/M/B/T suffixes, durations,
// money and memory sizes. Every parser rejects empty strings, NaN, infinities,
// zero or negative values, overflow and unknown units with an InputError that
// names the flag.
#pragma once
#include <string>
#include <string_view>

namespace gpuadvisor {

// "13B", "1.5T", "7e9", "70000000000", "500M", "100k". Returns the plain count.
// `what` names the input in error messages (e.g. "--params").
double parse_count(std::string_view text, std::string_view what);

// A plain positive integer ("8", "1024"); rejects fractions and suffixes.
long long parse_positive_integer(std::string_view text, std::string_view what);

// "72h", "14d", "90m" (minutes), "3600s", "2w". A unit is required.
double parse_duration_hours(std::string_view text, std::string_view what);

// A latency: "200ms", "0.2s", "2s", "50us". A unit is required. Returns seconds.
double parse_latency_s(std::string_view text, std::string_view what);

// "5000", "$5,000", "12.5k", "1M" (USD).
double parse_usd(std::string_view text, std::string_view what);

// "80", "80GB", "80GiB", "0.5TB". A bare number is GB (10^9 bytes). Returns GB.
double parse_memory_gb(std::string_view text, std::string_view what);

// Throws InputError naming `what` unless min <= value <= max; a lower bound
// just above 0 reads "must be greater than 0" for 0 and below.
void check_range(double value, std::string_view what, double min_inclusive, double max_inclusive);

// A plain finite number with optional bounds, for ratios and rates.
double parse_number(std::string_view text, std::string_view what, double min_inclusive,
                    double max_inclusive);

// Output: "12,345" (decimals after the point as given).
std::string format_thousands(double v, int decimals = 0);

// A price a person reads: three significant figures below 1,000 ("0.583",
// "12.7"), whole units with separators above ("5,970"); never exponent notation.
std::string format_price(double v);

// A duration a person reads: "26 s", "4 min", "11.2 h", "3.5 d", "1.2 y".
std::string format_duration(double hours);

}  // namespace gpuadvisor
