// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
// `gpuadvisor prices fetch --capacity-blocks`: the Capacity Block offerings
// EC2 has for the user's own account right now (DescribeCapacityBlockOfferings,
// EC2 Query API 2016-11-15), signed with SigV4 by libcurl from the user's AWS
// credentials (docs/catalog.md §Capacity Block offerings). The cheapest
// offering of each instance type becomes its `capacity_block` rate in the
// cached price overlay, merged with what the overlay already holds. A failed
// fetch throws before anything is written, so the cached prices stay as they were.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadvisor {

struct Catalog;

// The source key of fetched Capacity Block rates in an overlay.
inline constexpr const char* kCapacityBlockSource = "EC2-CB-OFFERINGS";
inline constexpr int kBlockOfferingMaxInstances = 64;   // per block (EC2's limit)
inline constexpr int kBlockOfferingMaxDays = 182;        // 1-14 days, then 7-day steps
inline constexpr unsigned long long kMaxEc2ResponseBytes = 8'000'000;  // a page of 1,000 offerings is ~700 KB
inline constexpr int kMaxOfferingPages = 100;            // per instance type: a server that pages forever is an error

struct AwsCredentials {
  std::string access_key_id, secret_access_key, session_token;
  std::string origin;  // "the environment" or "FILE [profile]": named in messages, never the secret
};

// How a variable of the environment is read (tests pass their own).
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
std::optional<std::string> process_env(const char* name);

// The credentials as the AWS CLI finds its static ones: AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; else the profile AWS_PROFILE
// (default "default") of the shared credentials file AWS_SHARED_CREDENTIALS_FILE
// (default ~/.aws/credentials). Empty variables count as unset. nullopt when
// there are none; InputError for half a pair, a named profile that is not
// there, or a file that cannot be read.
std::optional<AwsCredentials> find_aws_credentials(const EnvLookup& env = process_env);

// One line that says how to supply credentials (the error without them).
std::string missing_credentials_message();

struct CapacityBlockOffering {
  std::string offering_id, instance_type, availability_zone, start_date, end_date, currency;
  int instance_count = 0;
  double duration_hours = 0;  // capacityBlockDurationHours + capacityBlockDurationMinutes / 60
  double upfront_fee = 0;     // in `currency`, for the whole block
  // What the block costs per instance-hour: UpfrontFee / (InstanceCount x hours).
  double usd_per_instance_hour() const { return upfront_fee / (instance_count * duration_hours); }
};

struct OfferingsPage {
  std::vector<CapacityBlockOffering> offerings;
  std::string next_token;  // empty on the last page
};

// A DescribeCapacityBlockOfferingsResponse; InputError (naming what is wrong) unless it is one.
OfferingsPage parse_offerings_page(std::string_view xml);

struct Ec2Error {
  std::string code, message;
};
// The first <Error><Code>/<Message> of an EC2 error response, if it has one.
std::optional<Ec2Error> parse_ec2_error(std::string_view xml);

struct CapacityBlockFetchOptions {
  std::string region;
  std::string endpoint_url;  // empty: https://ec2.REGION.amazonaws.com/
  std::vector<std::string> instance_types;
  int instance_count = 1;
  int days = 1;
  std::string start_date_range, end_date_range;  // ISO 8601 UTC, optional
  long timeout_s = 30;                           // per request
  std::chrono::steady_clock::time_point deadline;  // the whole fetch
  long deadline_s = 600;                         // for messages
  int attempts = 4;                              // per request; throttling and 5xx are retried 1 s, 2 s, 4 s ... apart
};

// The endpoint a fetch calls: --endpoint-url checked (https, or http on
// 127.0.0.1 for tests), else EC2's regional endpoint. InputError otherwise.
std::string ec2_endpoint(const CapacityBlockFetchOptions& o);

// What one instance type got: its offerings (all pages), or why none.
struct TypeOfferings {
  std::string instance_type;
  std::vector<CapacityBlockOffering> offerings;  // USD offerings only
  std::string not_offered;  // EC2's error code and message when it does not sell the type here
  int skipped_other_currency = 0;
};

// Calls DescribeCapacityBlockOfferings for every type (every page). InputError,
// naming the EC2 error code and what to do, on refused or expired credentials,
// a missing permission, throttling or 5xx answers past the retries, the
// deadline, or a body that is not the expected XML. Writes nothing.
std::vector<TypeOfferings> fetch_capacity_block_offerings(const CapacityBlockFetchOptions& o, const AwsCredentials& credentials);

// The catalog's types that Capacity Blocks sell one instance at a time
// (capacity_blocks true; UltraServer blocks are bought by UltraServer, not by instance).
std::vector<std::string> capacity_block_instance_types(const Catalog& catalog);

// `previous` (an overlay's text, or empty) with the cheapest offering of each
// type that has one set as the region's `capacity_block` rate, as of `date`,
// its block, dates and fee in the note. Everything else in `previous` is kept;
// a type without offerings keeps its rate. `catalog` (with `previous` applied)
// says which regions are new to a type, which then get on_demand and spot as
// not captured. Returns the new overlay text; InputError if `previous` is not an overlay.
std::string merge_capacity_block_rates(const std::string& previous, const std::string& previous_origin, const Catalog& catalog,
                                       const std::string& region, const std::vector<TypeOfferings>& fetched, const std::string& date);

// `overlay_json` (a fresh `prices fetch` overlay) with the fetched Capacity
// Block rates of `previous` carried over, so refreshing the price files does
// not drop them. `previous` may be empty or damaged (then nothing is carried).
std::string carry_capacity_block_rates(const std::string& previous, const std::string& overlay_json);

}  // namespace gpuadvisor
