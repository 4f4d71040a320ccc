// `gpuadvisor prices fetch`: downloads AWS's public, credential-free price
// files over HTTPS with libcurl (docs/catalog.md §Fetching prices): the EC2
// region index and regional offer files, the Savings Plans region index and
// files, and the Spot Instance Advisor data. Each download streams to a file
// in the cache (no whole-file buffers), is retried on transient failures, and
// is skipped when the server says it has not changed (ETag / Last-Modified).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace gpuadvisor {

inline constexpr const char* kPriceListBaseUrl = "https://pricing.us-east-1.amazonaws.com";
inline constexpr const char* kSpotAdvisorUrl = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json";

struct FetchOptions {
  std::string base_url = kPriceListBaseUrl;
  std::string spot_advisor_url = kSpotAdvisorUrl;
  std::vector<std::string> regions;  // e.g. us-east-1
  std::string download_dir;          // cache of the downloaded files and their validators
  bool savings_plans = true;
  bool spot_advisor = true;
  long timeout_s = 60;               // no byte for this long: give up (connect: the same)
  int attempts = 4;                  // per file, with 1 s, 2 s, 4 s backoff between
  bool progress = false;             // bytes, rate and ETA on stderr
};

struct FetchedFile {
  std::string kind;   // "offer file", "savings plans file", "spot advisor"
  std::string region; // empty for the spot advisor
  std::string url;
  std::string path;   // the file on disk, complete
  bool unchanged = false;  // the server answered 304: the cached copy is current
  long long bytes = 0;
};

// Downloads every file; InputError (exit 2) with the URL and the reason on an
// HTTP error, a truncated body, a timeout, or an index that is not what it
// should be. A failure leaves earlier downloads in the cache untouched.
std::vector<FetchedFile> fetch_price_files(const FetchOptions& o);

}  // namespace gpuadvisor
