// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// Interruptions and checkpoints (docs/methodology.md §Interruptions): a spot
// interruption bucket or a hardware failure rate becomes a mean time between
// interruptions for the job, Daly's optimal checkpoint interval, the expected
// wasted fraction and the expected wall time.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

// Where weights are read and checkpoints written. `automatic` (the default,
// "auto") is S3 for every job: in this model's own terms a file system never
// pays for itself. S3 writes 1 GB/s per instance; FSx for Lustre's 6 GB/s
// takes 48 TiB at 125 MB/s/TiB, about $10 an hour, while the checkpoint time
// it saves (Daly's waste, sqrt(2 x write / MTTI)) is worth cents an hour: 2 x
// p5en.48xlarge writing an 8B's 112 GB lose 0.31% to checkpoints through S3
// and 0.18% through FSx, 0.13% of $127/h. FSx for Lustre, EFS and local NVMe
// are there when asked for (a dataset memory-mapped from a shared file system).
enum class CheckpointStorage { s3, fsx_lustre, efs, local_nvme, automatic };
std::string_view to_string(CheckpointStorage s);
std::optional<CheckpointStorage> checkpoint_storage_from_string(std::string_view s);
// The storage a `task` on `instances` uses: `automatic` resolved, any other as chosen.
CheckpointStorage storage_for(CheckpointStorage chosen, int instances, Task task);

inline constexpr double kBytesRestartablePerParam = 14;  // bf16 weights 2 + fp32 master 4 + Adam m, v 8 (gradients not saved)
inline constexpr double kHoursPerMonthSpot = 720;         // the Spot Advisor's trailing month
inline constexpr double kGpuHoursPerHardwareInterruption = 50700;  // Llama 3 405B: 419 unexpected in 54 days on 16,384 H100s
inline constexpr double kDefaultRestartMinutes = 10;
inline constexpr double kS3WriteGbPerSPerInstance = 1.0;  // parallel multipart uploads per instance
inline constexpr double kFsxLustreWriteGbPerS = 6.0;      // PERSISTENT_2: 48 TiB at 125 MB/s/TiB (or 12 TiB at 500)

// Bytes a restart needs: the full training state, or the adapters' state for LoRA/QLoRA.
double checkpoint_size_gb(const ModelSpec& m, const TrainingWorkload& w);

// Write bandwidth to the storage for `instances` writers, GB/s (documented defaults).
double checkpoint_write_gb_per_s(CheckpointStorage s, int instances, Task task);

// Job-level mean time to interrupt, hours: spot from the monthly fraction of
// reclaimed instances (per-instance hazard -ln(1-p)/720 h, any of N ends the
// job); hardware from the GPU-hours per unexpected interruption.
double spot_mtti_hours(double monthly_fraction, int instances);
double hardware_mtti_hours(int accelerators);

double young_interval_s(double write_s, double mtti_s);
double daly_interval_s(double write_s, double mtti_s);

struct InterruptionCost {
  double mtti_hours = 0;
  double checkpoint_write_s = 0;
  double interval_hours = 0;     // Daly's optimum
  double waste_fraction = 0;     // write/interval + (interval/2 + restart)/mtti
  double expected_hours = 0;     // compute hours / (1 - waste)
  bool feasible = true;          // waste < 1
};
InterruptionCost expected_runtime(double compute_hours, double mtti_hours, double write_s, double restart_s);

}  // namespace gpuadvisor
