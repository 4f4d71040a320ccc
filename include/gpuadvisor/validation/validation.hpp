// Layer validation: published measurements predicted and scored (cases, calibration, accuracy bands); includes search and below.
// Validation against published measurements and calibration to a team's own
// (docs/validation.md): cases are run through the same code as `estimate`,
// with the published layout where given; efficiency parameters can be fitted.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/base/statistics.hpp"

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/physics/rl.hpp"
#include "gpuadvisor/search/search.hpp"
#include "gpuadvisor/workload/workload.hpp"

namespace gpuadvisor {

// What a case's measured figure is.
enum class Metric {
  tokens_per_second_per_gpu,  // training throughput per accelerator
  model_tflops_per_gpu,       // model FLOPs (no recompute) per second per accelerator
  hardware_tflops_per_gpu,    // FLOPs executed, recompute included (Narayanan et al.)
  mfu,                        // model FLOPs utilisation (fraction)
  output_tokens_per_second,   // inference: generated tokens/s of one replica (the TP group)
  tpot_s,                     // inference: time per output token
  ttft_s,                     // inference: time to first token
  rl_step_time_s,             // RL post-training: one step (its stages in ValidationCase::stages_measured)
  // Inference under a load (`clients` or `requests_per_second`), predicted
  // through the serving simulator: means and percentiles over requests.
  e2e_s, ttft_p90_s, ttft_p99_s, tpot_p90_s, tpot_p99_s, e2e_p90_s, e2e_p99_s,
};
// output_tokens_per_second, tpot_s, ttft_s and the load metrics above.
bool is_serving_metric(Metric m);
std::string_view to_string(Metric m);

struct ValidationCase {
  std::string id;
  std::string task;        // pretrain, finetune, lora, qlora, inference
  std::string model_name;
  std::string system;      // an instance type (catalog or data/validation/systems.json)
  int instances = 1;
  std::string precision;   // as written in the case
  Metric metric = Metric::tokens_per_second_per_gpu;
  double measured = 0;
  std::string counts;      // what exactly the metric counts
  std::string source;      // primary source
  std::string source_key;  // short key used to group cases by source
  // The family of sources its source belongs to (cases.json `source_families`:
  // sources that share a publisher and its stack), else its source_key alone.
  std::string family;
  bool usable = true;
  std::string reason;      // why not usable, or caveats
  ModelSpec model;
  // Training cases: the stack measured (empty: the default).
  std::string framework;
  TrainingWorkload training;
  LayoutConstraints layout;
  // Inference cases: the engine and version measured (empty: the default engine).
  std::string engine, engine_version;
  InferenceWorkload inference;
  int tp = 0;  // 0: search
  int pp = 1;
  int ep = 1;            // MoE: expert-parallel ranks as measured (1: experts tensor-sliced)
  int attention_dp = 1;  // MoE: attention data-parallel ranks as measured
  std::optional<int> batch;
  std::optional<int> clients;  // inference: measured under a closed loop of this many clients (simulated)
  // RL cases: the step's workload, the placement (split: rollout instances)
  // and the stages the source measured, by name (generation_s, scoring_s,
  // training_s, weight_sync_s).
  RlWorkload rl;
  int rollout_instances = 0;
  std::vector<std::pair<std::string, double>> stages_measured;
  bool is_inference() const { return task == "inference"; }
  bool is_rl() const { return task == "rl"; }
};

// The bundled cases (data/validation/cases.json) and the overlay describing the
// measured systems that are not EC2 instances (data/validation/systems.json).
std::string_view embedded_validation_cases_text();
std::string_view embedded_validation_systems_text();

// Parses a cases file (schema in docs/validation.md). Throws InputError naming
// the file, the case id and the field.
std::vector<ValidationCase> read_cases(const std::string& origin, const std::string& text);

struct CaseResult {
  const ValidationCase* c = nullptr;
  std::string accelerator;
  std::optional<double> predicted;
  double error = 0;     // (predicted - measured) / measured
  std::string problem;  // why there is no prediction (e.g. does not fit in memory under the model)
  struct Stage {
    std::string name;
    double measured = 0, predicted = 0, error = 0;
  };
  std::vector<Stage> stages;  // RL cases: each measured stage
};
CaseResult predict_case(const ValidationCase& c, const Catalog& catalog);
std::vector<CaseResult> run_cases(const std::vector<ValidationCase>& cases, const Catalog& catalog);

struct ErrorSummary {
  std::string group;  // "all", "task: pretrain", "accelerator: H100-SXM", "source: NEMO"
  int cases = 0;
  double median_abs = 0;
  double p90_abs = 0;
  double median_signed = 0;
};


// Over usable cases with a prediction: overall (training and serving), then by
// task, accelerator and source; RL cases only in "task: rl" and their sources.
std::vector<ErrorSummary> summarise(const std::vector<CaseResult>& results);
// The same over usable non-RL cases with a prediction, one group per metric
// measured ("metric: tpot_s", "metric: ttft_p99_s", ...), in metric order.
std::vector<ErrorSummary> summarise_by_metric(const std::vector<CaseResult>& results);

struct ResultCounts {
  int total = 0, usable = 0, predicted = 0, disagreements = 0;  // disagreements: usable without a prediction
};
ResultCounts count_results(const std::vector<CaseResult>& results);

// Calibration: fits each accelerator's compute_max_fraction per precision (from
// training and prefill cases) and memory_bandwidth_fraction (from decode cases)
// to minimise the sum of |ln(predicted / measured)| over usable cases plus
// kPriorWeight x (ln(value / prior) / log_width)^2, by coordinate descent with
// golden-section search inside the parameter's bounds. A parameter with fewer
// than kMinCasesPerParameter cases keeps its value.
inline constexpr int kMinCasesPerParameter = 2;
struct FittedParameter {
  std::string accelerator;
  std::string parameter;  // "compute_max_fraction.bf16", "memory_bandwidth_fraction"
  double before = 0, after = 0;
  int cases = 0;
};
std::vector<FittedParameter> calibrate(Catalog& catalog, const std::vector<ValidationCase>& cases);

// Sets every accelerator's compute and memory fractions to the priors the fit
// starts from (before any measurement): 0.50 for 16-bit, 0.35 for 8-bit, 0.22
// for 4-bit math, 0.80 of memory bandwidth. Used by the leave-one-source-out check.
inline constexpr double kPriorComputeFraction16 = 0.50, kPriorComputeFraction8 = 0.35, kPriorComputeFraction4 = 0.22,
                        kPriorMemoryFraction = 0.80;
void reset_to_prior(Catalog& catalog);

// A fitted parameter's prior and its physical bounds (docs/validation.md
// §Fitted parameters): memory bandwidth 0.80 within [0.50, 0.95] (a current
// engine streams weights at 70-90% of the datasheet bandwidth; below half
// means a missing mechanism, not hardware); a compute fraction within
// [0.15, 0.90]; the serving all-reduce latency within [3, 300] us, from the
// link's default (from decode cases at tp > 1). `log_width` scales the pull toward the
// prior: a value e^log_width away costs kPriorWeight, as much as one case
// predicted that far off.
struct ParameterPrior {
  double value, lower, upper, log_width;
};
inline constexpr double kPriorWeight = 1.0;
ParameterPrior parameter_prior(const Accelerator& acc, const std::string& parameter);

// Partial pooling: the prior of a compute or memory fraction is the median of
// the values fitted for it on the other fit groups of the same software stack
// with at least kMinCasesToPool cases (fp16 pooled with bf16); the stack-wide
// prior where there are none. Bounds stay physical.
inline constexpr int kMinCasesToPool = 5;
ParameterPrior pooled_prior(const Catalog& catalog, const std::vector<FittedParameter>& fitted, const std::string& group,
                            const std::string& parameter);

// For each source: the median |error| on its cases when fitted without them,
// when fitted with all cases, and with the priors alone (all fits from the priors).
struct SourceCheck {
  std::string source;
  int cases = 0;
  double fitted_without = 0, fitted_with_all = 0, priors = 0;
};
// What each fold held out: one source, or one family of sources.
enum class HeldOutBy { source, family };
struct LeaveOneSourceOut {
  HeldOutBy held_out_by = HeldOutBy::source;
  std::vector<SourceCheck> sources;
  // Every usable case predicted by the fit made without its own source (the
  // out-of-sample figures; `summarise` pools them), and by the fit with all.
  std::vector<CaseResult> held_out, in_sample;
};
// `jobs` threads run the folds (each fits its own copy of the catalog); the
// result does not depend on it.
LeaveOneSourceOut leave_one_source_out(const std::vector<ValidationCase>& cases, Catalog catalog, int jobs = 1);
// The same with whole families left out (ValidationCase::family): a source's
// siblings from the same publisher and stack leave with it, so what is held
// out was never seen in any form. `sources` then names families.
LeaveOneSourceOut leave_one_family_out(const std::vector<ValidationCase>& cases, Catalog catalog, int jobs = 1);

// An overlay setting the fitted efficiency figures (for --catalog-add).
std::string efficiency_overlay(const Catalog& catalog, const std::vector<FittedParameter>& fitted, const std::string& note);

}  // namespace gpuadvisor
