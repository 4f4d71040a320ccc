// The step-time bound prunes the layout search without changing its answer
// (docs/methodology.md §Search), and the instance counts it searches.
#include <catch2/catch.hpp>
#include <regex>

#include "cli_run.hpp"
#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/search/search.hpp"

using namespace gpuadvisor;

namespace {
const Catalog& cat() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}

// Mixtral-8x7B pre-training on four p5.48xlarge: the bound tests' job.
struct BoundJob {
  const ModelSpec& m = *find_model_preset("mixtral-8x7b");
  TrainingWorkload w;
  const Instance& inst = *cat().find_instance("p5.48xlarge");
  Cluster c{&inst, &cat().accelerator_of(inst), 4};
  BoundJob() {
    WorkloadRequest q;
    q.tokens = 1e11;
    w = make_workload(q, m);
  }
};

auto layout_key(const Layout& l) {
  return std::tuple(l.tp, l.cp, l.pp, l.vp, l.dp, l.ep, l.expert_tp(), l.zero_stage, l.micro_batch, static_cast<int>(l.recompute), l.recompute_layers);
}

// Row for row: the same types, counts, layouts, step times and costs.
void check_same(const Recommendation& pruned, const Recommendation& exhaustive) {
  REQUIRE(pruned.rows.size() == exhaustive.rows.size());
  for (size_t i = 0; i < pruned.rows.size(); ++i) {
    const RecommendRow& a = pruned.rows[i];
    const RecommendRow& b = exhaustive.rows[i];
    INFO(a.instance->name << " x " << a.count << " vs " << b.instance->name << " x " << b.count);
    CHECK(a.instance == b.instance);
    CHECK(a.count == b.count);
    CHECK(layout_key(a.estimate.layout) == layout_key(b.estimate.layout));
    CHECK(a.estimate.step.total_s() == b.estimate.step.total_s());
    CHECK(a.ranked_cost_usd == b.ranked_cost_usd);
  }
  REQUIRE(pruned.rejections.size() == exhaustive.rejections.size());
  for (size_t i = 0; i < pruned.rejections.size(); ++i) CHECK(pruned.rejections[i].reason == exhaustive.rejections[i].reason);
  REQUIRE(pruned.pick.has_value() == exhaustive.pick.has_value());
  if (pruned.pick) CHECK(pruned.pick->count == exhaustive.pick->count);
  CHECK(pruned.why == exhaustive.why);
}
}  // namespace

TEST_CASE("pruned and exhaustive search give the same rows over models x tasks x instance families") {
  struct Job {
    const char* model;
    Task task;
    double tokens;
    bool flash_attention = true;  // off: selective recompute is searched too
  };
  const Job jobs[] = {{"llama-3-8b", Task::pretrain, 1e11},  {"llama-3-70b", Task::pretrain, 1e12}, {"mixtral-8x7b", Task::pretrain, 1e11},
                      {"llama-3-8b", Task::lora, 1e7},       {"llama-3-70b", Task::qlora, 1e7},     {"llama-3-8b", Task::finetune, 1e8},
                      {"llama-3-8b", Task::pretrain, 1e11, false}, {"qwen3-30b-a3b", Task::pretrain, 1e11}};
  size_t rows_compared = 0;
  for (const Job& j : jobs) {
    const ModelSpec& m = *find_model_preset(j.model);
    WorkloadRequest q;
    q.task = j.task;
    q.tokens = j.tokens;
    TrainingWorkload w = make_workload(q, m);
    w.flash_attention = j.flash_attention;
    for (const char* family : {"p4d", "p5", "p6-b200", "g6e", "trn1"}) {
      INFO(j.model << " " << to_string(j.task) << " on " << family);
      RecommendRequest r;
      r.families = {family};
      r.max_instances = 64;
      r.all_counts = true;
      const Recommendation pruned = recommend(m, w, cat(), r);
      r.exhaustive_search = true;
      const Recommendation exhaustive = recommend(m, w, cat(), r);
      check_same(pruned, exhaustive);
      rows_compared += pruned.rows.size();
      CHECK(pruned.layouts_pruned >= 0);
      CHECK(exhaustive.layouts_pruned == 0);
      CHECK(pruned.layouts_evaluated <= exhaustive.layouts_evaluated);
    }
  }
  CHECK(rows_compared > 200);  // every count of every type: not a comparison of empty answers
}

TEST_CASE("the search prunes a large share of an MoE pre-training search") {
  const ModelSpec& m = *find_model_preset("mixtral-8x7b");
  WorkloadRequest q;
  q.tokens = 1e11;
  const TrainingWorkload w = make_workload(q, m);
  RecommendRequest r;
  r.families = {"p5"};
  r.max_instances = 64;
  const Recommendation pruned = recommend(m, w, cat(), r);
  r.exhaustive_search = true;
  const Recommendation exhaustive = recommend(m, w, cat(), r);
  CHECK(pruned.layouts_pruned > 0);
  CHECK(pruned.layouts_evaluated < exhaustive.layouts_evaluated * 3 / 4);
}

TEST_CASE("the step-time bound never exceeds the step time of a layout with those sizes") {
  const BoundJob job;
  const ModelSpec& m = job.m;
  const TrainingWorkload& w = job.w;
  const Cluster& c = job.c;
  int checked = 0;
  for (int tp : {1, 2, 8})
    for (int pp : {1, 2, 4})
      for (int ep : {1, 2, 8})
        for (int mb : {1, 2}) {
          Layout base{tp, pp, 32 / (tp * pp), ep, 0, mb, Recompute::none, 1, 1};
          if (layout_problem(m, w, c, base)) continue;
          const StepTimeBound bound = step_time_lower_bound(m, w, c, base);
          for (Recompute rc : {Recompute::none, Recompute::full})
            for (int z : {0, 1, 2, 3})
              for (int vp : {1, 2, 4}) {
                Layout l = base;
                l.recompute = rc;
                l.zero_stage = z;
                l.vp = vp;
                if (layout_problem(m, w, c, l)) continue;
                INFO("tp " << tp << " pp " << pp << " ep " << ep << " mb " << mb << " zero " << z << " vp " << vp);
                CHECK(bound.at(vp) <= estimate_training(m, w, c, l).step.total_s() * (1 + 1e-12));
                ++checked;
              }
        }
  CHECK(checked > 50);
}

TEST_CASE("the bound across micro-batch sizes never exceeds the bound at any size between them") {
  const BoundJob job;
  int checked = 0;
  for (int tp : {1, 2, 8})
    for (int pp : {1, 2, 4})
      for (int ep : {1, 8}) {
        const Layout sizes{tp, pp, 32 / (tp * pp), ep, 0, 1, Recompute::none, 1, 1};
        auto at = [&](int mb) {
          Layout l = sizes;
          l.micro_batch = mb;
          return step_time_lower_bound(job.m, job.w, job.c, l);
        };
        const StepTimeBound smallest = at(1), largest = at(8);
        for (int mb : {1, 2, 4, 8})
          for (int vp : {1, 2, 4}) {
            INFO("tp " << tp << " pp " << pp << " ep " << ep << " mb " << mb << " vp " << vp);
            CHECK(StepTimeBound::across_micro_batches(smallest, largest, vp) <= at(mb).at(vp) * (1 + 1e-12));
            ++checked;
          }
      }
  CHECK(checked > 50);
}

TEST_CASE("full recompute can need more memory than none: a stage of one layer, one micro-batch in flight") {
  // Why the search tries every recompute mode before it skips sizes that do
  // not fit (search.cpp any_other_recompute_fits): full recompute keeps a layer's
  // activations as workspace on top of the layer inputs.
  const ModelSpec& m = *find_model_preset("llama-3-8b");
  WorkloadRequest q;
  q.tokens = 1e9;
  q.global_batch = 1;
  const TrainingWorkload w = make_workload(q, m);
  const Accelerator& h100 = cat().accelerator_of(*cat().find_instance("p5.48xlarge"));
  Layout none{1, m.layers, 1, 1, 0, 1, Recompute::none, 1, 1};
  Layout full = none;
  full.recompute = Recompute::full;
  CHECK(training_memory(m, w, full, h100).total_gb() > training_memory(m, w, none, h100).total_gb());
}

TEST_CASE("candidate counts: powers of two, three times them, the maximum and the quota's count") {
  const Instance& p5 = *cat().find_instance("p5.48xlarge");
  RecommendRequest r;
  r.max_instances = 24;
  std::vector<int> counts = candidate_counts(p5, r);
  CHECK(counts.front() == 1);
  CHECK(counts.back() == 24);
  for (int n : {1, 2, 3, 4, 6, 8, 12, 16, 24}) CHECK(std::count(counts.begin(), counts.end(), n) == 1);
  CHECK(std::is_sorted(counts.begin(), counts.end()));
  r.max_instances = 100;
  counts = candidate_counts(p5, r);
  CHECK(std::count(counts.begin(), counts.end(), 48) == 1);
  CHECK(std::count(counts.begin(), counts.end(), 96) == 1);
  CHECK(std::count(counts.begin(), counts.end(), 100) == 1);
  CHECK(std::count(counts.begin(), counts.end(), 50) == 0);
  // A quota of 3,840 P vCPUs holds 20 p5.48xlarge (192 vCPUs each).
  REQUIRE(p5.vcpus == 192);
  r.quota_vcpus["p"] = 3840;
  counts = candidate_counts(p5, r);
  CHECK(std::count(counts.begin(), counts.end(), 20) == 1);
  // Without EFA, one instance only.
  const Instance& g6e = *cat().find_instance("g6e.xlarge");
  REQUIRE_FALSE(g6e.efa_supported);
  CHECK(candidate_counts(g6e, r) == std::vector<int>{1});
}

TEST_CASE("recommend lists 24 instances with --max-instances 24 (the speed issue acceptance)") {
  auto r = cli_test::run("recommend --model llama-3-8b --task pretrain --tokens 100B --global-batch 768 --max-instances 24 --all-counts --format csv");
  REQUIRE(r.code == 0);
  // rank,instance,count,...: some type at a count of 24
  CHECK(std::regex_search(r.out, std::regex("\n[0-9]+,[a-z0-9.-]+,24,")));
}
