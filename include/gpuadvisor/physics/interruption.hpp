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
// "auto"): S3 for a job on one instance (nothing to share: it reads its
// weights and data from S3 and writes its checkpoints back, as a single-node
// job does without a file system to create and pay for) and for LoRA/QLoRA on
// any count (an adapter's checkpoint is megabytes and its dataset is copied to
// each node: a 48 TiB file system for them is no one's practice), FSx for
// Lustre for full training on several (a shared file system that all of them
// read and write at once: Megatron memory-maps its dataset, and a 70B's
// restartable state is a terabyte).
enum class CheckpointStorage { s3, fsx_lustre, efs, local_nvme, automatic };
std::string_view to_string(CheckpointStorage s);
std::optional<CheckpointStorage> checkpoint_storage_from_string(std::string_view s);
// The storage a `task` on `instances` uses: `automatic` resolved, any other as chosen.
CheckpointStorage storage_for(CheckpointStorage chosen, int instances, Task task);

inline constexpr double kBytesRestartablePerParam = 14;  // bf16 weights 2 + fp32 master 4 + Adam m, v 8 (gradients not saved)
inline constexpr double kHoursPerMonthSpot = 720;         // the Spot Advisor's trailing month
inline constexpr double kGpuHoursPerHardwareInterruption = 50700;  // Llama 3 405B: 419 unexpected in 54 days on 16,384 H100s
inline constexpr double kDefaultRestartMinutes = 10;

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
