// Interruption-aware cost: Young/Daly intervals, bucket to MTTI, expected
// runtime, break-even rates (hand-computed values).
#include <catch2/catch.hpp>

#include "gpuadvisor/physics/interruption.hpp"
#include "gpuadvisor/search/search.hpp"

using namespace gpuadvisor;

TEST_CASE("Young's and Daly's checkpoint intervals (hand-computed)") {
  // write 600 s, MTTI 24 h: Young sqrt(2 x 600 x 86400) = 10,182.3 s;
  // Daly 10,182.3 x (1 + sqrt(r)/3 + r/9) - 600 with r = 600/172800 -> 9,786.3 s.
  CHECK(young_interval_s(600, 86400) == Approx(10182.3376).epsilon(1e-8));
  CHECK(daly_interval_s(600, 86400) == Approx(9786.2660).epsilon(1e-8));
  // A checkpoint longer than twice the MTTI: checkpoint every MTTI.
  CHECK(daly_interval_s(1000, 400) == 400);
}

TEST_CASE("a Spot Advisor bucket becomes a job MTTI (hand-computed)") {
  CHECK(*interruption_bucket_monthly_fraction("<5%") == 0.05);
  CHECK(*interruption_bucket_monthly_fraction(">20%") == 0.30);
  CHECK_FALSE(interruption_bucket_monthly_fraction("7%"));
  // p = 5% per 720 h: hazard -ln(0.95)/720 -> 14,036.9 h per instance; 16 instances -> 877.3 h.
  CHECK(spot_mtti_hours(0.05, 1) == Approx(14036.9225).epsilon(1e-8));
  CHECK(spot_mtti_hours(0.05, 16) == Approx(877.30766).epsilon(1e-8));
  // Hardware: 50,700 GPU-hours per unexpected interruption; 128 GPUs -> 396.1 h.
  CHECK(hardware_mtti_hours(128) == Approx(396.09375));
}

TEST_CASE("expected runtime adds checkpoint writes, lost work and restarts") {
  InterruptionCost c = expected_runtime(100, 24, 600, 600);
  const double tau = daly_interval_s(600, 86400);
  const double waste = 600 / tau + (tau / 2 + 600) / 86400;
  CHECK(c.waste_fraction == Approx(waste));
  CHECK(c.expected_hours == Approx(100 / (1 - waste)));
  CHECK(c.feasible);
  // Interruptions every 10 minutes with 10-minute checkpoints: no progress.
  CHECK_FALSE(expected_runtime(100, 1.0 / 6, 600, 600).feasible);
  // More frequent interruptions never shorten the run.
  CHECK(expected_runtime(100, 12, 600, 600).expected_hours > c.expected_hours);
}

TEST_CASE("checkpoint sizes: full state for training, adapters for LoRA") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  WorkloadRequest r;
  r.task = Task::pretrain;
  TrainingWorkload full = make_workload(r, m);
  CHECK(checkpoint_size_gb(m, full) == Approx(6738415616.0 * 14 / 1e9));
  r.task = Task::lora;
  TrainingWorkload lora = make_workload(r, m);
  CHECK(checkpoint_size_gb(m, lora) == Approx(lora_adapter_params(m, 16, LoraTargets::attention_mlp) * 14 / 1e9));
  CHECK(checkpoint_write_gb_per_s(CheckpointStorage::fsx_lustre, 8) == 6.0);
  CHECK(checkpoint_write_gb_per_s(CheckpointStorage::s3, 8) == 8.0);
}

TEST_CASE("spot rows carry expected cost and a break-even rate that equalises the costs") {
  static const Catalog cat = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  const ModelSpec& m = *find_model_preset("llama-3-8b");
  WorkloadRequest wr;
  wr.task = Task::pretrain;
  wr.tokens = 50e9;
  TrainingWorkload w = make_workload(wr, m);
  RecommendRequest r;
  r.families = {"p5"};
  r.max_instances = 16;
  r.all_counts = true;  // the counts within the usual spot count too
  Recommendation rec = recommend(m, w, cat, r);
  int checked = 0;
  for (auto& row : rec.rows) {
    if (row.instance->name != "p5.48xlarge") continue;
    if (!row.spot_offered) {
      // Above the usual spot count (2) a synchronous job is not offered spot at all.
      CHECK(row.count > 2);
      CHECK_FALSE(row.spot_cost_usd);
      CHECK_FALSE(row.spot_expected_cost_usd);
      CHECK_FALSE(row.break_even_monthly_interruption);
      CHECK(row.channel != Channel::spot);
      continue;
    }
    REQUIRE(row.spot_expected_cost_usd);
    CHECK(row.spot_interruption_bucket == ">20%");
    CHECK(*row.spot_expected_cost_usd > *row.spot_cost_usd);  // interruptions cost something
    CHECK(*row.on_demand_expected_cost_usd >= *row.on_demand_cost_usd);
    if (row.break_even_monthly_interruption && *row.break_even_monthly_interruption > 0) {
      // At the break-even rate spot and on-demand expected costs are equal.
      RecommendRow at = row;
      const double p = *row.break_even_monthly_interruption;
      const double write_s = checkpoint_size_gb(m, w) / checkpoint_write_gb_per_s(r.overheads.storage, row.count);
      const double mtti = 1 / (1 / spot_mtti_hours(p, row.count) + 1 / hardware_mtti_hours(row.count * 8));
      const double spot = *row.spot_usd_per_hour * row.count * expected_runtime(row.estimate.total_hours, mtti, write_s, r.restart_s).expected_hours;
      CHECK(spot == Approx(*row.on_demand_expected_cost_usd).epsilon(1e-6));
    }
    ++checked;
  }
  CHECK(checked > 0);
}
