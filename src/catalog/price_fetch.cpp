// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
#include "gpuadvisor/catalog/price_fetch.hpp"
#include "gpuadvisor/base/json_text.hpp"

#include "curl_library.hpp"
#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/files.hpp"
#include "base/json_input.hpp"

namespace gpuadvisor {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// What a downloaded file must be before it replaces the cached copy.
enum class FileKind { ec2_index, sp_index, offer, savings_plans, spot_advisor };

const char* kind_name(FileKind k) {
  switch (k) {
    case FileKind::ec2_index: return "EC2 region index";
    case FileKind::sp_index: return "Savings Plans region index";
    case FileKind::offer: return "offer file";
    case FileKind::savings_plans: return "savings plans file";
    case FileKind::spot_advisor: return "spot advisor";
  }
  return "";
}

// Indexes and the Spot Advisor data are read whole later, so their size is bounded.
unsigned long long max_bytes_of(FileKind k) {
  if (k == FileKind::ec2_index || k == FileKind::sp_index) return kMaxIndexBytes;
  return k == FileKind::spot_advisor ? kMaxInputFileBytes : 0;  // 0: offer files are streamed, any size
}

// ---- URLs: references resolved against their base, and the host rule ----

std::string url_part(CURLU* u, CURLUPart part, unsigned flags = 0) {
  char* s = nullptr;
  if (curl_library().url_get(u, part, &s, flags) != CURLUE_OK || !s) return "";
  std::string out = s;
  curl_library().free(s);
  return out;
}

// `ref` (absolute, or relative as in an index or a Location) resolved against `base`; "" if not a URL.
std::string resolve_url(const std::string& base, const std::string& ref) {
  CURLU* u = curl_library().url();
  std::string out;
  if (curl_library().url_set(u, CURLUPART_URL, base.c_str(), 0) == CURLUE_OK && curl_library().url_set(u, CURLUPART_URL, ref.c_str(), 0) == CURLUE_OK)
    out = url_part(u, CURLUPART_URL);
  curl_library().url_cleanup(u);
  return out;
}

// "http://host:port" with the scheme's default port, lower case; "" unless an http(s) URL.
std::string origin_of(const std::string& url) {
  CURLU* u = curl_library().url();
  std::string scheme, host, port;
  if (curl_library().url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    scheme = url_part(u, CURLUPART_SCHEME), host = url_part(u, CURLUPART_HOST), port = url_part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT);
  }
  curl_library().url_cleanup(u);
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if ((scheme != "http" && scheme != "https") || host.empty()) return "";
  return scheme + "://" + host + ":" + port;
}

std::string host_port_of(const std::string& origin) { return origin.substr(origin.find("://") + 3); }

// Same scheme, host and port as `base`, or a host the user allowed (--allow-host HOST or HOST:PORT).
bool host_allowed(const std::string& url, const std::string& base, const std::vector<std::string>& allowed) {
  const std::string o = origin_of(url);
  if (o.empty()) return false;
  if (o == origin_of(base)) return true;
  const std::string hp = host_port_of(o), host = hp.substr(0, hp.rfind(':'));
  for (std::string a : allowed) {
    std::transform(a.begin(), a.end(), a.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (a == host || a == hp) return true;
  }
  return false;
}

void check_host(const std::string& url, const std::string& base, const FetchOptions& o, const std::string& why) {
  if (host_allowed(url, base, o.allowed_hosts)) return;
  const std::string target = origin_of(url);
  if (target.empty()) throw InputError(fmt::format("{} {}, which is not an http(s) URL; refused", why, url));
  throw InputError(fmt::format("{} {}, another host than {}; refused (pass --allow-host {} if you trust it)", why, url,
                               host_port_of(origin_of(base)), host_port_of(target)));
}

// ---- Validators: kept beside the cached file, with its size ----

struct Validators {
  std::string etag, last_modified;
  bool any() const { return !etag.empty() || !last_modified.empty(); }
};

std::string meta_path(const std::string& path) { return path + ".validators.json"; }

// The validators of the cached file at `path`; none unless they were written
// for this very file (its size), so a file and validators out of step cost a download.
Validators read_validators(const std::string& path) {
  std::error_code ec;
  const auto size_bytes = fs::file_size(path, ec);
  std::ifstream in(meta_path(path));
  if (ec || !in) return {};
  try {
    const json j = json::parse(in);
    if (!j.is_object() || !j.contains("bytes") || !j["bytes"].is_number_unsigned() || j["bytes"].get<unsigned long long>() != size_bytes) return {};
    return {j.value("etag", ""), j.value("last_modified", "")};
  } catch (const json::exception&) {
    return {};  // a damaged cache entry only costs a download
  }
}

std::string validators_url(const std::string& path) {
  std::ifstream in(meta_path(path));
  try {
    const json j = json::parse(in);
    if (j.is_object() && j.contains("url") && j["url"].is_string()) return j["url"];
  } catch (const json::exception&) {
  }
  return "file:" + path;
}

// A validator is sent back verbatim in a header: only printable ASCII is kept
// (a server's raw bytes, invalid UTF-8 included, cost a download rather than a crash).
bool printable_ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= 0x20 && ch <= 0x7e; });
}

void write_validators(const std::string& path, const std::string& url, const Validators& v) {
  if (!printable_ascii(v.etag) || !printable_ascii(v.last_modified) || !printable_ascii(url)) return;
  const json j{{"url", url}, {"etag", v.etag}, {"last_modified", v.last_modified}, {"bytes", fs::file_size(path)}};
  write_file_atomically(meta_path(path), json_text(j) + "\n");
}

void discard_cached(const std::string& path) {
  std::error_code ec;
  fs::remove(meta_path(path), ec);
  fs::remove(path, ec);
}

// ---- Checking a file: a streaming syntax pass that keeps only the top-level shape ----

class ShapeSax : public nlohmann::json_sax<json> {
 public:
  static constexpr size_t kMaxDepth = 64;  // AWS's files nest ~7 levels
  json::value_t root = json::value_t::discarded;
  std::map<std::string, json::value_t> top, terms;  // keys of the root object and of its "terms", with their value's type
  std::string offer_code, error;

  bool null() override { return value(json::value_t::null); }
  bool boolean(bool) override { return value(json::value_t::boolean); }
  bool number_integer(number_integer_t) override { return value(json::value_t::number_integer); }
  bool number_unsigned(number_unsigned_t) override { return value(json::value_t::number_unsigned); }
  bool number_float(number_float_t, const string_t&) override { return value(json::value_t::number_float); }
  bool binary(binary_t&) override { return value(json::value_t::binary); }
  bool string(string_t& s) override {
    if (depth_ == 1 && key1_ == "offerCode") offer_code = s.substr(0, 64);
    return value(json::value_t::string);
  }
  bool start_object(std::size_t) override { return value(json::value_t::object) && enter(); }
  bool start_array(std::size_t) override { return value(json::value_t::array) && enter(); }
  bool end_object() override { return --depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool key(string_t& k) override {
    if (depth_ == 1) key1_ = k;
    if (depth_ == 2) key2_ = k;
    return true;
  }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
    const std::string what = e.what();
    error = fmt::format("not valid JSON at byte {}: {}", byte, what.substr(what.find(':') + 2));
    return false;
  }

 private:
  size_t depth_ = 0;
  std::string key1_, key2_;
  bool value(json::value_t t) {
    if (depth_ == 0) root = t;
    if (depth_ == 1 && root == json::value_t::object) top[key1_] = t;
    if (depth_ == 2 && key1_ == "terms" && top["terms"] == json::value_t::object) terms[key2_] = t;
    return true;
  }
  bool enter() {
    if (++depth_ <= kMaxDepth) return true;
    error = fmt::format("nested deeper than {} levels", kMaxDepth);
    return false;
  }
};

std::optional<std::string> expect(const std::map<std::string, json::value_t>& keys, const char* key, json::value_t type, const char* where) {
  auto it = keys.find(key);
  if (it != keys.end() && it->second == type) return std::nullopt;
  return fmt::format("expected {}'{}' ({}){}", where, key, type == json::value_t::object ? "an object" : "a list",
                     it == keys.end() ? ", found none" : ", found another type");
}

// What the importer needs of each kind, checked on the shape.
std::optional<std::string> check_shape(const ShapeSax& s, FileKind kind) {
  if (s.root != json::value_t::object) return "expected a JSON object";
  switch (kind) {
    case FileKind::ec2_index: return expect(s.top, "regions", json::value_t::object, "");
    case FileKind::sp_index: return expect(s.top, "regions", json::value_t::array, "");
    case FileKind::spot_advisor: return expect(s.top, "spot_advisor", json::value_t::object, "");
    case FileKind::offer:
      if (s.offer_code != "AmazonEC2") return fmt::format("offerCode: expected \"AmazonEC2\" (an EC2 offer file), found \"{}\"", s.offer_code);
      if (auto e = expect(s.top, "products", json::value_t::object, "")) return e;
      return expect(s.top, "terms", json::value_t::object, "");
    case FileKind::savings_plans:
      if (auto e = expect(s.top, "products", json::value_t::array, "")) return e;
      if (auto e = expect(s.top, "terms", json::value_t::object, "")) return e;
      return expect(s.terms, "savingsPlan", json::value_t::array, "terms.");
  }
  return std::nullopt;
}

// Why the file at `path` is not a usable `kind`, or nothing: bounded size,
// complete JSON, and the top-level shape the importer needs. Memory: the top-level keys.
std::optional<std::string> check_file(const std::string& path, FileKind kind) {
  std::error_code ec;
  const auto size_bytes = fs::file_size(path, ec);
  if (ec) return "cannot be read";
  if (size_bytes == 0) return "the file is empty";
  if (max_bytes_of(kind) && size_bytes > max_bytes_of(kind))
    return fmt::format("{} bytes is larger than the {} MB allowed for the {}", size_bytes, max_bytes_of(kind) / 1000000, kind_name(kind));
  std::ifstream in;
  std::vector<char> buffer(1 << 20);
  in.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  in.open(path, std::ios::binary);
  if (!in) return "cannot be read";
  ShapeSax sax;
  if (!json::sax_parse(in, &sax)) return sax.error.empty() ? "not valid JSON" : sax.error;
  return check_shape(sax, kind);
}

// ---- One HTTP exchange, into a temporary file of this download's own ----

// A unique temporary beside the cached file (mkstemp: O_CREAT|O_EXCL), removed unless renamed.
class TempFile {
 public:
  explicit TempFile(const std::string& target) {
    const fs::path t(target);
    path = (t.parent_path() / ("." + t.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(path.data());
    if (fd >= 0) ::fchmod(fd, 0644);
    file = fd >= 0 ? ::fdopen(fd, "wb") : nullptr;
    if (!file) throw InputError(fmt::format("{}: cannot write the download in {} (check the download directory)", target, t.parent_path().string()));
  }
  ~TempFile() {
    if (file) std::fclose(file);
    if (!path.empty()) ::unlink(path.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  bool restart() { return std::fflush(file) == 0 && ::ftruncate(::fileno(file), 0) == 0 && (std::rewind(file), true); }
  bool finish() {
    const bool ok = std::fflush(file) == 0 && !std::ferror(file);
    return std::fclose(std::exchange(file, nullptr)) == 0 && ok;
  }
  std::string path;
  std::FILE* file = nullptr;
};

struct Transfer {
  std::FILE* out = nullptr;
  unsigned long long max_bytes = 0, written_bytes = 0;  // max 0: no limit
  bool too_large = false;
  std::string label;
  bool progress = false;
  Validators received;
  Clock::time_point start = Clock::now();
};

size_t write_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (t->max_bytes && t->written_bytes + size * n > t->max_bytes) return t->too_large = true, 0;
  t->written_bytes += size * n;
  return std::fwrite(data, size, n, t->out) * size;
}

size_t read_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  auto value_of = [&](const char* name) -> std::optional<std::string> {
    const size_t len = std::strlen(name);
    if (line.size() <= len || strncasecmp(line.c_str(), name, len) != 0) return std::nullopt;
    return line.substr(line.find_first_not_of(' ', len));
  };
  if (auto v = value_of("etag:")) t->received.etag = *v;
  if (auto v = value_of("last-modified:")) t->received.last_modified = *v;
  return size * n;
}

int show_progress(void* user, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (!t->progress || now == 0) return 0;
  const double s = std::chrono::duration<double>(Clock::now() - t->start).count();
  const double rate = now / std::max(s, 1e-3);
  std::string eta = total > 0 && rate > 0 ? fmt::format(", ETA {:.0f} s", (total - now) / rate) : "";
  std::fprintf(stderr, "\r  %s: %.1f MB%s, %.1f MB/s%s   ", t->label.c_str(), now / 1e6,
               total > 0 ? fmt::format(" of {:.1f} MB", total / 1e6).c_str() : "", rate / 1e6, eta.c_str());
  return 0;
}

// One fetch run: its options and its deadline.
struct Run {
  const FetchOptions& o;
  Clock::time_point deadline;
  long long ms_left() const { return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count(); }
};

struct Hop {
  CURLcode rc = CURLE_OK;
  long status = 0;
  std::string redirect, curl_message;
};

void set_transfer_options(CURL* c, const Run& run, Transfer& t, long long ms_left) {
  curl_library().easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);  // redirects are followed by hand, under the host rule
  curl_library().easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_library().easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_library().easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_library().easy_setopt(c, CURLOPT_HEADERFUNCTION, read_header);
  curl_library().easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_library().easy_setopt(c, CURLOPT_NOPROGRESS, t.progress ? 0L : 1L);
  curl_library().easy_setopt(c, CURLOPT_XFERINFOFUNCTION, show_progress);
  curl_library().easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_library().easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min<long long>(run.o.timeout_s * 1000, ms_left)));
  curl_library().easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(ms_left));         // the run's deadline bounds the exchange
  curl_library().easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, kMinRateBytesPerS);              // fewer than this many bytes/s ...
  curl_library().easy_setopt(c, CURLOPT_LOW_SPEED_TIME, run.o.timeout_s);                 // ... for this long: a stall
  curl_library().easy_setopt(c, CURLOPT_USERAGENT, "gpuadvisor (prices fetch)");
}

// One request of `url` into `tmp` (emptied first); the validators go only to the cached file's own host.
Hop perform(const Run& run, const std::string& url, const Validators& sent, TempFile& tmp, Transfer& t) {
  Hop h;
  const long long ms_left = run.ms_left();
  if (ms_left <= 0) return h.rc = CURLE_OPERATION_TIMEDOUT, h;
  if (!tmp.restart()) return h.rc = CURLE_WRITE_ERROR, h;
  CURL* c = curl_library().easy_init();
  curl_slist* headers = nullptr;
  if (!sent.etag.empty()) headers = curl_library().slist_append(headers, ("If-None-Match: " + sent.etag).c_str());
  if (!sent.last_modified.empty()) headers = curl_library().slist_append(headers, ("If-Modified-Since: " + sent.last_modified).c_str());
  char message[CURL_ERROR_SIZE] = "";
  curl_library().easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_library().easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_library().easy_setopt(c, CURLOPT_ERRORBUFFER, message);
  set_transfer_options(c, run, t, ms_left);
  t.received = {};
  t.out = tmp.file;
  t.written_bytes = 0;
  t.too_large = false;
  h.rc = curl_library().easy_perform(c);
  curl_library().easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h.status);
  char* location = nullptr;
  if (curl_library().easy_getinfo(c, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location) h.redirect = location;
  h.curl_message = message;
  curl_library().slist_free_all(headers);
  curl_library().easy_cleanup(c);
  if (t.progress) std::fprintf(stderr, "\n");
  return h;
}

std::string transfer_error(const Run& run, const Hop& h, const Transfer& t, const std::string& kind) {
  if (h.rc == CURLE_OPERATION_TIMEDOUT && run.ms_left() <= 50) return fmt::format("the --deadline of {} s ran out", run.o.deadline_s);
  if (h.rc == CURLE_OPERATION_TIMEDOUT && h.curl_message.find("too slow") != std::string::npos)
    return fmt::format("timed out: fewer than {} bytes/s for {} s (a stall)", kMinRateBytesPerS, run.o.timeout_s);
  if (h.rc == CURLE_OPERATION_TIMEDOUT) return fmt::format("timed out (nothing for {} s)", run.o.timeout_s);
  if (h.rc == CURLE_PARTIAL_FILE) return "the body was truncated (fewer bytes than the server announced)";
  if (h.rc == CURLE_WRITE_ERROR && t.too_large)
    return fmt::format("the body is larger than the {} MB allowed for the {}; discarded", t.max_bytes / 1000000, kind);
  if (h.rc == CURLE_WRITE_ERROR) return "writing the download failed (disk full?)";
  return h.curl_message.empty() ? curl_library().easy_strerror(h.rc) : h.curl_message;
}

// ---- A download: attempts, redirects, checks and the replacement of the cached file ----

struct Download {
  std::string url, base, path, region;  // base: the URL whose host the download may use (besides --allow-host)
  FileKind kind;
  Validators sent;
};

enum class Outcome { replaced, unchanged, failed };
struct AttemptResult {
  Outcome outcome;
  std::string error;
  bool transient = false;  // the network or the server's load (no answer, a cut-off body, HTTP 5xx or 429): worth trying later
};

bool is_redirect(long status) { return status == 301 || status == 302 || status == 303 || status == 307 || status == 308; }

// A 200 body: checked, then it replaces the cached file (old validators removed first, new ones after).
AttemptResult take_body(const Download& d, TempFile& tmp, const Transfer& t, const std::string& final_url) {
  if (!tmp.finish()) return {Outcome::failed, "writing the download failed (disk full?)"};
  if (auto why = check_file(tmp.path, d.kind)) return {Outcome::failed, fmt::format("the download is not a usable {}: {}; discarded", kind_name(d.kind), *why)};
  std::error_code ec;
  fs::remove(meta_path(d.path), ec);
  fs::rename(tmp.path, d.path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot replace the cached file: {} (check the download directory)", d.path, ec.message()));
  tmp.path.clear();
  write_validators(d.path, final_url, t.received);
  return {Outcome::replaced, ""};
}

// One attempt; redirects followed by hand, at most kMaxRedirects, each to an allowed host.
AttemptResult attempt(const Run& run, const Download& d, Transfer& t) {
  TempFile tmp(d.path);
  std::string url = d.url;
  for (int redirects = 0; redirects <= kMaxRedirects; ++redirects) {
    const bool own_host = origin_of(url) == origin_of(d.url);
    const Hop h = perform(run, url, own_host ? d.sent : Validators{}, tmp, t);
    if (h.rc != CURLE_OK) return {Outcome::failed, transfer_error(run, h, t, kind_name(d.kind)), h.rc != CURLE_WRITE_ERROR};  // a body too large or a full disk stays so
    if (h.status == 200) return take_body(d, tmp, t, url);
    if (h.status == 304 && own_host && d.sent.any()) return {Outcome::unchanged, ""};
    if (h.status == 304)
      return {Outcome::failed, "HTTP 304 (Not Modified) although no cached copy was offered (no If-None-Match / If-Modified-Since sent): the server or mirror misbehaves"};
    if (h.status >= 400 && h.status < 500) throw InputError(fmt::format("{}: HTTP {} (check --base-url and --region)", url, h.status));
    if (!is_redirect(h.status)) return {Outcome::failed, fmt::format("HTTP {}", h.status), h.status >= 500 || h.status == 429};
    if (h.redirect.empty()) return {Outcome::failed, fmt::format("HTTP {} without a Location", h.status)};
    check_host(h.redirect, d.base, run.o, fmt::format("{} redirects to", url));
    url = h.redirect;
  }
  return {Outcome::failed, fmt::format("more than {} redirects (the last to {})", kMaxRedirects, url)};
}

// The validators to send: none unless the cached file is there, matches them and passes its check.
Validators usable_validators(const std::string& path, FileKind kind) {
  const Validators v = read_validators(path);
  if (!v.any()) return v;
  if (auto why = check_file(path, kind)) {
    spdlog::warn("{}: the cached {} is not usable ({}); discarded with its validators, downloading it again", path, kind_name(kind), *why);
    discard_cached(path);
    return {};
  }
  return v;
}

// Sleeps before retry `i` (1 s, 2 s, 4 s ...); false when that would pass the deadline.
bool back_off(const Run& run, int i) {
  const long long wait_ms = 1000LL << std::min(i - 1, 10);
  if (run.ms_left() <= wait_ms) return false;
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  return true;
}

FetchedFile download(const Run& run, Download d) {
  d.sent = usable_validators(d.path, d.kind);
  Transfer t;
  t.label = d.region.empty() ? kind_name(d.kind) : fmt::format("{} {}", d.region, kind_name(d.kind));
  t.progress = run.o.progress;
  t.max_bytes = max_bytes_of(d.kind);
  const std::string deadline_error = fmt::format("the --deadline of {} s ran out", run.o.deadline_s);
  std::string error = deadline_error;
  int tried = 0;
  bool out_of_time = false, transient = false;
  for (; tried < run.o.attempts; ++tried) {
    if (run.ms_left() <= 0 || (tried > 0 && !back_off(run, tried))) {
      out_of_time = true;
      break;
    }
    const AttemptResult r = attempt(run, d, t);
    if (r.outcome != Outcome::failed)
      return {kind_name(d.kind), d.region, d.url, d.path, r.outcome == Outcome::unchanged, false, static_cast<long long>(fs::file_size(d.path))};
    error = r.error;
    transient = r.transient;
    out_of_time = error == deadline_error;
  }
  if (out_of_time)
    throw UnavailableError(fmt::format("{}: the --deadline of {} s ran out after {} attempt(s){}; the previous prices are kept (try again, or give "
                                 "a longer --deadline)", d.url, run.o.deadline_s, tried, error == deadline_error ? "" : " (last: " + error + ")"));
  const std::string message = fmt::format("{}: {} after {} attempts; the previous prices are kept (try again later, or raise --retries)", d.url, error, tried);
  if (transient) throw UnavailableError(message);
  throw InputError(message);  // an answer that will not change by asking again (HTTP 404, a file that is not an offer file)
}

json read_index(const FetchedFile& f) { return parse_json_input(read_input_file(f.path, "a region index"), f.url); }

// A URL of an index: a reference resolved against the index's URL, on an allowed host.
std::string index_url_of(const Run& run, const std::string& index_url, const std::string& ref, const std::string& where) {
  const std::string url = resolve_url(index_url, ref);
  if (url.empty()) throw InputError(fmt::format("{}: {} '{}' is not a URL reference", index_url, where, ref));
  check_host(url, index_url, run.o, fmt::format("{}: {} points to", index_url, where));
  return url;
}

std::string base_of(const FetchOptions& o) {
  std::string b = o.base_url;
  while (!b.empty() && b.back() == '/') b.pop_back();
  if (origin_of(b).empty()) throw InputError(fmt::format("--base-url: '{}' is not an http(s) URL", o.base_url));
  return b;
}

// The regional offer files of the EC2 region index.
std::vector<FetchedFile> fetch_offer_files(const Run& run) {
  const FetchOptions& o = run.o;
  const std::string index_url = base_of(o) + "/offers/v1.0/aws/AmazonEC2/current/region_index.json";
  const json index = read_index(download(run, {index_url, index_url, o.download_dir + "/ec2_region_index.json", "", FileKind::ec2_index, {}}));
  std::vector<Download> todo;  // every region checked before any download
  for (const auto& region : o.regions) {
    const json& r = index["regions"].value(region, json());
    if (!r.is_object() || !r.contains("currentVersionUrl") || !r["currentVersionUrl"].is_string())
      throw InputError(fmt::format("{}: no offer file for region '{}'", index_url, region));
    const std::string url = index_url_of(run, index_url, r["currentVersionUrl"], fmt::format("regions.{}.currentVersionUrl", region));
    todo.push_back({url, index_url, o.download_dir + "/ec2_" + region + ".json", region, FileKind::offer, {}});
  }
  std::vector<FetchedFile> out;
  for (const auto& d : todo) out.push_back(download(run, d));
  return out;
}

// The regional Savings Plans files of the Savings Plans region index.
std::vector<FetchedFile> fetch_savings_plans_files(const Run& run) {
  const FetchOptions& o = run.o;
  const std::string index_url = base_of(o) + "/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json";
  const json index = read_index(download(run, {index_url, index_url, o.download_dir + "/sp_region_index.json", "", FileKind::sp_index, {}}));
  std::vector<FetchedFile> out;
  for (const auto& region : o.regions)
    for (const auto& r : index["regions"])
      if (r.is_object() && r.value("regionCode", "") == region && r.contains("versionUrl") && r["versionUrl"].is_string()) {
        const std::string url = index_url_of(run, index_url, r["versionUrl"], fmt::format("the versionUrl of {}", region));
        out.push_back(download(run, {url, index_url, o.download_dir + "/sp_" + region + ".json", region, FileKind::savings_plans, {}}));
      }
  return out;
}

// A file of the download directory as a price file: its kind and region from its name.
std::optional<std::pair<FileKind, std::string>> cached_kind(const std::string& name) {
  auto region_of = [&](const char* prefix) -> std::optional<std::string> {
    const std::string p = prefix;
    if (name.rfind(p, 0) != 0 || name.size() <= p.size() + 5 || name.substr(name.size() - 5) != ".json") return std::nullopt;
    std::string region = name.substr(p.size(), name.size() - p.size() - 5);
    if (region == "region_index" || region.find('.') != std::string::npos) return std::nullopt;
    return region;
  };
  if (name == "spot_advisor.json") return std::pair{FileKind::spot_advisor, std::string()};
  if (auto r = region_of("ec2_")) return std::pair{FileKind::offer, *r};
  if (auto r = region_of("sp_")) return std::pair{FileKind::savings_plans, *r};
  return std::nullopt;
}

// Under the lock every temporary in the download directory is a killed run's: removed.
void remove_stale_temporaries(const std::string& dir) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 1 && name[0] == '.' && name != ".lock" && entry.is_regular_file(ec)) stale.push_back(entry.path());
  }
  for (const auto& p : stale) fs::remove(p, ec);
}

}  // namespace

DownloadLock::DownloadLock(const std::string& dir, std::chrono::steady_clock::time_point deadline) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the download directory: {}", dir, ec.message()));
  const std::string path = dir + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(fmt::format("{}: cannot open the download directory's lock: {}", path, std::strerror(errno)));
  bool said = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if ((err != EWOULDBLOCK && err != EINTR) || Clock::now() >= deadline) {
      ::close(fd_);
      if (err != EWOULDBLOCK && err != EINTR) throw InputError(fmt::format("{}: cannot lock the download directory: {}", path, std::strerror(err)));
      throw UnavailableError(fmt::format("{}: another `gpuadvisor prices fetch` is still using this download directory and the --deadline "
                                         "ran out waiting for it; the previous prices are kept (try again when it is done)", path));
    }
    if (!said) spdlog::info("waiting for another `gpuadvisor prices fetch` into {} to finish", dir);
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

DownloadLock::~DownloadLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

namespace {

// A region becomes part of a file name in the download directory: only an
// AWS region's letters, digits and hyphens, so '../' can never leave it.
void check_region_names(const std::vector<std::string>& regions) {
  for (const auto& r : regions)
    if (r.empty() || r.size() > 32 || r.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      throw InputError(fmt::format("--region: '{}' is not an AWS region name (lower-case letters, digits and hyphens, e.g. us-east-1)",
                                   r.substr(0, 40)));
}

}  // namespace

std::vector<FetchedFile> fetch_price_files(const FetchOptions& o) {
  check_region_names(o.regions);
  const Run run{o, o.deadline != Clock::time_point{} ? o.deadline : Clock::now() + std::chrono::seconds(o.deadline_s)};
  std::error_code ec;
  fs::create_directories(o.download_dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the download directory: {}", o.download_dir, ec.message()));
  remove_stale_temporaries(o.download_dir);
  if (origin_of(o.spot_advisor_url).empty()) throw InputError(fmt::format("--spot-advisor-url: '{}' is not an http(s) URL", o.spot_advisor_url));
  std::vector<FetchedFile> out = fetch_offer_files(run);
  if (o.savings_plans)
    for (auto& f : fetch_savings_plans_files(run)) out.push_back(std::move(f));
  if (o.spot_advisor)  // the Spot Advisor URL is its own base
    out.push_back(download(run, {o.spot_advisor_url, o.spot_advisor_url, o.download_dir + "/spot_advisor.json", "", FileKind::spot_advisor, {}}));
  return out;
}

std::vector<FetchedFile> kept_price_files(const FetchOptions& o, const std::vector<FetchedFile>& fetched) {
  std::vector<FetchedFile> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(o.download_dir, ec)) {
    const auto kind = cached_kind(entry.path().filename().string());
    const std::string path = entry.path().string();
    if (!kind || !entry.is_regular_file(ec)) continue;
    if (std::any_of(fetched.begin(), fetched.end(), [&](const FetchedFile& f) { return fs::equivalent(f.path, path, ec); })) continue;
    if (auto why = check_file(path, kind->first)) {
      spdlog::warn("{}: the cached {} is not usable ({}); discarded with its validators (fetch it again to restore it)", path, kind_name(kind->first), *why);
      discard_cached(path);
      continue;
    }
    out.push_back({kind_name(kind->first), kind->second, validators_url(path), path, false, true, static_cast<long long>(fs::file_size(path))});
  }
  std::sort(out.begin(), out.end(), [](const FetchedFile& a, const FetchedFile& b) { return a.path < b.path; });
  return out;
}

}  // namespace gpuadvisor
