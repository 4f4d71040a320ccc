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
#include "gpuadvisor/physics/rl.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

enum class LaunchTarget { skypilot, slurm, k8s };
std::optional<LaunchTarget> launch_target_from_string(std::string_view s);

// How the pick's instances are bought (docs/methodology.md §Channels), as the
// files reference it (docs/launch.md §Capacity and EFA): a Capacity Block or a
// reservation is named by a required placeholder in every launcher; spot sets
// SkyPilot's spot market.
struct LaunchCapacity {
  std::string channel = "on-demand";  // on-demand, spot, capacity-block, reservation, savings-1y, savings-3y
  std::optional<int> block_days;      // a Capacity Block: its days and how many blocks of at most 64 instances
  int blocks = 0;
  bool block() const { return channel == "capacity-block"; }
  bool reserved() const { return channel == "capacity-block" || channel == "reservation"; }
  bool spot() const { return channel == "spot"; }
};

struct LaunchContext {
  std::string command;      // the gpuadvisor command line
  std::vector<std::string> predicted;  // lines: time, cost, memory, ...
  std::string error_band;   // e.g. "+-19.9% (p90 |error| over 56 published pre-training cases)"
  std::string entrypoint = "YOUR_TRAIN_SCRIPT.py";
  std::string image = "YOUR_IMAGE";
  std::string model_id;     // serving: the checkpoint served; training: the tokenizer's; a Hugging Face id, else a placeholder
  std::vector<std::string> notes;  // header lines beside the prediction: what is served, the longest request, checkpoints
  std::string region = "us-east-1";
  LaunchCapacity capacity;  // the channel; use_spot only when it is spot
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
  // Checkpoints every this many optimizer steps: the cost model's Daly
  // interval over the predicted step time (0: none known, one save at the end).
  int save_interval_steps = 0;
  // Optimizer steps: ceil(tokens / (global batch x sequence length)).
  long long train_iters() const { return static_cast<long long>(workload->steps()); }
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
  int max_batch = 1;        // the engine's sequence limit per replica, as the sizing took it (cli/emit.cpp)
  // Longest request the service accepts, prompt + output tokens: the model's
  // context length or --max-request-tokens, never a mean or a percentile.
  int max_model_len = 0;
  // The autoscalers' targets (the engines' step budget, memory share and KV
  // dtype come from data/engines.json and the workload, as the estimate took them).
  int batch_at_load = 1;              // sequences in flight per replica at the given load (Kubernetes)
  double target_qps_per_replica = 0;  // requests/s: a replica's capacity x the target utilisation (SkyServe)
  Precision kv_cache = Precision::bf16;  // the KV cache's precision as the estimate took it
};

// An RL run (--task rl) as verl runs it: the policy, the run and the estimate
// the pick assumed (placement, pools, generation and update layouts).
struct RlLaunch {
  const ModelSpec* model = nullptr;
  const RlWorkload* workload = nullptr;
  const RlEstimate* estimate = nullptr;
  const Instance* instance = nullptr;
  const Accelerator* accelerator = nullptr;
  int count = 1;                 // instances in all (split: rollout + trainer pools)
  int save_interval_steps = 0;   // RL steps between checkpoints (0: one at the end)
};

struct EmittedFile {
  std::string name;
  std::string text;
};

// Throws InputError, before any file is written, for a job the files cannot
// run as estimated (LoRA/QLoRA; ZeRO-3 where Megatron's FSDP2 refuses it). A
// DeepSpeed or torchtitan alternative that cannot run the layout is left out,
// with the reason in the other files' headers (docs/launch.md §Training).
std::vector<EmittedFile> emit_training(const TrainingLaunch& t, const LaunchContext& c, LaunchTarget target);
std::vector<EmittedFile> emit_serving(const ServingLaunch& s, const LaunchContext& c, LaunchTarget target);
// verl_args.txt (Hydra overrides of verl's PPO trainer) and its launcher.
// Throws InputError for a run verl's trainer does not run (DPO, Neuron).
std::vector<EmittedFile> emit_rl(const RlLaunch& r, const LaunchContext& c, LaunchTarget target);

// "meta-llama/Llama-2-7b-hf" from a preset's Hugging Face source URL, else empty.
std::string hugging_face_id(const ModelSpec& m);
// The checkpoint an online service serves: the instruct/chat variant where the
// preset names one, else the model's own Hugging Face id, else empty.
std::string serving_checkpoint_id(const ModelSpec& m, WeightFormat weights);

}  // namespace gpuadvisor
