// RL post-training: the step's stages by hand, the acceptance answers of the
// RL issue, placements, DPO, the recommendation and every input error.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/search/rl_search.hpp"

using namespace gpuadvisor;
using cli_test::run;

namespace {
const Catalog& cat() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}
const ModelSpec& model(const char* name) { return *find_model_preset(name); }
Cluster cluster(const char* instance, int count = 1) {
  const Instance* i = cat().find_instance(instance);
  return Cluster{i, &cat().accelerator_of(*i), count};
}
RlWorkload grpo(double response = 1024, RlAlgorithm a = RlAlgorithm::grpo, std::optional<ModelSpec> reward = std::nullopt) {
  RlRequest r;
  r.algorithm = a;
  r.prompts_per_step = 256;
  r.samples_per_prompt = a == RlAlgorithm::dpo ? std::optional<int>() : std::optional<int>(8);
  r.response_tokens = response;
  r.reward_model = reward;
  return make_rl_workload(r, model("qwen2.5-7b"));
}
RlEstimate step(const RlWorkload& w, const Cluster& c, RlPlacement p = RlPlacement::colocated, int rollout = 0) {
  RlEvaluation ev = estimate_rl(model("qwen2.5-7b"), w, c, p, rollout);
  INFO(ev.problem);
  REQUIRE(ev.estimate);
  return *ev.estimate;
}
}  // namespace

TEST_CASE("RL workload defaults: the documented ones, stated as assumptions") {
  RlWorkload w = make_rl_workload(RlRequest{}, model("qwen2.5-7b"));
  CHECK(w.prompts_per_step == 256);
  CHECK(w.samples_per_prompt == 8);
  CHECK(w.prompt_tokens == 512);
  CHECK(w.response_tokens == 1024);
  CHECK(w.response_tokens_max == 2048);
  CHECK(w.steps == 200);
  CHECK(w.assumptions.size() == 6);
  // The update as a training job: sequences of prompt + longest response, one step's sequences per batch.
  CHECK(w.update.task == Task::finetune);
  CHECK(w.update.seq_len == 512 + 2048);
  CHECK(w.update.global_batch == 2048);
  CHECK(w.tokens_per_step() == 2048.0 * (512 + 1024));
  RlRequest p;
  p.prompts = 10000;
  p.epochs = 3;
  CHECK(make_rl_workload(p, model("qwen2.5-7b")).steps == std::ceil(30000.0 / 256));
}

TEST_CASE("RL scoring FLOPs: two forward passes of 2 x matmul parameters + attention per token (hand-computed)") {
  const ModelSpec& m = model("qwen2.5-7b");
  // Attention forward: 4 x layers x q_width x seq; q_width = 28 heads x 128.
  CHECK(forward_flops_per_token(m, 1536) == Approx(2 * matmul_params_per_token(m) + 2.0 * 28 * 28 * 128 * 1536));  // causal: half the matrix
  const RlWorkload w = grpo();
  const RlEstimate e = step(w, cluster("p5.48xlarge"));
  REQUIRE(e.scoring_models == std::vector<std::string>{"policy", "reference"});
  const double flops = 2 * w.tokens_per_step() * forward_flops_per_token(m, 1536);
  const double achieved = 8 * cat().find_accelerator("H100-SXM")->tflops(e.trainer.precision).value() * 1e12 * e.trainer.mfu;
  CHECK(e.scoring.seconds == Approx(flops / achieved));
  // The update: the step's tokens at the searched layout's throughput.
  CHECK(e.training.seconds == Approx(w.tokens_per_step() / e.trainer.tokens_per_second));
}

TEST_CASE("colocated: the step is the sum of its stages, and each stage reports its throughput") {
  const RlEstimate e = step(grpo(), cluster("p5.48xlarge"));
  CHECK(e.placement == RlPlacement::colocated);
  CHECK(e.step_time_s == Approx(e.generation.seconds + e.scoring.seconds + e.training.seconds + e.weight_sync_s));
  CHECK(e.generation.seconds > 0);
  CHECK(e.weight_sync_s > 0);
  CHECK(e.rollout_accelerators == 8);
  CHECK(e.trainer_accelerators == 8);
  CHECK(e.generation.tokens_per_second_per_accelerator() == Approx(2048 * 1024 / e.generation.seconds / 8));
  // The trainer's state stays beside the generators and takes KV-cache room.
  CHECK(e.resident_state_gb > 0);
  CHECK_FALSE(e.offloaded);
}

TEST_CASE("PPO with a reward model costs more per step than GRPO with a rule reward") {
  const RlEstimate g = step(grpo(), cluster("p5.48xlarge"));
  const RlEstimate p = step(grpo(1024, RlAlgorithm::ppo, model("qwen2.5-7b")), cluster("p5.48xlarge"));
  CHECK(p.step_time_s > g.step_time_s * 1.3);
  CHECK(p.scoring_models == std::vector<std::string>{"policy", "reference", "critic", "reward model"});
  CHECK(p.critic_trainer);
  CHECK(p.training.seconds > 1.8 * g.training.seconds);  // the critic is trained too
}

TEST_CASE("longer responses: 1k to 8k tokens makes generation more than half of the step (the issue's 7B)") {
  const ModelSpec m = model_from_param_count(7e9);
  auto at = [&](double response) {
    RlRequest r;
    r.response_tokens = response;
    RlEvaluation ev = estimate_rl(m, make_rl_workload(r, m), cluster("p5.48xlarge"), RlPlacement::colocated);
    REQUIRE(ev.estimate);
    return *ev.estimate;
  };
  const RlEstimate short_ = at(1024);
  const RlEstimate long_ = at(8192);
  CHECK(short_.generation_share() < 0.5);
  CHECK(long_.generation_share() > 0.5);
  // The straggler: the same mean with a longer tail takes longer to generate.
  RlWorkload tail = grpo(1024);
  tail.response_tokens_max = 8192;
  tail.update.seq_len = 512 + 8192;
  CHECK(step(tail, cluster("p5.48xlarge")).generation.seconds > short_.generation.seconds * 1.5);
}

TEST_CASE("split: the pools are reported, sync sums the stages, async overlaps generation with the update") {
  const RlEstimate s = step(grpo(), cluster("p5.48xlarge", 4), RlPlacement::split, 1);
  CHECK(s.rollout_instances == 1);
  CHECK(s.trainer_instances == 3);
  CHECK(s.rollout_accelerators == 8);
  CHECK(s.trainer_accelerators == 24);
  CHECK(s.resident_state_gb == 0);
  CHECK(s.step_time_s == Approx(s.generation.seconds + s.scoring.seconds + s.training.seconds + s.weight_sync_s));
  RlWorkload async = grpo();
  async.async = true;
  const RlEstimate a = step(async, cluster("p5.48xlarge", 4), RlPlacement::split, 1);
  CHECK(a.step_time_s == Approx(std::max(a.generation.seconds, a.scoring.seconds + a.training.seconds) + a.weight_sync_s));
  CHECK(a.step_time_s < s.step_time_s);
  // Searched split: one of the tried shares, never an empty pool.
  const RlEstimate best = step(grpo(), cluster("p5.48xlarge", 4), RlPlacement::split, 0);
  CHECK(best.rollout_instances >= 1);
  CHECK(best.trainer_instances >= 1);
  // One instance cannot be split.
  CHECK_FALSE(estimate_rl(model("qwen2.5-7b"), grpo(), cluster("p5.48xlarge"), RlPlacement::split, 0).estimate);
}

TEST_CASE("DPO: training only, pairs of chosen and rejected, the reference forward pass") {
  const RlWorkload w = grpo(512, RlAlgorithm::dpo);
  CHECK(w.samples_per_prompt == 2);
  CHECK_FALSE(w.generates());
  const RlEstimate e = step(w, cluster("p5.48xlarge"));
  CHECK(e.generation.seconds == 0);
  CHECK(e.weight_sync_s == 0);
  CHECK(e.scoring_models == std::vector<std::string>{"reference"});
  CHECK(e.training.tokens == 256.0 * 2 * (512 + 512));
  CHECK(e.step_time_s == Approx(e.scoring.seconds + e.training.seconds));
}

TEST_CASE("RL inputs: contradictions and impossible values are refused, naming the flag") {
  auto fails = [](RlRequest r, const std::string& needle) {
    try {
      make_rl_workload(r, model("qwen2.5-7b"));
    } catch (const InputError& e) {
      INFO(e.what());
      return std::string(e.what()).find(needle) != std::string::npos;
    }
    return false;
  };
  RlRequest r;
  r.async = true;
  r.placement = RlPlacement::colocated;
  CHECK(fails(r, "--async"));
  r = {};
  r.samples_per_prompt = 1;
  CHECK(fails(r, "--samples-per-prompt: GRPO compares samples"));
  r = {};
  r.response_tokens = 2000;
  r.response_tokens_max = 1000;
  CHECK(fails(r, "--response-tokens-max 1000 is below the mean"));
  r = {};
  r.steps = 10;
  r.prompts = 1000;
  CHECK(fails(r, "give --steps or --prompts"));
  r = {};
  r.algorithm = RlAlgorithm::dpo;
  r.reward_model = model("qwen2.5-7b");
  CHECK(fails(r, "DPO learns from preference pairs"));
  r = {};
  r.prompt_tokens = 0;
  CHECK(fails(r, "--prompt-tokens"));
  r = {};
  r.epochs = 2;
  CHECK(fails(r, "--epochs with --task rl needs --prompts"));
}

TEST_CASE("recommend --task rl: a ranked, explained answer with the stages in every row") {
  RecommendRequest req;
  const RlWorkload w = grpo();
  Recommendation rec = recommend_rl(model("qwen2.5-7b"), w, cat(), req);
  REQUIRE(rec.pick);
  CHECK(rec.pick->rl);
  CHECK(!rec.why.empty());
  for (const auto& r : rec.rows) {
    REQUIRE(r.rl);
    CHECK(r.estimate.train_hours == Approx(w.steps * r.rl->step_time_s / 3600));
    CHECK(r.estimate.total_hours > r.estimate.train_hours);  // with job overheads
  }
  // Only split placements when asked.
  RlWorkload s = w;
  s.placement = RlPlacement::split;
  for (const auto& r : recommend_rl(model("qwen2.5-7b"), s, cat(), req).rows) CHECK(r.rl->placement == RlPlacement::split);
}

TEST_CASE("CLI: the issue's command gives a pick, estimate JSON has the rl stages, wrong flags exit 2") {
  auto r = run("recommend --params 7B --task rl --prompts-per-step 256 --samples-per-prompt 8 --response-tokens 1024");
  CHECK(r.code == 0);
  CHECK(r.out.rfind("Recommended: ", 0) == 0);
  CHECK(r.out.find("PLACEMENT") != std::string::npos);
  {
    // Its rows mark the pick, as training and serving rows do.
    const auto rows = nlohmann::json::parse(run("recommend --params 7B --task rl --format json").out)["options"];
    int picks = 0;
    for (const auto& row : rows) picks += row["pick"].get<bool>() ? 1 : 0;
    CHECK(picks == 1);
    CHECK(rows[0]["pick"] == true);
  }
  r = run("estimate --task rl --instance p5.48xlarge --params 7B --response-tokens 1024 --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"generation_s", "scoring_s", "training_s", "weight_sync_s", "step_time_s"}) CHECK(j["rl"][k].is_number());
  CHECK(j["rl"]["step_time_s"].get<double>() ==
        Approx(j["rl"]["generation_s"].get<double>() + j["rl"]["scoring_s"].get<double>() + j["rl"]["training_s"].get<double>() +
               j["rl"]["weight_sync_s"].get<double>()).epsilon(1e-4));
  CHECK(j["workload"]["task"] == "rl");
  r = run("estimate --task rl --instance p5.48xlarge --count 2 --params 7B --placement split --format json");
  REQUIRE(r.code == 0);
  const auto s = nlohmann::json::parse(r.out);
  CHECK(s["rl"]["rollout"]["accelerators"].get<int>() + s["rl"]["trainer"]["accelerators"].get<int>() == 16);
  for (const char* bad : {"--algorithm sac", "--placement nearby", "--reward model", "--policy-update half", "--samples-per-prompt 0",
                          "--response-tokens 2k --response-tokens-max 1k", "--async --placement colocated", "--tokens 1B", "--max-tpot 50ms",
                          "--reward-model no-such-model"}) {
    r = run(std::string("recommend --params 7B --task rl ") + bad);
    INFO(bad << ": " << r.err);
    CHECK(r.code == 2);
  }
  // Each refused flag gets its own reason: --data-region was told "the step's tokens follow from ...".
  r = run("recommend --params 7B --task rl --data-region us-west-2");
  CHECK(r.code == 2);
  CHECK(r.err.find("--data-region applies to pretrain, finetune, lora and qlora") != std::string::npos);
  r = run("recommend --params 7B --task rl --seq-len 4096");
  CHECK(r.code == 2);
  CHECK(r.err.find("--seq-len does not apply to --task rl: the step's tokens follow from") != std::string::npos);
  r = run("recommend --params 7B --task lora --response-tokens 1024");
  CHECK(r.code == 2);
  CHECK(r.err.find("--response-tokens applies to --task rl only") != std::string::npos);
  r = run("cost --params 7B --task rl --instance p5.48xlarge --count 2 --format json");
  CHECK(r.code == 0);
  CHECK(run("estimate --task rl --instance p5.48xlarge --params 7B --async").code == 2);  // one instance cannot be split
  CHECK(run("recommend --params 7B --task rl --reward rule --reward-model 7B").code == 2);
  CHECK(run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 0").code == 2);
}

TEST_CASE("best-of-N with a verifier: its weights share the replica and its forward passes add to each request") {
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.prompt_tokens = 1024;
  r.output_tokens = 512;
  r.samples = 8;
  const InferenceWorkload plain = make_inference_workload(r);
  r.verifier = model("llama-3-8b");
  const InferenceWorkload verified = make_inference_workload(r);
  const Cluster c = cluster("p5.48xlarge");
  std::string problem;
  const InferenceEstimate a = estimate_inference(model("qwen2.5-7b"), plain, c, ServingLayout{1, 1}, 64, &problem);
  const InferenceEstimate b = estimate_inference(model("qwen2.5-7b"), verified, c, ServingLayout{1, 1}, 64, &problem);
  CHECK(b.memory.weights_gb == Approx(a.memory.weights_gb + inference_weight_bytes(model("llama-3-8b"), WeightFormat::bf16) / 1e9));
  CHECK(b.prefill_gpu_s_per_request > a.prefill_gpu_s_per_request);
  CHECK(b.requests_per_second < a.requests_per_second);
  auto cli = run("recommend --model qwen2.5-7b --task inference --samples 8 --verifier-model llama-3-8b");
  CHECK(cli.code == 0);
  CHECK(run("recommend --model qwen2.5-7b --task inference --verifier-model llama-3-8b").code == 2);  // needs --samples >= 2
}

TEST_CASE("serving defaults to the checkpoint's own weight format (gpt-oss: fp4), and --weights overrides it") {
  auto r = run("estimate --task inference --instance p5.48xlarge --model gpt-oss-120b --format json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["precision"]["weights"] == "fp4");
  CHECK(r.err.find("the checkpoint's own format") != std::string::npos);
  r = run("estimate --task inference --instance p5.48xlarge --model gpt-oss-120b --weights bf16 --format json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["precision"]["weights"] == "bf16");
  r = run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --format json");
  CHECK(nlohmann::json::parse(r.out)["precision"]["weights"] == "bf16");
}

TEST_CASE("RL: the frozen models and an offloaded training state must fit where they are held") {
  // A hostile review: a 70B reward model scored on one 24 GB A10G, and a 1000T one on 128 x p4d, were priced.
  auto r = run("estimate --task rl --instance g5.xlarge --params 1B --reward model --reward-model 70B");
  CHECK(r.code == 3);
  CHECK(r.err.find("scoring: the frozen models (") != std::string::npos);
  CHECK(r.err.find("the reward model, ") != std::string::npos);
  r = run("recommend --params 7B --task rl --reward model --reward-model 1000T");
  CHECK(r.code == 3);
  // A 70B reward model needs about 141 GB of bf16 weights: the pick holds it across its accelerators.
  r = run("recommend --params 1B --task rl --reward model --reward-model 70B --format json");
  REQUIRE(r.code == 0);
  const auto pick = nlohmann::json::parse(r.out)["recommendation"];
  CHECK(pick["accelerators"].get<int>() >= 2);
  // The policy's own state offloaded while generating must fit the host: 18.1 GB of it against g5.xlarge's 16 GiB.
  r = run("estimate --task rl --instance g5.xlarge --params 1B");
  CHECK(r.code == 3);
  CHECK(r.err.find("of host memory per instance, more than the instance's 16 GiB") != std::string::npos);
  // With host memory to spare it is offloaded, as before.
  r = run("estimate --task rl --instance g5.2xlarge --params 1B");
  CHECK(r.code == 0);
}
