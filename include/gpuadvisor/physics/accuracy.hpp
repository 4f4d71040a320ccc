// Layer physics: memory, FLOPs, communication and time of one layout on one instance, with its error band; includes workload and below.
// The error band every prediction carries (docs/validation.md §Accuracy
// bands): the out-of-sample |error| of the published cases of its group
// (accelerator x task, by engine or stack, and MoE models apart), each case predicted by the fit made without its own
// source. Precomputed into data/validation/accuracy.json by
// `gpuadvisor calibrate --leave-one-source-out --write-accuracy`; a test
// checks it matches the cases and the physics.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>


namespace gpuadvisor {

// A group with fewer cases than this says so and uses its task's band.
inline constexpr int kMinAccuracyCases = 3;
// The group suffix of MoE models' cases: "inference/moe", "pretrain/moe".
inline constexpr const char* kMoeVariant = "moe";

struct AccuracyBand {
  std::string group;  // "H100-SXM pretrain", or "pretrain, all accelerators"
  int cases = 0;
  double median_abs_error = 0;
  double p90_abs_error = 0;
  double median_signed_error = 0;  // median speed error: > 0 when predictions run faster than measured (optimistic)
  std::string note;   // why the task's band stands in, when it does
  std::string held_out = "each predicted without its family of sources";  // how the cases were kept out of the fit
};

// The task groups of validation: pretrain, fine-tuning (finetune, lora, qlora), inference, rl.
std::string accuracy_task(std::string_view task);

// The band for predictions on `accelerator` for `task` (an accuracy_task
// name), from the embedded table; nullopt when the task has no cases at all.
// With a serving `engine`: the accelerator x engine group when it has enough
// cases, else the accelerator's (engines pooled, said in the note). For an
// MoE model (`moe`): the MoE cases' band on the accelerator, else every
// accelerator's MoE cases, else the band above with the pooling said.
std::optional<AccuracyBand> accuracy_band(std::string_view accelerator, std::string_view task, std::string_view engine = {}, bool moe = false);

// The band as one line for reports, or "unknown (...)" when the task has no cases.
std::string accuracy_line(std::string_view accelerator, std::string_view task, std::string_view engine = {}, bool moe = false);

// The embedded table (data/validation/accuracy.json).
std::string_view embedded_accuracy_text();

// One line for reports: "+-25% (p90 |error|, out of sample, 12 H100-SXM pretrain cases)".
std::string accuracy_text(const AccuracyBand& b);

// The bands of the simulated serving figures under a load (docs/validation.md
// §Under load): the |error| of published measurements taken under a load
// that the fit has never seen, by metric ("ttft_s", "tpot_s", "e2e_s"), on
// the accelerator when it has kMinAccuracyCases of them, else over every
// accelerator (said in the note); nullopt when the metric has none. Written
// into data/validation/accuracy_at_load.json by `gpuadvisor validate --cases
// data/validation/under_load.json --write-accuracy-at-load`.
std::optional<AccuracyBand> accuracy_at_load_band(std::string_view accelerator, std::string_view metric);
// "TTFT +-X% (p90 |error|, median Y%, lean, N published measurements under load on ...); TPOT ...", or empty without bands.
std::string accuracy_at_load_line(std::string_view accelerator);
std::string_view embedded_accuracy_at_load_text();

}  // namespace gpuadvisor
