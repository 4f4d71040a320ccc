// The serving simulator (src/serving/): hand-computable cases (one request
// alone, a fixed batch), Little's law on its own output, percentiles that
// order and rise near capacity, determinism, and the CLI around it.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <regex>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "test_files.hpp"
#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/inference.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/search/replicas.hpp"
#include "gpuadvisor/serving/arrivals.hpp"
#include "gpuadvisor/serving/lengths.hpp"
#include "gpuadvisor/serving/simulate.hpp"
#include "gpuadvisor/serving/step_time.hpp"
#include "gpuadvisor/validation/validation.hpp"
#include "gpuadvisor/workload/engine.hpp"
#include "gpuadvisor/workload/trace.hpp"
#include "gpuadvisor/base/errors.hpp"

using namespace gpuadvisor;

namespace {
const Catalog& cat() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}
struct Replica {
  ModelSpec m;
  InferenceWorkload w;
  Cluster c;
  InferenceEstimate e;
};
Replica replica(const char* instance, const char* preset, double prompt, double output, int tp, int ep = 1, int attention_dp = 1,
                const char* engine = "vllm") {
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.engine = find_engine(engine);
  Replica x{*find_model_preset(preset), make_inference_workload(r), {}, {}};
  const Instance* i = cat().find_instance(instance);
  x.c = Cluster{i, &cat().accelerator_of(*i), 1};
  std::string problem;
  x.e = estimate_inference(x.m, x.w, x.c, ServingLayout{tp, 1, ep, attention_dp}, std::nullopt, &problem);
  REQUIRE(x.e.fits());
  return x;
}
ServingLoad closed(int clients, int requests, double prompt, double output) {
  ServingLoad l;
  l.arrivals.closed_loop = true;
  l.arrivals.clients = clients;
  l.requests = requests;
  l.prompt = length_distribution(prompt, prompt, 0);
  l.output = length_distribution(output, output, 0);
  return l;
}
ServingLoad open(double rate, int requests, double prompt, double output) {
  ServingLoad l = closed(0, requests, prompt, output);
  l.arrivals.closed_loop = false;
  l.arrivals.requests_per_second = rate;
  return l;
}
}  // namespace

TEST_CASE("One request alone takes its prefill step, then one decode step per further token at its growing context") {
  Replica x = replica("g6e.xlarge", "llama-3-8b", 512, 64, 1);
  const SimulatedService s = simulate_service(x.m, x.w, x.c, x.e, closed(1, 1, 512, 64));
  StepTimer timer(x.m, x.w, x.c, x.e);
  StepComposition prefill;
  prefill.prefill_tokens = 512;
  prefill.prefill_attended_pairs = 512 * 256.0;  // each prompt token attends half the prompt on average
  const double ttft = timer.step_s(prefill);
  double e2e = ttft;
  for (int t = 1; t < 64; ++t) {
    StepComposition d;
    d.decode_sequences = 1;
    d.decode_attended_tokens = 512 + t - 1;
    e2e += timer.step_s(d);
  }
  CHECK(s.metrics.ttft_s.mean == Approx(ttft).epsilon(1e-9));
  CHECK(s.metrics.e2e_s.mean == Approx(e2e).epsilon(1e-3));  // decode steps run together, timed at their mean context
  CHECK(s.metrics.queue_s.mean == 0);
  CHECK(s.metrics.preemptions == 0);
  CHECK(!s.metrics.first_visible_s);  // no hidden tokens: no first-visible figure
  // With 40 of the 64 tokens hidden reasoning, the first visible token comes
  // 40 of the request's own token gaps after its first token.
  x.w.reasoning_tokens = 40;
  const SimulatedService r = simulate_service(x.m, x.w, x.c, x.e, closed(1, 1, 512, 64));
  REQUIRE(r.metrics.first_visible_s);
  CHECK(r.metrics.first_visible_s->mean == Approx(r.metrics.ttft_s.mean + 40 * r.metrics.tpot_s.mean).epsilon(1e-12));
  CHECK(r.metrics.first_visible_s->mean == Approx(ttft + 40 * (e2e - ttft) / 63).epsilon(1e-3));
}

TEST_CASE("An expert-parallel replica's simulated steps carry its all-to-alls, as the analytic decode step does") {
  for (int attention_dp : {1, 8}) {
    Replica x = replica("p6-b300.48xlarge", "deepseek-v3", 128, 256, 8, 8, attention_dp);
    const int batch = 32;
    const SimulatedService s = simulate_service(x.m, x.w, x.c, x.e, closed(batch, batch, 128, 256));
    InferenceEstimate at = x.e;
    evaluate_batch(x.m, x.w, x.c, at, batch);
    if (attention_dp > 1)
      REQUIRE(at.step.expert_parallel_s > 2 * 58 * kExpertAllToAllLatencyS);  // 2 x 58 all-to-alls of 25 us and their bytes
    else
      REQUIRE(at.step.expert_parallel_s == 0);  // attention TP: every rank holds every token, nothing to dispatch
    CHECK(s.metrics.tpot_s.p50 == Approx(at.step.total_s()).epsilon(0.01));
  }
}

TEST_CASE("A fixed batch with no further arrivals decodes at the analytic decode step of that batch") {
  Replica x = replica("p5.48xlarge", "llama-3-70b", 128, 512, 8);
  const int batch = 16;
  const SimulatedService s = simulate_service(x.m, x.w, x.c, x.e, closed(batch, batch, 128, 512));
  // All 16 prompts (2,048 tokens) are prefilled in one step, then decode together.
  InferenceEstimate at = x.e;
  evaluate_batch(x.m, x.w, x.c, at, batch);  // its step at the mean context, prompt + half the output
  CHECK(s.metrics.tpot_s.p50 == Approx(at.step.total_s()).epsilon(0.01));
  CHECK(s.metrics.tpot_s.p99 == Approx(s.metrics.tpot_s.p50).epsilon(1e-6));
  CHECK(s.metrics.mean_sequences == Approx(batch).epsilon(1e-9));
}

TEST_CASE("SGLang's receive interval: an arriving prompt waits for the server's next look, an idle server looks at once") {
  Replica x = replica("p5.48xlarge", "llama-3-70b", 512, 256, 8);
  auto run = [&](int interval, const ServingLoad& load) {
    x.w.scheduler_recv_interval = interval;
    return simulate_service(x.m, x.w, x.c, x.e, load);
  };
  // Poisson arrivals land at any phase of the looks, 10 decode steps apart:
  // each waits about half of them beyond what it waited at every step.
  const ServingLoad poisson = open(2.0, 2000, 512, 256);
  const SimulatedService every = run(1, poisson), tenth = run(10, poisson);
  const double step_s = every.metrics.tpot_s.mean;
  const double extra_s = tenth.metrics.queue_s.mean - every.metrics.queue_s.mean;
  CHECK(extra_s > 0.3 * 10 * step_s);
  CHECK(extra_s < 0.7 * 10 * step_s);
  CHECK(tenth.metrics.ttft_s.mean - every.metrics.ttft_s.mean == Approx(extra_s).epsilon(0.15));
  // One client: its next request finds the server idle, which looks at once.
  const ServingLoad alone = closed(1, 20, 512, 256);
  CHECK(run(30, alone).metrics.ttft_s.mean == run(1, alone).metrics.ttft_s.mean);
}

TEST_CASE("SGLang's prefill steps run alone: the decode batch waits them out, and a prompt's step is a lone prompt's step") {
  const Replica x = replica("p5.48xlarge", "llama-3-70b", 512, 200, 8, 1, 1, "sglang");
  const EngineLimits alone = engine_limits(x.m, x.w, x.c, x.e);
  REQUIRE(alone.prefill_pauses_decode);  // data/engines.json: SGLang without --enable-mixed-chunk
  EngineLimits mixed = alone;
  mixed.prefill_pauses_decode = false;
  const Replica v = replica("p5.48xlarge", "llama-3-70b", 512, 200, 8);
  REQUIRE_FALSE(engine_limits(v.m, v.w, v.c, v.e).prefill_pauses_decode);  // vLLM mixes
  ArrivalPattern open_loop;
  open_loop.closed_loop = false;
  // Two prompts at once, a third arriving 50.5 decode steps into their decode.
  auto run = [&](const EngineLimits& limits, int requests, double late_s) {
    std::vector<SimRequest> rs(requests);
    for (SimRequest& r : rs) {
      r.prompt_tokens = 512;
      r.output_tokens = 200;
    }
    if (requests > 2) rs[2].arrival_s = late_s;
    StepTimer timer(x.m, x.w, x.c, x.e);
    run_engine(rs, open_loop, limits, timer, x.m, *x.e.engine, EarlyStop{});
    return rs;
  };
  const std::vector<SimRequest> pair = run(alone, 2, 0);
  const double step_s = (pair[0].finish_s - pair[0].first_token_s) / 199;
  const double late_s = pair[0].first_token_s + 50.5 * step_s;
  // One request by itself: its first token is one step of its 512 prompt tokens.
  const double lone_prefill_s = run(alone, 1, 0)[0].first_token_s;
  const std::vector<SimRequest> a = run(alone, 3, late_s), m = run(mixed, 3, late_s);
  // Alone, the third's step carries its prompt and nothing else: the same
  // step as a lone request's, to the rounding of the clock.
  CHECK(a[2].first_token_s - a[2].scheduled_s == Approx(lone_prefill_s).epsilon(1e-9));
  // Mixed, its chunk rides with two decodes: a longer step, but the decodes
  // lose no step to it.
  CHECK(m[2].first_token_s - m[2].scheduled_s > lone_prefill_s);
  // The running pair waits out the lone prefill step: they finish later
  // than with the chunk mixed in, by at least the step they sat out less
  // what the mixed step cost beyond it.
  const double mixed_extra_s = (m[2].first_token_s - m[2].scheduled_s) - lone_prefill_s;
  CHECK(a[0].finish_s - m[0].finish_s > 0);
  CHECK(a[0].finish_s - m[0].finish_s == Approx(step_s - mixed_extra_s).margin(0.1 * step_s));
}

TEST_CASE("TGI's router: a prompt arriving while two decode waits 19 steps since the last join, unless enough wait or the engine is idle") {
  const Replica x = replica("g5.2xlarge", "llama-3-8b", 256, 200, 1, 1, 1, "tgi-1");
  const EngineLimits held = engine_limits(x.m, x.w, x.c, x.e);
  REQUIRE(held.join_ratio == 1.2);  // data/engines.json: TGI 1.x's router defaults
  REQUIRE(held.join_after_steps == 20);
  EngineLimits free = held;
  free.join_ratio = 0;
  free.join_after_steps = 0;
  ArrivalPattern open_loop;
  open_loop.closed_loop = false;
  // Requests 0 and 1 at once (the idle engine takes both), then `late`
  // arriving 4.5 decode steps after their first tokens.
  auto run = [&](const EngineLimits& limits, int late, double step_s, double first_token_s) {
    std::vector<SimRequest> rs(2 + late);
    for (SimRequest& r : rs) {
      r.prompt_tokens = 256;
      r.output_tokens = 200;
    }
    for (int i = 2; i < 2 + late; ++i) rs[i].arrival_s = first_token_s + 4.5 * step_s;
    StepTimer timer(x.m, x.w, x.c, x.e);
    run_engine(rs, open_loop, limits, timer, x.m, *x.e.engine, EarlyStop{});
    return rs;
  };
  const std::vector<SimRequest> pair = run(free, 0, 0, 0);
  const double first_s = pair[0].first_token_s;
  const double step_s = (pair[0].finish_s - first_s) / 199;
  // Alone in the queue beside two running: floor(1.2 x 2) = 2 must wait, so
  // it joins when TGI's waiting_tokens (1 + decode steps since the join)
  // reaches 20: 19 steps after the first tokens, not at the next step.
  const SimRequest one_free = run(free, 1, step_s, first_s)[2], one_held = run(held, 1, step_s, first_s)[2];
  CHECK(one_free.scheduled_s - one_free.arrival_s < 1.5 * step_s);  // the decode run is cut at its arrival
  CHECK(one_held.scheduled_s - first_s == Approx(19 * step_s).epsilon(0.03));
  CHECK(one_held.first_token_s - one_free.first_token_s == Approx(14 * step_s).epsilon(0.05));
  // Two arriving together meet the ratio: they join at once.
  const std::vector<SimRequest> two_free = run(free, 2, step_s, first_s), two_held = run(held, 2, step_s, first_s);
  CHECK(two_held[2].scheduled_s == two_free[2].scheduled_s);
  CHECK(two_held[3].first_token_s == two_free[3].first_token_s);
  // An idle engine takes a prompt at once: one client's requests are not held.
  ArrivalPattern one_client;
  one_client.closed_loop = true;
  one_client.clients = 1;
  auto client = [&](const EngineLimits& limits) {
    std::vector<SimRequest> rs(5);
    for (SimRequest& r : rs) r.output_tokens = 200;
    StepTimer timer(x.m, x.w, x.c, x.e);
    run_engine(rs, one_client, limits, timer, x.m, *x.e.engine, EarlyStop{});
    return rs.back().first_token_s;
  };
  CHECK(client(held) == client(free));
  CHECK(client(held) > 0);
}

TEST_CASE("TGI's router hold caps the analytic largest batch where the simulated replica saturates (hand-computed, then simulated)") {
  const Replica x = replica("p5.4xlarge", "llama-3-8b", 1024, 256, 1, 1, 1, "tgi-1");
  const Accelerator& acc = *x.c.accelerator;
  // 4096-token budget / 1024-token prompts: 4 per prefill. The ratio admits
  // them while floor(1.2 B) <= 4: up to floor(4 / 1.2) + 4 = 7 in flight;
  // past that 4 join every 20 steps of 256: ceil(4 x 256 / 20) = 52.
  CHECK(router_batch_cap(*x.e.engine, acc, x.w) == 52);
  InferenceWorkload long_hold = x.w;
  long_hold.max_waiting_tokens = 1000;
  CHECK(router_batch_cap(*x.e.engine, acc, long_hold) == 7);  // max(7, ceil(4 x 256 / 1000) = 2)
  CHECK(router_batch_cap(*find_engine("vllm"), acc, x.w) == std::numeric_limits<int>::max());
  // The analytic capacity at that batch is what the simulated replica serves
  // when prompts always wait (it was 4.6x the simulated at 1000 steps).
  for (const InferenceWorkload& w : {x.w, long_hold}) {
    InferenceWorkload offline = w;
    offline.max_ttft_s.reset();
    offline.max_tpot_s.reset();
    std::string problem;
    const InferenceEstimate e = estimate_inference(x.m, offline, x.c, ServingLayout{1, 1}, std::nullopt, &problem);
    REQUIRE(e.fits());
    const double simulated = simulate_service(x.m, offline, x.c, e, open(100, 2000, 1024, 256)).metrics.requests_per_second;
    CHECK(e.batch == router_batch_cap(*e.engine, acc, offline));
    CHECK(e.requests_per_second == Approx(simulated).epsilon(0.15));
  }
}

TEST_CASE("The engine's token budget per step: a wave of prompts is prefilled a budget at a time, the first answered first") {
  Replica x = replica("p5.48xlarge", "llama-3-70b", 1000, 64, 8);
  auto run = [&](std::optional<int> budget) {
    x.w.max_batched_tokens = budget;
    return simulate_service(x.m, x.w, x.c, x.e, closed(8, 8, 1000, 64)).metrics;
  };
  // 8 prompts of 1,000 tokens arrive together. With room for all of them
  // (8,192 tokens) they share one step and see one TTFT; with room for about
  // one (1,008: the first prompt and 8 tokens of the next), the k-th answers
  // after about k such steps: about 4.5 steps in the mean, against the 8
  // prompts' one step. Smaller steps run their matrices less efficiently
  // (74 ms for one prompt alone, 64 ms each in one step of eight) and carry
  // the answered prompts' decode tokens, so the last answers somewhat after
  // the shared step would have.
  const ServiceMetrics wide = run(8192), narrow = run(1008);
  CHECK(wide.ttft_s.p99 == Approx(wide.ttft_s.p50).epsilon(1e-9));
  CHECK(narrow.ttft_s.p99 > wide.ttft_s.p99);
  CHECK(narrow.ttft_s.p99 < 1.4 * wide.ttft_s.p99);
  CHECK(narrow.ttft_s.mean < 0.8 * wide.ttft_s.mean);
  CHECK(narrow.ttft_s.mean > 0.5 * wide.ttft_s.mean);
  // The default is the profile's (vLLM on an 80 GB GPU: 8,192), byte for byte.
  CHECK(run(std::nullopt).ttft_s.mean == wide.ttft_s.mean);
}

TEST_CASE("TensorRT-LLM's attention-DP balance: a prompt waits for one per rank or the timeout, an idle rank releases at once") {
  Replica x = replica("p5.48xlarge", "qwen3-30b-a3b", 512, 256, 8, 8, 8);
  auto run = [&](std::optional<int> timeout, const ServingLoad& load) {
    x.w.attention_dp_balance_iters = timeout;
    return simulate_service(x.m, x.w, x.c, x.e, load).metrics;
  };
  // Poisson arrivals far fewer than 8 per 60 iterations, among more sequences
  // in flight than ranks (no rank idle): each is held to the next timeout,
  // which restarts at every release: about 30 steps at a random phase.
  const ServingLoad sparse = open(1.0, 1000, 512, 2048);
  const ServiceMetrics off = run(std::nullopt, sparse), on = run(60, sparse);
  const double step_s = off.tpot_s.mean;
  const double held_s = on.queue_s.mean - off.queue_s.mean;
  CHECK(held_s > 0.3 * 60 * step_s);
  CHECK(held_s < 0.7 * 60 * step_s);
  // Eight clients start together on an idle replica: every rank has one, released at once.
  const ServingLoad together = closed(8, 8, 512, 256);
  CHECK(run(60, together).ttft_s.mean == run(std::nullopt, together).ttft_s.mean);
  // Without attention data parallelism there is nothing to balance.
  Replica tp = replica("p5.48xlarge", "qwen3-30b-a3b", 512, 256, 8, 8, 1);
  const ServiceMetrics tp_off = simulate_service(tp.m, tp.w, tp.c, tp.e, sparse).metrics;
  tp.w.attention_dp_balance_iters = 60;
  CHECK(simulate_service(tp.m, tp.w, tp.c, tp.e, sparse).metrics.ttft_s.mean == tp_off.ttft_s.mean);
}

TEST_CASE("Little's law holds on the simulator's own output") {
  Replica x = replica("g6e.xlarge", "llama-3-8b", 1024, 256, 1);
  const SimulatedService s = simulate_service(x.m, x.w, x.c, x.e, open(2.0, 2000, 1024, 256));
  const ServiceMetrics& m = s.metrics;
  REQUIRE(m.completed == 2000);
  // L (sequences running, over the whole run) = lambda (served rate) x W (time from admission to the last token).
  const double running_over_run = m.mean_sequences * m.busy_share;
  const double in_service_s = m.e2e_s.mean - m.queue_s.mean;
  CHECK(running_over_run == Approx(m.requests_per_second * in_service_s).epsilon(0.01));
  CHECK(m.requests_per_second == Approx(2.0).epsilon(0.1));
}

TEST_CASE("Percentiles order, and the p99 time to first token rises steeply as the load nears the replica's capacity") {
  Replica x = replica("g6e.xlarge", "llama-3-8b", 1024, 256, 1);
  // Capacity: what a closed loop of many clients gets served.
  const double capacity = simulate_service(x.m, x.w, x.c, x.e, closed(512, 3000, 1024, 256)).metrics.requests_per_second;
  const ServiceMetrics light = simulate_service(x.m, x.w, x.c, x.e, open(0.3 * capacity, 2000, 1024, 256)).metrics;
  const ServiceMetrics busy = simulate_service(x.m, x.w, x.c, x.e, open(0.8 * capacity, 2000, 1024, 256)).metrics;
  const ServiceMetrics heavy = simulate_service(x.m, x.w, x.c, x.e, open(0.97 * capacity, 2000, 1024, 256)).metrics;
  const ServiceMetrics over = simulate_service(x.m, x.w, x.c, x.e, open(1.5 * capacity, 2000, 1024, 256)).metrics;
  for (const ServiceMetrics* m : {&light, &busy, &heavy, &over})
    for (const Percentiles* p : {&m->ttft_s, &m->tpot_s, &m->e2e_s, &m->queue_s}) {
      CHECK(p->p99 >= p->p90);
      CHECK(p->p90 >= p->p50);
    }
  // Continuous batching is a many-slot server: the queue stays short until
  // the slots (or the KV blocks) are all taken, then grows without bound.
  CHECK(busy.ttft_s.p99 > light.ttft_s.p99);
  CHECK(heavy.ttft_s.p99 > busy.ttft_s.p99);
  CHECK(over.ttft_s.p99 > 10 * heavy.ttft_s.p99);
  CHECK_FALSE(light.saturated);
  CHECK(over.saturated);
}

TEST_CASE("The simulation is deterministic, bursty arrivals wait longer, and lengths follow their distribution") {
  Replica x = replica("g6e.xlarge", "llama-3-8b", 1024, 256, 1);
  const ServiceMetrics a = simulate_service(x.m, x.w, x.c, x.e, open(3, 1000, 1024, 256)).metrics;
  const ServiceMetrics b = simulate_service(x.m, x.w, x.c, x.e, open(3, 1000, 1024, 256)).metrics;
  CHECK(a.ttft_s.p99 == b.ttft_s.p99);
  CHECK(a.e2e_s.mean == b.e2e_s.mean);
  ServingLoad bursty = open(3, 1000, 1024, 256);
  bursty.arrivals.gap_cv = 3;
  CHECK(simulate_service(x.m, x.w, x.c, x.e, bursty).metrics.ttft_s.p99 > a.ttft_s.p99);
  Random r(7);
  const LengthDistribution u = length_distribution(1000, 1000, 0.5), ln = length_distribution(1000, 3000, 0);
  CHECK(u.shape == LengthShape::uniform);
  CHECK(ln.shape == LengthShape::lognormal);
  double sum = 0, lo = 1e9, hi = 0;
  for (int i = 0; i < 20000; ++i) {
    const int v = u.draw(r);
    sum += v, lo = std::min<double>(lo, v), hi = std::max<double>(hi, v);
  }
  CHECK(sum / 20000 == Approx(1000).epsilon(0.01));
  CHECK(lo >= 500);
  CHECK(hi <= 1500);
  std::vector<double> draws;
  for (int i = 0; i < 20000; ++i) draws.push_back(ln.draw(r));
  std::sort(draws.begin(), draws.end());
  CHECK(draws[19000] == Approx(3000).epsilon(0.05));  // the p95
  // Past a lognormal's reach (p95 above e^(1.645^2/2) = 3.87 x the mean) the
  // widest is drawn: its p95 is widest_lognormal_p95, as the assumption says.
  CHECK(widest_lognormal_p95(100) == Approx(386.5).epsilon(0.001));
  CHECK(most_p95_length(1) == 1);
  CHECK(most_p95_length(100) == 1981);
  const LengthDistribution wide = length_distribution(100, 1500, 0);
  draws.clear();
  for (int i = 0; i < 20000; ++i) draws.push_back(wide.draw(r));
  std::sort(draws.begin(), draws.end());
  CHECK(draws[19000] == Approx(widest_lognormal_p95(100)).epsilon(0.05));
  // A one-token service's outputs stay one token under a spread: rounded,
  // 1 x (1 +- 0.99) made a quarter of them two tokens, with a TPOT it does not bind.
  InferenceRequest short_answers;
  short_answers.output_tokens = 1;
  short_answers.length_spread = 0.99;
  short_answers.requests_per_second = 5;
  const InferenceWorkload one_token = make_inference_workload(short_answers);
  REQUIRE(one_token.one_token_outputs());
  const auto one_load = serving_load(one_token, 5.0, 1.0);
  REQUIRE(one_load);
  CHECK(one_load->output.shape == LengthShape::fixed);
  for (int i = 0; i < 1000; ++i) CHECK(one_load->output.draw(r) == 1);
  CHECK(one_load->prompt.shape == LengthShape::uniform);  // the prompts keep theirs
  CHECK(arrival_cv_from_string("gamma:2") == 2.0);
  CHECK(arrival_cv_from_string("poisson") == 1.0);
  CHECK_FALSE(arrival_cv_from_string("gamma:x"));
  CHECK_FALSE(arrival_cv_from_string("gamma:-1"));
  // The number grammar of every flag: no hex, sign, leading zero or spaces.
  for (const char* odd : {"gamma:0x14", "gamma:0x1p1", "gamma:+2", "gamma:02", "gamma: 2", "gamma:2 ", "gamma:", "gamma:2x"}) {
    INFO(odd);
    CHECK_FALSE(arrival_cv_from_string(odd));
  }
  CHECK(arrival_cv_from_string("gamma:0.5") == 0.5);
  CHECK(arrival_cv_from_string("gamma:1e1") == 10.0);
}

TEST_CASE("When the KV cache runs short the engine preempts and recomputes, and a reserving engine never does") {
  Replica x = replica("g6e.xlarge", "llama-3-8b", 2048, 2048, 1);
  InferenceEstimate tight = x.e;
  // Leave room for about 40 sequences of 3,000 tokens: 64 clients outgrow it mid-decode.
  tight.memory.capacity_gb = tight.memory.weights_gb + tight.memory.workspace_gb + tight.memory.reserve_gb +
                             40 * 3000 * kv_cache_bytes_per_token(x.m, x.e.precision.kv_cache, 1) / 1e9;
  const SimulatedService s = simulate_service(x.m, x.w, x.c, tight, closed(64, 256, 2048, 2048));
  CHECK(s.metrics.preemptions > 0);
  CHECK(s.metrics.completed == 256);
  CHECK(s.metrics.kv_utilisation <= 1.0);
  CHECK(s.metrics.kv_utilisation > 0.8);
  InferenceWorkload reserving = x.w;
  reserving.engine = find_engine("trtllm");
  InferenceEstimate t2 = tight;
  t2.engine = find_engine("trtllm");
  const SimulatedService r = simulate_service(x.m, reserving, x.c, t2, closed(64, 256, 2048, 2048));
  CHECK(r.metrics.preemptions == 0);
  CHECK(r.metrics.completed == 256);
  // A reservation is held to the end, through the decode-only runs too: room
  // for about 29 whole requests of 4,096 tokens (120,000 / 4,096) keeps at
  // most that many in flight, and the blocks in use never fall to the
  // tokens cached (about half of each reservation on the mean); 256
  // requests through 64 clients leave every reservation-sized slot full.
  CHECK(r.metrics.mean_sequences <= 120000.0 / 4096);
  CHECK(r.metrics.mean_sequences > 25);
  CHECK(r.metrics.kv_utilisation > 0.85);
}

TEST_CASE("estimate simulates the load it is given: percentiles in JSON, default targets reported rather than refused") {
  using cli_test::run;
  const auto r = run("estimate --task inference --instance p5.48xlarge --model llama-3.1-70b --weights fp8 --tp 4 --engine vllm --clients 32 "
                     "--prompt-tokens 1024 --output-tokens 1024 --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j["inference"]["at_load"]["percentiles"];
  for (const char* k : {"ttft_s", "tpot_s", "e2e_s", "queue_s"}) {
    CHECK(p[k]["p99"].get<double>() >= p[k]["p90"].get<double>());
    CHECK(p[k]["p90"].get<double>() >= p[k]["p50"].get<double>());
    CHECK(p[k]["mean"].get<double>() >= 0);
  }
  CHECK(j["inference"]["at_load"]["load"]["clients"] == 32);
  CHECK(j["inference"]["at_load"]["model"] == "simulated");
  CHECK(j["inference"]["at_load"]["engine_limits"]["prefill_pauses_decode"] == false);  // vLLM mixes chunks into decode steps
  const auto sglang = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --engine sglang --clients 4 --format json");
  REQUIRE(sglang.code == 0);
  CHECK(nlohmann::json::parse(sglang.out)["inference"]["at_load"]["engine_limits"]["prefill_pauses_decode"] == true);
  // A load the replica cannot carry within the targets says so first, at the
  // percentile the targets bind at; one it carries says nothing of them.
  const auto heavy = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --clients 64 --max-ttft 200ms");
  REQUIRE(heavy.code == 0);
  CHECK(heavy.out.find("MISSES ITS LATENCY TARGETS AT THIS LOAD: the simulated p90 time to first token is") != std::string::npos);
  CHECK(heavy.out.find("(target 200 ms)") != std::string::npos);  // the user's target
  const auto mean = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --clients 64 --max-ttft 200ms --slo-percentile mean");
  CHECK(mean.out.find("AT THIS LOAD: the simulated mean time to first token") != std::string::npos);
  const auto light = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --clients 1");
  REQUIRE(light.code == 0);
  CHECK(light.out.find("AT THIS LOAD") == std::string::npos);
  // The same verdict in JSON, for a script: what it missed, and whether it met them.
  const auto heavy_json = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --clients 64 --max-ttft 200ms --format json");
  REQUIRE(heavy_json.code == 0);
  const auto heavy_load = nlohmann::json::parse(heavy_json.out)["inference"]["at_load"];
  CHECK(heavy_load["meets_targets"] == false);
  REQUIRE(heavy_load["target_misses"].size() >= 1);
  CHECK(heavy_load["target_misses"][0].get<std::string>().find("the simulated p90 time to first token is") == 0);
  CHECK(heavy_load["percentiles"]["ttft_s"]["p90"].get<double>() > 0.2);
  const auto light_load =
      nlohmann::json::parse(run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --clients 1 --format json").out)["inference"]["at_load"];
  CHECK(light_load["meets_targets"] == true);
  CHECK(light_load["target_misses"].empty());
  // The g5.xlarge 7B chat estimate that used to exit 3 on the default 450 ms TTFT.
  const auto g5 = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1");
  CHECK(g5.code == 0);
  CHECK(g5.out.find("default latency targets") != std::string::npos);
  // A target the user set still gates.
  CHECK(run("estimate --task inference --instance g5.xlarge --model llama-3-8b --batch 1 --max-ttft 100ms").code == 3);
}

TEST_CASE("The load flags refuse what they cannot mean") {
  using cli_test::run;
  const std::string base = "estimate --task inference --instance g6e.xlarge --model llama-3-8b ";
  CHECK(run(base + "--clients 8 --requests-per-second 2").code == 2);
  // The flag that set the open-loop rate is the one named.
  CHECK(run(base + "--clients 8 --tokens-per-day 1B").err.find("give only one of --clients (a closed loop: each user sends its next request "
                                                               "when the last completes) and --tokens-per-day") != std::string::npos);
  CHECK(run(base + "--clients 8 --batch 4").code == 2);
  CHECK(run(base + "--requests-per-second 2 --arrival gamma:x").code == 2);
  CHECK(run(base + "--arrival gamma:2").code == 2);  // no open-loop rate
  CHECK(run(base + "--clients 0").code == 2);
  CHECK(run(base + "--clients 8 --length-spread 1.5").code == 2);
  CHECK(run(base + "--clients 8 --length-spread 0.5 --prompt-tokens-p95 3000").code == 2);
  CHECK(run("recommend --params 7B --task inference --clients 8").code == 2);
  const auto few = run(base + "--clients 32 --simulated-requests 10");  // 22 clients would never send
  CHECK(few.code == 2);
  CHECK(few.err.find("fewer than the 32 clients") != std::string::npos);
  CHECK(run(base + "--clients 32 --simulated-requests 32").code == 0);
  CHECK(run(base + "--requests-per-second 1 --arrival gamma:2 --length-spread 0.5").code == 0);
}

TEST_CASE("Default chat targets follow the model's size class, from MLPerf's interactive scenarios") {
  const ServingTargets small = default_serving_targets(8e9), mid = default_serving_targets(70e9), big = default_serving_targets(405e9);
  CHECK(small.max_ttft_s == Approx(0.5));
  CHECK(small.max_tpot_s == Approx(0.030));
  CHECK(mid.max_ttft_s == Approx(0.45));
  CHECK(mid.max_tpot_s == Approx(0.040));
  CHECK(big.max_ttft_s == Approx(4.5));
  CHECK(big.max_tpot_s == Approx(0.080));
  // Unknown size: the 70B class, as before.
  CHECK(default_serving_targets(std::nullopt).max_tpot_s == Approx(0.040));
  // --params 150B builds a 150.3B shape: the assumption line shows the count and the class it falls in (a hostile review).
  const auto at_bound = cli_test::run("estimate --task inference --params 150B --instance p5.48xlarge");
  CHECK(at_bound.err.find("for a model of 150.3B parameters per token, over 150B, as MLPerf Inference's Llama-3.1-405B") != std::string::npos);
  InferenceRequest r;
  r.model_active_params = 3e9;  // a 30B MoE touching 3B a token is in the small class
  const InferenceWorkload w = make_inference_workload(r);
  CHECK(*w.max_tpot_s == Approx(0.030));
  CHECK(w.tpot_target_default);
  r.max_tpot_s = 0.1;  // the user's own target wins
  CHECK(*make_inference_workload(r).max_tpot_s == Approx(0.1));
}

TEST_CASE("Stopping a run once the targets are certainly missed never changes the verdict") {
  Replica x = replica("g6e.xlarge", "llama-3-8b", 1024, 256, 1);
  x.w.mode = ServingMode::online;
  x.w.max_ttft_s = 0.5;
  x.w.max_tpot_s = 0.03;
  int stopped_runs = 0;
  for (int percentile : {50, 90, 99}) {
    x.w.slo_percentile = percentile;
    for (double rate : {0.5, 2.0, 4.0, 6.0, 9.0}) {
      x.w.requests_per_second = rate;
      const ServingLoad load = *serving_load(x.w, rate);
      const ServiceMetrics whole = simulate_service(x.m, x.w, x.c, x.e, load).metrics;
      const ServiceMetrics stopped = simulate_service(x.m, x.w, x.c, x.e, load, true).metrics;
      INFO("p" << percentile << " at " << rate << " requests/s");
      CHECK(meets_targets(whole, x.w) == meets_targets(stopped, x.w));
      CHECK_FALSE(whole.stopped_early);
      if (stopped.stopped_early) CHECK_FALSE(meets_targets(whole, x.w));
      stopped_runs += stopped.stopped_early;
    }
  }
  CHECK(stopped_runs >= 3);  // the overloaded rates did stop early
  // The threshold: once N - floor(q (N - 1)) requests exceed the target, the q-quantile does.
  CHECK(early_stop_for(0.5, 0.03, 90, 1000).late_allowed == 1000 - 899 - 1);
  CHECK(early_stop_for(0.5, 0.03, 0, 1000).late_allowed == (1 << 30));  // the mean: never stopped
}

TEST_CASE("Replicas sized by simulation: the fewest that meet the targets at the percentile, and a stricter percentile never needs fewer") {
  RecommendRequest r;
  r.families = {"g6e"};
  InferenceRequest q;
  q.requests_per_second = 20;
  q.model_active_params = 8e9;
  const ModelSpec& m = *find_model_preset("llama-3-8b");
  auto pick_replicas = [&](int percentile) {
    InferenceRequest p = q;
    p.slo_percentile = percentile;
    const InferenceWorkload w = make_inference_workload(p);
    const ServingRecommendation rec = recommend_inference(m, w, cat(), r);
    REQUIRE(rec.pick);
    return std::pair(*rec.pick, w);
  };
  const auto [p90, w90] = pick_replicas(90);
  REQUIRE(p90.simulated);
  CHECK(p90.slo_percentile == 90);
  // What the deployed replicas' users see meets the targets at p90.
  CHECK(p90.simulated->ttft_s.p90 <= *w90.max_ttft_s);
  CHECK(p90.simulated->tpot_s.p90 <= *w90.max_tpot_s);
  CHECK(meets_targets(*p90.simulated, w90));
  // One whole instance fewer misses them (or would run past the replica's capacity).
  const int slots = p90.instance->accelerator_count / p90.estimate.layout.tp;
  if (p90.replicas > slots) {
    ServingRow fewer = p90;
    ReplicaSimulations sims;
    const int replicas = p90.replicas - slots;
    const bool over_capacity = *w90.requests_per_second / replicas > p90.estimate.requests_per_second;
    CHECK((over_capacity || !meets_targets(sims.whole(m, w90, fewer, replicas), w90)));
  }
  const auto [p99, w99] = pick_replicas(99);
  const auto [p50, w50] = pick_replicas(50);
  REQUIRE(p99.ranked_usd_per_hour);
  REQUIRE(p50.ranked_usd_per_hour);
  CHECK(*p99.ranked_usd_per_hour >= *p90.ranked_usd_per_hour);
  CHECK(*p90.ranked_usd_per_hour >= *p50.ranked_usd_per_hour);
}

TEST_CASE("The serving search gives the same answer in one thread as in several: rows, notes, rejections and the pick") {
  InferenceRequest q;
  q.requests_per_second = 20;
  q.prefix_share = 0.4;  // Neuron has no prefix cache: a note per such accelerator, in catalog order
  q.model_active_params = 8e9;
  const ModelSpec& m = *find_model_preset("llama-3-8b");
  const InferenceWorkload w = make_inference_workload(q);
  auto digest = [&](int jobs) {
    RecommendRequest r;
    r.jobs = jobs;
    const ServingRecommendation rec = recommend_inference(m, w, cat(), r);
    std::string out;
    for (const ServingRow& row : rec.rows) {
      const ServingLayout& l = row.estimate.layout;
      out += fmt::format("{} tp{} pp{} ep{} adp{} {} {} {:.9g} {:.9g}\n", row.instance->name, l.tp, l.pp, l.ep, l.attention_dp, row.replicas,
                         row.instances, row.ranked_usd_per_hour.value_or(-1), row.simulated ? row.simulated->ttft_s.p90 : -1.0);
    }
    for (const std::string& n : rec.notes) out += n + "\n";
    for (const Rejection& x : rec.rejections) out += x.instance + ": " + x.reason + "\n";
    out += fmt::format("{} {} {}\n", rec.pick ? rec.pick->instance->name : "none", rec.sizing, rec.best_batch1_option);
    return std::pair(out, rec.rows.size());
  };
  const auto [one, rows] = digest(1);
  REQUIRE(rows > 5);  // several accelerators, so several threads have work
  CHECK(one.find("has no prefix cache") != std::string::npos);
  CHECK(digest(3).first == one);
  CHECK(digest(16).first == one);
}

TEST_CASE("estimate --clients picks an MoE layout by the clients' simulated latency, as the layouts asked one by one show it") {
  using cli_test::run;
  const std::string base = "estimate --model deepseek-r1 --task inference --instance p5en.48xlarge --clients 64 --format json";
  auto at = [&](const std::string& layout) {
    const auto r = run(base + layout);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    return std::pair(j["layout"]["text"].get<std::string>(), j["inference"]["at_load"]["percentiles"]["e2e_s"]["mean"].get<double>());
  };
  const auto [chosen, chosen_e2e_s] = at("");
  double least_e2e_s = std::numeric_limits<double>::infinity();
  std::string least;
  for (const char* layout : {" --tp 8 --ep 1", " --tp 8 --ep 8 --attention-dp 1", " --tp 8 --ep 8 --attention-dp 8"}) {
    const auto [text, e2e_s] = at(layout);
    if (e2e_s < least_e2e_s) std::tie(least, least_e2e_s) = std::tie(text, e2e_s);
  }
  CHECK(chosen == least);
  CHECK(chosen_e2e_s == Approx(least_e2e_s));
  // At 64 clients experts spread whole beat tensor-sliced ones (TP8 has the longer mean latency), as the
  // requests-per-second estimate's layout already had it; the analytic capacity point chose TP8.
  CHECK(chosen == "TP8 EP8");
}

TEST_CASE("Bursts spread over replicas: a random balancer thins a gamma stream toward Poisson, and a bursty service is sized, not refused") {
  using cli_test::run;
  // CV^2 = 1 + (CV^2 - 1) / N, by hand.
  CHECK(replica_gap_cv(1, 7) == Approx(1));
  CHECK(replica_gap_cv(4, 1) == Approx(4));
  CHECK(replica_gap_cv(4, 5) == Approx(2));               // 1 + 15 / 5 = 4
  CHECK(replica_gap_cv(0.5, 4) == Approx(std::sqrt(1 - 0.75 / 4)));
  CHECK(replica_gap_cv(4, 0.3) == Approx(4));              // below one replica's share: the stream itself
  // One replica's simulated load takes the thinned CV.
  InferenceRequest q;
  q.requests_per_second = 10;
  q.arrival_cv = 5;
  const InferenceWorkload w = make_inference_workload(q);
  CHECK(serving_load(w, 10.0)->arrivals.gap_cv == Approx(5));
  CHECK(serving_load(w, 2.0)->arrivals.gap_cv == Approx(std::sqrt(1 + 24.0 / 5)));
  // A burstier stream needs at least as many replicas, and a count is found
  // (a stream of CV 6 once asked for more than 4,096 replicas of p5.48xlarge).
  auto replicas = [&](const char* arrival) {
    const auto r = run(std::string("estimate --task inference --instance p5.48xlarge --model llama-3.1-70b --requests-per-second 5 --arrival ") +
                       arrival + " --format json");
    INFO(arrival << ": " << r.out << r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out)["inference"]["replicas"].get<int>();
  };
  const int at2 = replicas("gamma:2"), at4 = replicas("gamma:4"), at6 = replicas("gamma:6");
  CHECK(at2 <= at4);
  CHECK(at4 <= at6);
  CHECK(at6 < 16);
  // recommend and cost take the burst; --clients (a benchmark's closed loop) stays estimate's.
  CHECK(run("recommend --model llama-3.1-70b --task inference --requests-per-second 5 --arrival gamma:4").code == 0);
  CHECK(run("cost --model llama-3.1-70b --task inference --requests-per-second 5 --arrival gamma:3 --length-spread 0.5").code == 0);
  const auto clients = run("recommend --model llama-3.1-70b --task inference --requests-per-second 5 --clients 4");
  CHECK(clients.code == 2);
  CHECK(clients.err.find("--requests-per-second") != std::string::npos);
}

TEST_CASE("The sizing note shows one instance fewer missing a target in figures that say so, never 30 ms against 30 ms") {
  using cli_test::run;
  // inf2 meets 30 ms per token only at a few sequences a replica: one instance
  // fewer misses by a fraction of a millisecond.
  const auto r = run("recommend --model llama-3-8b --task inference --requests-per-second 20 --family inf2 --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const std::string sizing = j["recommendation"]["sizing"].get<std::string>();
  const auto at = sizing.find("one instance fewer");
  REQUIRE(at != std::string::npos);
  const std::string fewer = sizing.substr(at);
  INFO(fewer);
  auto figure_ms = [&](const std::string& metric) {
    const auto k = fewer.find(metric + " ");
    if (k == std::string::npos) return -1.0;
    const double v = std::stod(fewer.substr(k + metric.size() + 1));
    return fewer.compare(fewer.find(' ', k + metric.size() + 1), 3, " ms") == 0 ? v : v * 1e3;
  };
  const bool misses = figure_ms("TTFT") > 500 || figure_ms("TPOT") > 30 || fewer.find("queue growing") != std::string::npos;
  CHECK(misses);
  // A short trace meets the targets at fewer replicas than can carry its rate:
  // the note says that the floor, not the latencies, rules one instance fewer out.
  test_files::TempDir dir("gpuadvisor_sizing_note");
  std::string trace;  // 2 requests a millisecond (timestamps in ms): 2,000 requests/s for one second
  for (int i = 1; i <= 2000; ++i) trace += "{\"timestamp\": " + std::to_string(i / 2) + (i % 2 ? ".5" : "") + ", \"input_length\": 1000, \"output_length\": 200}\n";
  test_files::write(dir.file("t.jsonl"), trace);
  const auto t = run("recommend --model llama-3-8b --task inference --family p6-b200 --format json --trace " + dir.file("t.jsonl"));
  REQUIRE(t.code == 0);
  const std::string note = nlohmann::json::parse(t.out)["recommendation"]["sizing"].get<std::string>();
  INFO(note);
  CHECK(note.find("one replica serves at the largest batch memory holds") != std::string::npos);
}

TEST_CASE("The fastest priced service is named beside a faster one whose price the catalog lacks, as training's sooner one is") {
  using cli_test::run;
  const auto r = run("recommend --model llama-3-70b --task inference --requests-per-second 5 --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const double fastest_tpot_s = j["alternatives"]["fastest"]["percentiles"]["tpot_s"]["p90"].get<double>();
  // The fastest row without a price (p6-b300 has no rate in the snapshot), more than 10% faster.
  std::string unpriced;
  double unpriced_tpot_s = 1e9;
  for (const auto& o : j["options"])
    if (o["usd_per_month"].is_null() && o["tpot_at_slo_s"].get<double>() < unpriced_tpot_s) {
      unpriced_tpot_s = o["tpot_at_slo_s"].get<double>();
      unpriced = o["instance"].get<std::string>();
    }
  REQUIRE(unpriced_tpot_s < 0.9 * fastest_tpot_s);
  const auto& named = j["alternatives"]["fastest_unpriced"];
  REQUIRE(named.is_object());
  CHECK(named["instance"] == unpriced);
  CHECK(named["costs"]["ranked_usd_per_month"].is_null());
  CHECK(named["percentiles"]["tpot_s"]["p90"].get<double>() == Approx(unpriced_tpot_s));
  const auto t = run("recommend --model llama-3-70b --task inference --requests-per-second 5");
  const size_t line = t.out.find("  fastest per token: ");
  REQUIRE(line != std::string::npos);
  const std::string fastest = t.out.substr(line, t.out.find('\n', line) - line);
  CHECK(fastest.find("; faster at a price the catalog lacks: 1 x " + unpriced + " (") != std::string::npos);
  CHECK(fastest.find(fmt::format("p90 {:.0f} ms per token", unpriced_tpot_s * 1e3)) != std::string::npos);
  // Where no row without a price is faster, the line and the key say nothing more.
  const auto priced = run("recommend --model llama-3-70b --task inference --requests-per-second 5 --family p4d,p5 --format json");
  REQUIRE(priced.code == 0);
  CHECK(nlohmann::json::parse(priced.out)["alternatives"]["fastest_unpriced"].is_null());
  CHECK(run("recommend --model llama-3-70b --task inference --requests-per-second 5 --family p4d,p5").out.find("faster at a price") == std::string::npos);
}

TEST_CASE("A service's fastest alternative is the fastest within --max-cost-multiple first, then the fastest at any price") {
  using cli_test::run;
  const std::string base = "recommend --model qwen3-235b-a22b --task inference --requests-per-second 5 --prompt-tokens 4000 --output-tokens 800";
  const auto r = run(base + " --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const double cheapest = j["alternatives"]["cheapest"]["costs"]["ranked_usd_per_month"].get<double>();
  const auto& fastest = j["alternatives"]["fastest"];
  const auto& within = j["alternatives"]["fastest_within_cost_ceiling"];
  // The fastest at any price is far dearer than twice the cheapest (17 p5en replicas for 5 requests/s).
  REQUIRE(fastest["costs"]["ranked_usd_per_month"].get<double>() > 2 * cheapest);
  REQUIRE(within.is_object());
  CHECK(within["costs"]["ranked_usd_per_month"].get<double>() <= 2 * cheapest * (1 + 1e-9));
  CHECK(within["percentiles"]["tpot_s"]["p90"].get<double>() >= fastest["percentiles"]["tpot_s"]["p90"].get<double>());
  // No priced row within the ceiling is faster than the one named.
  for (const auto& o : j["options"])
    if (!o["usd_per_month"].is_null() && o["usd_per_month"].get<double>() <= 2 * cheapest * (1 + 1e-9))
      CHECK(o["tpot_at_slo_s"].get<double>() >= within["percentiles"]["tpot_s"]["p90"].get<double>() - 1e-9);
  const auto t = run(base);
  CHECK(t.out.find("(the fastest within 2x the cheapest price, --max-cost-multiple); at any price: " +
                   std::to_string(fastest["count"].get<int>()) + " x " + fastest["instance"].get<std::string>()) != std::string::npos);
  CHECK(t.out.find("x the pick's price)") != std::string::npos);
  // No ceiling: the fastest at any price alone, as before.
  const auto none = run(base + " --max-cost-multiple 0 --format json");
  REQUIRE(none.code == 0);
  CHECK(nlohmann::json::parse(none.out)["alternatives"]["fastest_within_cost_ceiling"].is_null());
  CHECK(run(base + " --max-cost-multiple 0").out.find("--max-cost-multiple); at any price") == std::string::npos);
  CHECK(run(base + " --max-cost-multiple 0.5").code == 2);
}

TEST_CASE("recommend sizes a 7B chat service at 2 requests/s on one GPU per instance, with its p90 latencies shown") {
  using cli_test::run;
  const auto r = run("recommend --params 7B --task inference --requests-per-second 2 --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& pick = j["recommendation"];
  const Instance* inst = cat().find_instance(pick["instance"].get<std::string>());
  REQUIRE(inst);
  CHECK(inst->accelerator_count == 1);
  CHECK(pick["sized_by"] == "simulation");
  CHECK(pick["slo_percentile"] == 90);
  CHECK(pick["percentiles"]["ttft_s"]["p90"].get<double>() <= 0.5);
  CHECK(pick["percentiles"]["tpot_s"]["p90"].get<double>() <= 0.030);
  CHECK(pick["percentiles"]["ttft_s"]["p99"].get<double>() >= pick["percentiles"]["ttft_s"]["p90"].get<double>());
  // The text says which percentile its latencies are at.
  const auto t = run("recommend --params 7B --task inference --requests-per-second 2");
  CHECK(t.out.find("p90 TTFT") != std::string::npos);
  CHECK(t.out.find("TPOT P90") != std::string::npos);
  // --slo-percentile: its values, and a load to bind at.
  CHECK(run("recommend --params 7B --task inference --requests-per-second 2 --slo-percentile mean").code == 0);
  CHECK(run("recommend --params 7B --task inference --requests-per-second 2 --slo-percentile p99").code == 0);
  for (const char* bad : {"95", "p", "", "-1", "90%"}) {
    const auto e = run(std::string("recommend --params 7B --task inference --requests-per-second 2 --slo-percentile '") + bad + "'");
    INFO(bad);
    CHECK(e.code == 2);
    CHECK(e.err.find("--slo-percentile") != std::string::npos);
  }
  const auto no_load = run("recommend --params 7B --task inference --slo-percentile 99");
  CHECK(no_load.code == 2);
  CHECK(no_load.err.find("give a load") != std::string::npos);
  CHECK(no_load.err.find("--trace") != std::string::npos);
  CHECK(run("recommend --params 7B --task lora --slo-percentile 99").code == 2);
  // An offline service is sized by its analytic means: a percentile would be taken and ignored.
  for (const char* command : {"recommend", "cost"}) {
    const auto offline = run(std::string(command) + " --model llama-3-8b --task inference --mode offline --requests-per-second 5 --max-tpot 100ms --slo-percentile 99");
    INFO(command);
    CHECK(offline.code == 2);
    CHECK(offline.err.find("--mode offline is not simulated") != std::string::npos);
  }
  // estimate flags a miss at the percentile, offline too: it is used there.
  CHECK(run("estimate --instance g6e.xlarge --model llama-3-8b --task inference --mode offline --requests-per-second 5 --max-tpot 25ms --slo-percentile 99").code == 0);
}

TEST_CASE("A request trace reads as load generators and published traces write it, and refuses what it cannot mean") {
  // JSON Lines, Mooncake's keys: timestamp in milliseconds.
  const RequestTrace j = parse_request_trace("{\"timestamp\": 1000, \"input_length\": 100, \"output_length\": 20, \"hash_ids\": [1]}\n"
                                             "\n{\"timestamp\": 3500, \"input_length\": 300, \"output_length\": 40}\n"
                                             "{\"timestamp\": 2000, \"input_length\": 200, \"output_length\": 30}\n",
                                             "t.jsonl");
  REQUIRE(j.requests.size() == 3);
  CHECK(j.requests[0].arrival_s == Approx(0));
  CHECK(j.requests[1].arrival_s == Approx(1.0));  // sorted by arrival
  CHECK(j.requests[1].prompt_tokens == 200);
  CHECK(j.span_s() == Approx(2.5));
  // Seconds under arrival_s.
  CHECK(parse_request_trace("{\"arrival_s\": 0.5, \"prompt_tokens\": 1, \"output_tokens\": 1}\n{\"arrival_s\": 1.5, \"prompt_tokens\": 2, \"output_tokens\": 3}",
                            "s.jsonl").span_s() == Approx(1.0));
  // CSV: BurstGPT's header, and Azure's dates.
  const RequestTrace b = parse_request_trace("Timestamp,Model,Request tokens,Response tokens\n5,ChatGPT,472,18\n7.5,GPT-4,1000,200\n", "b.csv");
  CHECK(b.requests[1].prompt_tokens == 1000);
  CHECK(b.span_s() == Approx(2.5));
  const RequestTrace a = parse_request_trace("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 23:59:59.5000000,10,2\n2023-11-17 00:00:01.0000000,20,4\n", "a.csv");
  CHECK(a.span_s() == Approx(1.5));  // across midnight
  CHECK(parse_request_trace("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-02-29 00:00:00,10,2\n2024-03-01 00:00:00,20,4\n", "leap.csv").span_s() == Approx(86400));  // a leap day
  // A zone is applied (UTC): 18:15:46 at +05:00 is 13:15:46 UTC, five hours before 18:15:47 UTC.
  CHECK(parse_request_trace("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46+05:00,10,2\n2023-11-16T18:15:47Z,20,4\n", "tz.csv").span_s() ==
        Approx(5 * 3600 + 1));
  CHECK(parse_request_trace("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46-0030,10,2\n2023-11-16 18:46:46+00:00,20,4\n", "tz2.csv").span_s() ==
        Approx(60));  // 18:15:46 at -00:30 is 18:45:46 UTC
  // Refused, naming the file and the line.
  const std::pair<const char*, const char*> bad[] = {
      {"{\"timestamp\": 1, \"input_length\": 10}\n{\"timestamp\": 2, \"input_length\": 10, \"output_length\": 5}", "line 1"},
      {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 5}\n{\"timestamp\": 2, \"input_length\": 0, \"output_length\": 5}", "line 2"},
      {"{\"timestamp\": 1, \"input_length\": 10.5, \"output_length\": 5}\n{\"timestamp\": 2, \"input_length\": 3, \"output_length\": 5}", "whole number"},
      {"{\"timestamp\": \"x\", \"input_length\": 10, \"output_length\": 5}\n{\"timestamp\": 2, \"input_length\": 3, \"output_length\": 5}", "not a number"},
      {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 5}\n{oops", "not valid JSON"},
      {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 5}", "at least 2"},
      {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 5}\n{\"timestamp\": 1, \"input_length\": 3, \"output_length\": 5}", "same instant"},
      {"time,prompt,output\n1,2,3\n2,3,4\n", "header needs"},
      {"arrival_s,prompt_tokens,output_tokens\n1,2,3\nsoon,3,4\n", "neither seconds"},
      {"arrival_s,prompt_tokens,output_tokens\n1,2,3\n2,3\n", "2 fields, the header has 3"},
      {"arrival_s,prompt_tokens,output_tokens\n0,100,10,999,abc\n1,2,3\n", "5 fields, the header has 3"},
      {"arrival_s,prompt_tokens,prompt_tokens,output_tokens\n0,1,2,3\n1,2,3,4\n", "two header columns"},
      {"", "at least 2"},
      // A key given twice: a parser would keep one value without a word.
      {"{\"arrival_s\": 0, \"arrival_s\": 9, \"prompt_tokens\": 10, \"output_tokens\": 5}\n{\"arrival_s\": 1, \"prompt_tokens\": 3, \"output_tokens\": 5}", "'arrival_s' is given twice"},
      {"{\"arrival_s\": 0, \"timestamp\": 9, \"prompt_tokens\": 10, \"output_tokens\": 5}\n{\"arrival_s\": 1, \"prompt_tokens\": 3, \"output_tokens\": 5}", "name the same field"},
      // Seconds on one line and milliseconds on the next do not mix.
      {"{\"arrival_s\": 0, \"prompt_tokens\": 10, \"output_tokens\": 5}\n{\"timestamp\": 1000, \"prompt_tokens\": 3, \"output_tokens\": 5}", "line 2: the arrival is 'timestamp' where the first line gave 'arrival_s'"},
      // A date that is no date does not roll into the next month.
      {"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-28 10:00:00,10,2\n2023-02-30 10:00:00,20,4\n", "line 3: arrival '2023-02-30 10:00:00' is neither"},
      // Text after the time is no zone: never dropped without a word.
      {"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46 garbage,10,2\n2023-11-16 18:15:47,20,4\n", "line 2: arrival '2023-11-16 18:15:46 garbage' is neither"},
      {"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,10,2\n2023-11-16 18:15:47+25:00,20,4\n", "line 3: arrival"},
      {"[{\"arrival_s\": 0, \"prompt_tokens\": 10, \"output_tokens\": 5}]", "a JSON array; a trace is JSON Lines"},
  };
  for (const auto& [text, says] : bad) {
    INFO(text);
    try {
      parse_request_trace(text, "bad.trace");
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("--trace bad.trace") != std::string::npos);
      CHECK(std::string(e.what()).find(says) != std::string::npos);
    }
  }
}

TEST_CASE("A trace is the load: its rate and lengths, replicas taking its requests in turn, and the flags it sets refused beside it") {
  InferenceRequest q;
  q.trace = std::make_shared<const RequestTrace>(parse_request_trace(
      "{\"arrival_s\": 0, \"prompt_tokens\": 100, \"output_tokens\": 10}\n{\"arrival_s\": 1, \"prompt_tokens\": 300, \"output_tokens\": 30}\n"
      "{\"arrival_s\": 2, \"prompt_tokens\": 200, \"output_tokens\": 20}\n{\"arrival_s\": 4, \"prompt_tokens\": 400, \"output_tokens\": 40}\n",
      "four.jsonl"));
  const InferenceWorkload w = make_inference_workload(q);
  // 4 arrivals over 4 s: 3 gaps of 4/3 s on the mean, 0.75 requests/s (a
  // trace repeated end to end keeps that rate: the next period starts one
  // mean gap after its last arrival).
  CHECK(*w.requests_per_second == Approx(0.75));
  RequestTrace twice{"twice", replica_trace(*w.trace, 1.0, 8)};
  REQUIRE(twice.requests.size() == 8);
  CHECK(twice.requests[4].arrival_s == Approx(4 + 4.0 / 3));
  CHECK(twice.requests_per_second() == Approx(0.75));
  CHECK(w.prompt_tokens == Approx(250));
  CHECK(w.output_tokens == Approx(25));
  // Round robin: 2 replicas take requests 1 and 3 (from 0) ... every second one.
  const auto half = trace_share_of(*w.trace, 0.5, 100);
  REQUIRE(half.size() == 2);
  CHECK(half[0].prompt_tokens == 300);
  CHECK(half[1].prompt_tokens == 400);
  CHECK(trace_share_of(*w.trace, 1.0, 100).size() == 4);
  CHECK(trace_share_of(*w.trace, 1.0, 3).size() == 3);  // --simulated-requests caps it
  const ServingLoad load = *serving_load(w, 0.375);
  CHECK(load.trace);
  CHECK(load.trace_share == Approx(0.5));
  // Its two requests are replayed as one period of a steady load, to kLeastReplayedTraceRequests:
  // each replay shifted by their span (3 s) and one mean gap (3 s).
  CHECK(load.requests == static_cast<int>(kLeastReplayedTraceRequests));
  const auto replayed = replica_trace(*w.trace, 0.5, 100000);
  REQUIRE(replayed.size() == kLeastReplayedTraceRequests);
  CHECK(replayed[2].arrival_s == Approx(1 + 6));
  CHECK(replayed[3].arrival_s == Approx(4 + 6));
  CHECK(replayed[3].prompt_tokens == 400);
  CHECK(replica_trace(*w.trace, 0.5, 3).size() == 3);  // the cap holds
  CHECK(replica_trace(*w.trace, 0.25, 100000).size() == 1);  // one request: not replayed
  InferenceRequest clash = q;
  clash.requests_per_second = 2;
  CHECK_THROWS_AS(make_inference_workload(clash), InputError);
  clash = q;
  clash.prompt_tokens = 10;
  CHECK_THROWS_AS(make_inference_workload(clash), InputError);

  using cli_test::run;
  const std::string trace = cli_test::data("trace_chat.jsonl");
  const auto e = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --trace " + trace + " --format json");
  REQUIRE(e.code == 0);
  const auto j = nlohmann::json::parse(e.out);
  CHECK(j["inference"]["at_load"]["load"]["kind"] == "trace");
  CHECK(j["inference"]["at_load"]["load"]["trace"]["requests"] == 400);
  const auto r = run("recommend --model llama-3-8b --task inference --family g6e --trace " + trace + " --format json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["recommendation"]["sized_by"] == "simulation");
  for (const char* f : {"burstgpt", "azure"})
    CHECK(run(std::string("estimate --task inference --instance g6e.xlarge --model llama-3-8b --trace ") + cli_test::data(std::string("trace_") + f + ".csv")).code == 0);
  const auto both = run("recommend --model llama-3-8b --task inference --trace " + trace + " --requests-per-second 3");
  CHECK(both.code == 2);
  CHECK(both.err.find("--requests-per-second with --trace") != std::string::npos);
  const auto missing = run("recommend --model llama-3-8b --task inference --trace /nonexistent/trace.jsonl");
  CHECK(missing.code == 2);
  CHECK(missing.err.find("--trace") != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task lora --trace " + trace).code == 2);
}

TEST_CASE("A shared prefix is cached once: a request prefills only the rest of its prompt, attending the prefix") {
  Replica x = replica("g6e.xlarge", "llama-3-8b", 512, 64, 1);
  x.w.prefix_share = 0.75;  // 384 of 512 prompt tokens shared
  REQUIRE(x.w.prefix_tokens() == 384);
  const SimulatedService s = simulate_service(x.m, x.w, x.c, x.e, closed(1, 1, 512, 64));
  StepTimer timer(x.m, x.w, x.c, x.e);
  StepComposition prefill;
  prefill.prefill_tokens = 128;
  prefill.prefill_attended_pairs = 128 * (384 + 64.0);  // the prefix, then half of its own 128 on average
  CHECK(s.metrics.ttft_s.mean == Approx(timer.step_s(prefill)).epsilon(1e-9));
  // The analytic prefill computes the same 128 tokens: shorter than the whole prompt's (both read every weight once).
  Replica whole = replica("g6e.xlarge", "llama-3-8b", 512, 64, 1);
  std::string problem;
  const InferenceEstimate shared = estimate_inference(x.m, x.w, x.c, ServingLayout{1, 1}, std::nullopt, &problem);
  CHECK(shared.prefill_s < 0.6 * whole.e.prefill_s);
  // Under load the prefix's blocks are held once, not per sequence: more sequences fit the same cache.
  Replica tight = replica("g6e.xlarge", "llama-3-8b", 4000, 200, 1);
  const ServingLoad heavy = closed(400, 800, 4000, 200);
  const ServiceMetrics alone = simulate_service(tight.m, tight.w, tight.c, tight.e, heavy).metrics;
  tight.w.prefix_share = 0.9;
  const ServiceMetrics cached = simulate_service(tight.m, tight.w, tight.c, tight.e, heavy).metrics;
  CHECK(cached.kv_utilisation * 1.0 < alone.kv_utilisation);
  CHECK(cached.ttft_s.mean < alone.ttft_s.mean);
  CHECK(cached.completed == alone.completed);
  // The flag's range.
  using cli_test::run;
  CHECK(run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --prefix-share 30%").code == 0);
  const auto bad = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --prefix-share 100%");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--prefix-share") != std::string::npos);
}

TEST_CASE("At p99 a 70B service is sized without a non-finite figure, and a layout that meets the targets only nearly idle is refused") {
  using cli_test::run;
  // Once: "a computed value is not finite" (a replica count found at p99 was
  // rounded up to one that missed by noise, and its figures were the empty
  // ones of a stopped run).
  for (const char* rate : {"4", "8", "16"}) {
    const auto r = run(std::string("recommend --model llama-3-70b --task inference --weights fp8 --slo-percentile 99 --requests-per-second ") + rate +
                       " --format json");
    INFO(rate << ": " << r.err);
    REQUIRE(r.code == 0);
    const auto pick = nlohmann::json::parse(r.out)["recommendation"];
    CHECK(pick["percentiles"]["ttft_s"]["p99"].get<double>() <= 0.45);
    CHECK(pick["percentiles"]["tpot_s"]["p99"].get<double>() <= 0.040);
  }
  // On L40S a 70B meets a p99 450 ms TTFT only with replicas nearly idle (185 x g6e.12xlarge): refused.
  const auto g6e = run("recommend --model llama-3-70b --task inference --weights fp8 --slo-percentile 99 --requests-per-second 8 --family g6e");
  CHECK(g6e.code == 3);
  CHECK((g6e.out + g6e.err).find("nearly idle") != std::string::npos);
}

TEST_CASE("Hostile traces and loads: quoted commas, a byte-order mark, a rate out of reach, a load no replica can carry") {
  const RequestTrace q = parse_request_trace("arrival_s,note,prompt_tokens,output_tokens\n0,\"x,300\",500,200\n1,\"y\",600,100\n", "q.csv");
  CHECK(q.requests[0].prompt_tokens == 500);  // the comma inside quotes stays in its field
  CHECK(q.requests[0].output_tokens == 200);
  // A quote left open, or a NUL byte after a valid line, is refused where it is (both were read as they were).
  CHECK_THROWS_WITH(parse_request_trace("arrival_s,prompt_tokens,output_tokens,note\n0,100,10,\"a,b\"\n1,100,10,\"open\n", "o.csv"),
                    Catch::Contains("line 3: a double quote is opened and never closed"));
  CHECK_THROWS_WITH(parse_request_trace(std::string("{\"arrival_s\": 0, \"prompt_tokens\": 5, \"output_tokens\": 2}\n{\"arrival_s\": 1, "
                                                    "\"prompt_tokens\": 5, \"output_tokens\": 2}\0\n", 115),
                                        "nul.jsonl"),
                    Catch::Contains("line 2: a NUL byte"));
  const RequestTrace bom = parse_request_trace("\xEF\xBB\xBF{\"arrival_s\": 0, \"prompt_tokens\": 5, \"output_tokens\": 2}\n{\"arrival_s\": 1, \"prompt_tokens\": 5, \"output_tokens\": 2}",
                                               "bom.jsonl");
  CHECK(bom.requests.size() == 2);
  try {
    parse_request_trace("{\"arrival_s\": 0, \"prompt_tokens\": 5, \"output_tokens\": 2}\n{\"arrival_s\": 1e300, \"prompt_tokens\": 5, \"output_tokens\": 2}", "slow.jsonl");
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("--trace slow.jsonl") != std::string::npos);  // not a flag the user did not give
    CHECK(std::string(e.what()).find("requests/s") != std::string::npos);
  }
  using cli_test::run;
  // A load past what any replica serves even at its largest batch: no pick (a short simulated window cannot say otherwise).
  const auto huge = run("recommend --task inference --model llama-3-8b --requests-per-second 1e9 --prefix-share 0.99");
  CHECK(huge.code == 3);
  CHECK((huge.out + huge.err).find("even at the largest batch memory holds") != std::string::npos);
  CHECK(run("recommend --task inference --model llama-3-8b --requests-per-second 2 --mode offline --slo-percentile 99").code == 2);
  // One-token outputs have no time per output token: no non-finite figure.
  CHECK(run("recommend --task inference --model llama-3-8b --output-tokens 1 --requests-per-second 2.5 --format json").code == 0);
  // ... and no time-per-output-token target: a prefill-only 70B service is not
  // rejected everywhere but on B200 for a "TPOT" that is a whole prefill.
  const auto one = run("recommend --model llama-3-70b --task inference --output-tokens 1 --requests-per-second 2");
  REQUIRE(one.code == 0);
  CHECK(one.out.find("Recommended: 1 x p6-b") == std::string::npos);
  CHECK(one.out.find("ms per token") == std::string::npos);
  CHECK(one.out.find("the time per output token is") == std::string::npos);
  CHECK(one.err.find("no time-per-output-token target") != std::string::npos);
  CHECK(run("recommend --model llama-3-70b --task inference --output-tokens 1 --requests-per-second 2 --max-tpot 30ms").code == 2);
  // Without a load either: no "ms per token" in the pick, "none" in the tables,
  // the request's latency shown and ranked as "fastest".
  const auto no_load = run("recommend --model llama-3-8b --task inference --output-tokens 1 --prompt-tokens 2048");
  REQUIRE(no_load.code == 0);
  CHECK(no_load.out.find("ms per token") == std::string::npos);
  CHECK(no_load.out.find("request latency") != std::string::npos);
  CHECK(no_load.out.find("fastest (request latency): ") != std::string::npos);
  CHECK(no_load.out.find("0.0ms") == std::string::npos);
  const auto one_estimate = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --output-tokens 1 --prompt-tokens 2048");
  REQUIRE(one_estimate.code == 0);
  CHECK(one_estimate.out.find("time per output token                                            none") != std::string::npos);
  CHECK(one_estimate.out.find("tokens/s per user") == std::string::npos);
  // Only a time per token reads 0 as "none": a queue that is empty at the median is 0.0 ms.
  const auto one_loaded = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --output-tokens 1 --prompt-tokens 2048 --requests-per-second 2");
  REQUIRE(one_loaded.code == 0);
  CHECK(one_loaded.out.find("queueing") != std::string::npos);
  CHECK(one_loaded.out.find("p50 none") == std::string::npos);
  // Two output tokens on a 7-8B: the step at batch 1 is not stretched by the
  // request's own prefill (65 ms against a 23 ms step), so the single L40S
  // meets the 30 ms default and is the pick, not a p4d at 12x the price.
  const auto two = run("recommend --model llama-3-8b --task inference --output-tokens 2 --prompt-tokens 2048");
  REQUIRE(two.code == 0);
  CHECK(two.out.rfind("Recommended: 1 x g6e.xlarge", 0) == 0);
  // A trace too short for the replicas its rate needs leaves one replica no
  // request: the at-load rows are not simulated zeros (0.0 ms TTFT) but absent, said once.
  test_files::TempDir dir("gpuadvisor_thin_trace");
  std::string burst;  // 2,000 requests in 2 ms: a million requests/s, about 50,000 replicas
  for (int i = 0; i < 2000; ++i) burst += "{\"arrival_s\": " + std::to_string(i * 1e-6) + ", \"prompt_tokens\": 1000, \"output_tokens\": 200}\n";
  test_files::write(dir.file("burst.jsonl"), burst);
  const auto thin = run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --format json --trace " + dir.file("burst.jsonl"));
  REQUIRE(thin.code == 0);
  const auto doc = nlohmann::json::parse(thin.out);
  CHECK(doc["inference"]["at_load"].value("model", "") != "simulated");
  CHECK(doc["warnings"].dump().find("leave none for one replica") != std::string::npos);
  // A handful per replica forms no queue either: "requests/s served" from
  // a few requests is their gap, not the replica's. The analytic point instead.
  std::string few;  // 30 requests at 10 per second: 4 replicas of one L40S, 7 or 8 requests each
  for (int i = 0; i < 30; ++i) few += "{\"arrival_s\": " + std::to_string(i * 0.1) + ", \"prompt_tokens\": 1000, \"output_tokens\": 200}\n";
  test_files::write(dir.file("few.jsonl"), few);
  const auto handful = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --format json --trace " + dir.file("few.jsonl"));
  REQUIRE(handful.code == 0);
  const auto few_doc = nlohmann::json::parse(handful.out);
  CHECK(few_doc["inference"]["at_load"].value("model", "") != "simulated");
  CHECK(few_doc["warnings"].dump().find("too few to form a queue") != std::string::npos);
}

TEST_CASE("A trace sizes a service whose first guess misses: the lightest load probed is one request per replica, not 4,096 replicas") {
  // 2,000 Poisson arrivals at 50 per second, 200-2,000-token prompts and
  // 50-500-token outputs (fixed seed): at p99 and 100 ms TTFT the analytic
  // first guess misses, and the search probed 4,096 replicas next, where
  // most of them got no request of the trace: "Cannot size".
  test_files::TempDir dir("gpuadvisor_trace_lightest");
  std::mt19937 random(7);
  auto unit = [&] { return (static_cast<double>(random()) + 0.5) / 4294967296.0; };
  std::string trace;
  double t = 0;
  for (int i = 0; i < 2000; ++i) {
    t += -std::log(unit()) / 50;
    trace += fmt::format("{{\"arrival_s\": {:.4f}, \"prompt_tokens\": {}, \"output_tokens\": {}}}\n", t, 200 + static_cast<int>(unit() * 1800),
                         50 + static_cast<int>(unit() * 450));
  }
  test_files::write(dir.file("poisson.jsonl"), trace);
  const std::string job = "--task inference --model llama-3-8b --max-ttft 100ms --slo-percentile 99 --trace " + dir.file("poisson.jsonl");
  const auto sized = cli_test::run("estimate --instance p5.4xlarge --format json " + job);
  REQUIRE(sized.code == 0);
  const auto doc = nlohmann::json::parse(sized.out);
  CHECK(!doc.contains("targets_missed"));  // was: "even with 4096 replicas ... the targets are missed"
  // estimate sizes the replica count recommend's p5.4xlarge row does, within a replica.
  const auto rec = cli_test::run("recommend --family p5 --top 20 --format json " + job);
  REQUIRE(rec.code == 0);
  const auto rows = nlohmann::json::parse(rec.out)["options"];
  int recommended = 0;
  for (const auto& row : rows)
    if (row["instance"] == "p5.4xlarge") recommended = row["replicas"].get<int>();
  REQUIRE(recommended > 0);
  CHECK(std::abs(doc["inference"]["replicas"].get<int>() - recommended) <= 1);
}

TEST_CASE("Speculative decoding: tokens per step by hand, and the flag's grammar") {
  CHECK(parse_speculative("mtp:3:0.7", "--speculative").tokens_per_step() == Approx(1 + 0.7 + 0.49 + 0.343));  // 2.533
  CHECK(parse_speculative("mtp:1:0.875", "--speculative").tokens_per_step() == Approx(1.875));                // DeepSeek-V3's MTP
  CHECK(parse_speculative("ngram:4:0", "--speculative").tokens_per_step() == 1);
  CHECK(parse_speculative("ngram:2:50%", "--speculative").acceptance == Approx(0.5));
  CHECK(speculative_text(parse_speculative("mtp:3:0.7", "--speculative")) == "mtp:3:0.7");
  for (const char* bad : {"mtp:3", "eagle:3:0.7", "mtp:0:0.5", "mtp:17:0.5", "mtp:03:0.5", "mtp:3:1", "mtp:3:-0.1", "mtp:3:x", "ngram:2:0.5:1", ""})
    CHECK_THROWS_AS(parse_speculative(bad, "--speculative"), InputError);
}

namespace {
Replica speculative_replica(const char* spec) {
  InferenceRequest r;
  r.mode = ServingMode::offline;
  r.prompt_tokens = 512;
  r.output_tokens = 64;
  r.engine = find_engine("vllm");
  if (spec) r.speculative = parse_speculative(spec, "--speculative");
  Replica x{*find_model_preset("llama-3-8b"), make_inference_workload(r), {}, {}};
  const Instance* i = cat().find_instance("g6e.xlarge");
  x.c = Cluster{i, &cat().accelerator_of(*i), 1};
  x.e = estimate_inference(x.m, x.w, x.c, ServingLayout{1, 1}, 1, nullptr);
  REQUIRE(x.e.fits());
  return x;
}
}  // namespace

TEST_CASE("Speculative decoding: one pass verifies the proposals, the weights are read once, and a sequence emits tokens_per_step a step") {
  const Replica plain = speculative_replica(nullptr), lookup = speculative_replica("ngram:3:0.7"), head = speculative_replica("mtp:3:0.7");
  // Batch 1: the same weights read; four positions' matrix work; a drafter only for the draft head.
  CHECK(lookup.e.step.weights_read_s == plain.e.step.weights_read_s);
  CHECK(lookup.e.step.kv_read_s == plain.e.step.kv_read_s);
  CHECK(lookup.e.step.compute_s == Approx(4 * plain.e.step.compute_s).epsilon(0.02));
  CHECK(lookup.e.step.draft_s == 0);
  CHECK(head.e.step.draft_s > 0);
  CHECK(speculative_replica("mtp:1:0.7").e.step.draft_s * 3 == Approx(head.e.step.draft_s));  // K passes
  // Memory-bound at batch 1: the time per token falls by nearly tokens_per_step.
  CHECK(lookup.e.tpot_s == Approx(lookup.e.step.total_s() / 2.533).epsilon(1e-3));  // batch 1: no other request's prefill between its tokens
  CHECK(lookup.e.tpot_s < plain.e.tpot_s / 2);
  // The simulator: after the prefill's token, 63 more at 2.533 a step take ceil(63 / 2.533) = 25 steps.
  const SimulatedService s = simulate_service(lookup.m, lookup.w, lookup.c, lookup.e, closed(1, 1, 512, 64));
  CHECK(s.metrics.steps == 1 + 25);
  const SimulatedService p = simulate_service(plain.m, plain.w, plain.c, plain.e, closed(1, 1, 512, 64));
  CHECK(p.metrics.steps == 1 + 63);
  CHECK(s.metrics.tpot_s.mean < p.metrics.tpot_s.mean / 2);
  // Acceptance 0 emits one token a step, at the cost of verifying and drafting: never faster than no speculation.
  const Replica none = speculative_replica("mtp:3:0");
  CHECK(none.e.tpot_s > plain.e.tpot_s);
}

TEST_CASE("Speculative decoding on the command line: the workload carries it, and training refuses it") {
  using cli_test::run;
  const auto r = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --speculative mtp:3:0.7 --clients 8 --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["workload"]["speculative"]["draft_tokens"] == 3);
  CHECK(j["workload"]["speculative"]["tokens_per_step"].get<double>() == Approx(2.533));
  const auto t = run("recommend --params 7B --task lora --speculative mtp:3:0.7");
  CHECK(t.code == 2);
  CHECK(t.err.find("--speculative") != std::string::npos);
  const auto bad = run("estimate --task inference --instance g6e.xlarge --model llama-3-8b --speculative mtp:3");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("DRAFTER:TOKENS:ACCEPTANCE") != std::string::npos);
  // Launch files that would serve without the speculation the estimate assumed are not written.
  const auto emit = run("recommend --model llama-3-8b --task inference --requests-per-second 4 --speculative mtp:3:0.7 --emit k8s --emit-dir gpuadvisor_spec_emit");
  CHECK(emit.code == 2);
  CHECK(emit.err.find("--speculative") != std::string::npos);
}

TEST_CASE("An open loop runs long enough for its queue to fill: four request latencies at the rate, 1,000 to 10,000 requests") {
  CHECK(steady_state_requests(10, 79) == 3160);   // DeepSeek-R1 with 2,000 reasoning tokens
  CHECK(steady_state_requests(10, 5) == 1000);    // a chat request: the default count
  CHECK(steady_state_requests(100, 100) == 10000);
  InferenceRequest q;
  q.requests_per_second = 10;
  const InferenceWorkload w = make_inference_workload(q);
  CHECK(serving_load(w, 10.0, 79.0)->requests == 3160);
  CHECK(serving_load(w, 10.0)->requests == 1000);
  q.simulated_requests = 500;
  CHECK(serving_load(make_inference_workload(q), 10.0, 79.0)->requests == 500);  // --simulated-requests decides
}

TEST_CASE("estimate --batch beyond what memory holds exits 3 with the memory's reason, not a smaller batch under the name --batch") {
  using cli_test::run;
  const auto t = run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --batch 100000 --mode offline");
  CHECK(t.code == 3);
  CHECK(t.err.find("sequences fit") != std::string::npos);
  CHECK(t.out.find("(--batch)") == std::string::npos);
  const auto j = run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --batch 100000 --format json");
  CHECK(j.code == 3);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["error"]["kind"] == "nothing_fits");
  CHECK(doc["error"]["batch"] == 100000);
  CHECK(doc["error"]["max_batch"].get<int>() < 100000);
  // A batch that fits runs as given.
  CHECK(run("estimate --task inference --instance p5.48xlarge --model llama-3-8b --batch 64").code == 0);
}

TEST_CASE("A load no option carries is named as the limit, not a time per token that meets its target") {
  using cli_test::run;
  const auto t = run("recommend --task inference --model llama-3-8b --requests-per-second 1e6");
  CHECK(t.code == 3);
  CHECK(t.err.find("is the limit") != std::string::npos);
  CHECK(t.err.find("(--max-instances)") != std::string::npos);  // each type's line names what bounds the replicas
  // Where the targets themselves are out of reach, the per-token figure stays the reason.
  const auto slow = run("recommend --task inference --model llama-3-70b --requests-per-second 1 --max-tpot 1ms");
  CHECK(slow.code == 3);
  CHECK(slow.err.find("is the limit") == std::string::npos);
}

TEST_CASE("a trace that gives each replica a short window is replayed as one period of a steady load: a short trace and ten of it size alike") {
  using cli_test::run;
  test_files::TempDir dir("gpuadvisor_trace_replay");
  // 1,000 requests/s: a millisecond apart, 1024 prompt and 256 output tokens, 6 s and 60 s of them.
  auto trace_of = [&](const std::string& name, int requests) {
    std::string t;
    for (int i = 0; i < requests; ++i) t += fmt::format("{{\"arrival_s\": {:.3f}, \"prompt_tokens\": 1024, \"output_tokens\": 256}}\n", i * 1e-3);
    test_files::write(dir.file(name), t);
    return dir.file(name);
  };
  const std::string base = "recommend --model llama-3-70b --task inference --family p5 -q --format json --trace ";
  const auto short_pick = nlohmann::json::parse(run(base + trace_of("short.jsonl", 6000)).out)["recommendation"];
  const auto long_pick = nlohmann::json::parse(run(base + trace_of("long.jsonl", 60000)).out)["recommendation"];
  INFO(short_pick["sizing"].get<std::string>());
  CHECK(short_pick["instance"] == long_pick["instance"]);
  CHECK(std::abs(short_pick["count"].get<int>() - long_pick["count"].get<int>()) <= 0.05 * long_pick["count"].get<int>());
  CHECK(short_pick["sizing"].get<std::string>().find("replayed as one period of a steady load") != std::string::npos);
  // No replica carries more than it serves.
  CHECK(short_pick["utilisation"].get<double>() <= 1.0);
}

TEST_CASE("a trace shorter than the replicas deployed: every row's figures are a busy replica's, never an idle one's zeros") {
  using cli_test::run;
  test_files::TempDir dir("gpuadvisor_trace_short");
  // Two requests a second apart: whole instances of 4 or 8 slots deploy more
  // replicas than there are requests, and those without one serve nothing.
  test_files::write(dir.file("two.jsonl"), "{\"arrival_s\": 0, \"prompt_tokens\": 1000, \"output_tokens\": 200}\n"
                                           "{\"arrival_s\": 1, \"prompt_tokens\": 1000, \"output_tokens\": 200}\n");
  const auto r = run("recommend --model llama-3-8b --task inference -q --format json --trace " + dir.file("two.jsonl"));
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(!j["options"].empty());
  for (const auto& o : j["options"]) {
    INFO(o["instance"].get<std::string>() << " " << o["layout"].get<std::string>());
    CHECK(o["ttft_s"].get<double>() > 0);
    CHECK(o["ttft_at_slo_s"].get<double>() > 0);
  }
  CHECK(j["alternatives"]["fastest"]["ttft_s"].get<double>() > 0);
}

TEST_CASE("estimate refuses a load beyond the largest service it sizes rather than pricing it overloaded") {
  using cli_test::run;
  // 1e9 requests/s on one A10G needs about 1.2e10 replicas; the service is
  // sized to a billion at most, which would run each at about 970%.
  const auto r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --requests-per-second 1e9 -q --format json");
  CHECK(r.code == 3);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["error"]["message"].get<std::string>().find("more than the billion a service is sized to") != std::string::npos);
  // A tenth of it fits within that many, below capacity: estimated (exit 0).
  CHECK(run("estimate --task inference --instance g5.xlarge --model llama-3-8b --requests-per-second 1e8 -q").code == 0);
}

TEST_CASE("A closed loop cut short at the simulator's step limit says so: finished of sent, never a queue that grows") {
  using cli_test::run;
  // 100,000 clients on one A10G (about a dozen sequences fit): the run stops
  // at kMaxSchedulerRounds with most requests unfinished.
  const auto r = run("estimate --task inference --instance g5.xlarge --model llama-3-8b --prompt-tokens 2000 --output-tokens 200 --clients 100000 -q");
  REQUIRE(r.code == 0);
  CHECK(r.out.find(" of 800000 requests") != std::string::npos);
  CHECK(r.out.find("the simulation stopped at its limit of") != std::string::npos);
  CHECK(r.out.find("the queue still grows") == std::string::npos);
  // validate names the clients and the limit, not a rate nobody offered.
  const std::string cases = R"({"cases": [{"id": "C1", "task": "inference", "model": "llama-3-8b", "system": "g5.xlarge", "precision": "bf16",
    "prompt_tokens": 2000, "output_tokens": 200, "clients": 100000, "metric": "tpot_s", "measured": 0.05, "source": "test", "source_key": "TEST"}]})";
  const auto results = run_cases(read_cases("cases.json", cases), cat());
  REQUIRE(results.size() == 1);
  CHECK(!results[0].predicted);
  CHECK(results[0].problem.find("engine rounds") != std::string::npos);
  CHECK(results[0].problem.find("100000 clients") != std::string::npos);
  CHECK(results[0].problem.find("offered") == std::string::npos);
}


TEST_CASE("A service no option serves names no fastest option where many tie at batch 1") {
  // Hugging Face eager decoding runs every GPU at about the same 40 ms per token: g4dn.12xlarge was named "the fastest option".
  const auto tied = cli_test::run("recommend --model llama-3-8b --task inference --engine hf");
  CHECK(tied.code == 3);
  CHECK(tied.err.find("the fastest options reach 40.4 ms per output token") != std::string::npos);
  CHECK(tied.err.find("so no one of them is the fastest") != std::string::npos);
  // One that is ahead keeps its name.
  const auto ahead = cli_test::run("recommend --model llama-3-70b --task inference --max-tpot 5ms");
  CHECK(ahead.code == 3);
  CHECK(ahead.err.find("the fastest option, p6-b300.48xlarge with tp 8, reaches") != std::string::npos);
}

TEST_CASE("estimate's utilisation above 100% says the simulated replica serves the load") {
  // A hostile review: "utilisation 116%" beside a simulation that serves 4.74 requests/s per replica within the targets.
  const auto over = cli_test::run("estimate --instance g6e.48xlarge --model mixtral-8x7b --task inference --requests-per-second 20 --tp 8 --ep 8 --attention-dp 8");
  REQUIRE(over.code == 0);
  CHECK(over.out.find("utilisation 116% of the analytic capacity above: more than it, and the simulated replica serves the load") !=
        std::string::npos);
  // Below 100% the figure stands alone.
  const auto under = cli_test::run("estimate --instance g6e.xlarge --model llama-3-8b --task inference --requests-per-second 2");
  CHECK(under.out.find("of the analytic capacity above") == std::string::npos);
}

TEST_CASE("A service's unpriced rows say once why their price is unknown") {
  // A trial: p5e, trn2, p6e-gb200 and p6-b300 read "unknown" in the table with no reason anywhere.
  const auto rec = cli_test::run("recommend --model llama-3-70b --task inference --requests-per-second 4 --format json");
  REQUIRE(rec.code == 0);
  const auto j = nlohmann::json::parse(rec.out);
  std::string note;
  for (const auto& n : j["notes"])
    if (n.get<std::string>().rfind("unknown prices:", 0) == 0) note = n;
  REQUIRE(!note.empty());
  int unpriced = 0;
  for (const auto& row : j["options"]) {
    if (!row["usd_per_month"].is_null()) {
      CHECK(note.find(row["instance"].get<std::string>() + " (") == std::string::npos);
      continue;
    }
    ++unpriced;
    CHECK(note.find(row["instance"].get<std::string>()) != std::string::npos);
  }
  CHECK(unpriced >= 2);
  // The catalog's own reason, and a Capacity Block rate where one is listed.
  CHECK(note.find("p5e.48xlarge (on-demand price unknown: no on-demand rate in the snapshot") != std::string::npos);
  CHECK(note.find("Capacity Blocks: $112.32/h as of 2026-07-22") != std::string::npos);
  // cost prints the search's notes as recommend does.
  const auto cost = cli_test::run("cost --model llama-3-70b --task inference --requests-per-second 4");
  REQUIRE(cost.code == 0);
  CHECK(cost.out.find("Notes:\n  unknown prices: these types are listed, not ranked by cost:") != std::string::npos);
}

TEST_CASE("A service's fastest alternative is named only where it is faster than the pick by more than the typical error") {
  // A blind trial: "fastest per token: 3 x p5.48xlarge ... p90 26 ms per token, $118,886/month" beside a pick at p90 26 ms for $82,032.
  const std::string job = "recommend --model llama-3.1-70b --task inference --requests-per-second 10 --prompt-tokens 2000 --output-tokens 400 "
                          "--length-spread 0.8 --arrival gamma:2 --max-ttft 1s --max-tpot 50ms";
  const auto text = cli_test::run(job);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("  fastest per token: the pick") != std::string::npos);
  const auto json = cli_test::run(job + " --format json");
  REQUIRE(json.code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["alternatives"]["fastest"]["instance"] == j["recommendation"]["instance"]);
  // One that is faster by more than that is still named.
  const auto wider = cli_test::run("recommend --model llama-3-70b --task inference --requests-per-second 4");
  REQUIRE(wider.code == 0);
  CHECK(wider.out.find("  fastest per token: 1 x p5en.48xlarge") != std::string::npos);
}

TEST_CASE("A stable queue is not called saturated at any length, a growing one is") {
  // One server, each request served for 6 s once scheduled. Stable: every request waits 7 s (a single-server queue at
  // 70% load waits about 1.2 service times), whatever the count. Growing: each request waits 0.5 s more than the last.
  auto run_of = [](int n, bool growing) {
    std::vector<SimRequest> rs(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      SimRequest& r = rs[static_cast<size_t>(i)];
      r.arrival_s = i * 9.0;
      r.output_tokens = 10;
      r.scheduled_s = r.arrival_s + (growing ? 0.5 * i : 7.0);
      r.first_token_s = r.scheduled_s + 0.1;
      r.finish_s = r.scheduled_s + 6.0;
    }
    return service_metrics(rs, SchedulerTotals{}, EngineLimits{}, true, std::nullopt, std::nullopt, 0).saturated;
  };
  for (int n : {200, 1000, 10000}) {
    INFO(n);
    CHECK_FALSE(run_of(n, false));  // the first rule alone (tail wait 7 s > the 6 s service) called it saturated
    CHECK(run_of(n, true));
  }
}

TEST_CASE("From a hostile review: speculative decoding with one-token outputs is refused, sequences in flight say their time base") {
  const auto one = cli_test::run("estimate --task inference --model llama-3-8b --instance g6e.xlarge --output-tokens 1 --speculative ngram:4:0.5");
  CHECK(one.code == 2);
  CHECK(one.err.find("--speculative: one generated token per request leaves no decode step to draft tokens for") != std::string::npos);
  CHECK(cli_test::run("estimate --task inference --model llama-3-8b --instance g6e.xlarge --output-tokens 2 --speculative ngram:4:0.5").code == 0);
  // The mean over busy time beside the whole run's (Little's law: rate x latency), which a reader checks it against.
  const auto at_load = cli_test::run("estimate --task inference --model llama-3-8b --instance g6e.xlarge --requests-per-second 0.02 --batch 1");
  REQUIRE(at_load.code == 0);
  CHECK(std::regex_search(at_load.out, std::regex("sequences in flight +[0-9.]+ +mean while busy \\([0-9]+% of the run; [0-9.e-]+ over the whole run, as Little's law gives\\)")));
}
