// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
#include "gpuadvisor/workload/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "base/json_input.hpp"
#include "gpuadvisor/base/errors.hpp"

namespace gpuadvisor {

namespace {

constexpr std::array kArrivalNames{"arrival_s", "timestamp"};
constexpr std::array kPromptNames{"prompt_tokens", "input_length", "request tokens", "contexttokens"};
constexpr std::array kOutputNames{"output_tokens", "output_length", "response tokens", "generatedtokens"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '"')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '"')) s.remove_suffix(1);
  return s;
}

struct Place {
  const std::string& name;
  size_t line;
  [[noreturn]] void fail(const std::string& what) const { throw InputError(fmt::format("--trace {}: line {}: {}", name, line, what)); }
};

int tokens_of(double v, const Place& at, const char* what) {
  if (!std::isfinite(v) || v < 1 || v > 10'000'000 || v != std::floor(v))
    at.fail(fmt::format("{} {:.40g} is not a whole number of tokens from 1 to 10,000,000", what, v));
  return static_cast<int>(v);
}

std::optional<double> number_of(std::string_view s) {
  s = trim(s);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A date-time's zone: nothing or "Z" (UTC), or an offset "+05:00" / "-0800";
// the seconds to subtract for UTC. Anything else is no zone.
std::optional<double> zone_offset_s(std::string_view z) {
  if (z.empty() || z == "Z") return 0.0;
  if (z.size() != 6 && z.size() != 5) return std::nullopt;
  if (z[0] != '+' && z[0] != '-') return std::nullopt;
  const std::string_view mm = z.size() == 6 ? z.substr(4, 2) : z.substr(3, 2);
  if (z.size() == 6 && z[3] != ':') return std::nullopt;
  const std::string_view hh = z.substr(1, 2);
  auto digits = [](std::string_view t) { return t.size() == 2 && std::isdigit(static_cast<unsigned char>(t[0])) && std::isdigit(static_cast<unsigned char>(t[1])); };
  if (!digits(hh) || !digits(mm)) return std::nullopt;
  const int hours = (hh[0] - '0') * 10 + (hh[1] - '0'), minutes = (mm[0] - '0') * 10 + (mm[1] - '0');
  if (hours > 14 || minutes > 59) return std::nullopt;
  return (z[0] == '+' ? 1 : -1) * (hours * 3600.0 + minutes * 60.0);
}

// "2023-11-16 18:15:46.6805900" (Azure's traces), optionally with a zone
// ("Z", "+05:00"): seconds since 1970-01-01 UTC. Trailing text is no date.
std::optional<double> date_time_of(std::string_view s) {
  s = trim(s);
  int y, mo, d, h, mi;
  double sec;
  char sep;
  int used = 0;
  const std::string text(s);
  if (s.size() < 19 || std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%lf%n", &y, &mo, &d, &sep, &h, &mi, &sec, &used) != 7) return std::nullopt;
  const std::optional<double> zone = zone_offset_s(std::string_view(text).substr(static_cast<size_t>(used)));
  if (!zone) return std::nullopt;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  constexpr std::array<int, 12> kDaysInMonth{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if ((sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec >= 61) return std::nullopt;
  if (d > kDaysInMonth[mo - 1] + (mo == 2 && leap)) return std::nullopt;  // 2023-02-30 is no date (it would roll into March)
  // Days from the civil date (H. Hinnant's algorithm).
  y -= mo <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const double days = era * 146097.0 + doe - 719468;
  return days * 86400 + h * 3600 + mi * 60 + sec - *zone;
}

// The key one of `names` names (case aside); two such keys leave the field
// ambiguous ({"arrival_s": 1, "timestamp": 1000}), and the line is refused.
template <size_t N>
std::optional<std::string> key_in(const nlohmann::json& o, const std::array<const char*, N>& names, const Place& at) {
  std::optional<std::string> found;
  for (auto it = o.begin(); it != o.end(); ++it)
    for (const char* n : names)
      if (lower(it.key()) == n) {
        if (found) at.fail(fmt::format("'{}' and '{}' name the same field: which one is meant is not clear", *found, it.key()));
        found = it.key();
      }
  return found;
}

// A line's JSON object; a key given twice is refused (a parser keeps one of
// the two values without a word).
nlohmann::json json_object_of(std::string_view line, const Place& at) {
  std::set<std::string> keys;
  std::optional<std::string> repeated;
  const nlohmann::json::parser_callback_t note_keys = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1 && !keys.insert(parsed.get<std::string>()).second) repeated = parsed.get<std::string>();
    return true;
  };
  const nlohmann::json o = nlohmann::json::parse(line.begin(), line.end(), note_keys, false);
  if (o.is_discarded()) at.fail("not valid JSON (a JSON Lines trace has one object a line)");
  if (repeated) at.fail(fmt::format("the key '{}' is given twice", *repeated));
  return o;
}

// One JSON Lines request; `arrival_key` is the arrival's key of the first
// line, which every line must use (seconds and milliseconds do not mix).
TraceRequest json_request(const nlohmann::json& o, const Place& at, std::optional<std::string>& arrival_key) {
  if (!o.is_object()) at.fail("not a JSON object");
  const auto arrival = key_in(o, kArrivalNames, at), prompt = key_in(o, kPromptNames, at), output = key_in(o, kOutputNames, at);
  if (!arrival || !prompt || !output) at.fail("needs an arrival (arrival_s, or timestamp in ms), prompt tokens (prompt_tokens, input_length) and output tokens (output_tokens, output_length)");
  for (const auto& k : {*arrival, *prompt, *output})
    if (!o[k].is_number()) at.fail(fmt::format("{} is {}, not a number", k, json_excerpt(o[k])));
  if (!arrival_key) arrival_key = lower(*arrival);
  if (lower(*arrival) != *arrival_key)
    at.fail(fmt::format("the arrival is '{}' where the first line gave '{}': one trace keeps one unit (arrival_s in seconds, timestamp in ms)",
                        *arrival, *arrival_key));
  TraceRequest r;
  r.arrival_s = o[*arrival].get<double>() / (lower(*arrival) == "timestamp" ? 1000.0 : 1.0);
  r.prompt_tokens = tokens_of(o[*prompt].get<double>(), at, "the prompt");
  r.output_tokens = tokens_of(o[*output].get<double>(), at, "the output");
  return r;
}

// CSV fields: a comma inside double quotes is part of its field (RFC 4180);
// the quotes themselves are trimmed with the field. A quote left open is
// refused at `at`: the fields after it cannot be told apart.
std::vector<std::string_view> fields_of(std::string_view line, const Place& at) {
  std::vector<std::string_view> out;
  size_t start = 0;
  bool quoted = false;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i < line.size() && line[i] == '"') quoted = !quoted;
    if (i == line.size() || (line[i] == ',' && !quoted)) {
      out.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  if (quoted) at.fail("a double quote is opened and never closed");
  return out;
}

// The header column one of `names` names: -1 for none; two or more leave the
// field ambiguous, and the trace is refused at `at`.
template <size_t N>
int column_of(const std::vector<std::string_view>& header, const std::array<const char*, N>& names, const Place& at) {
  int found = -1;
  for (size_t i = 0; i < header.size(); ++i)
    for (const char* n : names)
      if (lower(trim(header[i])) == n) {
        if (found >= 0) at.fail("two header columns name the same field (arrival, prompt or output tokens): which one is meant is not clear");
        found = static_cast<int>(i);
      }
  return found;
}

struct Columns {
  int arrival, prompt, output;
  size_t width;  // the header's fields: a row has as many
};

TraceRequest csv_request(std::string_view line, const Columns& c, const Place& at) {
  const auto f = fields_of(line, at);
  if (f.size() != c.width) at.fail(fmt::format("{} fields, the header has {}", f.size(), c.width));
  TraceRequest r;
  const auto arrival = number_of(f[c.arrival]) ? number_of(f[c.arrival]) : date_time_of(f[c.arrival]);
  if (!arrival) at.fail(fmt::format("arrival '{}' is neither seconds nor a date and time", std::string(trim(f[c.arrival])).substr(0, 40)));
  r.arrival_s = *arrival;
  const auto prompt = number_of(f[c.prompt]), output = number_of(f[c.output]);
  if (!prompt || !output) at.fail("the prompt and output tokens must be numbers");
  r.prompt_tokens = tokens_of(*prompt, at, "the prompt");
  r.output_tokens = tokens_of(*output, at, "the output");
  return r;
}

// Calls `each(line, number)` for every line that is not blank.
template <typename F>
void for_lines(std::string_view text, F each) {
  size_t number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    ++number;
    if (!trim(line).empty()) each(line, number);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

}  // namespace

RequestTrace parse_request_trace(std::string_view text, const std::string& name) {
  RequestTrace t;
  t.name = name;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark, as spreadsheets write it
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    throw InputError(fmt::format("--trace {}: line {}: a NUL byte; a trace is text (JSON Lines or CSV)", name,
                                 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n')));
  const bool json_lines = first != std::string_view::npos && text[first] == '{';
  if (first != std::string_view::npos && text[first] == '[')
    throw InputError(fmt::format("--trace {}: a JSON array; a trace is JSON Lines (one object a line) or CSV with a header", name));
  std::optional<Columns> columns;
  std::optional<std::string> arrival_key;
  for_lines(text, [&](std::string_view line, size_t number) {
    const Place at{name, number};
    if (t.requests.size() >= kMaxTraceRequests) at.fail(fmt::format("more than {} requests", kMaxTraceRequests));
    if (json_lines) {
      if (json_nesting_depth(line, kMaxJsonDepth) > kMaxJsonDepth) at.fail("nested too deeply");
      t.requests.push_back(json_request(json_object_of(line, at), at, arrival_key));
    } else if (!columns) {
      const auto header = fields_of(line, at);
      columns = Columns{column_of(header, kArrivalNames, at), column_of(header, kPromptNames, at), column_of(header, kOutputNames, at), header.size()};
      if (columns->arrival < 0 || columns->prompt < 0 || columns->output < 0)
        at.fail("a CSV trace's header needs an arrival column (arrival_s, timestamp), a prompt column (prompt_tokens, input_length, "
                "request tokens, contexttokens) and an output column (output_tokens, output_length, response tokens, generatedtokens)");
    } else {
      t.requests.push_back(csv_request(line, *columns, at));
    }
  });
  if (t.requests.size() < 2) throw InputError(fmt::format("--trace {}: {} requests; a trace needs at least 2", name, t.requests.size()));
  std::stable_sort(t.requests.begin(), t.requests.end(), [](const TraceRequest& a, const TraceRequest& b) { return a.arrival_s < b.arrival_s; });
  const double start = t.requests.front().arrival_s;
  for (TraceRequest& r : t.requests) r.arrival_s -= start;
  if (t.span_s() <= 0) throw InputError(fmt::format("--trace {}: every request arrives at the same instant, so the trace has no rate", name));
  const double rate = t.requests_per_second();
  if (!std::isfinite(rate) || rate < 1e-6 || rate > 1e9)
    throw InputError(fmt::format("--trace {}: {} arrivals over {:.4g} s is {:.3g} requests/s, outside [1e-6, 1e9] (are the arrivals in the unit "
                                 "the format says: JSON timestamp in ms, arrival_s and CSV timestamp in s?)",
                                 name, t.requests.size(), t.span_s(), rate));
  return t;
}

}  // namespace gpuadvisor
