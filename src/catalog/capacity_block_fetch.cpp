// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
#include "gpuadvisor/catalog/capacity_block_fetch.hpp"
#include "gpuadvisor/base/json_text.hpp"

#include "curl_library.hpp"
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/files.hpp"
#include "gpuadvisor/catalog/catalog.hpp"

namespace gpuadvisor {

namespace {

using ordered_json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

// ---- Credentials ----

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1));
}

std::optional<std::string> nonempty(const EnvLookup& env, const char* name) {
  auto v = env(name);
  if (v && v->empty()) return std::nullopt;  // an empty variable counts as unset, as the AWS CLI treats it
  return v;
}

// The key = value pairs of one [profile] of an INI file (the AWS shared credentials format).
std::optional<std::map<std::string, std::string>> ini_section(const std::string& text, const std::string& profile) {
  std::optional<std::map<std::string, std::string>> found;
  bool inside = false;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = trim(std::string_view(text).substr(at, end - at));
    at = end + 1;
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      std::string name = trim(std::string_view(line).substr(1, line.size() - 2));
      if (name.rfind("profile ", 0) == 0) name = trim(std::string_view(name).substr(8));  // the config file's spelling
      inside = name == profile;
      if (inside && !found) found.emplace();
      continue;
    }
    const auto eq = line.find('=');
    if (inside && eq != std::string::npos) (*found)[trim(std::string_view(line).substr(0, eq))] = trim(std::string_view(line).substr(eq + 1));
  }
  return found;
}

std::optional<AwsCredentials> credentials_from_file(const EnvLookup& env) {
  const auto explicit_file = nonempty(env, "AWS_SHARED_CREDENTIALS_FILE");
  const auto home = nonempty(env, "HOME");
  if (!explicit_file && !home) return std::nullopt;
  const std::string path = explicit_file ? *explicit_file : *home + "/.aws/credentials";
  const auto named_profile = nonempty(env, "AWS_PROFILE");
  const std::string profile = named_profile.value_or("default");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (named_profile || explicit_file)
      throw InputError(fmt::format("{}: the shared credentials file{} does not exist; {}", path,
                                   named_profile ? fmt::format(" (AWS_PROFILE={})", profile) : "", missing_credentials_message()));
    return std::nullopt;
  }
  const auto section = ini_section(read_input_file_capped(path, "an AWS shared credentials file", 1'000'000), profile);
  if (!section) {
    if (named_profile) throw InputError(fmt::format("{}: no profile [{}] (AWS_PROFILE); name one the file has", path, profile));
    return std::nullopt;
  }
  auto get = [&](const char* key) { auto it = section->find(key); return it == section->end() ? std::string() : it->second; };
  AwsCredentials c{get("aws_access_key_id"), get("aws_secret_access_key"), get("aws_session_token"), fmt::format("{} [{}]", path, profile)};
  if (c.access_key_id.empty() && c.secret_access_key.empty()) {
    if (named_profile)
      throw InputError(fmt::format("{} [{}]: the profile has no aws_access_key_id and aws_secret_access_key (SSO and role profiles: "
                                   "export them first with `eval \"$(aws configure export-credentials --format env)\"`)", path, profile));
    return std::nullopt;
  }
  if (c.access_key_id.empty() || c.secret_access_key.empty())
    throw InputError(fmt::format("{}: the profile has only one of aws_access_key_id and aws_secret_access_key; give both", c.origin));
  return c;
}

// ---- The XML of an EC2 Query API response: a tiny, bounded tag extractor ----
// EC2 answers small, flat documents without prefixes or CDATA; elements are
// found by name, nesting of the same name counted, entities decoded.

struct Span {
  size_t inner_begin = 0, inner_end = 0, after = 0;  // the content, and the first byte after the closing tag
};

// The next start tag `<name>`, `<name ...>` or `<name/>` at or after `from`.
std::optional<std::pair<size_t, bool>> start_tag(std::string_view xml, std::string_view name, size_t from) {
  const std::string open = "<" + std::string(name);
  for (size_t at = xml.find(open, from); at != std::string_view::npos; at = xml.find(open, at + 1)) {
    const size_t next = at + open.size();
    if (next >= xml.size()) return std::nullopt;
    const char c = xml[next];
    if (c != '>' && c != '/' && c != ' ' && c != '\t' && c != '\r' && c != '\n') continue;  // <itemX> is not <item>
    const size_t close = xml.find('>', next);
    if (close == std::string_view::npos) return std::nullopt;
    return std::pair{close + 1, xml[close - 1] == '/'};
  }
  return std::nullopt;
}

// The element `name` at or after `from`, its content up to the matching end tag (same-name nesting counted).
std::optional<Span> element(std::string_view xml, std::string_view name, size_t from = 0, size_t until = std::string_view::npos) {
  xml = xml.substr(0, std::min(until, xml.size()));
  auto start = start_tag(xml, name, from);
  if (!start) return std::nullopt;
  if (start->second) return Span{start->first, start->first, start->first};  // <name/>: empty
  const std::string close = "</" + std::string(name) + ">";
  int depth = 1;
  size_t at = start->first;
  while (depth > 0) {
    const size_t next_close = xml.find(close, at);
    if (next_close == std::string_view::npos) return std::nullopt;  // cut short
    auto nested = start_tag(xml, name, at);
    if (nested && nested->first <= next_close) {
      if (!nested->second) ++depth;
      at = nested->first;
      continue;
    }
    if (--depth == 0) return Span{start->first, next_close, next_close + close.size()};
    at = next_close + close.size();
  }
  return std::nullopt;
}

std::string decode_entities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') { out += s[i]; continue; }
    const size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) { out += s[i]; continue; }
    const std::string_view e = s.substr(i + 1, semi - i - 1);
    static const std::map<std::string_view, char> named{{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    unsigned code = 0;
    if (auto n = named.find(e); n != named.end()) out += n->second;
    else if (e.size() > 1 && e[0] == '#' && std::from_chars(e.data() + (e[1] == 'x' ? 2 : 1), e.data() + e.size(), code, e[1] == 'x' ? 16 : 10).ec == std::errc() && code > 0 && code < 0x80)
      out += static_cast<char>(code);  // tokens and messages are ASCII; others are kept as written
    else { out += s[i]; continue; }
    i = semi;
  }
  return out;
}

std::optional<std::string> text_of(std::string_view xml, std::string_view name, size_t from = 0, size_t until = std::string_view::npos) {
  auto e = element(xml, name, from, until);
  if (!e) return std::nullopt;
  return trim(decode_entities(xml.substr(e->inner_begin, e->inner_end - e->inner_begin)));
}

template <class T>
std::optional<T> number(const std::string& s) {
  T v{};
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

CapacityBlockOffering parse_offering(std::string_view item, int index) {
  auto fail = [&](const char* field, const std::string& why) -> CapacityBlockOffering {
    throw InputError(fmt::format("offering {} ({}): {}", index + 1, field, why));
  };
  auto field = [&](const char* name) { return text_of(item, name).value_or(""); };
  CapacityBlockOffering o;
  o.offering_id = field("capacityBlockOfferingId");
  o.instance_type = field("instanceType");
  o.availability_zone = field("availabilityZone");
  o.start_date = field("startDate");
  o.end_date = field("endDate");
  o.currency = field("currencyCode");
  if (o.currency.empty()) o.currency = "USD";  // EC2's only currency outside China
  if (o.instance_type.empty()) return fail("instanceType", "missing");
  const auto count = number<int>(field("instanceCount"));
  if (!count || *count < 1) return fail("instanceCount", "missing or not a positive whole number");
  o.instance_count = *count;
  const auto hours = number<int>(field("capacityBlockDurationHours"));
  const std::string minutes_text = field("capacityBlockDurationMinutes");
  const auto minutes = minutes_text.empty() ? std::optional<int>(0) : number<int>(minutes_text);
  if (!hours || *hours < 0 || !minutes || *minutes < 0 || *hours * 60 + *minutes <= 0)
    return fail("capacityBlockDurationHours", "missing or not a positive duration");
  o.duration_hours = *hours + *minutes / 60.0;
  const auto fee = number<double>(field("upfrontFee"));
  if (!fee || !std::isfinite(*fee) || *fee <= 0 || *fee > 1e12) return fail("upfrontFee", "missing or not a positive amount");
  o.upfront_fee = *fee;
  return o;
}

// ---- HTTP: one signed POST ----

struct Reply {
  CURLcode rc = CURLE_OK;
  long status = 0;
  std::string body, curl_message;
  bool too_large = false;
};

size_t collect(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<Reply*>(user);
  if (r->body.size() + size * n > kMaxEc2ResponseBytes) return r->too_large = true, 0;
  r->body.append(data, size * n);
  return size * n;
}

long long ms_left(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
}

std::string form_escape(CURL* c, const std::string& s) {
  char* e = curl_library().easy_escape(c, s.c_str(), static_cast<int>(s.size()));
  std::string out = e ? e : "";
  curl_library().free(e);
  return out;
}

std::string form_body(CURL* c, const std::vector<std::pair<std::string, std::string>>& params) {
  std::string body;
  for (const auto& [k, v] : params) body += (body.empty() ? "" : "&") + k + "=" + form_escape(c, v);
  return body;
}

// The Query API call as the AWS CLI makes it: a form POST, signed by libcurl
// (SigV4 over host, x-amz-date, the body's hash and our headers; a session
// token rides in x-amz-security-token).
Reply post(const CapacityBlockFetchOptions& o, const std::string& url, const std::vector<std::pair<std::string, std::string>>& params,
           const AwsCredentials& cr) {
  Reply r;
  const long long left_ms = ms_left(o.deadline);
  if (left_ms <= 0) return r.rc = CURLE_OPERATION_TIMEDOUT, r;
  CURL* c = curl_library().easy_init();
  const std::string body = form_body(c, params);
  const std::string sigv4 = "aws:amz:" + o.region + ":ec2";
  curl_slist* headers = nullptr;
  if (!cr.session_token.empty()) headers = curl_library().slist_append(headers, ("x-amz-security-token: " + cr.session_token).c_str());
  char message[CURL_ERROR_SIZE] = "";
  curl_library().easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_library().easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_library().easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);  // a signed request is never sent on to another place
  curl_library().easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_library().easy_setopt(c, CURLOPT_USERNAME, cr.access_key_id.c_str());
  curl_library().easy_setopt(c, CURLOPT_PASSWORD, cr.secret_access_key.c_str());
  curl_library().easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_library().easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  curl_library().easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_library().easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_library().easy_setopt(c, CURLOPT_WRITEDATA, &r);
  curl_library().easy_setopt(c, CURLOPT_ERRORBUFFER, message);
  curl_library().easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_library().easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min<long long>(o.timeout_s * 1000, left_ms)));
  curl_library().easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(std::min<long long>(o.timeout_s * 1000, left_ms)));
  curl_library().easy_setopt(c, CURLOPT_USERAGENT, "gpuadvisor (prices fetch --capacity-blocks)");
  r.rc = curl_library().easy_perform(c);
  curl_library().easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  r.curl_message = message;
  curl_library().slist_free_all(headers);
  curl_library().easy_cleanup(c);
  return r;
}

// ---- What an answer means ----

bool retryable_code(const std::string& code) {
  static const std::set<std::string> codes{"RequestLimitExceeded", "Throttling", "ThrottlingException", "ServiceUnavailable",
                                           "Unavailable", "InternalError", "InternalFailure"};
  return codes.count(code) > 0;
}

// EC2 does not sell this type here (or not for this request): said per type, not fatal.
bool not_offered_code(const std::string& code) {
  return code == "Unsupported" || code == "InvalidInstanceType" || code == "InvalidParameterValue" || code == "InvalidParameterCombination";
}

std::string refusal(const Ec2Error& e, long status, const AwsCredentials& cr) {
  const std::string what = fmt::format("HTTP {}, {}: {}", status, e.code, e.message.empty() ? "no message" : e.message);
  if (e.code == "ExpiredToken" || e.code == "RequestExpired")
    return fmt::format("the credentials from {} have expired ({}): get new ones (`aws sso login`, or a new session token) and run it again"
                       "{}", cr.origin, what, e.code == "RequestExpired" ? "; RequestExpired also means this machine's clock is off by minutes" : "");
  if (e.code == "AuthFailure" || e.code == "InvalidClientTokenId" || e.code == "SignatureDoesNotMatch" || e.code == "IncompleteSignature" ||
      e.code == "MissingAuthenticationToken" || e.code == "UnrecognizedClientException")
    return fmt::format("EC2 refused the credentials from {} ({}): check the access key and secret, and the session token of temporary credentials",
                       cr.origin, what);
  if (e.code == "UnauthorizedOperation" || e.code == "AccessDenied" || e.code == "AccessDeniedException")
    return fmt::format("the credentials from {} may not call ec2:DescribeCapacityBlockOfferings ({}): allow that action in their IAM policy",
                       cr.origin, what);
  return fmt::format("EC2 refused the request ({})", what);
}

enum class Verdict { page, retry, not_offered, fatal };
struct Answer {
  Verdict verdict;
  OfferingsPage page;
  std::string reason;  // retry: the last error; not_offered: EC2's code and message; fatal: the message
};

Answer judge(const Reply& r, const CapacityBlockFetchOptions& o, const AwsCredentials& cr) {
  if (r.rc == CURLE_OPERATION_TIMEDOUT && ms_left(o.deadline) <= 50) return {Verdict::retry, {}, "deadline"};
  if (r.rc == CURLE_WRITE_ERROR && r.too_large)
    return {Verdict::fatal, {}, fmt::format("the answer is larger than {} MB, not an offerings page", kMaxEc2ResponseBytes / 1000000)};
  if (r.rc != CURLE_OK) return {Verdict::retry, {}, r.curl_message.empty() ? curl_library().easy_strerror(r.rc) : r.curl_message};
  if (r.status == 200) {
    try {
      return {Verdict::page, parse_offerings_page(r.body), ""};
    } catch (const InputError& e) {
      return {Verdict::fatal, {}, fmt::format("the answer is not a usable DescribeCapacityBlockOfferings response ({})", e.what())};
    }
  }
  const auto error = parse_ec2_error(r.body);
  if (r.status >= 500 || (error && retryable_code(error->code)))
    return {Verdict::retry, {}, error ? fmt::format("HTTP {}, {}: {}", r.status, error->code, error->message) : fmt::format("HTTP {}", r.status)};
  if (r.status >= 400 && error && not_offered_code(error->code)) return {Verdict::not_offered, {}, error->code + ": " + error->message};
  if (r.status >= 400 && error) return {Verdict::fatal, {}, refusal(*error, r.status, cr)};
  return {Verdict::fatal, {}, fmt::format("HTTP {} without an EC2 error document (is --endpoint-url an EC2 endpoint?)", r.status)};
}

// Sleeps before retry `i` (1 s, 2 s, 4 s ...); false when that would pass the deadline.
bool back_off(const CapacityBlockFetchOptions& o, int i) {
  const long long wait_ms = 1000LL << std::min(i - 1, 5);
  if (ms_left(o.deadline) <= wait_ms) return false;
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  return true;
}

// One page, retried on throttling, 5xx and connection failures.
Answer request_page(const CapacityBlockFetchOptions& o, const std::string& url, const std::vector<std::pair<std::string, std::string>>& params,
                    const AwsCredentials& cr, const std::string& what) {
  std::string last;
  int tried = 0;
  for (; tried < o.attempts; ++tried) {
    if (ms_left(o.deadline) <= 0 || (tried > 0 && !back_off(o, tried))) break;
    Answer a = judge(post(o, url, params, cr), o, cr);
    if (a.verdict == Verdict::fatal)
      throw InputError(fmt::format("{} ({}): {}; the previous prices are kept", url, what, a.reason));
    if (a.verdict != Verdict::retry) return a;
    last = a.reason;
    if (last == "deadline") break;
  }
  if (tried < o.attempts || last == "deadline")
    throw UnavailableError(fmt::format("{} ({}): the --deadline of {} s ran out after {} attempt(s){}; the previous prices are kept (try again, or give "
                                 "a longer --deadline)", url, what, o.deadline_s, tried, last.empty() || last == "deadline" ? "" : " (last: " + last + ")"));
  throw UnavailableError(fmt::format("{} ({}): {} after {} attempts{}; the previous prices are kept (try again in a few minutes, or raise --retries)",
                               url, what, last, tried, last.find("RequestLimitExceeded") != std::string::npos || last.find("Throttl") != std::string::npos
                                                           ? " (EC2 kept throttling the requests)" : ""));
}

TypeOfferings fetch_type(const CapacityBlockFetchOptions& o, const std::string& url, const std::string& type, const AwsCredentials& cr) {
  TypeOfferings t{type, {}, "", 0};
  std::vector<std::pair<std::string, std::string>> params{
      {"Action", "DescribeCapacityBlockOfferings"}, {"Version", "2016-11-15"}, {"InstanceType", type},
      {"InstanceCount", std::to_string(o.instance_count)}, {"CapacityDurationHours", std::to_string(o.days * 24)}};
  if (!o.start_date_range.empty()) params.emplace_back("StartDateRange", o.start_date_range);
  if (!o.end_date_range.empty()) params.emplace_back("EndDateRange", o.end_date_range);
  params.emplace_back("MaxResults", "100");
  const std::string what = fmt::format("DescribeCapacityBlockOfferings for {} x {}, {} days, in {}", o.instance_count, type, o.days, o.region);
  std::set<std::string> tokens;
  for (int page = 0;; ++page) {
    if (page == kMaxOfferingPages) throw InputError(fmt::format("{} ({}): more than {} pages; the previous prices are kept", url, what, kMaxOfferingPages));
    Answer a = request_page(o, url, params, cr, what);
    if (a.verdict == Verdict::not_offered) return t.not_offered = a.reason, t;
    for (auto& off : a.page.offerings) {
      if (off.instance_type != type) continue;  // only what was asked for
      if (off.currency != "USD") { ++t.skipped_other_currency; continue; }  // the catalog's rates are in USD
      t.offerings.push_back(std::move(off));
    }
    if (a.page.next_token.empty()) return t;
    if (!tokens.insert(a.page.next_token).second)
      throw InputError(fmt::format("{} ({}): the same NextToken came back twice (a paging loop); the previous prices are kept", url, what));
    if (params.back().first == "NextToken") params.pop_back();
    params.emplace_back("NextToken", a.page.next_token);
  }
}

// ---- The overlay ----

ordered_json parse_overlay(const std::string& text, const std::string& origin) {
  if (trim(text).empty()) return ordered_json::object();
  try {
    ordered_json j = ordered_json::parse(text);
    if (!j.is_object()) throw InputError(fmt::format("{}: not a JSON object, so not a price overlay; run `gpuadvisor prices fetch` again or delete it", origin));
    if (j.contains("instances") && !j["instances"].is_array()) throw InputError(fmt::format("{}: field 'instances': expected a list", origin));
    if (j.contains("sources") && !j["sources"].is_object()) throw InputError(fmt::format("{}: field 'sources': expected an object", origin));
    return j;
  } catch (const ordered_json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON ({}); run `gpuadvisor prices fetch` again or delete it", origin, e.what()));
  }
}

ordered_json& instance_entry(ordered_json& overlay, const std::string& name) {
  ordered_json& list = overlay["instances"];
  if (!list.is_array()) list = ordered_json::array();
  for (auto& e : list)
    if (e.is_object() && e.value("name", "") == name) return e;
  list.push_back({{"name", name}});
  return list.back();
}

ordered_json source_entry() {
  return {{"title", "EC2 DescribeCapacityBlockOfferings for your account (`gpuadvisor prices fetch --capacity-blocks`; each rate's note names its block, "
                    "dates and fee)"},
          {"url", "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeCapacityBlockOfferings.html"}};
}

std::string money(double usd) { return fmt::format("${:.2f}", usd); }

ordered_json rate_quote(const TypeOfferings& t, const std::string& region, const std::string& date) {
  const auto cheapest = std::min_element(t.offerings.begin(), t.offerings.end(), [](const auto& a, const auto& b) {
    return a.usd_per_instance_hour() < b.usd_per_instance_hour();
  });
  const auto dearest = std::max_element(t.offerings.begin(), t.offerings.end(), [](const auto& a, const auto& b) {
    return a.usd_per_instance_hour() < b.usd_per_instance_hour();
  });
  const CapacityBlockOffering& c = *cheapest;
  const double rate = std::round(c.usd_per_instance_hour() * 1e4) / 1e4;
  const std::string range = t.offerings.size() > 1 ? fmt::format(" (offerings ${:.4f} to ${:.4f} an instance-hour)", c.usd_per_instance_hour(),
                                                                   dearest->usd_per_instance_hour())
                                                   : "";
  return {{"usd_per_hour", rate},
          {"as_of", date},
          {"source", kCapacityBlockSource},
          {"statistic", "the cheapest offering's UpfrontFee / (InstanceCount x CapacityBlockDurationHours)"},
          {"status", nullptr},
          {"note", fmt::format("cheapest of {} Capacity Block offering(s) in {} fetched {}{}: {} x {} for {:g} h, {} upfront, {} to {} in {} ({})",
                               t.offerings.size(), region, date, range, c.instance_count, c.instance_type, c.duration_hours,
                               money(c.upfront_fee), c.start_date, c.end_date, c.availability_zone, c.offering_id)}};
}

}  // namespace

std::optional<std::string> process_env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

std::string missing_credentials_message() {
  return "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), or put them in "
         "~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE); for SSO or a role run `eval \"$(aws configure export-credentials "
         "--format env)\"` first; nothing was changed";
}

std::optional<AwsCredentials> find_aws_credentials(const EnvLookup& env) {
  const auto key = nonempty(env, "AWS_ACCESS_KEY_ID"), secret = nonempty(env, "AWS_SECRET_ACCESS_KEY");
  if (key && secret) return AwsCredentials{*key, *secret, nonempty(env, "AWS_SESSION_TOKEN").value_or(""), "the environment"};
  if (key || secret)
    throw InputError(fmt::format("only {} is set in the environment; set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
                                 key ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY"));
  return credentials_from_file(env);
}

OfferingsPage parse_offerings_page(std::string_view xml) {
  const auto root = element(xml, "DescribeCapacityBlockOfferingsResponse");
  if (!root) throw InputError("no complete <DescribeCapacityBlockOfferingsResponse> element");
  const auto set = element(xml, "capacityBlockOfferingSet", root->inner_begin, root->inner_end);
  if (!set) throw InputError("no <capacityBlockOfferingSet> in the response");
  OfferingsPage page;
  size_t at = set->inner_begin;
  while (auto item = element(xml, "item", at, set->inner_end)) {
    page.offerings.push_back(parse_offering(xml.substr(item->inner_begin, item->inner_end - item->inner_begin), static_cast<int>(page.offerings.size())));
    at = item->after;
  }
  if (start_tag(xml.substr(0, set->inner_end), "item", at)) throw InputError("an <item> of the offerings is cut short");
  // The token sits beside the set, not in it: look only after the set ends.
  page.next_token = text_of(xml, "nextToken", set->after, root->inner_end).value_or("");
  return page;
}

std::optional<Ec2Error> parse_ec2_error(std::string_view xml) {
  const auto error = element(xml, "Error");
  if (!error) return std::nullopt;
  auto code = text_of(xml, "Code", error->inner_begin, error->inner_end);
  if (!code || code->empty()) return std::nullopt;
  return Ec2Error{*code, text_of(xml, "Message", error->inner_begin, error->inner_end).value_or("")};
}

std::string ec2_endpoint(const CapacityBlockFetchOptions& o) {
  if (o.endpoint_url.empty()) return "https://ec2." + o.region + ".amazonaws.com/";
  CURLU* u = curl_library().url();
  std::string scheme, host;
  auto part = [&](CURLUPart p) {
    char* s = nullptr;
    std::string out;
    if (curl_library().url_get(u, p, &s, 0) == CURLUE_OK && s) out = s;
    curl_library().free(s);
    return out;
  };
  if (curl_library().url_set(u, CURLUPART_URL, o.endpoint_url.c_str(), 0) == CURLUE_OK) scheme = part(CURLUPART_SCHEME), host = part(CURLUPART_HOST);
  curl_library().url_cleanup(u);
  // Credentials are only ever signed for an encrypted endpoint or this machine (a test server).
  if (scheme == "https" && !host.empty()) return o.endpoint_url;
  if (scheme == "http" && host == "127.0.0.1") return o.endpoint_url;
  throw InputError(fmt::format("--endpoint-url: '{}' is neither an https URL nor http://127.0.0.1 (a local test server); refused, the "
                               "request carries your AWS signature", o.endpoint_url));
}

std::vector<TypeOfferings> fetch_capacity_block_offerings(const CapacityBlockFetchOptions& o, const AwsCredentials& credentials) {
  const std::string url = ec2_endpoint(o);
  std::vector<TypeOfferings> out;
  for (const auto& type : o.instance_types) out.push_back(fetch_type(o, url, type, credentials));
  // Every type refused: the request itself is wrong (a bad date range, say), not the types.
  if (!out.empty() && std::all_of(out.begin(), out.end(), [](const TypeOfferings& t) { return !t.not_offered.empty(); }))
    throw InputError(fmt::format("{}: EC2 refused the request for every instance type (first: {} for {}); the previous prices are kept",
                                 url, out.front().not_offered, out.front().instance_type));
  return out;
}

std::vector<std::string> capacity_block_instance_types(const Catalog& catalog) {
  std::vector<std::string> out;
  for (const auto& i : catalog.instances)
    if (i.capacity_blocks && i.purchase != "ultraserver_capacity_blocks") out.push_back(i.name);
  return out;
}

std::string merge_capacity_block_rates(const std::string& previous, const std::string& previous_origin, const Catalog& catalog,
                                       const std::string& region, const std::vector<TypeOfferings>& fetched, const std::string& date) {
  ordered_json overlay = parse_overlay(previous, previous_origin);
  // An overlay of only fetched Capacity Block rates says when they were fetched; another keeps its own description.
  if (!overlay.contains("description") || !overlay["description"].is_string() ||
      overlay["description"].get<std::string>().rfind("Capacity Block rates fetched", 0) == 0)
    overlay["description"] = fmt::format("Capacity Block rates fetched by `gpuadvisor prices fetch --capacity-blocks` on {}", date);
  overlay["sources"][kCapacityBlockSource] = source_entry();
  for (const auto& t : fetched) {
    if (t.offerings.empty()) continue;  // no offerings: the type keeps the rate it had
    ordered_json& entry = instance_entry(overlay, t.instance_type);
    ordered_json& prices = entry["prices"][region];
    prices["capacity_block"] = rate_quote(t, region, date);
    // A region new to the type needs its other quotes, said to be unknown.
    const Instance* inst = catalog.find_instance(t.instance_type);
    if (!inst || !inst->prices_in(region)) {
      if (!prices.contains("on_demand")) prices["on_demand"] = {{"status", "not_captured"}, {"note", "not fetched (only Capacity Block offerings were)"}};
      if (!prices.contains("spot")) prices["spot"] = {{"status", "not_captured"}, {"note", "not fetched (only Capacity Block offerings were)"}};
    }
  }
  return json_text(overlay, 1) + "\n";
}

std::string carry_capacity_block_rates(const std::string& previous, const std::string& overlay_json) {
  ordered_json old;
  try {
    old = parse_overlay(previous, "the previous overlay");
  } catch (const InputError&) {
    return overlay_json;  // a damaged cache has nothing to carry
  }
  ordered_json fresh = ordered_json::parse(overlay_json);
  bool carried = false;
  for (const auto& e : old.value("instances", ordered_json::array())) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("prices") || !e["prices"].is_object()) continue;
    for (auto r = e["prices"].begin(); r != e["prices"].end(); ++r) {
      if (!r->is_object() || !r->contains("capacity_block") || !(*r)["capacity_block"].is_object() ||
          (*r)["capacity_block"].value("source", "") != kCapacityBlockSource)
        continue;
      ordered_json& prices = instance_entry(fresh, e["name"].get<std::string>())["prices"];
      // The live offerings win over the offer file's rate: they are what the user's account can buy.
      if (prices.contains(r.key())) prices[r.key()]["capacity_block"] = (*r)["capacity_block"];
      else prices[r.key()] = *r;  // a region only the offerings priced: with its unknown quotes
      carried = true;
    }
  }
  if (!carried) return overlay_json;
  fresh["sources"][kCapacityBlockSource] = old["sources"].value(kCapacityBlockSource, source_entry());
  return json_text(fresh, 1) + "\n";
}

}  // namespace gpuadvisor
