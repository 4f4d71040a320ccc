// Layer base: small utilities every layer may use (quantities, files, names, JSON input); includes nothing above base.
#include "gpuadvisor/base/quantity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "gpuadvisor/base/errors.hpp"

namespace gpuadvisor {
namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Splits "12.5GiB" into 12.5 and "GiB". Rejects a missing or malformed number.
struct NumberAndUnit {
  double value;
  std::string unit;
};

// One rule for every flag: no commas, neither as a thousands separator nor as
// a decimal point ("1,5" is 15 in one locale and 1.5 in another).
void refuse_commas(const std::string& s, std::string_view what) {
  if (s.find(',') != std::string::npos)
    throw InputError(fmt::format("{}: '{}': commas are not accepted; write 5000 or 5k (five thousand), 1.5 (one and a half)", what, s));
}

// "010" is 8 to tools that read octal: a zero before another digit is refused.
bool has_leading_zero(const std::string& s) {
  const size_t d = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  return s.size() > d + 1 && s[d] == '0' && std::isdigit(static_cast<unsigned char>(s[d + 1]));
}

// `forms`: what the flag takes, said when the text is no number at all.
NumberAndUnit split_number(std::string_view raw, std::string_view what, std::string_view forms = {}) {
  std::string s = trim(raw);
  if (s.empty()) throw InputError(fmt::format("{}: empty value", what));
  refuse_commas(s, what);
  if (has_leading_zero(s))
    throw InputError(fmt::format("{}: '{}': a leading zero is not accepted (some tools read 010 as octal 8)", what, s));
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range)
    throw InputError(fmt::format("{}: '{}' is out of range", what, s));
  if (ec != std::errc() || ptr == begin)
    throw InputError(fmt::format("{}: '{}' is not a number{}", what, s, forms.empty() ? "" : fmt::format(" ({})", forms)));
  if (!std::isfinite(value)) throw InputError(fmt::format("{}: '{}' is not a finite number", what, s));
  std::string unit = trim(std::string_view(ptr, static_cast<size_t>(end - ptr)));
  return {value, unit};
}

void require_positive(double v, std::string_view text, std::string_view what) {
  if (!(v > 0) || !std::isfinite(v))
    throw InputError(fmt::format("{}: '{}' must be a positive, finite value", what, trim(text)));
}


// "1M" is a million on counts and money, so neither M nor m means minutes.
void refuse_m_for_minutes(const std::string& lower_unit, std::string_view text, std::string_view what) {
  if (lower_unit != "m") return;
  const std::string t = trim(text);
  throw InputError(fmt::format("{}: '{}': M and m mean million, not minutes; write {}min for minutes", what, t, trim(t.substr(0, t.size() - 1))));
}

}  // namespace

namespace {
// K, M, B (or G), T: thousand, million, billion, trillion; 0 for any other suffix.
double suffix_scale(const std::string& unit) {
  if (unit.empty()) return 1;
  if (unit == "k" || unit == "K") return 1e3;
  if (unit == "M" || unit == "m") return 1e6;
  if (unit == "B" || unit == "b" || unit == "G") return 1e9;
  if (unit == "T" || unit == "t") return 1e12;
  return 0;
}
}  // namespace

double parse_count(std::string_view text, std::string_view what) {
  auto [value, unit] = split_number(text, what);
  const double scale = suffix_scale(unit);
  if (scale == 0)
    throw InputError(fmt::format("{}: unknown suffix '{}' in '{}' (use K, M, B or T, e.g. 13B)", what,
                                 unit, trim(text)));
  double result = value * scale;
  require_positive(result, text, what);
  return result;
}

double parse_whole_count(std::string_view text, std::string_view what) {
  const double v = parse_count(text, what);
  const double whole = std::round(v);
  // 1.1K is 1100 up to the last bit of a double product.
  if (std::fabs(v - whole) > 4 * std::numeric_limits<double>::epsilon() * v)
    throw InputError(fmt::format("{}: '{}' is not a whole number", what, trim(text)));
  return whole;
}

long long parse_decimal_integer(std::string_view raw, std::string_view what) {
  const std::string s = trim(raw);
  if (s.empty()) throw InputError(fmt::format("{}: empty value", what));
  refuse_commas(s, what);
  const size_t d = s[0] == '-' ? 1 : 0;
  const bool digits = s.size() > d && s.find_first_not_of("0123456789", d) == std::string::npos;
  if (!digits || has_leading_zero(s)) {
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    const bool fraction = ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(v) && v != std::floor(v);
    throw InputError(fmt::format("{}: '{}' is not a {}whole number", what, s, fraction ? "" : "decimal "));
  }
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) throw InputError(fmt::format("{}: '{}' is out of range", what, s));
  return v;
}

long long parse_positive_integer(std::string_view raw, std::string_view what) {
  const long long v = parse_decimal_integer(raw, what);
  if (v <= 0) throw InputError(fmt::format("{}: '{}' must be at least 1", what, trim(raw)));
  return v;
}

double parse_duration_hours(std::string_view text, std::string_view what) {
  auto [value, unit] = split_number(text, what, "a duration: a number and a unit, e.g. 8h, 90min, 14d or 2w");
  std::string u = lower_case(unit);
  refuse_m_for_minutes(u, text, what);
  double hours_per_unit = 0;
  if (u == "s" || u == "sec" || u == "seconds") hours_per_unit = 1.0 / 3600;
  else if (u == "min" || u == "minutes") hours_per_unit = 1.0 / 60;
  else if (u == "h" || u == "hr" || u == "hours") hours_per_unit = 1;
  else if (u == "d" || u == "days") hours_per_unit = 24;
  else if (u == "w" || u == "weeks") hours_per_unit = 24 * 7;
  else if (u == "y" || u == "years") hours_per_unit = 24 * 365;  // as format_duration prints years
  else if (u.empty())
    throw InputError(fmt::format("{}: '{}' needs a unit (s, min, h, d, w or y), e.g. 72h or 14d", what, trim(text)));
  else
    throw InputError(fmt::format("{}: unknown unit '{}' in '{}' (use s, min, h, d, w or y)", what, unit, trim(text)));
  double hours = value * hours_per_unit;
  require_positive(hours, text, what);
  // Past a thousand years no answer changes, and a day count of 300 digits is no answer.
  if (hours > kLongestDurationHours)
    throw InputError(fmt::format("{}: '{}' is longer than {:.0f} years, the longest duration taken", what, trim(text), kLongestDurationHours / (24 * 365)));
  return hours;
}

double parse_latency_s(std::string_view text, std::string_view what) {
  auto [value, unit] = split_number(text, what, "a latency: a number and a unit, e.g. 200ms or 2s");
  std::string u = lower_case(unit);
  refuse_m_for_minutes(u, text, what);
  double seconds_per_unit = 0;
  if (u == "s" || u == "sec") seconds_per_unit = 1;
  else if (u == "ms") seconds_per_unit = 1e-3;
  else if (u == "us") seconds_per_unit = 1e-6;
  else if (u == "min") seconds_per_unit = 60;
  else if (u.empty())
    throw InputError(fmt::format("{}: '{}' needs a unit (us, ms, s or min), e.g. 200ms or 2s", what, trim(text)));
  else
    throw InputError(fmt::format("{}: unknown unit '{}' in '{}' (use us, ms, s or min)", what, unit, trim(text)));
  double s = value * seconds_per_unit;
  require_positive(s, text, what);
  if (s > 86400) throw InputError(fmt::format("{}: '{}' is longer than a day", what, trim(text)));
  return s;
}

double parse_usd(std::string_view text, std::string_view what) {
  std::string s = trim(text);
  refuse_commas(s, what);
  if (!s.empty() && s.front() == '$') s.erase(0, 1);
  auto [value, unit] = split_number(s, what, "an amount in USD, e.g. 5000, 12.5k or $1M");
  const double scale = lower_case(unit) == "usd" ? 1 : suffix_scale(unit);
  if (scale == 0)
    throw InputError(fmt::format("{}: unknown suffix '{}' in '{}' (amounts are USD: 5000, 12.5k, 1M)", what, unit, trim(text)));
  double usd = value * scale;
  require_positive(usd, text, what);
  // Beyond any bill: products with hours would overflow into a false "no price".
  if (usd > kMaxUsd) throw InputError(fmt::format("{}: '{}' is more than any bill this tool prices (at most 1e15 USD)", what, trim(text)));
  return usd;
}

double parse_memory_gb(std::string_view text, std::string_view what) {
  auto [value, unit] = split_number(text, what);
  std::string u = lower_case(unit);
  double gb = 0;
  if (u.empty() || u == "gb" || u == "g") gb = value;
  else if (u == "gib") gb = value * kGbPerGib;
  else if (u == "tb") gb = value * 1000;
  else if (u == "tib") gb = value * 1099.511627776;
  else if (u == "mb") gb = value / 1000;
  else if (u == "mib") gb = value * 1048576.0 / 1e9;
  else throw InputError(fmt::format("{}: unknown unit '{}' in '{}' (use GB, GiB, TB or TiB)", what, unit, trim(text)));
  require_positive(gb, text, what);
  return gb;
}

double parse_number(std::string_view text, std::string_view what, double min_inclusive, double max_inclusive) {
  auto [value, unit] = split_number(text, what);
  if (!unit.empty()) throw InputError(fmt::format("{}: '{}' is not a plain number", what, trim(text)));
  check_range(value, what, min_inclusive, max_inclusive);
  return value;
}

void check_range(double value, std::string_view what, double min_inclusive, double max_inclusive) {
  if (value >= min_inclusive && value <= max_inclusive) return;
  if (min_inclusive > 0 && min_inclusive < 1e-6 && value <= 0) throw InputError(fmt::format("{}: {:g} must be greater than 0", what, value));
  // 15 significant digits: 2147483648 reads as typed, not 2.14748e+09.
  throw InputError(fmt::format("{}: {:.15g} is outside [{:.15g}, {:.15g}]", what, value, min_inclusive, max_inclusive));
}

std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

double round_cents(double usd) { return std::round(usd * 100.0) / 100.0; }

std::string format_usd(double usd) { return "$" + format_thousands(round_cents(usd), usd < 1000 ? 2 : 0); }

std::string format_price(double v) { return std::fabs(v) < 1000 ? fmt::format("{:.3g}", v) : format_thousands(v, 0); }

std::string format_latency(double seconds, int ms_decimals) {
  if (seconds >= 1) return fmt::format("{:.3g} s", seconds);
  const double ms = seconds * 1e3;
  if (ms < std::pow(10.0, 1 - ms_decimals)) return fmt::format("{:.3g} ms", ms);
  return fmt::format("{:.{}f} ms", ms, ms_decimals);
}

std::string format_latency_against(double seconds, double target_s, int ms_decimals) {
  const std::string shown = format_latency(seconds, ms_decimals);
  if (seconds <= target_s || shown != format_latency(target_s, ms_decimals)) return shown;
  auto finer = [&](double v, int digits) {
    return seconds < 1 ? fmt::format("{:.{}f} ms", v * 1e3, digits) : fmt::format("{:.{}f} s", v, digits);
  };
  // Seconds are shown to three significant figures: finer starts past them.
  const int shown_decimals = seconds < 1 ? ms_decimals : std::max(0, 2 - static_cast<int>(std::floor(std::log10(seconds))));
  for (int digits = shown_decimals + 1; digits <= shown_decimals + 3; ++digits)
    if (finer(seconds, digits) != finer(target_s, digits)) return finer(seconds, digits);
  return shown;
}

std::string format_thousands(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", std::fabs(v), decimals);
  const size_t dot = s.find('.');
  const std::string intpart = dot == std::string::npos ? s : s.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : s.substr(dot);
  std::string out;
  for (size_t i = 0; i < intpart.size(); ++i) {
    if (i > 0 && (intpart.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(intpart[i]);
  }
  return (v < 0 && s.find_first_not_of("0.,") != std::string::npos ? "-" : "") + out + frac;
}

std::string format_duration(double hours) {
  const double s = hours * 3600;
  if (s < 0.5) return "<1 s";
  if (s < 59.5) return fmt::format("{:.0f} s", s);
  if (s < 59.5 * 60) return fmt::format("{:.0f} min", s / 60);
  if (hours < 47.95) return fmt::format("{:.1f} h", hours);
  if (hours < 24 * 365) return fmt::format("{:.1f} d", hours / 24);
  return fmt::format("{:.1f} y", hours / 24 / 365);
}

}  // namespace gpuadvisor
