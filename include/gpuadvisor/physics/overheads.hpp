// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// Job overheads: the time a training job pays before its first step and after
// its last (docs/methodology.md §Job overheads), and EC2's billing rule.
// Every default has its source in the methodology; every one can be overridden.
#pragma once
#include <optional>

#include "gpuadvisor/physics/estimate.hpp"
#include "gpuadvisor/physics/interruption.hpp"

namespace gpuadvisor {

// Defaults (docs/methodology.md §Job overheads).
inline constexpr double kProvisionSmallS = 180;         // instances with fewer than 8 accelerators
inline constexpr double kProvisionLargeS = 360;         // 8+ accelerators (P, Trn, the largest G)
inline constexpr double kImageGb = 18;                  // a PyTorch/NeMo training image
inline constexpr double kImagePullGbPerS = 0.06;        // 15-20 GB in 4-6 min per instance (AWS ML blog, SOCI)
inline constexpr double kS3ReadGbPerSPerInstance = 2.5; // parallel ranged GETs (CRT), conservative
inline constexpr double kCommInitBaseS = 15;            // NCCL communicators: 15 s + 0.04 s per rank
inline constexpr double kCommInitPerRankS = 0.04;
inline constexpr double kNeuronCompileSmallS = 30 * 60; // models up to 20B, compile cache miss
inline constexpr double kNeuronCompileLargeS = 75 * 60; // larger models
inline constexpr double kMinimumBilledHours = 1.0 / 60; // EC2 Linux: per second, 60 s minimum

struct OverheadSettings {
  bool enabled = true;                          // --no-overheads: steps only
  std::optional<double> provision_s;            // --provision-minutes
  double image_gb = kImageGb;                   // --image-gb (0: baked into the AMI)
  std::optional<double> load_gb_per_s;          // --load-gb-per-s, per instance
  std::optional<double> neuron_compile_s;       // --neuron-compile-minutes (0: cached)
  bool resume = false;                          // --resume: load the full training state, not only the weights
  CheckpointStorage storage = CheckpointStorage::fsx_lustre;  // --checkpoint-storage
  std::optional<double> checkpoint_write_gb_per_s;            // --checkpoint-gb-per-s
};


// Read bandwidth from the storage to `instances` readers together, GB/s.
double storage_read_gb_per_s(CheckpointStorage s, int instances, Task task);

JobOverheads job_overheads(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l, const OverheadSettings& s);

// Sets e.setup and e.total_hours = e.train_hours + e.setup.hours().
void add_job_overheads(TrainingEstimate& e, const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const OverheadSettings& s);

// Hours EC2 bills for a run of `hours` on one instance: per second, at least 60 s.
double billed_hours(double hours);

}  // namespace gpuadvisor
