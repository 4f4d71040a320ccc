#include <catch2/catch.hpp>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/search/search.hpp"

using namespace gpuadvisor;

namespace {
const Catalog& cat() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}
TrainingWorkload make(const ModelSpec& m, Task task, std::optional<double> tokens = std::nullopt) {
  WorkloadRequest r;
  r.task = task;
  r.tokens = tokens;
  return make_workload(r, m);
}
TrainingWorkload pretrain(const ModelSpec& m, int seq_len, int global_batch) {
  WorkloadRequest r;
  r.task = Task::pretrain;
  r.seq_len = seq_len;
  r.global_batch = global_batch;
  r.tokens = 1e9;
  return make_workload(r, m);
}
Cluster cluster(const char* name, int count) {
  const Instance* i = cat().find_instance(name);
  return Cluster{i, &cat().accelerator_of(*i), count};
}
}  // namespace

TEST_CASE("13B LoRA: one A10G cannot hold it, QLoRA fits, recommend ranks options") {
  ModelSpec m = model_from_param_count(13e9);
  TrainingWorkload lora = make(m, Task::lora);
  ClusterSearch s = search_cluster(m, lora, cluster("g5.2xlarge", 1));
  CHECK_FALSE(s.best);
  // bf16 base (26 GB) alone exceeds 22 GiB (23.6 GB).
  CHECK(s.smallest_need_gb > 26);
  CHECK(s.capacity_gb == Approx(23.62).epsilon(0.001));
  CHECK(s.problem.find("needs") != std::string::npos);
  CHECK(search_cluster(m, make(m, Task::qlora), cluster("g5.2xlarge", 1)).best);
  // One H100 fits it.
  CHECK(search_cluster(m, lora, cluster("p5.4xlarge", 1)).best);

  RecommendRequest r;
  r.sort_by = SortBy::pareto;
  r.all_counts = true;
  Recommendation rec = recommend(m, lora, cat(), r);
  REQUIRE(rec.rows.size() > 10);
  // Pareto rows come first, fastest first, and none dominates another.
  size_t pareto = 0;
  while (pareto < rec.rows.size() && rec.rows[pareto].pareto) ++pareto;
  REQUIRE(pareto > 0);
  for (size_t i = pareto; i < rec.rows.size(); ++i) CHECK_FALSE(rec.rows[i].pareto);
  for (size_t i = 1; i < pareto; ++i) {
    CHECK(rec.rows[i - 1].estimate.total_hours <= rec.rows[i].estimate.total_hours);
    CHECK(*rec.rows[i - 1].ranked_cost_usd >= *rec.rows[i].ranked_cost_usd);
  }
  // Cost = hours x instances x rate.
  for (const auto& row : rec.rows)
    if (row.on_demand_cost_usd)
      CHECK(*row.on_demand_cost_usd == Approx(std::max(row.estimate.total_hours, 1.0 / 60) * row.count * *row.on_demand_usd_per_hour));
  // Inferentia2 is reported, not silently dropped.
  bool inf2 = false;
  for (const auto& x : rec.rejections) inf2 |= x.instance == "inf2.xlarge";
  CHECK(inf2);
}

TEST_CASE("sorting by cost and by time") {
  ModelSpec m = *find_model_preset("llama-3-8b");
  TrainingWorkload w = make(m, Task::finetune);
  RecommendRequest r;
  r.sort_by = SortBy::cost;
  Recommendation byCost = recommend(m, w, cat(), r);
  for (size_t i = 1; i < byCost.rows.size(); ++i)
    CHECK(byCost.rows[i - 1].ranked_cost_usd.value_or(1e300) <= byCost.rows[i].ranked_cost_usd.value_or(1e300));
  r.sort_by = SortBy::time;
  Recommendation byTime = recommend(m, w, cat(), r);
  for (size_t i = 1; i < byTime.rows.size(); ++i)
    CHECK(byTime.rows[i - 1].estimate.total_hours <= byTime.rows[i].estimate.total_hours);
}

TEST_CASE("constraints filter and explain") {
  ModelSpec m = *find_model_preset("llama-2-70b");
  TrainingWorkload w = make(m, Task::pretrain, 1e12);
  RecommendRequest r;
  r.deadline_hours = 24 * 14;
  r.families = {"p5"};
  Recommendation rec = recommend(m, w, cat(), r);
  for (const auto& row : rec.rows) {
    CHECK(row.estimate.total_hours <= 24 * 14);
    CHECK(row.instance->family == "p5");
  }
  r.deadline_hours = 1;
  Recommendation none = recommend(m, w, cat(), r);
  CHECK(none.rows.empty());
  REQUIRE_FALSE(none.rejections.empty());
  CHECK(none.rejections.front().reason.find("deadline") != std::string::npos);
}

TEST_CASE("more instances are never slower when communication is free") {
  Catalog c = cat();
  Instance fast = *c.find_instance("p5.48xlarge");
  fast.network_gbps = 1e9;  // free inter-node traffic
  Accelerator acc = c.accelerator_of(fast);
  acc.efficiency.link_fraction = 1;
  acc.link_gb_per_s = 1e9;
  ModelSpec m = *find_model_preset("llama-2-13b");
  TrainingWorkload w = make(m, Task::pretrain, 1e11);
  double previous = 1e300;
  for (int n : {1, 2, 4, 8, 16, 32}) {
    ClusterSearch s = search_cluster(m, w, Cluster{&fast, &acc, n});
    REQUIRE(s.best);
    INFO(n);
    CHECK(s.best->total_hours <= previous * (1 + 1e-9));
    previous = s.best->total_hours;
  }
}

TEST_CASE("time scales linearly with tokens") {
  ModelSpec m = *find_model_preset("llama-2-7b");
  Cluster c = cluster("p4d.24xlarge", 2);
  double h1 = search_cluster(m, make(m, Task::pretrain, 1e11), c).best->total_hours;
  double h2 = search_cluster(m, make(m, Task::pretrain, 2e11), c).best->total_hours;
  CHECK(h2 == Approx(2 * h1).epsilon(1e-4));
}

TEST_CASE("precision support is checked per accelerator") {
  ModelSpec m = *find_model_preset("llama-2-7b");
  WorkloadRequest r;
  r.precision = Precision::fp8;
  TrainingWorkload w = make_workload(r, m);
  CHECK(accelerator_problem(cat().accelerator_of(*cat().find_instance("p4d.24xlarge")), w)->find("fp8") != std::string::npos);
  CHECK_FALSE(accelerator_problem(cat().accelerator_of(*cat().find_instance("p5.48xlarge")), w));
  // bf16 on a V100 runs in fp16.
  TrainingWorkload b = make(m, Task::pretrain);
  CHECK_FALSE(accelerator_problem(cat().accelerator_of(*cat().find_instance("p3.16xlarge")), b));
}

TEST_CASE("mixture of experts: memory counts all experts, compute the active ones") {
  ModelSpec m = *find_model_preset("mixtral-8x7b");
  TrainingWorkload w = make(m, Task::pretrain, 1e11);
  ClusterSearch s = search_cluster(m, w, cluster("p5.48xlarge", 4));
  REQUIRE(s.best);
  const double matmul_active = m.active_params() - 2.0 * m.hidden * m.layers - m.hidden - double(m.vocab) * m.hidden;
  CHECK(s.best->model_flops_per_token == Approx(6 * matmul_active + 6.0 * m.layers * m.heads * m.head_dim * w.seq_len));  // causal: half the matrix
}

TEST_CASE("long sequences: the search splits them with context parallelism when that is what fits or is fastest") {
  const ModelSpec& m = *find_model_preset("llama-3-70b");
  ClusterSearch s = search_cluster(m, pretrain(m, 131072, 16), cluster("p5.48xlarge", 8), {});
  REQUIRE(s.best);
  CHECK(s.best->layout.cp > 1);
  CHECK(s.best->layout.accelerators() == 64);
  // Short sequences never get cp (each rank would keep under 4096 tokens).
  ClusterSearch t = search_cluster(m, pretrain(m, 4096, 64), cluster("p5.48xlarge", 8), {});
  REQUIRE(t.best);
  CHECK(t.best->layout.cp == 1);
  // A fixed cp is kept.
  LayoutConstraints fixed;
  fixed.cp = 2;
  ClusterSearch u = search_cluster(m, pretrain(m, 8192, 64), cluster("p5.48xlarge", 8), fixed);
  REQUIRE(u.best);
  CHECK(u.best->layout.cp == 2);
}

TEST_CASE("when memory is tight the search rebuilds the fewest layers that fit") {
  const ModelSpec& m = *find_model_preset("llama-3-70b");
  const TrainingWorkload w = pretrain(m, 8192, 64);
  const Cluster c = cluster("p5.48xlarge", 4);
  ClusterSearch s = search_cluster(m, w, c, {});
  REQUIRE(s.best);
  const Layout& l = s.best->layout;
  REQUIRE(l.recompute == Recompute::full);
  const int stage = static_cast<int>(std::ceil(80.0 / l.pp));
  CHECK(l.recompute_layers > 0);
  CHECK(l.recompute_layers < stage);
  CHECK(s.best->memory.fits());
  // One layer fewer would not fit.
  Layout fewer = l;
  fewer.recompute_layers -= 1;
  if (fewer.recompute_layers > 0) CHECK_FALSE(training_memory(m, w, fewer, *c.accelerator).fits());
}

TEST_CASE("recommend is deterministic") {
  ModelSpec m = model_from_param_count(13e9);
  TrainingWorkload w = make(m, Task::lora);
  Recommendation a = recommend(m, w, cat(), {});
  Recommendation b = recommend(m, w, cat(), {});
  REQUIRE(a.rows.size() == b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    CHECK(a.rows[i].instance->name == b.rows[i].instance->name);
    CHECK(a.rows[i].count == b.rows[i].count);
    CHECK(a.rows[i].estimate.step.total_s() == b.rows[i].estimate.step.total_s());
  }
}

TEST_CASE("replicas_for_load: ceil(load / (requests/s per replica x utilisation)), at least one") {
  // 10 requests/s over replicas serving 4 each at 50%: 10 / 2 = 5 replicas.
  CHECK(replicas_for_load(10, 4, 0.5) == 5);
  // 8 / (4 x 1) is exactly 2: no third replica from rounding.
  CHECK(replicas_for_load(8, 4, 1.0) == 2);
  CHECK(replicas_for_load(8.01, 4, 1.0) == 3);
  // However light the load, one replica answers it.
  CHECK(replicas_for_load(1e-7, 16, 0.7) == 1);
}

TEST_CASE("spot rows are sorted and held to a deadline at their expected time with reclaims") {
  ModelSpec m = *find_model_preset("llama-2-7b");
  TrainingWorkload w = make(m, Task::pretrain, 2e11);
  RecommendRequest r;
  r.pricing = Pricing::spot;
  r.sort_by = SortBy::time;
  r.all_counts = true;  // every (type, count): the row held to the deadline is itself a row, not replaced by its type's pick
  const Recommendation by_time = recommend(m, w, cat(), r);
  const RecommendRow* reclaimed = nullptr;  // a row whose reclaims add more than 2%
  for (size_t i = 0; i < by_time.rows.size(); ++i) {
    const auto& x = by_time.rows[i];
    if (i > 0) CHECK(ranked_hours(by_time.rows[i - 1]) <= ranked_hours(x));
    if (!reclaimed && ranked_hours(x) > x.estimate.total_hours * 1.02) reclaimed = &x;
  }
  REQUIRE(reclaimed);
  // A deadline between its uninterrupted and its expected time: met only if reclaims never come, so refused.
  r.deadline_hours = (reclaimed->estimate.total_hours + ranked_hours(*reclaimed)) / 2;
  const Recommendation held = recommend(m, w, cat(), r);
  for (const auto& x : held.rows) {
    CHECK(ranked_hours(x) <= *r.deadline_hours);
    CHECK_FALSE((x.instance == reclaimed->instance && x.count == reclaimed->count));
  }
}
