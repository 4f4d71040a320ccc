// Layer base: small utilities every layer may use (quantities, files, names, JSON input); includes nothing above base.
// Parsing of human-written quantities: counts with K/M/B/T suffixes, durations,
// money and memory sizes. Every parser rejects empty strings, NaN, infinities,
// zero or negative values, overflow and unknown units with an InputError that
// names the flag. One grammar for all (docs/cli.md §Quantities): decimal only
// (a leading zero as in "010" is refused, so is "0x10"), no commas anywhere,
// K/M/B/T are thousand/million/billion/trillion, and minutes are "min" (M and
// m alone are a million).
#pragma once
#include <string>
#include <string_view>

namespace gpuadvisor {

// "13B", "1.5T", "7e9", "70000000000", "500M", "100k". Returns the plain count.
// `what` names the input in error messages (e.g. "--params").
double parse_count(std::string_view text, std::string_view what);

// A count of discrete things (tokens, steps, samples): as parse_count, and the
// result must be whole. "1.5K" is 1500; "1.5" is refused. Returns a whole number.
double parse_whole_count(std::string_view text, std::string_view what);

// An integer as integer flags take it: decimal digits with an optional '-'
// ("8", "1024", "-1"); refuses "010", "0x10", "1.5", "1e3", "8k", "1,000".
long long parse_decimal_integer(std::string_view text, std::string_view what);

// A plain positive integer ("8", "1024"), as parse_decimal_integer and at least 1.
long long parse_positive_integer(std::string_view text, std::string_view what);

// Gigabytes (10^9 bytes) per gibibyte (2^30 bytes): catalogs give memory in GiB, the physics in GB.
inline constexpr double kGbPerGib = 1.073741824;

// "72h", "14d", "90min", "3600s", "2w". A unit is required; "m" and "M" are
// refused (a million elsewhere), minutes are "min" or "minutes"; at most
// kLongestDurationHours (a thousand years).
inline constexpr double kLongestDurationHours = 1000.0 * 365 * 24;
double parse_duration_hours(std::string_view text, std::string_view what);

// A latency: "200ms", "0.2s", "2s", "50us", "1min". A unit is required ("m" is
// refused, as for durations). Returns seconds.
double parse_latency_s(std::string_view text, std::string_view what);

// "5000", "$5000", "12.5k", "1M" (USD); K/M/B/T as for counts. Commas are
// refused ("$5,000" and "1,5" read differently across locales). Positive
// and at most kMaxUsd (more than any bill; an hour's value past it overflows).
inline constexpr double kMaxUsd = 1e15;
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

// ASCII letters in lower case: names and units are read in any case.
std::string lower_case(std::string s);

// Money in the output is rounded to cents (docs/json.md §Money).
double round_cents(double usd);
// "$21.58", "$1,234": cents below $1,000, whole dollars above.
std::string format_usd(double usd);

// A price a person reads: three significant figures below 1,000 ("0.583",
// "12.7"), whole units with separators above ("5,970"); never exponent notation.
std::string format_price(double v);

// A duration a person reads: "26 s", "4 min", "11.2 h", "3.5 d", "1.2 y".
std::string format_duration(double hours);

// A latency a person reads: below a second in ms with `ms_decimals` decimals
// ("450 ms", "40.0 ms"), with three significant figures where those decimals
// would hide it ("7.5 ms", "0.001 ms"); from a second on in s ("2.25 s").
std::string format_latency(double seconds, int ms_decimals = 0);
// A latency beside its target: a figure that misses it by less than the
// rounding gets the digits that show it ("30.04 ms" against 30 ms, not
// "30 ms" against "30 ms").
std::string format_latency_against(double seconds, double target_s, int ms_decimals = 0);

}  // namespace gpuadvisor
