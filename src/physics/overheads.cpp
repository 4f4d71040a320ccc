// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
#include "gpuadvisor/physics/overheads.hpp"

#include <algorithm>

namespace gpuadvisor {

double storage_read_gb_per_s(CheckpointStorage s, int instances, Task task) {
  const double n = std::max(1, instances);
  switch (storage_for(s, instances, task)) {
    case CheckpointStorage::s3: return kS3ReadGbPerSPerInstance * n;  // S3 scales with the readers
    default: return checkpoint_write_gb_per_s(s, instances, task);    // the file system's throughput, shared
  }
}

namespace {

double provision_s(const Cluster& c, const OverheadSettings& s) {
  if (s.provision_s) return *s.provision_s;
  return c.instance->accelerator_count >= 8 ? kProvisionLargeS : kProvisionSmallS;
}

// Bytes one instance reads before its first step: the weights its ranks hold
// (a tp x pp slice each; data-parallel copies read the same bytes again), or
// the whole restartable state when resuming. Pre-training from scratch reads none.
double load_gb_per_instance(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l, bool resume) {
  double model_gb = 0;
  if (resume) model_gb = checkpoint_size_gb(m, w) + (is_adapter_task(w.task) ? m.total_params() * 2 / 1e9 : 0);
  else if (w.task != Task::pretrain) model_gb = m.total_params() * 2 / 1e9;  // bf16 pretrained weights
  const double share = std::min(1.0, double(c.instance->accelerator_count) / (l.tp * l.pp));
  return model_gb * share;
}

double neuron_compile_s(const ModelSpec& m, const Cluster& c, const OverheadSettings& s) {
  if (c.accelerator->software != "neuron") return 0;
  if (s.neuron_compile_s) return *s.neuron_compile_s;
  return m.total_params() <= 20e9 ? kNeuronCompileSmallS : kNeuronCompileLargeS;
}

}  // namespace

JobOverheads job_overheads(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const Layout& l, const OverheadSettings& s) {
  JobOverheads o;
  if (!s.enabled) return o;
  o.provision_s = provision_s(c, s);
  o.image_pull_s = s.image_gb / kImagePullGbPerS;
  const double per_instance_gb = load_gb_per_instance(m, w, c, l, s.resume);
  const double aggregate_gb_per_s =
      s.load_gb_per_s ? *s.load_gb_per_s * c.count : storage_read_gb_per_s(s.storage, c.count, w.task);
  o.weight_load_s = per_instance_gb * c.count / aggregate_gb_per_s;
  const int ranks = c.accelerators();
  o.communicator_init_s = ranks > 1 ? kCommInitBaseS + kCommInitPerRankS * ranks : 0;
  o.neuron_compile_s = neuron_compile_s(m, c, s);
  const double write_gb_per_s = s.checkpoint_write_gb_per_s.value_or(checkpoint_write_gb_per_s(s.storage, c.count, w.task));
  o.final_checkpoint_s = checkpoint_size_gb(m, w) / write_gb_per_s;
  return o;
}

void add_job_overheads(TrainingEstimate& e, const ModelSpec& m, const TrainingWorkload& w, const Cluster& c, const OverheadSettings& s) {
  e.setup = job_overheads(m, w, c, e.layout, s);
  e.total_hours = e.train_hours + e.setup.hours();
}

double billed_hours(double hours) { return std::max(hours, kMinimumBilledHours); }

}  // namespace gpuadvisor
