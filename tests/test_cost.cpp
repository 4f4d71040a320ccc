// Interruption-aware cost: Young/Daly intervals, bucket to MTTI, expected
// runtime, break-even rates (hand-computed values).
#include <catch2/catch.hpp>

#include <cmath>
#include "gpuadvisor/base/errors.hpp"
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
  CHECK(checkpoint_write_gb_per_s(CheckpointStorage::fsx_lustre, 8, Task::pretrain) == 6.0);
  CHECK(checkpoint_write_gb_per_s(CheckpointStorage::s3, 8, Task::pretrain) == 8.0);
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
      const double write_s = checkpoint_size_gb(m, w) / checkpoint_write_gb_per_s(r.overheads.storage, row.count, w.task);
      const double mtti = 1 / (1 / spot_mtti_hours(p, row.count) + 1 / hardware_mtti_hours(row.count * 8));
      const double spot = *row.spot_usd_per_hour * row.count * expected_runtime(row.estimate.total_hours, mtti, write_s, r.restart_s).expected_hours;
      CHECK(spot == Approx(*row.on_demand_expected_cost_usd).epsilon(1e-6));
    }
    ++checked;
  }
  CHECK(checked > 0);
}

TEST_CASE("the rest of the bill: storage and transfer beside the compute (hand-computed)") {
  static const Catalog cat = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  const ModelSpec& m = *find_model_preset("llama-3-8b");  // vocabulary 128,256: int32 tokens
  WorkloadRequest wr;
  wr.task = Task::pretrain;
  wr.tokens = 1e12;
  const TrainingWorkload w = make_workload(wr, m);
  const double hours = 100;
  const JobBill b = job_bill(m, w, hours, 1000.0, CheckpointStorage::fsx_lustre, 1, std::nullopt, cat, "us-east-1", "");
  CHECK(b.dataset_gb == Approx(4000));                             // 1T tokens x 4 bytes
  CHECK(b.model_in_gb == 0);                                        // pre-training starts from nothing
  CHECK(b.checkpoints_gb == Approx(2 * m.total_params() * 14 / 1e9));
  CHECK(b.final_weights_gb == Approx(m.total_params() * 2 / 1e9));
  // FSx: 6 GB/s at 125 MB/s/TiB = 48 TiB = 49,152 GiB -> 21 steps of 2,400 GiB = 50,400 GiB.
  CHECK(fsx_capacity_gib(100, 6) == 50400);
  CHECK(b.working_gb == Approx(50400 * 1073741824.0 / 1e9));
  CHECK(*b.working_usd == Approx(b.working_gb * 0.145 * 100 / 730));
  CHECK(*b.s3_usd == Approx((4000 + b.final_weights_gb) * 0.023 * 100 / 730));
  CHECK(*b.transfer_usd == 0);
  CHECK(*b.total_usd == Approx(1000 + *b.working_usd + *b.s3_usd).margin(0.02));
  // Small data needs only the smallest file system; more data than the throughput's size sets the size.
  CHECK(fsx_capacity_gib(10, 0.1) == 1200);
  CHECK(fsx_capacity_gib(200000, 6) == std::ceil(200000e9 / 1073741824.0 / 2400) * 2400);
  // Checkpoints in S3: no working store, the checkpoints priced in S3.
  const JobBill s3 = job_bill(m, w, hours, 1000.0, CheckpointStorage::s3, 1, std::nullopt, cat, "us-east-1", "");
  CHECK(s3.working_store.empty());
  CHECK(s3.s3_gb == Approx(4000 + s3.final_weights_gb + s3.checkpoints_gb));
  CHECK(*b.s3_only_storage_usd == Approx(*s3.storage_usd).margin(0.01));  // the total sums parts rounded to cents
  // The data in another region crosses once at the source region's rate; a region with no rate is unknown, never $0.
  const JobBill moved = job_bill(m, w, hours, 1000.0, CheckpointStorage::fsx_lustre, 1, std::nullopt, cat, "us-east-1", "us-west-2");
  CHECK(*moved.transfer_usd == Approx(4000 * 0.02));
  const JobBill far = job_bill(m, w, hours, 1000.0, CheckpointStorage::fsx_lustre, 1, std::nullopt, cat, "us-east-1", "ap-south-2");
  CHECK_FALSE(far.transfer_usd);
  CHECK_FALSE(far.total_usd);
  const JobBill west = job_bill(m, w, hours, 1000.0, CheckpointStorage::efs, 1, std::nullopt, cat, "us-west-2", "");
  CHECK_FALSE(west.storage_usd);
  CHECK_FALSE(west.total_usd);
  // A fine-tune keeps the weights it starts from; LoRA hands over the adapter alone.
  wr.task = Task::lora;
  wr.tokens = 100e6;
  const TrainingWorkload lora = make_workload(wr, m);
  const JobBill lb = job_bill(m, lora, 1, 40.0, CheckpointStorage::local_nvme, 1, std::nullopt, cat, "us-east-1", "");
  CHECK(lb.model_in_gb == Approx(m.total_params() * 2 / 1e9));
  CHECK(lb.final_weights_gb == Approx(lora_adapter_params(m, lora.lora_rank, lora.lora_targets) * 2 / 1e9));
  CHECK(*lb.working_usd == 0);  // the instance store is in the instance's price
}

TEST_CASE("catalog storage rates: unknown keys, sources and units are refused") {
  const std::string text(embedded_catalog_text());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    return t;
  };
  auto refused = [](const std::string& t, const std::string& words) {
    try {
      load_catalog({"<test>", t});
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(words) != std::string::npos);
      return true;
    }
    return false;
  };
  CHECK(refused(with("\"s3_standard\": {", "\"s3_standrd\": {"), "unknown rate"));
  CHECK(refused(with("\"usd_per_gb_month\": 0.023", "\"usd_per_gb\": 0.023"), "usd_per_gb"));
  CHECK(refused(with("\"usd_per_gb_month\": 0.023", "\"usd_per_gb_month\": -1"), "usd_per_gb_month"));
  CHECK(refused(with("\"source\": \"C3X-FSX\"", "\"source\": \"NOWHERE\""), "NOWHERE"));
  const Catalog c = load_catalog({"<test>", text});
  REQUIRE(c.storage_rate("us-east-1", kS3StandardRate));
  CHECK(c.storage_rate("us-east-1", kS3StandardRate)->usd == 0.023);
  CHECK_FALSE(c.storage_rate("us-west-2", kS3StandardRate));
}
