#include "gpuadvisor/price_fetch.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <strings.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "gpuadvisor/errors.hpp"
#include "gpuadvisor/files.hpp"
#include "json_input.hpp"

namespace gpuadvisor {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
};

// The validators of a cached download: sent back so an unchanged file is not downloaded again.
struct Validators {
  std::string etag, last_modified;
};

Validators read_validators(const std::string& meta_path) {
  std::ifstream in(meta_path);
  if (!in) return {};
  try {
    const json j = json::parse(in);
    return {j.value("etag", ""), j.value("last_modified", "")};
  } catch (const json::exception&) {
    return {};  // a damaged cache entry only costs a download
  }
}

struct Transfer {
  std::FILE* out = nullptr;
  std::string label;
  bool progress = false;
  Validators received;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

size_t write_body(char* data, size_t size, size_t n, void* user) {
  return std::fwrite(data, size, n, static_cast<Transfer*>(user)->out) * size;
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
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t->start).count();
  const double rate = now / std::max(s, 1e-3);
  std::string eta = total > 0 && rate > 0 ? fmt::format(", ETA {:.0f} s", (total - now) / rate) : "";
  std::fprintf(stderr, "\r  %s: %.1f MB%s, %.1f MB/s%s   ", t->label.c_str(), now / 1e6,
               total > 0 ? fmt::format(" of {:.1f} MB", total / 1e6).c_str() : "", rate / 1e6, eta.c_str());
  return 0;
}

// One attempt: 200 writes the body, 304 keeps the cache. Returns the HTTP
// status, or 0 with `error` set when the transfer itself failed.
long attempt(const std::string& url, const std::string& part, const Validators& sent, Transfer& t, const FetchOptions& o, std::string& error) {
  t.out = std::fopen(part.c_str(), "wb");
  if (!t.out) throw InputError(fmt::format("{}: cannot write the download (check the cache directory)", part));
  CURL* c = curl_easy_init();
  curl_slist* headers = nullptr;
  if (!sent.etag.empty()) headers = curl_slist_append(headers, ("If-None-Match: " + sent.etag).c_str());
  if (!sent.last_modified.empty()) headers = curl_slist_append(headers, ("If-Modified-Since: " + sent.last_modified).c_str());
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, read_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, t.progress ? 0L : 1L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, show_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, o.timeout_s);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);  // fewer than 1 byte/s ...
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, o.timeout_s);  // ... for this long: give up
  curl_easy_setopt(c, CURLOPT_USERAGENT, "gpuadvisor (prices fetch)");
  t.received = {};
  const CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  std::fclose(t.out);
  if (t.progress) std::fprintf(stderr, "\n");
  if (rc != CURLE_OK) {
    error = rc == CURLE_PARTIAL_FILE ? "the body was truncated (fewer bytes than the server announced)"
            : rc == CURLE_OPERATION_TIMEDOUT ? fmt::format("timed out (nothing for {} s)", o.timeout_s)
                                             : curl_easy_strerror(rc);
    return 0;
  }
  return status;
}

// Downloads `url` to `path` (or keeps the cached copy when unchanged), with
// retries on transient failures (5xx, truncation, timeouts, resets).
FetchedFile download(const std::string& url, const std::string& path, const std::string& kind, const std::string& region,
                     const FetchOptions& o) {
  static CurlGlobal global;
  const std::string meta = path + ".validators.json", part = path + ".part";
  const Validators sent = fs::exists(path) ? read_validators(meta) : Validators{};
  Transfer t;
  t.label = region.empty() ? kind : fmt::format("{} {}", region, kind);
  t.progress = o.progress;
  std::string error;
  for (int i = 0; i < o.attempts; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::seconds(1 << (i - 1)));
    error.clear();
    const long status = attempt(url, part, sent, t, o, error);
    if (status == 304) {
      fs::remove(part);
      return {kind, region, url, path, true, static_cast<long long>(fs::file_size(path))};
    }
    if (status == 200) {
      fs::rename(part, path);
      write_file_atomically(meta, json{{"url", url}, {"etag", t.received.etag}, {"last_modified", t.received.last_modified}}.dump() + "\n");
      return {kind, region, url, path, false, static_cast<long long>(fs::file_size(path))};
    }
    fs::remove(part);
    if (status >= 400 && status < 500) throw InputError(fmt::format("{}: HTTP {} (check --base-url and --region)", url, status));
    if (status >= 500) error = fmt::format("HTTP {}", status);
  }
  throw InputError(fmt::format("{}: {} after {} attempts; the previous prices are kept", url, error, o.attempts));
}

json read_index(const FetchedFile& f) {
  std::ifstream in(f.path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_json_input(text, f.url);
}

// The regional offer files of the EC2 region index.
std::vector<FetchedFile> fetch_offer_files(const FetchOptions& o) {
  const std::string index_url = o.base_url + "/offers/v1.0/aws/AmazonEC2/current/region_index.json";
  const json index = read_index(download(index_url, o.download_dir + "/ec2_region_index.json", "EC2 region index", "", o));
  if (!index.contains("regions") || !index["regions"].is_object())
    throw InputError(fmt::format("{}: not an EC2 region index (no 'regions' object)", index_url));
  std::vector<FetchedFile> out;
  for (const auto& region : o.regions) {
    const json& r = index["regions"].value(region, json());
    if (!r.is_object() || !r.contains("currentVersionUrl") || !r["currentVersionUrl"].is_string())
      throw InputError(fmt::format("{}: no offer file for region '{}'", index_url, region));
    out.push_back(download(o.base_url + r["currentVersionUrl"].get<std::string>(), o.download_dir + "/ec2_" + region + ".json", "offer file",
                           region, o));
  }
  return out;
}

// The regional Savings Plans files of the Savings Plans region index.
std::vector<FetchedFile> fetch_savings_plans_files(const FetchOptions& o) {
  const std::string index_url = o.base_url + "/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json";
  const json index = read_index(download(index_url, o.download_dir + "/sp_region_index.json", "Savings Plans region index", "", o));
  if (!index.contains("regions") || !index["regions"].is_array())
    throw InputError(fmt::format("{}: not a Savings Plans region index (no 'regions' list)", index_url));
  std::vector<FetchedFile> out;
  for (const auto& region : o.regions)
    for (const auto& r : index["regions"])
      if (r.is_object() && r.value("regionCode", "") == region && r.contains("versionUrl") && r["versionUrl"].is_string())
        out.push_back(download(o.base_url + r["versionUrl"].get<std::string>(), o.download_dir + "/sp_" + region + ".json",
                               "savings plans file", region, o));
  return out;
}

}  // namespace

std::vector<FetchedFile> fetch_price_files(const FetchOptions& o) {
  std::error_code ec;
  fs::create_directories(o.download_dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the download directory: {}", o.download_dir, ec.message()));
  std::vector<FetchedFile> out = fetch_offer_files(o);
  if (o.savings_plans)
    for (auto& f : fetch_savings_plans_files(o)) out.push_back(std::move(f));
  if (o.spot_advisor) out.push_back(download(o.spot_advisor_url, o.download_dir + "/spot_advisor.json", "spot advisor", "", o));
  return out;
}

}  // namespace gpuadvisor
