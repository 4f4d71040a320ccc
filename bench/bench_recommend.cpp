// Prints how long `recommend` takes over the whole catalog for a few
// representative requests (in-process, with the pruning ratio against the
// exhaustive search, and as whole processes: CPU time), the serving simulator,
// and the throughput and peak memory of importing a
// ~0.5 GB EC2 offer file (`gpuadvisor_bench --import-mb N` to change the size).
// Not a test: figures vary by machine.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gpuadvisor/catalog/price_import.hpp"

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/search/inference_search.hpp"
#include "gpuadvisor/search/search.hpp"
#include "gpuadvisor/serving/simulate.hpp"

using namespace gpuadvisor;

namespace {

// Imports a generated offer file in a child process, so that its peak
// resident memory is the import's alone.
void bench_import(long megabytes) {
  const std::string path = fmt::format("/tmp/gpuadvisor_bench_offer_{}.json", getpid());
  if (std::system(fmt::format("{} {} {}", GPUADVISOR_MAKE_OFFER, path, megabytes).c_str()) != 0) {
    fmt::print("import: could not generate {}\n", path);
    return;
  }
  const double mb = std::filesystem::file_size(path) / 1e6;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    ImportInputs in;
    in.as_of = "2026-11-30";
    in.offer_files.push_back({path, "", path});
    const ImportResult r = import_prices({"<embedded catalog>", std::string(embedded_catalog_text())}, {}, in);
    _exit(r.prices_written > 0 ? 0 : 1);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::filesystem::remove(path);
  fmt::print("\n{:<42} {:>10} {:>10} {:>12}\n", "prices import (streamed offer file)", "MB", "MB/s", "peak RSS MB");
  fmt::print("{:<42} {:>10.0f} {:>10.1f} {:>12.1f}{}\n", "generated offer file, 4 marker SKUs", mb, mb / s, usage.ru_maxrss / 1024.0,
             WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "  (FAILED)");
}

// CPU time (user + system) of one whole gpuadvisor process, milliseconds:
// start-up, the embedded catalog, the search and the report, as a user runs it.
double process_cpu_ms(const std::string& args) {
  std::fflush(stdout);  // else the child's freopen writes the parent's buffered lines again
  const pid_t child = fork();
  if (child == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
    setenv("XDG_CACHE_HOME", "/nonexistent-gpuadvisor-bench-cache", 1);  // the embedded prices, never a user's cache
    execl("/bin/sh", "sh", "-c", (std::string(GPUADVISOR_BINARY) + " " + args).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

// The speed issue's requests as whole processes: the median and best CPU
// time of 7 runs each (the sh -c wrapper adds well under a millisecond).
void bench_processes() {
  struct Request {
    const char* label;
    const char* args;
  };
  const Request requests[] = {
      {"catalog", "catalog"},
      {"13B LoRA", "recommend --params 13B --task lora"},
      {"llama-3-70b pretrain 1T", "recommend --model llama-3-70b --task pretrain --tokens 1T"},
      {"405B 15T, --max-instances 4096", "recommend --model llama-3.1-405b --task pretrain --tokens 15T --max-instances 4096"},
      {"deepseek-v3 15T, --max-instances 4096", "recommend --model deepseek-v3 --task pretrain --tokens 15T --max-instances 4096"},
      {"mixtral-8x22b pretrain 1T", "recommend --model mixtral-8x22b --task pretrain --tokens 1T"},
      {"7B GRPO", "recommend --params 7B --task rl"},
      {"70B service, 5 req/s", "recommend --model llama-3-70b --task inference --requests-per-second 5"},
      {"deepseek-v3 service, 10 req/s", "recommend --model deepseek-v3 --task inference --requests-per-second 10"}};
  fmt::print("\n{:<42} {:>10} {:>10}\n", "whole process (CPU ms, user + system)", "best", "median");
  for (const Request& x : requests) {
    std::vector<double> ms;
    for (int i = 0; i < 7; ++i) ms.push_back(process_cpu_ms(x.args));
    std::sort(ms.begin(), ms.end());
    if (ms.front() < 0) {
      fmt::print("{:<42} {:>10} {:>10}\n", x.label, "failed", "");
      continue;
    }
    fmt::print("{:<42} {:>10.1f} {:>10.1f}\n", x.label, ms.front(), ms[ms.size() / 2]);
  }
}

}  // namespace

// One replica simulated under 10,000 requests (the serving simulator's inner
// loop): llama-3-8b on one L40S at 4 requests/s, and llama-3.1-70b fp8 at TP4
// on p5.48xlarge with 32 clients.
void bench_simulator(const Catalog& catalog) {
  struct Sim {
    const char* label;
    const char* instance;
    const char* model;
    WeightFormat weights;
    int tp;
    std::optional<double> rate;
    std::optional<int> clients;
  };
  const Sim sims[] = {{"simulate 10k requests: 8B, L40S, 4 req/s", "g6e.xlarge", "llama-3-8b", WeightFormat::bf16, 1, 4.0, std::nullopt},
                      {"simulate 10k requests: 70B fp8 TP4, 32 clients", "p5.48xlarge", "llama-3.1-70b", WeightFormat::fp8, 4, std::nullopt, 32}};
  fmt::print("\n{:<42} {:>10} {:>10} {:>12}\n", "serving simulator (one core)", "best ms", "median ms", "steps");
  for (const Sim& x : sims) {
    InferenceRequest q;
    q.mode = ServingMode::offline;
    q.weights = x.weights;
    q.requests_per_second = x.rate;
    q.clients = x.clients;
    q.simulated_requests = 10000;
    const ModelSpec& m = *find_model_preset(x.model);
    const InferenceWorkload w = make_inference_workload(q);
    const Instance& inst = *catalog.find_instance(x.instance);
    const Cluster c{&inst, &catalog.accelerator_of(inst), 1};
    const InferenceEstimate e = estimate_inference(m, w, c, ServingLayout{x.tp, 1}, std::nullopt, nullptr);
    const ServingLoad load = *serving_load(w, x.rate);
    std::vector<double> ms;
    SimulatedService last;
    for (int i = 0; i < 5; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      last = simulate_service(m, w, c, e, load);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    fmt::print("{:<42} {:>10.1f} {:>10.1f} {:>12}\n", x.label, ms.front(), ms[ms.size() / 2], last.metrics.steps);
  }
}

// The serving search with a load over the whole catalog: every instance
// type's replicas sized by simulation at the p90 targets (default chat
// targets of the model's size class).
void bench_serving_search(const Catalog& catalog) {
  struct Service {
    const char* label;
    const char* model;
    double requests_per_second;
    double reasoning_tokens;
  };
  const Service services[] = {{"llama-3-8b service, 20 req/s", "llama-3-8b", 20, 0},
                              {"llama-3-8b service, 200 req/s", "llama-3-8b", 200, 0},
                              {"llama-3-70b service, 5 req/s", "llama-3-70b", 5, 0},
                              {"deepseek-v3 service, 10 req/s", "deepseek-v3", 10, 0},
                              {"gpt-oss-120b, 10k reasoning tokens, 2 req/s", "gpt-oss-120b", 2, 10000}};
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  fmt::print("\n{:<42} {:>12} {:>12} {:>10}\n", "serving search with a load (median of 5)", "1 thread ms", fmt::format("{} threads ms", cores),
             "replicas");
  for (const Service& x : services) {
    const ModelSpec& m = *find_model_preset(x.model);
    InferenceRequest q;
    q.requests_per_second = x.requests_per_second;
    q.reasoning_tokens = x.reasoning_tokens;
    q.model_active_params = m.active_params();
    if (!m.native_weights.empty()) q.weights = *weight_format_from_string(m.native_weights);
    const InferenceWorkload w = make_inference_workload(q);
    ServingRecommendation last;
    auto median_ms = [&](int jobs) {
      RecommendRequest r;
      r.jobs = jobs;
      std::vector<double> ms;
      for (int i = 0; i < 5; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        last = recommend_inference(m, w, catalog, r);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    const double one = median_ms(1), all = median_ms(0);
    fmt::print("{:<42} {:>12.1f} {:>12.1f} {:>10}\n", x.label, one, all, last.pick ? last.pick->replicas : 0);
  }
}

int main(int argc, char** argv) {
  long import_mb = 512;
  if (argc == 3 && std::string(argv[1]) == "--import-mb") import_mb = std::atol(argv[2]);
  Catalog catalog = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  struct Case {
    const char* label;
    ModelSpec model;
    WorkloadRequest request;
  };
  WorkloadRequest lora;
  lora.task = Task::lora;
  WorkloadRequest pre70;
  pre70.tokens = 1e12;
  WorkloadRequest pre405;
  pre405.tokens = 15e12;
  WorkloadRequest moe;
  moe.tokens = 1e12;
  WorkloadRequest long_context;  // 32k tokens: context parallelism is searched too
  long_context.tokens = 1e11;
  long_context.seq_len = 32768;
  long_context.global_batch = 128;
  WorkloadRequest deepseek;
  deepseek.tokens = 15e12;
  Case cases[] = {{"13B LoRA (--params 13B)", model_from_param_count(13e9), lora},
                  {"llama-3-70b pretrain 1T tokens", *find_model_preset("llama-3-70b"), pre70},
                  {"llama-3.1-405b pretrain 15T tokens", *find_model_preset("llama-3.1-405b"), pre405},
                  {"mixtral-8x22b pretrain 1T tokens (MoE)", *find_model_preset("mixtral-8x22b"), moe},
                  {"deepseek-v3 pretrain 15T tokens (MoE)", *find_model_preset("deepseek-v3"), deepseek},
                  {"llama-3-70b 32k-token sequences (cp searched)", *find_model_preset("llama-3-70b"), long_context}};
  RecommendRequest r;  // whole catalog, counts up to 512
  RecommendRequest exhaustive = r;
  exhaustive.exhaustive_search = true;
  fmt::print("{:<42} {:>10} {:>10} {:>12} {:>8} {:>10}\n", "request", "best ms", "median ms", "layouts", "options", "exhaustive");
  for (auto& c : cases) {
    TrainingWorkload w = make_workload(c.request, c.model);
    std::vector<double> ms;
    Recommendation last;
    for (int i = 0; i < 7; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      last = recommend(c.model, w, catalog, r);
      auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    // The pruning ratio: layouts evaluated against the exhaustive search's.
    const long all = recommend(c.model, w, catalog, exhaustive).layouts_evaluated;
    fmt::print("{:<42} {:>10.1f} {:>10.1f} {:>12} {:>8} {:>10}\n", c.label, ms.front(), ms[ms.size() / 2], last.layouts_evaluated, last.options_found, all);
  }
  bench_processes();
  bench_simulator(catalog);
  bench_serving_search(catalog);
  if (import_mb > 0) bench_import(import_mb);
  return 0;
}
