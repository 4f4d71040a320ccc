// Layer catalog: accelerators, instances and dated prices (catalog files, price files, price fetch); includes only base.
// The catalog: accelerators and EC2 instance types with their sourced figures
// and dated prices. Loaded from JSON (embedded, --catalog, --catalog-add);
// validated entry by entry. Schema: docs/catalog.md.
#pragma once
#include "gpuadvisor/base/names.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadvisor {

// Matrix-math precisions the catalog knows. A missing figure means unsupported.
enum class Precision { bf16, fp16, fp8, fp4, int8 };
std::string_view to_string(Precision p);
std::optional<Precision> precision_from_string(std::string_view s);

// Dense tensor throughput by precision, TFLOP/s; a precision absent is not
// supported. A fixed table: the search reads it in its inner loop.
class PrecisionTflops {
 public:
  void set(Precision p, double tflops) {
    tflops_[index(p)] = tflops;
    known_[index(p)] = true;
  }
  std::optional<double> get(Precision p) const {
    return known_[index(p)] ? std::optional<double>(tflops_[index(p)]) : std::nullopt;
  }
  bool empty() const { return std::find(known_.begin(), known_.end(), true) == known_.end(); }
  // The known precisions in the enum's order.
  std::vector<std::pair<Precision, double>> entries() const {
    std::vector<std::pair<Precision, double>> out;
    for (std::size_t i = 0; i < kCount; ++i)
      if (known_[i]) out.emplace_back(static_cast<Precision>(i), tflops_[i]);
    return out;
  }

 private:
  static constexpr std::size_t kCount = static_cast<std::size_t>(Precision::int8) + 1;
  static std::size_t index(Precision p) { return static_cast<std::size_t>(p); }
  std::array<double, kCount> tflops_{};
  std::array<bool, kCount> known_{};
};

struct Source {
  std::string title;
  std::string url;
};

// Achievable fractions of the peaks, used by the estimator (docs/methodology.md §Efficiency).
struct Efficiency {
  std::map<Precision, double> compute_max_fraction;  // end-to-end matmul fraction at large sizes
  double memory_bandwidth_fraction = 0.80;           // achievable fraction of HBM/GDDR bandwidth
  double link_fraction = 0.70;                       // achievable fraction of link bandwidth (bus bandwidth)
  // One small all-reduce among an instance's accelerators as serving engines
  // run it (decode, prefill), us; 0: by link (10 on NVLink/NeuronLink, 40 on PCIe).
  double all_reduce_latency_us = 0;
  // Neuron decode: device time per sequence in flight per layer, us; 0: the
  // prior (kNeuronSequenceLayerS on Neuron, none on GPUs).
  double sequence_layer_us = 0;
  std::string source;                                // where the values come from
};

struct Accelerator {
  std::string name;
  std::string vendor;
  std::string memory_vendor_figure;  // e.g. "180 GB HBM3e" as the vendor states it
  double memory_ec2_reported_gib = 0;
  double memory_usable_gib = 0;  // the value fit checks use
  std::string memory_type;
  std::vector<std::string> memory_sources;
  double memory_bandwidth_gb_per_s = 0;
  std::vector<std::string> memory_bandwidth_sources;
  PrecisionTflops dense_tflops;
  std::vector<std::string> dense_tflops_sources;
  // Non-tensor (CUDA core / vector engine) FP32 throughput: what dequantising
  // weight-only int8/int4 weights runs on. Empty when not published.
  std::optional<double> vector_fp32_tflops;
  std::vector<std::string> vector_tflops_sources;
  std::string link_kind;  // "pcie", "nvlink", "nvswitch", "neuronlink"
  std::string link_generation;
  std::optional<double> link_gb_per_s;  // per accelerator, as the vendor states it
  std::vector<std::string> link_sources;
  std::string software;  // "cuda" or "neuron"
  // Which stack, compared length first (the layout search asks for every layout).
  bool is_neuron() const { return std::string_view(software) == "neuron"; }
  bool is_cuda() const { return std::string_view(software) == "cuda"; }
  // The accelerator whose silicon this one is (A100-40GB is the A100-80GB's
  // die with less memory): calibration fits one compute fraction for both.
  // Empty: its own.
  std::string same_silicon_as;
  std::string note;
  Efficiency efficiency;

  std::optional<double> tflops(Precision p) const { return dense_tflops.get(p); }
  double memory_usable_gb() const { return memory_usable_gib * kGbPerGib; }
};

// One price figure. `usd_per_hour` is empty when the figure is not known;
// `status` then says why ("not_listed", "not_captured").
struct PriceQuote {
  std::optional<double> usd_per_hour;
  std::optional<double> max_usd_per_hour;  // spot: highest AZ in the snapshot
  std::string status;                      // "listed", "not_listed", "not_captured"
  std::string as_of;                       // YYYY-MM-DD
  std::string source;
  std::string statistic;
  std::string note;
  // Spot only: the Spot Instance Advisor interruption-frequency range
  // ("<5%", "5-10%", "10-15%", "15-20%", ">20%" per month), empty if unknown.
  std::string interruption_bucket;
  std::string interruption_as_of;
  std::string interruption_source;
};

// Whether `name` is a commitment key the catalog accepts.
bool valid_commitment_name(std::string_view name);

// The monthly interruption fraction a Spot Advisor range stands for (its upper
// edge; ">20%" as 30%), or nullopt for an unknown label.
std::optional<double> interruption_bucket_monthly_fraction(std::string_view bucket);

// A commitment's price (Savings Plan or Reserved Instance): the recurring
// hourly fee and any upfront fee over the term.
struct CommitmentQuote {
  double usd_per_hour = 0;  // recurring, per instance-hour
  double upfront_usd = 0;   // per instance, paid once
  int term_years = 1;
  std::string as_of;
  std::string source;
  // Upfront spread over the term: hourly + upfront / (years x 8,760 h).
  double effective_usd_per_hour() const { return usd_per_hour + upfront_usd / (term_years * 8760.0); }
};

struct RegionPrices {
  PriceQuote on_demand;
  PriceQuote spot;
  // EC2 Capacity Blocks for ML: the effective hourly rate per instance of a
  // block (status "not_captured" when unknown).
  PriceQuote capacity_block;
  // Keyed "<kind>-<1yr|3yr>-<no|partial|all>-upfront", kind one of
  // compute-savings-plan, ec2-savings-plan, reserved-standard, reserved-convertible.
  std::map<std::string, CommitmentQuote> commitments;
};

struct Instance {
  std::string name;
  std::string family;
  std::string accelerator_name;
  int accelerator_count = 0;
  int vcpus = 0;
  double memory_gib = 0;
  double memory_gb() const { return memory_gib * kGbPerGib; }
  double local_nvme_gb = 0;
  std::string local_nvme;
  double network_gbps = 0;
  // Accelerators that share one NVLink domain across instances (a GB200 NVL72
  // rack: 72); 0 when the domain is the instance itself.
  int nvlink_domain_accelerators = 0;
  bool efa_supported = false;
  std::optional<int> efa_version;
  int efa_interfaces = 0;  // EFA network cards (vpc.amazonaws.com/efa devices); 0: not in the catalog
  std::string purchase;  // "on_demand_and_spot", "capacity_blocks", "ultraserver_capacity_blocks"
  // How it can be bought (docs/catalog.md §Capacity): whether EC2 Capacity
  // Blocks sell it, and the most instances one can plausibly start on demand
  // (empty: no limit known beyond the account's quota).
  bool capacity_blocks = false;
  std::optional<int> on_demand_max_instances;
  std::string capacity_source;
  std::string capacity_note;
  std::vector<std::string> sources;
  std::string note;
  std::map<std::string, RegionPrices> prices;  // by region

  const RegionPrices* prices_in(std::string_view region) const;
  // Ranks that reach each other over NVLink: the domain, else the instance.
  int nvlink_domain() const { return nvlink_domain_accelerators > 0 ? nvlink_domain_accelerators : accelerator_count; }
};

// A storage or data-transfer rate (docs/methodology.md §The rest of the
// bill): per GB-month of storage, or per GB moved.
struct StorageRate {
  double usd = 0;
  std::string unit;    // "GB-month" or "GB"
  std::string as_of;   // YYYY-MM-DD
  std::string source;  // a key of Catalog::sources
  std::string note;
};

// The keys a region's storage_prices may hold.
inline constexpr const char* kS3StandardRate = "s3_standard";                         // per GB-month, the first 50 TB tier
inline constexpr const char* kEfsStandardRate = "efs_standard";                       // per GB-month
inline constexpr const char* kFsxLustrePersistent2Rate = "fsx_lustre_persistent2_125";  // per GB-month at 125 MB/s/TiB
inline constexpr const char* kInterRegionTransferRate = "inter_region_transfer";      // per GB out of the region

struct Catalog {
  int schema_version = 0;
  std::string catalog_version;
  std::string prices_as_of;
  std::string currency;
  std::map<std::string, Source> sources;
  std::vector<Accelerator> accelerators;
  std::vector<Instance> instances;
  std::vector<std::string> origins;  // the files it was built from, in order
  // Where the prices come from, for people: "embedded snapshot", or the
  // fetched overlay and its date (set by the command line).
  std::string prices_origin = "embedded snapshot";
  // Storage and transfer rates by region, then by key (kS3StandardRate, ...).
  std::map<std::string, std::map<std::string, StorageRate>> storage_prices;

  // nullptr where the region has no such rate captured.
  const StorageRate* storage_rate(std::string_view region, std::string_view key) const;

  const Accelerator* find_accelerator(std::string_view name) const;
  const Instance* find_instance(std::string_view name) const;
  const Accelerator& accelerator_of(const Instance& instance) const;
  // Up to `limit` instance names closest to `name` (edit distance), for suggestions.
  std::vector<std::string> nearest_instance_names(std::string_view name, size_t limit = 3) const;
  // The oldest date of a Spot Advisor interruption range in the catalog ("" when none has one).
  std::string spot_advisor_as_of() const;
};

inline constexpr int kCatalogSchemaVersion = 1;
// No EC2 instance costs less than this an hour; a smaller rate in a file is a typo (1e-300), not a price.
inline constexpr double kMinUsdPerHour = 1e-4;

// The catalog compiled into the binary (data/catalog.json).
std::string_view embedded_catalog_text();

// Builds a catalog from a base document and overlays applied in order.
// `base_origin` and each overlay's origin name the file in error messages.
// Throws InputError naming the file, the entry and the field.
struct CatalogSource {
  std::string origin;  // file path, or "<embedded>"
  std::string text;
  // Built into the binary: parsed without the duplicate-key and depth checks a
  // user's file gets (a test runs them over the embedded text instead).
  bool built_in = false;
};
// The catalog built into the binary (data/catalog.json).
CatalogSource embedded_catalog_source();
Catalog load_catalog(const CatalogSource& base, const std::vector<CatalogSource>& overlays = {});

// Reads a file into a CatalogSource; InputError if it is missing, unreadable,
// a directory or larger than kMaxInputFileBytes.
CatalogSource read_catalog_file(const std::string& path);

// Days between two YYYY-MM-DD dates (b - a); nullopt if either is malformed.
std::optional<long> days_between(std::string_view a, std::string_view b);

// A date may lie this many days after today (time zones) before it counts as
// in the future: a price cannot be dated after it was read.
inline constexpr long kFutureDateGraceDays = 1;

}  // namespace gpuadvisor
