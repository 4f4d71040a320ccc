// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
// The rest of a training job's bill (docs/methodology.md §The rest of the
// bill): the storage its data, checkpoints and weights occupy while it runs,
// and moving its data from another region. Separate lines beside the compute;
// the ranking stays the compute's channel cost.
#pragma once
#include <optional>
#include <string>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/interruption.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

// AWS prices storage per GB-month of 730 hours (8,760 / 12), prorated.
inline constexpr double kStorageHoursPerMonth = 730;
// Checkpoints kept at once: the last complete one and the one being written (a judgement).
inline constexpr int kCheckpointsKept = 2;
// The FSx for Lustre file system the checkpoint times assume (6 GB/s,
// checkpoint_write_gb_per_s), at the 125 MB/s/TiB tier whose rate is sourced.
inline constexpr double kFsxThroughputMbPerSPerTib = 125;
inline constexpr double kFsxStepGib = 2400;  // PERSISTENT_2 SSD capacity: 1,200 GiB, 2,400 GiB, then 2,400 GiB steps
inline constexpr double kBytesPerGib = 1073741824.0;

struct JobBill {
  // What the job keeps, GB.
  double dataset_gb = 0;         // the tokenized dataset: tokens per epoch x 2 or 4 bytes
  double model_in_gb = 0;        // the pretrained weights a fine-tune starts from (bf16)
  double checkpoints_gb = 0;     // kCheckpointsKept restartable checkpoints
  double final_weights_gb = 0;   // what the job hands over (bf16 weights, or the adapter)
  // Where it is kept and what that costs over the job's hours.
  double s3_gb = 0;              // the durable copy in S3 Standard
  std::optional<double> s3_usd;  // nullopt: the region's S3 rate is not captured
  std::string working_store;     // "fsx-lustre", "efs", "local-nvme" or "" (checkpoints in S3 too)
  double working_gb = 0;         // provisioned (FSx) or stored (EFS)
  double working_gb_per_s = 0;   // FSx: the write throughput it is sized for
  std::optional<double> working_usd;
  // Moving the dataset and the pretrained weights in from --data-region.
  std::string data_region;       // "" when the data is in the job's region
  double transfer_gb = 0;
  std::optional<double> transfer_usd;  // 0 in the same region; nullopt: the rate is not captured
  // The rates used (nullopt: not captured for the region), and what keeping
  // checkpoints in S3 instead of the working store would cost (storage != s3).
  std::optional<StorageRate> s3_rate, working_rate, transfer_rate;
  std::optional<double> s3_only_storage_usd;
  // S3 and the working store together; the job's total with the compute and
  // the transfer (nullopt where any part is unknown).
  std::optional<double> storage_usd, total_usd;
};

// `hours`: the job's span (setup included); `compute_usd`: its ranked cost.
// `write_gb_per_s`: --checkpoint-gb-per-s, else the storage's own figure;
// `storage` automatic is resolved for `instances` (storage_for).
JobBill job_bill(const ModelSpec& m, const TrainingWorkload& w, double hours, std::optional<double> compute_usd, CheckpointStorage storage, int instances,
                 std::optional<double> write_gb_per_s, const Catalog& catalog, const std::string& region, const std::string& data_region);

// The FSx for Lustre capacity that holds `gb` and delivers `write_gb_per_s`, GiB.
double fsx_capacity_gib(double gb, double write_gb_per_s);

}  // namespace gpuadvisor
