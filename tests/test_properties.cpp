// Property tests: thousands of random valid inputs (fixed seed, so the run is
// reproducible) through the estimators and the search, checking invariants:
// memory never negative, times positive and finite, cost = time x price, more
// instances never raise the least memory need, same input -> same output.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/workload/neuron.hpp"
#include "gpuadvisor/catalog/pricing.hpp"
#include "gpuadvisor/search/search.hpp"

using namespace gpuadvisor;

namespace {
const Catalog& cat() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}
bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

struct ShapeDraws {
  std::mt19937_64 rng{20261129};
  int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  double log_uniform(double lo, double hi) { return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng)); }
  template <typename T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(integer(0, static_cast<int>(v.size()) - 1))]; }
  ModelSpec model() {
    if (integer(0, 2) == 0) return model_from_param_count(log_uniform(1e8, 2e12));
    return pick(model_presets());
  }
  TrainingWorkload training(const ModelSpec& m) {
    WorkloadRequest r;
    r.task = static_cast<Task>(integer(0, 3));
    r.seq_len = 1 << integer(9, 14);
    r.global_batch = 1 << integer(0, 11);
    r.tokens = log_uniform(1e6, 1e12);
    r.precision = integer(0, 3) == 0 ? Precision::fp8 : Precision::bf16;
    return make_workload(r, m);
  }
  InferenceWorkload inference() {
    InferenceRequest r;
    r.prompt_tokens = std::round(log_uniform(1, 32768));
    r.output_tokens = std::round(log_uniform(1, 8192));
    r.samples = integer(1, 8);
    r.reasoning_tokens = integer(0, 1) ? 0 : std::round(log_uniform(1, 20000));
    r.weights = static_cast<WeightFormat>(integer(0, 4));
    r.kv_cache = integer(0, 1) ? Precision::bf16 : Precision::fp8;
    r.mode = integer(0, 1) ? ServingMode::online : ServingMode::offline;
    if (integer(0, 1)) r.requests_per_second = log_uniform(0.01, 1000);
    // A TPOT target needs a second token (one-token outputs refuse it).
    if (integer(0, 2) == 0 && r.output_tokens.value_or(2) + r.reasoning_tokens >= 2) r.max_tpot_s = log_uniform(0.005, 1);
    return make_inference_workload(r);
  }
};
}  // namespace

TEST_CASE("property: training estimates are finite, positive and deterministic (2,000 random inputs)") {
  ShapeDraws rnd;
  int feasible = 0;
  for (int i = 0; i < 2000; ++i) {
    ModelSpec m = rnd.model();
    TrainingWorkload w = rnd.training(m);
    const Instance& inst = rnd.pick(cat().instances);
    const Accelerator& acc = cat().accelerator_of(inst);
    if (accelerator_problem(acc, w)) continue;
    const int count = 1 << rnd.integer(0, 5);
    Cluster c{&inst, &acc, count};
    ClusterSearch s = search_cluster(m, w, c);
    INFO(m.name << " " << to_string(w.task) << " on " << count << " x " << inst.name);
    if (!s.best) {
      CHECK(!s.problem.empty());
      continue;
    }
    ++feasible;
    const TrainingEstimate& e = *s.best;
    const auto& mem = e.memory;
    for (double v : {mem.weights_gb, mem.gradients_gb, mem.optimizer_gb, mem.adapters_gb, mem.activations_gb, mem.logits_gb,
                     mem.workspace_gb, mem.reserve_gb})
      CHECK((std::isfinite(v) && v >= 0));
    CHECK(mem.total_gb() <= mem.capacity_gb);
    CHECK(finite_positive(e.step.total_s()));
    CHECK(finite_positive(e.total_hours));
    CHECK(finite_positive(e.tokens_per_second));
    CHECK((e.mfu > 0 && e.mfu < 1));
    // Every accelerator has one rank of the layout (context parallelism included).
    CHECK(e.layout.accelerators() == c.accelerators());
    CHECK((e.step.context_parallel_s >= 0 && e.step.elementwise_s > 0));
    // Twice as many instances never need more memory per accelerator, where
    // the global batch divides over every data-parallel size (a batch smaller
    // than the accelerators forces pipeline stages, which shard less).
    if (w.global_batch % (2 * c.accelerators()) == 0) {
      ClusterSearch more = search_cluster(m, w, Cluster{&inst, &acc, count * 2});
      if (more.smallest_need_gb > 0) CHECK(more.smallest_need_gb <= s.smallest_need_gb * (1 + 1e-9));
    }
    // Deterministic.
    ClusterSearch again = search_cluster(m, w, c);
    REQUIRE(again.best);
    CHECK(again.best->step.total_s() == e.step.total_s());
    CHECK(again.best->layout.tp == e.layout.tp);
  }
  CHECK(feasible > 200);
}

TEST_CASE("property: recommend's costs are time x instances x price (60 random jobs)") {
  ShapeDraws rnd;
  for (int i = 0; i < 60; ++i) {
    ModelSpec m = rnd.model();
    TrainingWorkload w = rnd.training(m);
    RecommendRequest r;
    r.max_instances = 1 << rnd.integer(0, 6);
    r.pricing = rnd.integer(0, 1) ? Pricing::spot : Pricing::on_demand;
    Recommendation rec = recommend(m, w, cat(), r);
    for (const auto& row : rec.rows) {
      CHECK(finite_positive(row.estimate.total_hours));
      if (row.on_demand_cost_usd)
        CHECK(*row.on_demand_cost_usd == Approx(*row.on_demand_usd_per_hour * row.count * row.estimate.total_hours));
      if (row.spot_cost_usd) CHECK(*row.spot_cost_usd == Approx(*row.spot_usd_per_hour * row.count * row.estimate.total_hours));
      CHECK(row.count <= r.max_instances);
    }
  }
}

TEST_CASE("property: inference estimates are finite, positive and within memory (2,000 random inputs)") {
  ShapeDraws rnd;
  int feasible = 0;
  for (int i = 0; i < 2000; ++i) {
    ModelSpec m = rnd.model();
    InferenceWorkload w = rnd.inference();
    const Instance& inst = rnd.pick(cat().instances);
    const Accelerator& acc = cat().accelerator_of(inst);
    if (serving_accelerator_problem(acc, w)) continue;
    const int tp = 1 << rnd.integer(0, 3);
    ServingLayout l{tp, 1};
    Cluster c{&inst, &acc, 1};
    if (serving_layout_problem(m, c, l)) continue;
    std::string problem;
    InferenceEstimate e = estimate_inference(m, w, c, l, std::nullopt, &problem);
    INFO(m.name << " on " << inst.name << " tp " << tp);
    if (!e.fits() || !problem.empty()) {
      CHECK(!problem.empty());
      continue;
    }
    ++feasible;
    CHECK((e.batch >= 1 && e.batch <= e.max_batch));
    CHECK(e.memory.total_gb() <= e.memory.capacity_gb * (1 + 1e-9));
    for (double v : {e.ttft_s, e.latency_s, e.output_tokens_per_second, e.requests_per_second, e.tokens_per_second_per_user})
      CHECK(finite_positive(v));
    // One-token outputs have no gap between tokens: a time per token of 0, and a latency past TTFT by the others' prefills.
    if (w.generated_tokens_per_sequence() < 2)
      CHECK((e.tpot_s == 0 && e.latency_s >= e.ttft_s));
    else
      CHECK((finite_positive(e.tpot_s) && e.latency_s > e.ttft_s));
    CHECK((e.prefill_share >= 0 && e.prefill_share < 1));
    if (w.max_tpot_s) CHECK(e.tpot_s <= *w.max_tpot_s * (1 + 1e-9));
    ServingRow row;
    row.instance = &inst;
    row.accelerator = &acc;
    row.estimate = e;
    size_service(row, w);
    CHECK(row.replicas >= 1);
    CHECK((row.utilisation > 0 && row.utilisation <= 1 + 1e-9));
    if (auto price = hourly_rate(inst, "us-east-1", Pricing::on_demand)) {
      ServingCost cost = serving_cost(row, w, price);
      CHECK(*cost.usd_per_hour == Approx(*price * row.instances));
      CHECK(finite_positive(*cost.usd_per_million_output_tokens));
    }
  }
  CHECK(feasible > 200);
}

TEST_CASE("Neuron rules: no recommendation on Trainium, Trainium2 or Inferentia2 uses a layout the Neuron stack cannot run") {
  RecommendRequest r;
  r.families = {"trn1", "trn1n", "trn2", "inf2"};
  r.max_instances = 8;
  r.all_counts = true;
  int neuron_rows = 0;
  for (const char* name : {"llama-2-7b", "llama-3-8b", "llama-3-70b", "mistral-7b", "qwen2.5-7b", "mixtral-8x7b"}) {
    const ModelSpec& m = *find_model_preset(name);
    for (Task task : {Task::pretrain, Task::finetune, Task::lora}) {
      WorkloadRequest wr;
      wr.task = task;
      wr.tokens = 1e9;
      const TrainingWorkload w = make_workload(wr, m);
      for (const auto& row : recommend(m, w, cat(), r).rows) {
        const Accelerator& acc = cat().accelerator_of(*row.instance);
        INFO(name << " " << to_string(task) << " " << row.instance->name << " tp " << row.estimate.layout.tp);
        CHECK_FALSE(neuron_layout_problem(acc, m, row.estimate.layout.tp, true));
        ++neuron_rows;
      }
    }
    InferenceRequest ir;
    ir.mode = ServingMode::offline;
    for (const auto& row : recommend_inference(m, make_inference_workload(ir), cat(), r).rows) {
      const Accelerator& acc = cat().accelerator_of(*row.instance);
      INFO(name << " serving " << row.instance->name << " tp " << row.estimate.layout.tp);
      CHECK_FALSE(neuron_layout_problem(acc, m, row.estimate.layout.tp, false));
      ++neuron_rows;
    }
  }
  CHECK(neuron_rows > 20);
  // The rules themselves, in NeuronCores (2 per Trainium/Inferentia2 chip, 4 logical per Trainium2 chip).
  const Accelerator& trn1 = *cat().find_accelerator("Trainium");
  const Accelerator& inf2 = *cat().find_accelerator("Inferentia2");
  const ModelSpec& llama = *find_model_preset("llama-3-70b");  // 64 heads, 8 KV heads
  CHECK(neuron_layout_problem(trn1, llama, 2, true));       // 4 NeuronCores: not a trn1 group size
  CHECK_FALSE(neuron_layout_problem(trn1, llama, 16, true));  // 32
  CHECK_FALSE(neuron_layout_problem(trn1, llama, 4, true));   // 8
  CHECK(neuron_layout_problem(trn1, *find_model_preset("qwen2.5-7b"), 4, true));  // 28 heads do not divide by 8 NeuronCores
  CHECK(neuron_layout_problem(inf2, llama, 8, false));        // 16 NeuronCores: not an Inferentia2 size
  CHECK_FALSE(neuron_layout_problem(inf2, llama, 12, false)); // 24: heads are padded for inference
  CHECK_FALSE(neuron_layout_problem(*cat().find_accelerator("H100-SXM"), llama, 2, true));
}
