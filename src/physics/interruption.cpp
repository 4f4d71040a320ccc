// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/interruption.hpp"

#include <algorithm>
#include <cmath>

namespace gpuadvisor {

std::string_view to_string(CheckpointStorage s) {
  switch (s) {
    case CheckpointStorage::s3: return "s3";
    case CheckpointStorage::fsx_lustre: return "fsx-lustre";
    case CheckpointStorage::efs: return "efs";
    case CheckpointStorage::local_nvme: return "local-nvme";
    case CheckpointStorage::automatic: return "auto";
  }
  return "?";
}

std::optional<CheckpointStorage> checkpoint_storage_from_string(std::string_view s) {
  for (auto c : {CheckpointStorage::s3, CheckpointStorage::fsx_lustre, CheckpointStorage::efs, CheckpointStorage::local_nvme, CheckpointStorage::automatic})
    if (to_string(c) == s) return c;
  return std::nullopt;
}

CheckpointStorage storage_for(CheckpointStorage chosen, int /*instances*/, Task /*task*/) {
  return chosen == CheckpointStorage::automatic ? CheckpointStorage::s3 : chosen;
}

double checkpoint_size_gb(const ModelSpec& m, const TrainingWorkload& w) {
  const double params = is_adapter_task(w.task) ? lora_adapter_params(m, w.lora_rank, w.lora_targets) : m.total_params();
  return params * kBytesRestartablePerParam / 1e9;
}

double checkpoint_write_gb_per_s(CheckpointStorage s, int instances, Task task) {
  const double n = std::max(1, instances);
  switch (storage_for(s, instances, task)) {
    case CheckpointStorage::s3: return kS3WriteGbPerSPerInstance * n;
    case CheckpointStorage::fsx_lustre: return kFsxLustreWriteGbPerS;
    case CheckpointStorage::efs: return std::min(5 * kGbPerGib, 1.572864 * n);  // 5 GiB/s per file system, 1,500 MiB/s per client
    case CheckpointStorage::local_nvme: return 2.0 * n;            // ~2 GB/s per instance's NVMe
    case CheckpointStorage::automatic: break;                      // resolved above
  }
  return 1.0;
}

double spot_mtti_hours(double monthly_fraction, int instances) {
  const double p = std::clamp(monthly_fraction, 1e-9, 0.999999);
  const double hazard_per_hour = -std::log1p(-p) / kHoursPerMonthSpot;
  return 1 / (hazard_per_hour * std::max(1, instances));
}

double hardware_mtti_hours(int accelerators) { return kGpuHoursPerHardwareInterruption / std::max(1, accelerators); }

double young_interval_s(double write_s, double mtti_s) { return std::sqrt(2 * write_s * mtti_s); }

double daly_interval_s(double write_s, double mtti_s) {
  if (write_s >= 2 * mtti_s) return mtti_s;
  const double r = write_s / (2 * mtti_s);
  return std::sqrt(2 * write_s * mtti_s) * (1 + std::sqrt(r) / 3 + r / 9) - write_s;
}

InterruptionCost expected_runtime(double compute_hours, double mtti_hours, double write_s, double restart_s) {
  InterruptionCost c;
  c.mtti_hours = mtti_hours;
  c.checkpoint_write_s = write_s;
  const double m = mtti_hours * 3600;
  const double tau = std::max(daly_interval_s(write_s, m), 1.0);
  c.interval_hours = tau / 3600;
  c.waste_fraction = write_s / tau + (tau / 2 + restart_s) / m;
  c.feasible = c.waste_fraction < 0.95;
  c.expected_hours = c.feasible ? compute_hours / (1 - c.waste_fraction) : compute_hours * 20;
  return c;
}

}  // namespace gpuadvisor
