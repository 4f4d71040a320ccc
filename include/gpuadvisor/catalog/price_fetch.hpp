// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
// `gpuadvisor prices fetch`: downloads AWS's public, credential-free price
// files over HTTPS with libcurl (docs/catalog.md §Fetching prices): the EC2
// region index and regional offer files, the Savings Plans region index and
// files, and the Spot Instance Advisor data. Each download streams to a
// temporary file of its own in the download directory (no whole-file
// buffers), is checked (docs/reliability.md §Fetch) before it replaces the
// cached copy, is retried on transient failures, and is skipped when the
// server says it has not changed (ETag / Last-Modified). A fetch run ends by
// its deadline, whatever the server does.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace gpuadvisor {

inline constexpr const char* kPriceListBaseUrl = "https://pricing.us-east-1.amazonaws.com";
inline constexpr const char* kSpotAdvisorUrl = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json";
inline constexpr int kMaxRedirects = 5;                           // per download
inline constexpr long kMinRateBytesPerS = 1000;                   // slower than this for --timeout seconds: a stall
inline constexpr unsigned long long kMaxIndexBytes = 8'000'000;   // a real EC2 region index is ~50 KB

struct FetchOptions {
  std::string base_url = kPriceListBaseUrl;
  std::string spot_advisor_url = kSpotAdvisorUrl;
  std::vector<std::string> regions;  // e.g. us-east-1
  std::string download_dir;          // cache of the downloaded files and their validators
  std::vector<std::string> allowed_hosts;  // HOST or HOST:PORT that index URLs and redirects may go to besides the base's
  bool savings_plans = true;
  bool spot_advisor = true;
  long timeout_s = 60;               // slower than kMinRateBytesPerS for this long: a stall (connect: the same)
  long deadline_s = 3600;            // the whole run, retries and waiting for the lock included
  std::chrono::steady_clock::time_point deadline{};  // when set, used instead of now + deadline_s
  int attempts = 4;                  // per file, with 1 s, 2 s, 4 s backoff between
  bool progress = false;             // bytes, rate and ETA on stderr
};

struct FetchedFile {
  std::string kind;   // "offer file", "savings plans file", "spot advisor"
  std::string region; // empty for the spot advisor
  std::string url;
  std::string path;   // the file on disk, complete and checked
  bool unchanged = false;  // the server answered 304: the cached copy is current
  bool kept = false;       // not fetched this run: a valid file already in the download directory
  long long bytes = 0;
};

// The download directory's advisory lock (flock on DIR/.lock): concurrent
// fetches into one directory run one after the other. Waits for it until
// `deadline`, then InputError. Released when destroyed.
class DownloadLock {
 public:
  DownloadLock(const std::string& dir, std::chrono::steady_clock::time_point deadline);
  ~DownloadLock();
  DownloadLock(const DownloadLock&) = delete;
  DownloadLock& operator=(const DownloadLock&) = delete;

 private:
  int fd_ = -1;
};

// Downloads every file; the caller holds the DownloadLock of o.download_dir.
// InputError (exit 2) with the URL, the reason and what to do on an HTTP
// error, a truncated or unusable body, a stall, the deadline, a URL to a host
// not allowed, or an index that is not what it should be. A failure leaves
// the cached files and their validators as they were.
std::vector<FetchedFile> fetch_price_files(const FetchOptions& o);

// The valid price files in o.download_dir that `fetched` does not already
// name (other regions' offer and Savings Plans files, the Spot Advisor data),
// marked `kept`, so a partial fetch merges with what the cache holds. A file
// that fails its check is discarded with its validators (one warning).
std::vector<FetchedFile> kept_price_files(const FetchOptions& o, const std::vector<FetchedFile>& fetched);

}  // namespace gpuadvisor
