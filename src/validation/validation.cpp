// Layer validation: published measurements predicted and scored (cases, calibration, accuracy bands); includes search and below.
#include "gpuadvisor/validation/validation.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/base/names.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "gpuadvisor/serving/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/workload/engine.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/workload/framework.hpp"
#include "gpuadvisor/workload/neuron.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "base/json_input.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/search/rl_search.hpp"

namespace gpuadvisor {

extern const char* const embedded_validation_cases_json;
extern const std::size_t embedded_validation_cases_json_size;
extern const char* const embedded_validation_systems_json;
extern const std::size_t embedded_validation_systems_json_size;

std::string_view embedded_validation_cases_text() { return {embedded_validation_cases_json, embedded_validation_cases_json_size}; }
std::string_view embedded_validation_systems_text() { return {embedded_validation_systems_json, embedded_validation_systems_json_size}; }

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

std::string_view to_string(Metric m) {
  switch (m) {
    case Metric::tokens_per_second_per_gpu: return "tokens_per_second_per_gpu";
    case Metric::model_tflops_per_gpu: return "model_tflops_per_gpu";
    case Metric::hardware_tflops_per_gpu: return "hardware_tflops_per_gpu";
    case Metric::mfu: return "mfu";
    case Metric::output_tokens_per_second: return "output_tokens_per_second";
    case Metric::tpot_s: return "tpot_s";
    case Metric::ttft_s: return "ttft_s";
    case Metric::rl_step_time_s: return "rl_step_time_s";
    case Metric::e2e_s: return "e2e_s";
    case Metric::ttft_p90_s: return "ttft_p90_s";
    case Metric::ttft_p99_s: return "ttft_p99_s";
    case Metric::tpot_p90_s: return "tpot_p90_s";
    case Metric::tpot_p99_s: return "tpot_p99_s";
    case Metric::e2e_p90_s: return "e2e_p90_s";
    case Metric::e2e_p99_s: return "e2e_p99_s";
  }
  return "?";
}

bool is_serving_metric(Metric m) {
  return m != Metric::tokens_per_second_per_gpu && m != Metric::model_tflops_per_gpu && m != Metric::hardware_tflops_per_gpu && m != Metric::mfu &&
         m != Metric::rl_step_time_s;
}

namespace {

bool is_load_metric(Metric m) { return is_serving_metric(m) && m != Metric::output_tokens_per_second && m != Metric::tpot_s && m != Metric::ttft_s; }

std::optional<Metric> metric_from_string(std::string_view s) {
  for (Metric m : {Metric::tokens_per_second_per_gpu, Metric::model_tflops_per_gpu, Metric::hardware_tflops_per_gpu, Metric::mfu,
                   Metric::output_tokens_per_second, Metric::tpot_s, Metric::ttft_s, Metric::rl_step_time_s, Metric::e2e_s, Metric::ttft_p90_s,
                   Metric::ttft_p99_s, Metric::tpot_p90_s, Metric::tpot_p99_s, Metric::e2e_p90_s, Metric::e2e_p99_s})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

struct Reader {
  std::string origin, id;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(fmt::format("{}: case {}: field '{}': {}", origin, id.empty() ? "?" : id, field, what));
  }
  const json& need(const json& j, const char* key) const {
    if (!j.contains(key) || j[key].is_null()) fail(key, "is missing");
    return j[key];
  }
  std::string text(const json& j, const char* key, bool required = true) const {
    if (!j.contains(key) || j[key].is_null()) {
      if (required) fail(key, "is missing");
      return "";
    }
    if (!j[key].is_string()) fail(key, "expected a string");
    return j[key].get<std::string>();
  }
  // An optional name: absent for the default, never an empty string (a
  // field left blank reads as a mistake, not as "the default").
  std::string name(const json& j, const char* key) const {
    const std::string v = text(j, key, false);
    if (j.contains(key) && j[key].is_string() && v.empty()) fail(key, "is empty: leave it out for the default");
    return v;
  }
  double number(const json& j, const char* key, double lo, double hi) const {
    const json& v = need(j, key);
    if (!v.is_number()) fail(key, "expected a number");
    const double d = v.get<double>();
    if (!(d >= lo && d <= hi)) fail(key, fmt::format("{} is outside [{}, {}]", d, lo, hi));
    return d;
  }
  // A key the case format does not have is refused, named with the nearest one.
  void known_keys(const json& j, const std::vector<std::string>& known, const std::string& prefix = "") const {
    if (auto u = unknown_key(j, known)) fail(prefix + u->key, u->message);
  }
  std::optional<int> integer(const json& j, const char* key, int lo, int hi) const {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    if (!j[key].is_number_integer()) fail(key, "expected an integer");
    // Above the signed range (read as unsigned): refused as written, not as a negative.
    if (j[key].is_number_unsigned() && j[key].get<unsigned long long>() > static_cast<unsigned long long>(hi))
      fail(key, fmt::format("{} is outside [{}, {}]", j[key].get<unsigned long long>(), lo, hi));
    const long long v = j[key].get<long long>();
    if (v < lo || v > hi) fail(key, fmt::format("{} is outside [{}, {}]", v, lo, hi));
    return static_cast<int>(v);
  }
};

// "--prompt-tokens-p95" as the case field "prompt_tokens_p95", wherever a
// flag is named in a workload's message.
std::string flags_as_fields(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool flag = text.compare(i, 2, "--") == 0 && i + 2 < text.size() && std::islower(static_cast<unsigned char>(text[i + 2])) &&
                      (i == 0 || text[i - 1] == ' ' || text[i - 1] == '(');
    if (!flag) {
      out.push_back(text[i]);
      continue;
    }
    for (i += 2; i < text.size() && (std::islower(static_cast<unsigned char>(text[i])) || std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '-'); ++i)
      out.push_back(text[i] == '-' ? '_' : text[i]);
    --i;
  }
  return out;
}

// An RL case's "rl" object (docs/validation.md §RL cases) and its "stages".
void read_rl_case(const Reader& r, const json& j, ValidationCase& c) {
  if (c.metric != Metric::rl_step_time_s) r.fail("metric", "an rl case measures rl_step_time_s");
  const json& x = r.need(j, "rl");
  if (!x.is_object()) r.fail("rl", "expected an object");
  r.known_keys(x, {"algorithm", "prompts_per_step", "samples_per_prompt", "prompt_tokens", "response_tokens", "response_tokens_max",
                   "reference", "placement", "rollout_instances"}, "rl.");
  if (x.contains("reference") && !x["reference"].is_boolean()) r.fail("rl.reference", "expected true or false");
  RlRequest q;
  auto algorithm = rl_algorithm_from_string(r.text(x, "algorithm"));
  if (!algorithm) r.fail("rl.algorithm", "expected grpo, ppo or dpo");
  q.algorithm = *algorithm;
  q.prompts_per_step = r.integer(x, "prompts_per_step", 1, 1 << 20);
  q.samples_per_prompt = r.integer(x, "samples_per_prompt", 1, 1024);
  q.prompt_tokens = r.number(x, "prompt_tokens", 1, 1 << 22);
  q.response_tokens = r.number(x, "response_tokens", 1, 1 << 22);
  q.response_tokens_max = r.number(x, "response_tokens_max", 1, 1 << 22);
  q.steps = 1;
  q.no_reference = x.contains("reference") && x["reference"].is_boolean() && !x["reference"].get<bool>();
  const std::string placement = r.text(x, "placement");
  auto p = rl_placement_from_string(placement);
  if (!p) r.fail("rl.placement", "expected colocated or split");
  q.placement = *p;
  c.rollout_instances = r.integer(x, "rollout_instances", 1, 1000000).value_or(0);
  if (*p == RlPlacement::split && c.rollout_instances == 0) r.fail("rl.rollout_instances", "a split case names its rollout pool");
  if (*p == RlPlacement::colocated && c.rollout_instances > 0)
    r.fail("rl.rollout_instances", "a colocated case generates on its training instances: a rollout pool is split placement's");
  auto prec = precision_from_string(c.precision);
  if (!prec) r.fail("precision", "expected bf16, fp16 or fp8");
  q.precision = *prec;
  try {
    c.rl = make_rl_workload(q, c.model);
  } catch (const InputError& e) {
    r.fail("rl", e.what());
  }
  if (j.contains("stages")) {
    const json& s = j["stages"];
    if (!s.is_object()) r.fail("stages", "expected an object of measured seconds");
    for (const char* k : {"generation_s", "scoring_s", "training_s", "weight_sync_s"})
      if (s.contains(k)) c.stages_measured.push_back({k, r.number(s, k, 1e-6, 1e7)});
    for (auto it = s.begin(); it != s.end(); ++it)
      if (std::none_of(c.stages_measured.begin(), c.stages_measured.end(), [&](const auto& m) { return m.first == it.key(); }))
        r.fail("stages", fmt::format("unknown stage '{}' (generation_s, scoring_s, training_s, weight_sync_s)", it.key()));
  }
}

// An inference case's ep and attention_dp as the model runs them
// (docs/methodology.md §MoE serving layouts): refused when read, not left to
// fail as "does not fit" when predicted.
void check_case_layout(const Reader& r, const ValidationCase& c) {
  if (c.ep == 1 && c.attention_dp == 1) return;
  if (!c.model.is_moe()) r.fail("ep", fmt::format("expert and attention data parallelism are for mixture-of-experts models; {} is dense", c.model.name));
  if (c.ep != c.tp) r.fail("ep", fmt::format("ep {} must equal tp {} (experts spread over every accelerator of the replica)", c.ep, c.tp));
  if (c.tp % c.attention_dp != 0) r.fail("attention_dp", fmt::format("attention_dp {} does not divide tp {}", c.attention_dp, c.tp));
  if (c.pp > 1) r.fail("pp", "expert-parallel layouts stay inside one instance (pp 1)");
  if (c.inference.engine)
    if (auto p = serving_engine_layout_problem(*c.inference.engine, ServingLayout{c.tp, c.pp, c.ep, c.attention_dp})) r.fail("engine", *p);
}

// Every key a case may have (docs/validation.md §Case format).
const std::vector<std::string> kCaseKeys{
    "id", "task", "usable", "reason", "source", "source_key", "counts", "metric", "measured", "system", "instances", "precision",
    "model", "model_name", "rl", "stages", "prompt_tokens", "output_tokens", "kv_cache", "concurrency", "compiled_batch", "scheduler_recv_interval",
    "max_batched_tokens", "attention_dp_balance_iters", "requests_per_second", "clients", "requests", "length_spread", "prompt_tokens_p95", "output_tokens_p95", "speculative", "batch", "engine", "engine_version", "tp", "pp", "ep", "attention_dp", "layout", "seq_len", "global_batch", "lora_rank",
    "lora_targets", "flash_attention", "framework"};

const std::vector<std::string> kLayoutKeys{"tp", "pp", "ep", "etp", "vp", "cp", "recompute_layers", "micro_batch", "zero_stage", "recompute"};

// The fields every case has: what was measured, where, on which model.
void read_case_common(const Reader& r, const json& j, ValidationCase& c) {
  c.task = r.text(j, "task");
  c.usable = !j.contains("usable") || (j["usable"].is_boolean() ? j["usable"].get<bool>() : (r.fail("usable", "expected true or false"), true));
  c.reason = r.text(j, "reason", false);
  if (!c.usable && c.reason.empty()) r.fail("reason", "an unusable case must say why");
  c.source = r.text(j, "source");
  c.source_key = r.text(j, "source_key");
  c.counts = r.text(j, "counts", false);
  auto metric = metric_from_string(r.text(j, "metric"));
  if (!metric) r.fail("metric", "expected one of tokens_per_second_per_gpu, model_tflops_per_gpu, hardware_tflops_per_gpu, mfu, output_tokens_per_second, tpot_s, ttft_s, rl_step_time_s, e2e_s, ttft_p90_s, ttft_p99_s, tpot_p90_s, tpot_p99_s, e2e_p90_s, e2e_p99_s");
  c.metric = *metric;
  c.measured = r.number(j, "measured", 1e-9, 1e12);
  if (c.metric == Metric::mfu && c.measured >= 1) r.fail("measured", "an MFU is a fraction below 1");
  c.system = r.text(j, "system");
  c.instances = r.integer(j, "instances", 1, 1000000).value_or(1);
  c.precision = r.text(j, "precision");
  // The model: a preset name or a shape object.
  const json& model = r.need(j, "model");
  if (model.is_string()) {
    const ModelSpec* p = find_model_preset(model.get<std::string>());
    if (!p) r.fail("model", fmt::format("unknown preset '{}'", model.get<std::string>()));
    c.model = *p;
  } else if (model.is_object()) {
    c.model = model_from_shape_json(json_text(model), fmt::format("{}: case {}: model", r.origin, c.id));
  } else {
    r.fail("model", "expected a preset name or a shape object");
  }
  c.model_name = j.contains("model_name") && j["model_name"].is_string() ? j["model_name"].get<std::string>() : c.model.name;
}

// The lengths' spread is drawn only where the case is simulated: a closed
// loop, or a load's e2e_s and percentiles (its tpot_s, ttft_s and throughput
// are read at the analytic operating point, of mean lengths).
void check_simulated_lengths(const Reader& r, const json& j, Metric metric, const char* key) {
  if (!j.contains("clients") && !j.contains("requests_per_second"))
    r.fail(key, "the spread of a simulated load's lengths: give clients or requests_per_second with it");
  if (!j.contains("clients") && !is_load_metric(metric))
    r.fail(key, fmt::format("{} at an offered load is read at the analytic operating point, of mean lengths: the lengths' spread is "
                            "drawn only where the case is simulated (clients, or e2e_s and the percentiles)",
                            to_string(metric)));
}

// A load's lengths drawn lognormal from their mean and p95, as a benchmark's
// dataset gives them (ShareGPT-like prompts): `prompt_tokens_p95`,
// `output_tokens_p95`. Only under a simulated load, not with length_spread.
void read_length_p95s(const Reader& r, const json& j, Metric metric, InferenceRequest& q) {
  for (const char* k : {"prompt_tokens_p95", "output_tokens_p95"}) {
    if (!j.contains(k)) continue;
    check_simulated_lengths(r, j, metric, k);
    if (j.contains("length_spread")) r.fail(k, "lengths are uniform (length_spread) or lognormal (a p95), not both");
    const bool prompt = std::string_view(k) == "prompt_tokens_p95";
    const double mean = prompt ? q.prompt_tokens.value_or(0) : q.output_tokens.value_or(0);
    const double p95 = r.number(j, k, 1, 1e7);
    if (p95 < mean) r.fail(k, fmt::format("{:g} is below the mean, {:g}", p95, mean));
    (prompt ? q.prompt_tokens_p95 : q.output_tokens_p95) = p95;
  }
}

// A serving case: the request shape, the engine, the layout it ran.
void read_inference_case(const Reader& r, const json& j, ValidationCase& c) {
  if (!is_serving_metric(c.metric))
    r.fail("metric", "an inference case measures output_tokens_per_second, tpot_s, ttft_s, e2e_s or a percentile (ttft_p90_s ... e2e_p99_s)");
  InferenceRequest q;
  q.mode = ServingMode::offline;
  q.prompt_tokens = r.number(j, "prompt_tokens", 1, 1e7);
  q.output_tokens = r.number(j, "output_tokens", 1, 1e7);
  // Time per output token is the gap between tokens: a mean below two has none to measure.
  const bool per_token = c.metric == Metric::tpot_s || c.metric == Metric::tpot_p90_s || c.metric == Metric::tpot_p99_s;
  if (per_token && q.output_tokens < 2) r.fail("output_tokens", "a time per output token needs at least 2 output tokens");
  auto wf = weight_format_from_string(c.precision);
  if (!wf) r.fail("precision", "expected bf16, fp16, fp8, int8, int4 or fp4");
  q.weights = *wf;
  const std::string kv = r.name(j, "kv_cache");
  if (kv == "fp8") q.kv_cache = Precision::fp8;
  else if (kv == "bf16" || kv == "fp16") q.kv_cache = Precision::bf16;
  else if (!kv.empty() && kv != "auto") r.fail("kv_cache", "expected auto, bf16 or fp8");
  q.concurrency = r.integer(j, "concurrency", 1, 1000000);
  q.compiled_batch = r.integer(j, "compiled_batch", 1, 4096);
  q.scheduler_recv_interval = r.integer(j, "scheduler_recv_interval", 1, 1000);
  q.max_batched_tokens = r.integer(j, "max_batched_tokens", kFewestBatchedTokens, kMostBatchedTokens);
  q.attention_dp_balance_iters = r.integer(j, "attention_dp_balance_iters", 1, 1000);
  if (j.contains("requests_per_second")) {
    q.requests_per_second = r.number(j, "requests_per_second", kLeastRequestsPerSecond, kMostRequestsPerSecond);
    if (j.contains("batch")) r.fail("requests_per_second", "a case measured at an offered load has no fixed batch (the load sets it)");
  }
  if (j.contains("speculative")) {
    const std::string spec = r.text(j, "speculative");
    try {
      q.speculative = parse_speculative(spec, "speculative");
    } catch (const InputError& e) {
      r.fail("speculative", e.what());
    }
  }
  c.engine = lower_case(r.name(j, "engine"));  // as --engine: case is ignored
  c.engine_version = r.text(j, "engine_version", false);
  // A release read from engine_version picks an engine's figures only where `engine` names it: a text that
  // names one with releases while `engine` is absent would be silently run at the accelerator's default.
  if (c.engine.empty())
    for (const EngineProfile& e : engine_profiles())
      if (!e.releases.empty() && release_number_in(c.engine_version, e.name) && lower_case(c.engine_version).find(e.name) != std::string::npos)
        r.fail("engine", fmt::format("engine_version names {} and a release; give \"engine\": \"{}\" so the release's figures are used "
                                     "(without it the accelerator's default engine runs at its current profile)",
                                     e.name, e.name));
  if (!c.engine.empty()) {
    q.engine = find_engine(c.engine);
    if (!q.engine) r.fail("engine", fmt::format("'{}' is not one of {}", c.engine, engine_names()));
    // The release measured, where the engine's figures change with it (vLLM before 0.14); free text without a number: the current profile.
    const auto release = release_number_in(c.engine_version, q.engine->name);
    if (!q.engine->releases.empty() && release) {
      try {
        q.engine = &engine_release(*q.engine, *release, "its release");
      } catch (const InputError& e) {
        r.fail("engine_version", e.what());
      }
    }
  }
  if (q.scheduler_recv_interval && (!q.engine || q.engine->name != "sglang"))
    r.fail("scheduler_recv_interval", "is SGLang's server setting: the case's engine must be sglang");
  if (q.attention_dp_balance_iters && (!q.engine || q.engine->name != "trtllm"))
    r.fail("attention_dp_balance_iters", "is TensorRT-LLM's attention_dp_config: the case's engine must be trtllm");
  if (q.max_batched_tokens && q.engine && !q.engine->continuous_batching)
    r.fail("max_batched_tokens", fmt::format("{} runs one batch at a time: it has no token budget per step", q.engine->name));
  read_length_p95s(r, j, c.metric, q);
  try {
    c.inference = make_inference_workload(q);
  } catch (const InputError& e) {
    // The workload speaks in flags ("--prompt-tokens-p95: ..."): named by the case's field of that name.
    const std::string what = e.what();
    const size_t colon = what.find(": ");
    if (what.rfind("--", 0) == 0 && colon != std::string::npos && what.find(' ') > colon) {
      r.fail(flags_as_fields(what.substr(0, colon)), flags_as_fields(what.substr(colon + 2)));
    }
    r.fail("inference", what);
  }
  c.tp = r.integer(j, "tp", 1, 4096).value_or(0);
  c.pp = r.integer(j, "pp", 1, 4096).value_or(1);
  // The layout as measured: plain tensor parallel unless the case says otherwise.
  c.ep = r.integer(j, "ep", 1, 4096).value_or(1);
  c.attention_dp = r.integer(j, "attention_dp", 1, 4096).value_or(1);
  if ((c.ep > 1 || c.attention_dp > 1) && c.tp == 0) r.fail("ep", "an expert-parallel case gives its tp (the accelerators of one replica) too");
  if (c.inference.attention_dp_balance_iters && c.attention_dp < 2)
    r.fail("attention_dp_balance_iters", "balances attention data-parallel ranks: the case's attention_dp must be at least 2");
  check_case_layout(r, c);
  c.batch = r.integer(j, "batch", 1, 1000000);
  c.clients = r.integer(j, "clients", 1, 100000);
  c.inference.clients = c.clients;
  if (c.clients && (c.batch || c.inference.requests_per_second))
    r.fail("clients", "a closed loop of clients sets the batch and the rate itself: no batch or requests_per_second with it");
  if (j.contains("length_spread")) {
    check_simulated_lengths(r, j, c.metric, "length_spread");
    c.inference.length_spread = r.number(j, "length_spread", 0, 0.99);
  }
  // The requests the benchmark sent (bench_serving's --num-prompts): a short
  // closed loop's first wave, every client's prompt at once, weighs in its means.
  if (const auto n = r.integer(j, "requests", 10, 1000000)) {
    if (!c.clients && !c.inference.requests_per_second) r.fail("requests", "the requests a load sent: give clients or requests_per_second with it");
    if (c.clients && *n < *c.clients) r.fail("requests", "fewer requests than clients: some clients would never send one");
    c.inference.simulated_requests = *n;
  }
  if (is_load_metric(c.metric) && !c.clients && !c.inference.requests_per_second)
    r.fail("metric", fmt::format("{} is measured under a load: give clients or requests_per_second", to_string(c.metric)));
}

// A training case's layout, as published (what it leaves out keeps the defaults).
void read_case_layout(const Reader& r, const json& l, LayoutConstraints& layout) {
  if (!l.is_object()) r.fail("layout", "expected an object");
  if (auto v = r.integer(l, "tp", 1, 4096)) layout.tp = *v;
  if (auto v = r.integer(l, "pp", 1, 4096)) layout.pp = *v;
  if (auto v = r.integer(l, "ep", 1, 4096)) layout.ep = *v;
  if (auto v = r.integer(l, "etp", 1, 4096)) layout.etp = *v;
  if (auto v = r.integer(l, "vp", 1, 4096)) layout.vp = *v;
  if (auto v = r.integer(l, "cp", 1, 4096)) layout.cp = *v;
  if (auto v = r.integer(l, "recompute_layers", 1, 100000)) layout.recompute_layers = *v;
  if (auto v = r.integer(l, "micro_batch", 1, 65536)) layout.micro_batch = *v;
  if (auto v = r.integer(l, "zero_stage", 0, 3)) layout.zero_stage = *v;
  const std::string rc = r.text(l, "recompute", false);
  if (!rc.empty()) {
    auto v = recompute_from_string(rc);
    if (!v) r.fail("layout.recompute", "expected none, selective or full");
    layout.recompute = *v;
  }
}

// A training case: the job's shape, precision, LoRA, attention kernel, stack and layout.
void read_training_case(const Reader& r, const json& j, ValidationCase& c) {
  auto task = task_from_string(c.task);
  if (!task) r.fail("task", "expected pretrain, finetune, lora, qlora, inference or rl");
  if (is_serving_metric(c.metric) || c.metric == Metric::rl_step_time_s)
    r.fail("metric", "a training case measures tokens_per_second_per_gpu, model_tflops_per_gpu, hardware_tflops_per_gpu or mfu");
  WorkloadRequest w;
  w.task = *task;
  w.seq_len = r.integer(j, "seq_len", 16, 10000000);
  if (!w.seq_len) r.fail("seq_len", "is missing");
  w.global_batch = r.integer(j, "global_batch", 1, 100000000);
  if (!w.global_batch) r.fail("global_batch", "is missing");
  w.tokens = 1e9;
  auto p = precision_from_string(c.precision);
  if (!p) r.fail("precision", "expected bf16, fp16, fp8 or fp4");
  w.precision = *p;
  if (auto rank = r.integer(j, "lora_rank", 1, 65536)) w.lora_rank = *rank;
  const std::string targets = r.text(j, "lora_targets", false);
  if (!targets.empty()) {
    auto t = lora_targets_from_string(targets);
    if (!t) r.fail("lora_targets", "expected attention or attention+mlp");
    w.lora_targets = *t;
  }
  if (j.contains("flash_attention")) {
    if (!j["flash_attention"].is_boolean()) r.fail("flash_attention", "expected true or false (false: the stack computed the full attention matrix)");
    w.flash_attention = j["flash_attention"].get<bool>();
  }
  c.framework = r.name(j, "framework");
  if (!c.framework.empty()) {
    w.framework = find_framework(c.framework);
    if (!w.framework) r.fail("framework", fmt::format("'{}' is not one of {}", c.framework, framework_names()));
  }
  c.training = make_workload(w, c.model);
  if (j.contains("layout")) read_case_layout(r, j["layout"], c.layout);
  // A published run without an expert tensor-parallel size ran at
  // Megatron-Core's default, --expert-tensor-parallel-size = tp: a folded
  // run had to set it, and its case says so (etp 1).
  if (!c.layout.etp) c.layout.etp = 0;
}

// A field of another task's case would be read as measured and never used:
// each is refused where its task cannot take it.
void refuse_other_tasks_fields(const Reader& r, const json& j, const ValidationCase& c) {
  if (!c.is_inference())
    for (const char* k : {"speculative", "clients", "requests", "length_spread", "prompt_tokens_p95", "output_tokens_p95", "requests_per_second",
                          "compiled_batch", "ep", "attention_dp", "scheduler_recv_interval", "max_batched_tokens", "attention_dp_balance_iters",
                          "prompt_tokens", "output_tokens", "kv_cache", "concurrency", "batch", "engine", "engine_version", "tp", "pp"})
      if (j.contains(k))
        r.fail(k, fmt::format("describes a serving load or engine: only an inference case takes it{}",
                              c.is_rl() && (std::string_view(k) == "prompt_tokens") ? " (an RL case's lengths are in its 'rl' object)" : ""));
  if (c.is_inference())
    for (const char* k : {"rl", "stages", "framework", "seq_len", "global_batch", "layout", "lora_rank", "lora_targets", "flash_attention"})
      if (j.contains(k)) r.fail(k, "describes a training or RL run: an inference case does not take it");
  if (c.is_rl())
    for (const char* k : {"framework", "seq_len", "global_batch", "layout", "lora_rank", "lora_targets", "flash_attention"})
      if (j.contains(k)) r.fail(k, "describes a training run: an RL case takes its shape in its 'rl' object and its stages in 'stages'");
  if (!c.is_rl() && !c.is_inference()) {
    for (const char* k : {"rl", "stages"})
      if (j.contains(k)) r.fail(k, "describes an RL step: only an rl case takes it");
    const bool adapters = c.task == "lora" || c.task == "qlora";
    for (const char* k : {"lora_rank", "lora_targets"})
      if (!adapters && j.contains(k)) r.fail(k, fmt::format("describes LoRA adapters: a {} case trains none (task lora or qlora)", c.task));
  }
}

// `source_families`: [{"family": NAME, "sources": [SOURCE_KEY, ...], "why": TEXT}]:
// each source in one family at most; a source in none is a family of its own.
std::map<std::string, std::string> read_source_families(const std::string& origin, const json& doc) {
  std::map<std::string, std::string> family_of_source;
  if (!doc.contains("source_families")) return family_of_source;
  const json& families = doc["source_families"];
  auto fail = [&](const std::string& what) { throw InputError(fmt::format("{}: source_families: {}", origin, what)); };
  if (!families.is_array()) fail("expected a list of {\"family\", \"sources\", \"why\"} objects");
  std::set<std::string> names;
  for (const json& f : families) {
    if (!f.is_object()) fail("expected a list of {\"family\", \"sources\", \"why\"} objects");
    if (auto u = unknown_key(f, {"family", "sources", "why"})) fail(fmt::format("field '{}': {}", u->key, u->message));
    if (!f.contains("family") || !f["family"].is_string() || f["family"].get<std::string>().empty()) fail("each family needs a non-empty 'family' name");
    const std::string name = f["family"].get<std::string>();
    if (std::any_of(name.begin(), name.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }))
      fail("a family name holds a control character (a tab or a line break would break the tables)");
    if (!names.insert(name).second) fail(fmt::format("family '{}' is listed twice", name));
    if (!f.contains("why") || !f["why"].is_string() || f["why"].get<std::string>().empty())
      fail(fmt::format("family '{}' needs a 'why': what its sources share", name));
    if (!f.contains("sources") || !f["sources"].is_array() || f["sources"].empty()) fail(fmt::format("family '{}' needs a non-empty 'sources' list", name));
    for (const json& k : f["sources"]) {
      if (!k.is_string() || k.get<std::string>().empty()) fail(fmt::format("family '{}': each source is a source_key string", name));
      if (!family_of_source.emplace(k.get<std::string>(), name).second)
        fail(fmt::format("source '{}' is in two families ('{}' and '{}')", k.get<std::string>(), family_of_source[k.get<std::string>()], name));
    }
  }
  return family_of_source;
}

// Every source a family lists is a source of some case (a misspelt key would
// quietly leave its cases out of the family), and no family takes the name of
// a source outside it (a case of that source, a family of its own, would
// join it).
void check_source_families(const std::string& origin, const std::map<std::string, std::string>& family_of_source,
                           const std::vector<ValidationCase>& cases) {
  std::set<std::string> keys;
  for (const auto& c : cases) keys.insert(c.source_key);
  const std::vector<std::string> key_list(keys.begin(), keys.end());
  for (const auto& [source, family] : family_of_source)
    if (!keys.count(source)) {
      const auto near = nearest_names(source, key_list, 1);
      throw InputError(fmt::format("{}: source_families: family '{}' lists source '{}', which no case has as its source_key{}", origin, family,
                                   source, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near.front())));
    }
  for (const auto& [source, family] : family_of_source) {
    (void)source;
    const auto own = family_of_source.find(family);
    if (keys.count(family) && (own == family_of_source.end() || own->second != family))
      throw InputError(fmt::format("{}: source_families: family '{}' has the name of a source outside it; name the family otherwise", origin, family));
  }
}

}  // namespace

std::vector<ValidationCase> read_cases(const std::string& origin, const std::string& text) {
  const json doc = parse_json_input(text, origin);
  if (!doc.is_object() || !doc.contains("cases") || !doc["cases"].is_array())
    throw InputError(fmt::format("{}: expected an object with a 'cases' list", origin));
  if (auto u = unknown_key(doc, {"schema_version", "description", "source_families", "cases"}))
    throw InputError(fmt::format("{}: field '{}': {}", origin, u->key, u->message));
  // Version 1 is the case format docs/validation.md describes; a file written for another would be read wrong.
  if (doc.contains("schema_version") && doc["schema_version"] != 1)
    throw InputError(fmt::format("{}: schema_version {}: this gpuadvisor reads case files of schema_version 1 (docs/validation.md)", origin,
                                 json_text(doc["schema_version"])));
  if (doc["cases"].empty()) throw InputError(fmt::format("{}: the 'cases' list is empty: there is nothing to validate", origin));
  const std::map<std::string, std::string> family_of_source = read_source_families(origin, doc);
  std::vector<ValidationCase> out;
  std::set<std::string> ids;
  for (size_t index = 0; index < doc["cases"].size(); ++index) {
    const json& j = doc["cases"][index];
    Reader r{origin, ""};
    if (!j.is_object())
      throw InputError(fmt::format("{}: cases[{}]: expected a case (an object), not {}", origin, index, j.type_name()));
    ValidationCase c;
    c.id = r.text(j, "id");
    if (c.id.find_first_not_of(" \t") == std::string::npos) r.fail("id", "is empty: each case needs an id its errors and results are named by");
    r.id = c.id;
    r.known_keys(j, kCaseKeys);
    if (j.contains("layout")) r.known_keys(j["layout"], kLayoutKeys, "layout.");
    if (!ids.insert(c.id).second) r.fail("id", "duplicate case id");
    read_case_common(r, j, c);
    const auto family = family_of_source.find(c.source_key);
    c.family = family == family_of_source.end() ? c.source_key : family->second;
    // An unusable case is kept for the record, not run: nothing more is read.
    if (c.usable && c.is_rl()) read_rl_case(r, j, c);
    else if (c.usable && c.is_inference()) read_inference_case(r, j, c);
    else if (c.usable) read_training_case(r, j, c);
    refuse_other_tasks_fields(r, j, c);
    out.push_back(std::move(c));
  }
  check_source_families(origin, family_of_source, out);
  return out;
}

namespace {

// One RL step on the case's cluster and placement; each measured stage beside its prediction.
void predict_rl(const ValidationCase& c, const Instance& inst, const Accelerator& acc, CaseResult& r) {
  if (auto p = accelerator_problem(acc, c.rl.update)) {
    r.problem = *p;
    return;
  }
  RlEvaluation ev = estimate_rl(c.model, c.rl, Cluster{&inst, &acc, c.instances}, *c.rl.placement, c.rollout_instances);
  if (!ev.estimate) {
    r.problem = "the model cannot run it as described: " + ev.problem;
    return;
  }
  const RlEstimate& e = *ev.estimate;
  r.predicted = e.step_time_s;
  for (const auto& [name, measured] : c.stages_measured) {
    const double predicted = name == "generation_s" ? e.generation.seconds
                             : name == "scoring_s"  ? e.scoring.seconds
                             : name == "training_s" ? e.training.seconds
                                                    : e.weight_sync_s;
    r.stages.push_back({name, measured, predicted, (predicted - measured) / measured});
  }
}


// A serving case measured under a load (a closed loop of clients, or an
// offered rate on one replica): one replica simulated step by step
// (docs/methodology.md §Serving under load).
static void predict_under_load(const ValidationCase& c, const Cluster& cluster, const InferenceEstimate& e, CaseResult& r) {
  const std::optional<ServingLoad> load = serving_load(c.inference, c.inference.requests_per_second);
  const ServiceMetrics m = simulate_service(c.model, c.inference, cluster, e, *load).metrics;
  if (m.saturated) {
    // A closed loop saturates only by running out of steps (its clients bound the queue).
    r.problem = c.clients ? fmt::format("saturated under the model: the simulation stopped at its limit of {} engine rounds with {} of {} "
                                        "requests unfinished ({} clients)",
                                        kMaxSchedulerRounds, m.unfinished, m.requests, *c.clients)
                          : fmt::format("saturated under the model: {:.3g} requests/s offered, {:.3g} served in the simulation",
                                        *c.inference.requests_per_second, m.requests_per_second);
    return;
  }
  switch (c.metric) {
    case Metric::output_tokens_per_second: r.predicted = m.output_tokens_per_second; break;
    case Metric::tpot_s: r.predicted = m.tpot_s.mean; break;
    case Metric::ttft_s: r.predicted = m.ttft_s.mean; break;
    case Metric::e2e_s: r.predicted = m.e2e_s.mean; break;
    case Metric::ttft_p90_s: r.predicted = m.ttft_s.p90; break;
    case Metric::ttft_p99_s: r.predicted = m.ttft_s.p99; break;
    case Metric::tpot_p90_s: r.predicted = m.tpot_s.p90; break;
    case Metric::tpot_p99_s: r.predicted = m.tpot_s.p99; break;
    case Metric::e2e_p90_s: r.predicted = m.e2e_s.p90; break;
    case Metric::e2e_p99_s: r.predicted = m.e2e_s.p99; break;
    default: break;
  }
}

}  // namespace

CaseResult predict_case(const ValidationCase& c, const Catalog& catalog) {
  CaseResult r;
  r.c = &c;
  const Instance* inst = catalog.find_instance(c.system);
  if (!inst) {
    r.problem = fmt::format("system '{}' is not in the catalog (load data/validation/systems.json)", c.system);
    return r;
  }
  const Accelerator& acc = catalog.accelerator_of(*inst);
  r.accelerator = acc.name;
  if (!c.usable) return r;
  if (c.is_rl()) {
    predict_rl(c, *inst, acc, r);
  } else if (c.is_inference()) {
    if (auto p = serving_accelerator_problem(acc, c.inference)) {
      r.problem = *p;
      return r;
    }
    // A layout the case names that the model cannot run (tp 3 on 8 accelerators)
    // is the case's problem, not the memory's.
    if (c.tp)
      if (auto p = serving_layout_problem(c.model, Cluster{inst, &acc, c.pp}, ServingLayout{c.tp, c.pp, c.ep, c.attention_dp})) {
        r.problem = "the case's layout is not one the model runs: " + *p;
        return r;
      }
    const LayoutRequest layout{c.tp ? std::optional<int>(c.tp) : std::nullopt, c.ep, c.attention_dp};
    const ServingChoice choice = choose_serving_layout(c.model, c.inference, *inst, acc, c.pp, layout, c.batch);
    if (!choice.row || !choice.problem.empty()) {
      r.problem = "the model cannot run it as described: " + choice.problem;
      return r;
    }
    // Cases with clients, and every latency distribution, go through the
    // simulator; the older at-rate cases (tpot_s at requests_per_second) keep
    // the analytic operating point below until the accuracy table moves with
    // them (docs/validation.md §Under load).
    if (c.clients || is_load_metric(c.metric)) {
      predict_under_load(c, Cluster{inst, &acc, choice.row->estimate.layout.pp}, choice.row->estimate, r);
      if (r.predicted) r.error = (*r.predicted - c.measured) / c.measured;
      return r;
    }
    const InferenceEstimate* best = &choice.row->estimate;
    // Measured at an offered load on one replica: the operating point that
    // load keeps in flight (Little's law), as recommend reports it.
    ServingRow at_load = *choice.row;
    if (c.inference.requests_per_second) {
      at_load.replicas = 1;
      at_load.utilisation = *c.inference.requests_per_second / best->requests_per_second;
      if (at_load.utilisation >= 1) {
        r.problem = fmt::format("saturated under the model: {:.3g} requests/s offered, {:.3g} predicted capacity",
                                *c.inference.requests_per_second, best->requests_per_second);
        return r;
      }
      operating_point(at_load, c.model, c.inference);
      best = &at_load.at_load;
    }
    switch (c.metric) {
      case Metric::output_tokens_per_second: r.predicted = best->output_tokens_per_second; break;
      case Metric::tpot_s: r.predicted = best->tpot_s; break;
      // A TTFT measured with several prompts submitted together counts their joint prefill.
      case Metric::ttft_s:
        r.predicted = static_batch_ttft_s(c.model, c.inference, Cluster{inst, &acc, best->layout.pp}, *best, c.batch.value_or(1));
        break;
      default: break;
    }
  } else {
    if (auto p = accelerator_problem(acc, c.training)) {
      r.problem = *p;
      return r;
    }
    ClusterSearch s = search_cluster(c.model, c.training, Cluster{inst, &acc, c.instances}, c.layout);
    if (!s.best) {
      r.problem = "the model cannot run it as described: " + s.problem;
      return r;
    }
    const TrainingEstimate& e = *s.best;
    switch (c.metric) {
      case Metric::tokens_per_second_per_gpu: r.predicted = e.tokens_per_second_per_accelerator; break;
      // Published TFLOP/s and MFU count the whole attention matrix (PaLM, Narayanan, Llama 3).
      case Metric::model_tflops_per_gpu: r.predicted = e.model_flops_per_token_full_attention * e.tokens_per_second_per_accelerator / 1e12; break;
      case Metric::hardware_tflops_per_gpu: r.predicted = e.hardware_flops_per_token * e.tokens_per_second_per_accelerator / 1e12; break;
      case Metric::mfu: r.predicted = e.mfu * e.model_flops_per_token_full_attention / e.model_flops_per_token; break;
      default: break;
    }
  }
  if (r.predicted) r.error = (*r.predicted - c.measured) / c.measured;
  return r;
}

std::vector<CaseResult> run_cases(const std::vector<ValidationCase>& cases, const Catalog& catalog) {
  std::vector<CaseResult> out;
  for (const auto& c : cases) out.push_back(predict_case(c, catalog));
  return out;
}

std::vector<ErrorSummary> summarise(const std::vector<CaseResult>& results) {
  std::map<std::string, std::vector<double>> groups;
  std::vector<std::string> order{"all"};
  for (const auto& r : results) {
    if (!r.c->usable || !r.predicted) continue;
    const std::string task = r.c->task == "finetune" || r.c->task == "lora" || r.c->task == "qlora" ? "fine-tuning" : r.c->task;
    // RL steps compose the training and serving predictions with more
    // assumptions: their own group (and sources), not `all` or the accelerators.
    if (r.c->is_rl()) {
      for (const std::string& g : {"task: " + task, "source: " + r.c->source_key}) groups[g].push_back(r.error);
      continue;
    }
    for (const std::string& g : {std::string("all"), "task: " + task, "accelerator: " + r.accelerator, "source: " + r.c->source_key})
      groups[g].push_back(r.error);
  }
  std::vector<ErrorSummary> out;
  auto add = [&](const std::string& g) {
    const auto& v = groups[g];
    std::vector<double> a;
    for (double e : v) a.push_back(std::fabs(e));
    out.push_back({g, static_cast<int>(v.size()), percentile(a, 0.5), percentile(a, 0.9), percentile(v, 0.5)});
  };
  if (groups.count("all")) add("all");
  for (const char* prefix : {"task: ", "accelerator: ", "source: "})
    for (const auto& [g, v] : groups)
      if (g.rfind(prefix, 0) == 0) add(g);
  return out;
}

std::vector<ErrorSummary> summarise_by_metric(const std::vector<CaseResult>& results) {
  std::map<Metric, std::vector<double>> groups;
  for (const auto& r : results)
    if (r.c->usable && r.predicted && !r.c->is_rl()) groups[r.c->metric].push_back(r.error);
  std::vector<ErrorSummary> out;
  for (const auto& [metric, v] : groups) {
    std::vector<double> a;
    for (double e : v) a.push_back(std::fabs(e));
    out.push_back({"metric: " + std::string(to_string(metric)), static_cast<int>(v.size()), percentile(a, 0.5), percentile(a, 0.9), percentile(v, 0.5)});
  }
  return out;
}

namespace {

// Accelerators that share one fitted compute fraction: the same silicon with
// different memory or power (the catalog's same_silicon_as: A100-40GB and
// A100-80GB are both GA100; fitting them apart let two MosaicML cases set
// A100-40GB at 0.77 against 0.62 for the 80 GB part, and the 40 GB part then
// out-ranked H100). Memory and all-reduce figures stay per accelerator.
std::string fit_group(const Catalog& catalog, const std::string& accelerator, const std::string& parameter) {
  const Accelerator* a = catalog.find_accelerator(accelerator);
  if (a && !a->same_silicon_as.empty() && parameter.rfind("compute_max_fraction.", 0) == 0) return a->same_silicon_as;
  return accelerator;
}

// The parameters a case depends on, as (fit group, parameter) keys.
std::vector<std::pair<std::string, std::string>> parameters_of(const ValidationCase& c, const Catalog& catalog) {
  std::vector<std::pair<std::string, std::string>> out;
  const Instance* inst = catalog.find_instance(c.system);
  if (!inst || !c.usable || c.is_rl()) return out;  // RL cases are never fitted: they check the composition out of sample
  const Accelerator& acc = catalog.accelerator_of(*inst);
  if (c.is_inference()) {
    auto p = serving_precision(acc, c.inference.weights);
    if (!p) return out;
    const std::string compute = "compute_max_fraction." + std::string(to_string(p->compute));
    if (c.metric == Metric::ttft_s) out.push_back({fit_group(catalog, acc.name, compute), compute});
    else out.push_back({acc.name, "memory_bandwidth_fraction"});
    if (c.metric == Metric::output_tokens_per_second) out.push_back({fit_group(catalog, acc.name, compute), compute});
    if (c.metric != Metric::ttft_s && tensor_parallel_ranks(acc, c.tp) > 1) out.push_back({acc.name, "all_reduce_latency_us"});
    if (c.metric != Metric::ttft_s && c.batch.value_or(1) > 1 && decode_sequence_layer_s(acc) > 0) out.push_back({acc.name, "sequence_layer_us"});
  } else {
    auto p = effective_precision(acc, c.training.precision);
    if (p) {
      const std::string compute = "compute_max_fraction." + std::string(to_string(*p));
      out.push_back({fit_group(catalog, acc.name, compute), compute});
    }
  }
  return out;
}

double& parameter_ref(Accelerator& a, const std::string& name) {
  if (name == "memory_bandwidth_fraction") return a.efficiency.memory_bandwidth_fraction;
  if (name == "all_reduce_latency_us") {
    if (a.efficiency.all_reduce_latency_us <= 0) a.efficiency.all_reduce_latency_us = serving_all_reduce_latency_s(a) * 1e6;
    return a.efficiency.all_reduce_latency_us;
  }
  if (name == "sequence_layer_us") {
    if (a.efficiency.sequence_layer_us <= 0) a.efficiency.sequence_layer_us = decode_sequence_layer_s(a) * 1e6;
    return a.efficiency.sequence_layer_us;
  }
  const std::string p = name.substr(name.find('.') + 1);
  const Precision precision = *precision_from_string(p);
  auto& m = a.efficiency.compute_max_fraction;
  if (!m.count(precision)) m[precision] = max_compute_fraction(a, precision);
  return m[precision];
}

// The two latencies (microseconds, rounded to 0.1) rather than fractions.
bool is_latency(const std::string& parameter) { return parameter == "all_reduce_latency_us" || parameter == "sequence_layer_us"; }

// Sets a parameter on every accelerator of its fit group.
void set_parameter(Catalog& catalog, const std::string& group, const std::string& parameter, double x) {
  for (Accelerator& a : catalog.accelerators)
    if (fit_group(catalog, a.name, parameter) == group) {
      parameter_ref(a, parameter) = x;
      // fp16 and bf16 run at the same tensor rate on the same units: one fraction.
      if (parameter == "compute_max_fraction.bf16" && a.efficiency.compute_max_fraction.count(Precision::fp16))
        a.efficiency.compute_max_fraction[Precision::fp16] = x;
    }
}

// The loss of the cases on the accelerators of one fit group, plus the pull
// toward the parameter's prior.
double fit_loss(Catalog& catalog, const std::vector<ValidationCase>& cases, const FittedParameter& f, const ParameterPrior& prior) {
  const double x = parameter_ref(*const_cast<Accelerator*>(catalog.find_accelerator(f.accelerator)), f.parameter);
  double sum = kPriorWeight * std::pow(std::log(x / prior.value) / prior.log_width, 2);
  for (const auto& c : cases) {
    const Instance* inst = catalog.find_instance(c.system);
    if (!c.usable || c.is_rl() || !inst || fit_group(catalog, inst->accelerator_name, f.parameter) != f.accelerator) continue;
    CaseResult r = predict_case(c, catalog);
    sum += r.predicted && *r.predicted > 0 ? std::fabs(std::log(*r.predicted / c.measured)) : 3.0;
  }
  return sum;
}

// Golden-section search within the prior's physical bounds; sets and returns
// the best point seen, rounded.
double fit_parameter(Catalog& catalog, const std::vector<ValidationCase>& cases, const FittedParameter& f, const ParameterPrior& prior) {
  auto loss_at = [&](double x) {
    set_parameter(catalog, f.accelerator, f.parameter, x);
    return fit_loss(catalog, cases, f, prior);
  };
  const double g = (std::sqrt(5.0) - 1) / 2;
  double lo = prior.lower, hi = prior.upper;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = loss_at(x1), f2 = loss_at(x2);
  for (int i = 0; i < 18; ++i) {
    if (f1 <= f2) {
      hi = x2, x2 = x1, f2 = f1, x1 = hi - g * (hi - lo), f1 = loss_at(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2, x2 = lo + g * (hi - lo), f2 = loss_at(x2);
    }
  }
  const double best = f1 <= f2 ? x1 : x2;
  const double value = is_latency(f.parameter) ? std::round(best * 10) / 10 : std::round(best * 1000) / 1000;
  set_parameter(catalog, f.accelerator, f.parameter, value);
  return value;
}

// fp16 follows bf16 (one tensor rate): pooled under one name.
std::string pooled_name(const std::string& parameter) {
  return parameter == "compute_max_fraction.fp16" ? "compute_max_fraction.bf16" : parameter;
}

// The median of the values fitted for a parameter on the other fit groups of
// the group's software stack with at least kMinCasesToPool cases.
std::optional<double> pooled_value(const Catalog& catalog, const std::vector<FittedParameter>& fitted, const std::string& group,
                                   const std::string& parameter) {
  const Accelerator& a = *catalog.find_accelerator(group);
  const bool latency = is_latency(parameter);
  std::vector<double> values;
  for (const auto& f : fitted) {
    const Accelerator& b = *catalog.find_accelerator(f.accelerator);
    if (pooled_name(f.parameter) == pooled_name(parameter) && f.accelerator != group && f.cases >= kMinCasesToPool &&
        b.software == a.software && (!latency || (a.link_kind == "nvswitch" && b.link_kind == "nvswitch")))
      values.push_back(f.after);
  }
  if (values.empty()) return std::nullopt;
  return percentile(values, 0.5);
}
}  // namespace

ParameterPrior pooled_prior(const Catalog& catalog, const std::vector<FittedParameter>& fitted, const std::string& group,
                            const std::string& parameter) {
  ParameterPrior prior = parameter_prior(*catalog.find_accelerator(group), parameter);
  if (auto v = pooled_value(catalog, fitted, group, parameter)) prior.value = std::clamp(*v, prior.lower, prior.upper);
  return prior;
}

std::vector<FittedParameter> calibrate(Catalog& catalog, const std::vector<ValidationCase>& cases) {
  std::map<std::pair<std::string, std::string>, int> case_counts;
  for (const auto& c : cases)
    for (const auto& key : parameters_of(c, catalog)) ++case_counts[key];
  std::vector<FittedParameter> out;
  for (const auto& [key, n] : case_counts) {
    if (n < kMinCasesPerParameter) continue;  // one case would be memorised, not fitted
    Accelerator* a = const_cast<Accelerator*>(catalog.find_accelerator(key.first));
    out.push_back({key.first, key.second, parameter_ref(*a, key.second), 0, n});
  }
  // First toward the stack-wide priors, then toward the values the other
  // accelerators of the same stack reached (partial pooling).
  for (int pass = 0; pass < 3; ++pass)
    for (auto& f : out) f.after = fit_parameter(catalog, cases, f, parameter_prior(*catalog.find_accelerator(f.accelerator), f.parameter));
  const std::vector<FittedParameter> first = out;
  for (int pass = 0; pass < 3; ++pass)
    for (auto& f : out) f.after = fit_parameter(catalog, cases, f, pooled_prior(catalog, first, f.accelerator, f.parameter));
  // A parameter no case measures takes the pooled value (reported with 0 cases).
  for (const Accelerator& a : catalog.accelerators) {
    std::vector<std::string> names{"memory_bandwidth_fraction"};  // latencies: only where measured
    for (const auto& [p, v] : a.efficiency.compute_max_fraction)
      if (!(p == Precision::fp16 && a.efficiency.compute_max_fraction.count(Precision::bf16)))
        names.push_back("compute_max_fraction." + std::string(to_string(p)));
    for (const auto& name : names) {
      const std::string group = fit_group(catalog, a.name, name);
      const bool known = std::any_of(out.begin(), out.end(), [&](const FittedParameter& f) {
        return f.accelerator == group && pooled_name(f.parameter) == pooled_name(name);
      });
      const auto value = known ? std::nullopt : pooled_value(catalog, first, group, name);
      if (!value) continue;
      out.push_back({group, name, parameter_ref(*const_cast<Accelerator*>(catalog.find_accelerator(group)), name), *value, 0});
      set_parameter(catalog, group, name, *value);
    }
  }
  return out;
}

ParameterPrior parameter_prior(const Accelerator& acc, const std::string& parameter) {
  if (parameter == "memory_bandwidth_fraction") return {kPriorMemoryFraction, 0.50, 0.95, 0.25};
  if (parameter == "all_reduce_latency_us") {
    Accelerator bare = acc;
    bare.efficiency.all_reduce_latency_us = 0;
    return {serving_all_reduce_latency_s(bare) * 1e6, 3, 300, 2.0};
  }
  if (parameter == "sequence_layer_us") return {kNeuronSequenceLayerS * 1e6, 2, 200, 1.0};
  const std::string p = parameter.substr(parameter.find('.') + 1);
  const double value = p == "fp8" || p == "int8" ? kPriorComputeFraction8 : p == "fp4" ? kPriorComputeFraction4 : kPriorComputeFraction16;
  return {value, 0.15, 0.90, 0.5};
}

void reset_to_prior(Catalog& catalog) {
  for (Accelerator& a : catalog.accelerators) {
    for (auto& [p, v] : a.efficiency.compute_max_fraction)
      v = p == Precision::fp8 || p == Precision::int8 ? kPriorComputeFraction8 : p == Precision::fp4 ? kPriorComputeFraction4 : kPriorComputeFraction16;
    a.efficiency.memory_bandwidth_fraction = kPriorMemoryFraction;
    a.efficiency.all_reduce_latency_us = 0;
    a.efficiency.sequence_layer_us = 0;
  }
}

ResultCounts count_results(const std::vector<CaseResult>& results) {
  ResultCounts n;
  for (const auto& r : results) {
    ++n.total;
    if (!r.c->usable) continue;
    ++n.usable;
    (r.predicted ? n.predicted : n.disagreements)++;
  }
  return n;
}

namespace {

// One source's fold: fitted without it, its cases predicted by that fit, by
// the fit with every source, and by the priors.
struct Fold {
  std::optional<SourceCheck> check;  // empty: no usable case predicted
  std::vector<CaseResult> without, with_all;
};

// What a fold leaves out: a source, or a family of sources.
using HeldOutKey = const std::string& (*)(const ValidationCase&);
const std::string& source_of(const ValidationCase& c) { return c.source_key; }
const std::string& family_of(const ValidationCase& c) { return c.family; }

Fold run_fold(const std::string& src, HeldOutKey key, const std::vector<ValidationCase>& cases, const Catalog& priors, const Catalog& all) {
  std::vector<ValidationCase> train;
  std::vector<const ValidationCase*> test;
  for (const auto& c : cases) {
    if (key(c) != src) train.push_back(c);
    else if (!c.is_rl()) test.push_back(&c);  // RL cases are never fitted: the folds score what the fit serves
  }
  Catalog fitted = priors;
  calibrate(fitted, train);
  Fold f;
  std::vector<CaseResult> at_priors;
  for (const ValidationCase* c : test) {
    f.without.push_back(predict_case(*c, fitted));
    f.with_all.push_back(predict_case(*c, all));
    at_priors.push_back(predict_case(*c, priors));
  }
  const auto s_without = summarise(f.without);
  if (!s_without.empty())
    f.check = SourceCheck{src, s_without[0].cases, s_without[0].median_abs, summarise(f.with_all)[0].median_abs, summarise(at_priors)[0].median_abs};
  return f;
}

// The folds share nothing they write: each fits its own copy of the catalog.
// Threads take the next fold in turn; results are kept by fold, so the
// answer is the same bytes for any number of threads.
std::vector<Fold> run_folds(const std::vector<std::string>& sources, HeldOutKey key, const std::vector<ValidationCase>& cases,
                            const Catalog& priors, const Catalog& all, int jobs) {
  std::vector<Fold> folds(sources.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < sources.size(); i = next++) folds[i] = run_fold(sources[i], key, cases, priors, all);
  };
  const int threads = std::clamp(jobs, 1, static_cast<int>(std::max<size_t>(1, sources.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return folds;
}

LeaveOneSourceOut leave_one_out(const std::vector<ValidationCase>& cases, Catalog catalog, int jobs, HeldOutKey key, HeldOutBy by) {
  std::set<std::string> source_set;
  for (const auto& c : cases)
    if (c.usable && !c.is_rl()) source_set.insert(key(c));  // RL cases are never fitted
  const std::vector<std::string> sources(source_set.begin(), source_set.end());
  reset_to_prior(catalog);
  Catalog all = catalog;
  calibrate(all, cases);
  LeaveOneSourceOut out;
  out.held_out_by = by;
  for (Fold& f : run_folds(sources, key, cases, catalog, all, jobs)) {
    if (!f.check) continue;
    out.sources.push_back(*f.check);
    out.held_out.insert(out.held_out.end(), f.without.begin(), f.without.end());
    out.in_sample.insert(out.in_sample.end(), f.with_all.begin(), f.with_all.end());
  }
  return out;
}

}  // namespace

LeaveOneSourceOut leave_one_source_out(const std::vector<ValidationCase>& cases, Catalog catalog, int jobs) {
  return leave_one_out(cases, std::move(catalog), jobs, source_of, HeldOutBy::source);
}

LeaveOneSourceOut leave_one_family_out(const std::vector<ValidationCase>& cases, Catalog catalog, int jobs) {
  return leave_one_out(cases, std::move(catalog), jobs, family_of, HeldOutBy::family);
}

std::string efficiency_overlay(const Catalog& catalog, const std::vector<FittedParameter>& fitted, const std::string& note) {
  ordered_json overlay;
  overlay["description"] = note;
  overlay["sources"] = {{"CALIBRATED", {{"title", note}, {"url", "file:calibrate"}}}};
  ordered_json accs = ordered_json::array();
  std::set<std::string> names;
  for (const auto& f : fitted)
    for (const Accelerator& a : catalog.accelerators)
      if (f.cases > 0 && fit_group(catalog, a.name, f.parameter) == f.accelerator) names.insert(a.name);  // pooled ones keep the catalog's
  for (const auto& name : names) {
    const Accelerator& a = *catalog.find_accelerator(name);
    ordered_json e;
    for (const auto& [p, v] : a.efficiency.compute_max_fraction) e[std::string(to_string(p))] = v;
    e["memory_bandwidth"] = a.efficiency.memory_bandwidth_fraction;
    e["link"] = a.efficiency.link_fraction;
    if (a.efficiency.all_reduce_latency_us > 0) e["all_reduce_latency_us"] = a.efficiency.all_reduce_latency_us;
    if (a.efficiency.sequence_layer_us > 0) e["sequence_layer_us"] = a.efficiency.sequence_layer_us;
    e["source"] = "CALIBRATED";
    accs.push_back({{"name", name}, {"efficiency", e}});
  }
  overlay["accelerators"] = accs;
  return json_text(overlay, 1) + "\n";
}

}  // namespace gpuadvisor
