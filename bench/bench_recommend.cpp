// Prints how long `recommend` takes over the whole catalog for a few
// representative requests. Not a test: figures vary by machine.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "gpuadvisor/catalog.hpp"
#include "gpuadvisor/model.hpp"
#include "gpuadvisor/search.hpp"

using namespace gpuadvisor;

int main() {
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
  Case cases[] = {{"13B LoRA (--params 13B)", model_from_param_count(13e9), lora},
                  {"llama-3-70b pretrain 1T tokens", *find_model_preset("llama-3-70b"), pre70},
                  {"llama-3.1-405b pretrain 15T tokens", *find_model_preset("llama-3.1-405b"), pre405},
                  {"mixtral-8x22b pretrain 1T tokens (MoE)", *find_model_preset("mixtral-8x22b"), moe},
                  {"llama-3-70b 32k-token sequences (cp searched)", *find_model_preset("llama-3-70b"), long_context}};
  RecommendRequest r;  // whole catalog, counts up to 512
  fmt::print("{:<42} {:>10} {:>10} {:>12} {:>8}\n", "request", "best ms", "median ms", "layouts", "options");
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
    fmt::print("{:<42} {:>10.1f} {:>10.1f} {:>12} {:>8}\n", c.label, ms.front(), ms[ms.size() / 2], last.layouts_evaluated, last.options_found);
  }
  return 0;
}
