// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// Launch files for a pick (`--emit skypilot|slurm|k8s`, docs/launch.md): the
// launcher for the target and the framework flags for the chosen layout,
// each file headed by what gpuadvisor predicted and the command that made
// it. The layout written is the layout the estimate used.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

enum class LaunchTarget { skypilot, slurm, k8s };
std::optional<LaunchTarget> launch_target_from_string(std::string_view s);

struct LaunchContext {
  std::string command;      // the gpuadvisor command line
  std::vector<std::string> predicted;  // lines: time, cost, memory, ...
  std::string error_band;   // e.g. "+-19.9% (p90 |error| over 56 published pre-training cases)"
  std::string entrypoint = "YOUR_TRAIN_SCRIPT.py";
  std::string image = "YOUR_IMAGE";
  std::string model_id;     // a Hugging Face id where known, else a placeholder
  std::string region = "us-east-1";
  bool spot = false;
  double hours = 0;         // predicted wall time (for time limits)
};

struct TrainingLaunch {
  const ModelSpec* model = nullptr;
  const TrainingWorkload* workload = nullptr;
  const Instance* instance = nullptr;
  const Accelerator* accelerator = nullptr;
  int count = 1;
  Layout layout;
  Precision precision = Precision::bf16;
  // Micro-batches per step per data-parallel replica: global / (dp x micro).
  int gradient_accumulation() const { return workload->global_batch / (layout.dp * layout.micro_batch); }
};

struct ServingLaunch {
  const ModelSpec* model = nullptr;
  const InferenceWorkload* workload = nullptr;
  const Instance* instance = nullptr;
  const Accelerator* accelerator = nullptr;
  ServingLayout layout;
  int replicas = 1;
  int instances = 1;
  int max_batch = 1;        // sequences in flight per replica (the capacity batch)
  int max_model_len = 0;    // longest sequence: p95 prompt + p95 output + reasoning
};

struct EmittedFile {
  std::string name;
  std::string text;
};

std::vector<EmittedFile> emit_training(const TrainingLaunch& t, const LaunchContext& c, LaunchTarget target);
std::vector<EmittedFile> emit_serving(const ServingLaunch& s, const LaunchContext& c, LaunchTarget target);

// "meta-llama/Llama-2-7b-hf" from a preset's Hugging Face source URL, else empty.
std::string hugging_face_id(const ModelSpec& m);

}  // namespace gpuadvisor
