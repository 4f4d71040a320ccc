// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
#include "gpuadvisor/search/bill.hpp"

#include <algorithm>
#include <cmath>

namespace gpuadvisor {

namespace {

// Megatron's indexed dataset stores a token as uint16 below 65,500 vocabulary
// entries, else as int32 (megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype).
double bytes_per_token(const ModelSpec& m) { return m.vocab < 65500 ? 2 : 4; }

std::optional<double> stored_usd(const std::optional<StorageRate>& rate, double gb, double hours) {
  if (!rate) return std::nullopt;
  return gb * rate->usd * hours / kStorageHoursPerMonth;
}

std::optional<StorageRate> rate_of(const Catalog& catalog, const std::string& region, const char* key) {
  const StorageRate* rate = catalog.storage_rate(region, key);
  return rate ? std::optional<StorageRate>(*rate) : std::nullopt;
}

}  // namespace

double fsx_capacity_gib(double gb, double write_gb_per_s) {
  const double for_throughput_gib = write_gb_per_s * 1000 / kFsxThroughputMbPerSPerTib * 1024;  // MB/s over MB/s per TiB
  const double need_gib = std::max(gb * 1e9 / kBytesPerGib, for_throughput_gib);
  if (need_gib <= 1200) return 1200;
  return std::ceil(need_gib / kFsxStepGib) * kFsxStepGib;
}

JobBill job_bill(const ModelSpec& m, const TrainingWorkload& w, double hours, std::optional<double> compute_usd, CheckpointStorage storage,
                 int instances, std::optional<double> write_gb_per_s, const Catalog& catalog, const std::string& region, const std::string& data_region) {
  JobBill b;
  storage = storage_for(storage, instances, w.task);
  const bool adapter = is_adapter_task(w.task);
  b.dataset_gb = w.tokens * bytes_per_token(m) / 1e9;
  b.model_in_gb = w.task == Task::pretrain ? 0 : m.total_params() * 2 / 1e9;
  b.checkpoints_gb = kCheckpointsKept * checkpoint_size_gb(m, w);
  b.final_weights_gb = (adapter ? lora_adapter_params(m, w.lora_rank, w.lora_targets) : m.total_params()) * 2 / 1e9;
  const bool checkpoints_in_s3 = storage == CheckpointStorage::s3;
  b.s3_gb = b.dataset_gb + b.model_in_gb + b.final_weights_gb + (checkpoints_in_s3 ? b.checkpoints_gb : 0);
  b.s3_rate = rate_of(catalog, region, kS3StandardRate);
  b.s3_usd = stored_usd(b.s3_rate, b.s3_gb, hours);
  if (!checkpoints_in_s3) b.s3_only_storage_usd = stored_usd(b.s3_rate, b.s3_gb + b.checkpoints_gb, hours);
  const double working_data_gb = b.dataset_gb + b.model_in_gb + b.checkpoints_gb;
  switch (storage) {
    case CheckpointStorage::s3: b.working_usd = 0; break;
    case CheckpointStorage::local_nvme:
      b.working_store = "local-nvme";
      b.working_gb = working_data_gb;
      b.working_usd = 0;  // the instance store is in the instance's price
      break;
    case CheckpointStorage::efs:
      b.working_store = "efs";
      b.working_gb = working_data_gb;
      b.working_rate = rate_of(catalog, region, kEfsStandardRate);
      b.working_usd = stored_usd(b.working_rate, b.working_gb, hours);
      break;
    case CheckpointStorage::fsx_lustre:
      b.working_store = "fsx-lustre";
      b.working_gb_per_s = write_gb_per_s.value_or(checkpoint_write_gb_per_s(storage, 1, w.task));
      b.working_gb = fsx_capacity_gib(working_data_gb, b.working_gb_per_s) * kBytesPerGib / 1e9;
      b.working_rate = rate_of(catalog, region, kFsxLustrePersistent2Rate);
      b.working_usd = stored_usd(b.working_rate, b.working_gb, hours);
      break;
    case CheckpointStorage::automatic: break;  // resolved above
  }
  if (!data_region.empty() && data_region != region) {
    b.data_region = data_region;
    b.transfer_gb = b.dataset_gb + b.model_in_gb;
    b.transfer_rate = rate_of(catalog, data_region, kInterRegionTransferRate);
    if (b.transfer_rate) b.transfer_usd = b.transfer_gb * b.transfer_rate->usd;
  } else {
    b.transfer_usd = 0;
  }
  // Sums of the parts as printed (cents), so that a line adds up to the cent.
  const auto cents = [](double usd) { return std::round(usd * 100) / 100; };
  if (b.s3_usd && b.working_usd) b.storage_usd = cents(*b.s3_usd) + cents(*b.working_usd);
  if (b.storage_usd && b.transfer_usd && compute_usd) b.total_usd = cents(*compute_usd) + *b.storage_usd + cents(*b.transfer_usd);
  return b;
}

}  // namespace gpuadvisor
