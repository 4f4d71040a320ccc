// Launch files (--emit) are consistent with the estimate by construction, parse
// back, and the CI gates exit 4 when a threshold is crossed.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.hpp"
#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/report/launch.hpp"
#include "gpuadvisor/search/search.hpp"

using namespace gpuadvisor;
using cli_test::run;

namespace {

const Catalog& cat() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}

const EmittedFile& file(const std::vector<EmittedFile>& files, const std::string& name) {
  for (const auto& f : files)
    if (f.name == name) return f;
  FAIL("no file " << name);
  return files.front();
}

// "--flag value" lines of the Megatron argument file.
std::map<std::string, std::string> megatron(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("--", 0) != 0) continue;
    const auto sp = line.find(' ');
    out[line.substr(0, sp)] = sp == std::string::npos ? "" : line.substr(sp + 1);
  }
  return out;
}

int env_int(const YAML::Node& envs, const char* key) { return std::stoi(envs[key].as<std::string>()); }

}  // namespace

bool has_file(const std::vector<EmittedFile>& files, const std::string& name) {
  return std::any_of(files.begin(), files.end(), [&](const EmittedFile& f) { return f.name == name; });
}

TEST_CASE("emitted training layouts are the estimate's: ranks, batches and nodes add up, over a sweep") {
  LaunchContext ctx;
  ctx.command = "gpuadvisor test";
  int checked = 0, refused = 0;
  for (const char* model : {"llama-3-8b", "llama-3-70b", "mixtral-8x7b"})
    for (Task task : {Task::pretrain, Task::finetune})
      for (const char* instance : {"p4d.24xlarge", "p5.48xlarge", "g6e.48xlarge", "trn1.32xlarge"})
        for (int count : {1, 4}) {
          const ModelSpec& m = *find_model_preset(model);
          WorkloadRequest req;
          req.task = task;
          req.tokens = 1e9;
          const TrainingWorkload w = make_workload(req, m);
          const Instance& inst = *cat().find_instance(instance);
          const Cluster c{&inst, &cat().accelerator_of(inst), count};
          if (accelerator_problem(*c.accelerator, w)) continue;
          const auto s = search_cluster(m, w, c);
          if (!s.best) continue;
          const Layout& l = s.best->layout;
          const TrainingLaunch t{&m, &w, &inst, c.accelerator, count, l, s.best->precision};
          // Megatron's FSDP2 (ZeRO-3) refuses pipeline and expert parallelism: such a layout is refused, never written.
          const bool megatron_refuses = l.zero_stage == 3 && (l.pp > 1 || l.ep > 1 || m.tied_embeddings);
          if (megatron_refuses) {
            CHECK_THROWS_AS(emit_training(t, ctx, LaunchTarget::skypilot), InputError);
            ++refused;
            continue;
          }
          const auto files = emit_training(t, ctx, LaunchTarget::skypilot);
          const YAML::Node task_yaml = YAML::Load(file(files, "task.yaml").text);
          const YAML::Node envs = task_yaml["envs"];
          CHECK(task_yaml["num_nodes"].as<int>() == count);
          CHECK(task_yaml["resources"]["instance_type"].as<std::string>() == instance);
          CHECK(env_int(envs, "TP") * env_int(envs, "CP") * env_int(envs, "PP") * env_int(envs, "DP") == c.accelerators());
          CHECK(env_int(envs, "MICRO_BATCH") * env_int(envs, "GRAD_ACCUM") * env_int(envs, "DP") == w.global_batch);
          auto args = megatron(file(files, "megatron_args.txt").text);
          CHECK(std::stoi(args["--tensor-model-parallel-size"]) == l.tp);
          CHECK(std::stoi(args["--pipeline-model-parallel-size"]) == l.pp);
          CHECK(std::stoi(args["--context-parallel-size"]) == l.cp);
          CHECK(std::stoi(args["--expert-model-parallel-size"]) == l.ep);
          // A folded MoE layout sets the experts' own tensor-parallel size; otherwise Megatron's default (tp) holds.
          CHECK((args.count("--expert-tensor-parallel-size") ? std::stoi(args["--expert-tensor-parallel-size"]) : l.tp) == l.expert_tp());
          if (m.is_moe()) CHECK(env_int(envs, "ETP") == l.expert_tp());
          CHECK(std::stoi(args["--micro-batch-size"]) == l.micro_batch);
          CHECK(std::stoi(args["--global-batch-size"]) == w.global_batch);
          CHECK(std::stoll(args["--train-iters"]) == static_cast<long long>(std::ceil(w.total_tokens() / (double(w.global_batch) * w.seq_len))));
          // DeepSpeed only where it runs the layout: AutoTP never with ZeRO-3, no pipeline, context or expert parallelism.
          const bool deepspeed_runs = (l.tp == 1 || l.zero_stage <= 2) && l.pp == 1 && l.cp == 1 && l.ep == 1;
          REQUIRE(has_file(files, "deepspeed.json") == deepspeed_runs);
          if (deepspeed_runs) {
            const auto ds = nlohmann::json::parse(file(files, "deepspeed.json").text);
            CHECK(ds["train_micro_batch_size_per_gpu"].get<int>() * ds["gradient_accumulation_steps"].get<int>() * l.dp == ds["train_batch_size"].get<int>());
            CHECK(ds["zero_optimization"]["stage"] == l.zero_stage);
            CHECK_FALSE((ds.contains("tensor_parallel") && ds["zero_optimization"]["stage"].get<int>() == 3));
          } else {
            CHECK(file(files, "megatron_args.txt").text.find("# deepspeed.json is not written: ") != std::string::npos);
          }
          const YAML::Node job = YAML::Load(file(emit_training(t, ctx, LaunchTarget::k8s), "pytorchjob.yaml").text);
          const int workers = count > 1 ? job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"].as<int>() : 0;
          CHECK(job["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"].as<int>() + workers == count);
          ++checked;
        }
  CHECK(checked > 20);
  INFO(refused << " layouts refused");
}

TEST_CASE("a folded MoE layout is written as Megatron's and torchtitan's expert tensor-parallel size") {
  LaunchContext ctx;
  const ModelSpec& m = *find_model_preset("qwen3-235b-a22b");
  WorkloadRequest req;
  req.task = Task::pretrain;
  req.tokens = 1e9;
  req.global_batch = 1024;
  const TrainingWorkload w = make_workload(req, m);
  const Instance& inst = *cat().find_instance("p5.48xlarge");
  Layout l{2, 8, 16, 32, 1, 1, Recompute::full};
  l.etp = 1;
  const TrainingLaunch t{&m, &w, &inst, &cat().accelerator_of(inst), 32, l, Precision::fp8};
  const auto files = emit_training(t, ctx, LaunchTarget::skypilot);
  auto args = megatron(file(files, "megatron_args.txt").text);
  CHECK(args["--expert-model-parallel-size"] == "32");
  CHECK(args["--expert-tensor-parallel-size"] == "1");
  // 94 layers over pp 8: the embedding and the loss take the two missing places (96 = 8 x 12).
  CHECK(args.count("--account-for-embedding-in-pipeline-split"));
  CHECK(args.count("--account-for-loss-in-pipeline-split"));
  CHECK(YAML::Load(file(files, "task.yaml").text)["envs"]["ETP"].as<std::string>() == "1");
  // torchtitan shards ZeRO-1 (it has no ZeRO-1/2), and EP 32 borrows the 16 shard ranks x TP 2 (ETP 1).
  const std::string sharded = file(files, "torchtitan.toml").text;
  CHECK(sharded.find("data_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 16\n") != std::string::npos);
  CHECK(sharded.find("expert_parallel_degree = 32\n") != std::string::npos);
  // Replicated (ZeRO-0) the data-parallel ranks lend none, and TP 2 alone lends no EP 32: no file, and the headers say why.
  Layout replicated = l;
  replicated.zero_stage = 0;
  const auto replicated_files = emit_training(TrainingLaunch{&m, &w, &inst, &cat().accelerator_of(inst), 32, replicated, Precision::fp8}, ctx,
                                              LaunchTarget::skypilot);
  CHECK_FALSE(has_file(replicated_files, "torchtitan.toml"));
  CHECK(file(replicated_files, "megatron_args.txt").text.find("# torchtitan.toml is not written: torchtitan's expert parallelism must divide") !=
        std::string::npos);
  // EP over the TP ranks with ETP 1 is one torchtitan runs.
  Layout folded{2, 8, 16, 2, 1, 1, Recompute::full};
  folded.etp = 1;
  const TrainingLaunch over_tp{&m, &w, &inst, &cat().accelerator_of(inst), 32, folded, Precision::fp8};
  CHECK(file(emit_training(over_tp, ctx, LaunchTarget::skypilot), "torchtitan.toml").text.find("expert_tensor_parallel_degree = 1\n") !=
        std::string::npos);
}

TEST_CASE("emitted serving files: replicas, tensor-parallel size and the engine command") {
  LaunchContext ctx;
  ctx.model_id = "meta-llama/Meta-Llama-3-8B";
  const ModelSpec& m = *find_model_preset("llama-3-8b");
  InferenceRequest q;
  q.requests_per_second = 20;
  const InferenceWorkload w = make_inference_workload(q);
  const Instance& inst = *cat().find_instance("g6e.12xlarge");
  // Two replicas of TP2 on each of two 4-GPU instances (size_service's count).
  const ServingLaunch one{&m, &w, &inst, &cat().accelerator_of(inst), ServingLayout{2, 1}, 4, 2, 64, 1280};
  const YAML::Node dep = YAML::Load(file(emit_serving(one, ctx, LaunchTarget::k8s), "deployment.yaml").text);
  CHECK(dep["kind"].as<std::string>() == "Deployment");
  CHECK(dep["spec"]["replicas"].as<int>() == 4);
  const auto container = dep["spec"]["template"]["spec"]["containers"][0];
  CHECK(container["command"][2].as<std::string>().find("--tensor-parallel-size 2") != std::string::npos);
  // A pod per replica asks for the replica's GPUs, so four pods fill the two instances, not four.
  CHECK(container["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 2);
  const ServingLaunch pipelined{&m, &w, cat().find_instance("p5.48xlarge"), &cat().accelerator_of(*cat().find_instance("p5.48xlarge")),
                                ServingLayout{8, 2}, 2, 4, 128, 1280};
  const YAML::Node lws = YAML::Load(file(emit_serving(pipelined, ctx, LaunchTarget::k8s), "leaderworkerset.yaml").text);
  CHECK(lws["spec"]["leaderWorkerTemplate"]["size"].as<int>() == 2);
  CHECK(lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"].as<int>() == 32);
  const YAML::Node sky = YAML::Load(file(emit_serving(one, ctx, LaunchTarget::skypilot), "service.yaml").text);
  // SkyServe: a replica is an instance, its two replicas vLLM's data-parallel ranks behind one port.
  CHECK(sky["service"]["replica_policy"]["min_replicas"].as<int>() == 2);
  CHECK(sky["run"].as<std::string>().find("--tensor-parallel-size 2 --pipeline-parallel-size 1 --data-parallel-size 2 ") != std::string::npos);
  CHECK(sky["service"]["readiness_probe"]["path"].as<std::string>() == "/health");
}

TEST_CASE("replicas sharing an instance: each on its own devices and port under Slurm, and refused by SkyServe where the engine cannot hold them") {
  LaunchContext ctx;
  ctx.model_id = "meta-llama/Meta-Llama-3-8B-Instruct";
  const ModelSpec& m = *find_model_preset("llama-3-8b");
  InferenceRequest q;
  q.requests_per_second = 20;
  const InferenceWorkload w = make_inference_workload(q);
  // 4 replicas of TP4 on 2 p4d.24xlarge: one array task per instance, two engines in each.
  const Instance& p4d = *cat().find_instance("p4d.24xlarge");
  const ServingLaunch gpu{&m, &w, &p4d, &cat().accelerator_of(p4d), ServingLayout{4, 1}, 4, 2, 64, 8192};
  const std::string sbatch = file(emit_serving(gpu, ctx, LaunchTarget::slurm), "serve.sbatch").text;
  CHECK(sbatch.find("#SBATCH --array=0-1\n") != std::string::npos);
  CHECK(sbatch.find("(export CUDA_VISIBLE_DEVICES=0,1,2,3; vllm serve ") != std::string::npos);
  CHECK(sbatch.find("(export CUDA_VISIBLE_DEVICES=4,5,6,7; vllm serve ") != std::string::npos);
  CHECK(sbatch.find("--port 8001) & wait") != std::string::npos);
  // TensorRT-LLM: each replica writes and reads its own options file.
  InferenceRequest tq = q;
  tq.engine = find_engine("trtllm");
  tq.kv_cache = Precision::fp8;
  const InferenceWorkload tw = make_inference_workload(tq);
  ServingLaunch trt = gpu;
  trt.workload = &tw;
  trt.kv_cache = Precision::fp8;
  const std::string t = file(emit_serving(trt, ctx, LaunchTarget::slurm), "serve.sbatch").text;
  CHECK(t.find("> /tmp/trtllm-options-0.yaml && trtllm-serve") != std::string::npos);
  CHECK(t.find("--extra_llm_api_options /tmp/trtllm-options-1.yaml --port 8001") != std::string::npos);
  CHECK_THROWS_WITH(emit_serving(trt, ctx, LaunchTarget::skypilot), Catch::Matchers::Contains("--emit k8s or --emit slurm"));
  // Inferentia2: 3 replicas of 4 chips (8 NeuronCores) on each inf2.48xlarge.
  const Instance& inf2 = *cat().find_instance("inf2.48xlarge");
  const ServingLaunch neuron{&m, &w, &inf2, &cat().accelerator_of(inf2), ServingLayout{4, 1}, 6, 2, 4, 8192};
  const YAML::Node dep = YAML::Load(file(emit_serving(neuron, ctx, LaunchTarget::k8s), "deployment.yaml").text);
  CHECK(dep["spec"]["replicas"].as<int>() == 6);
  CHECK(dep["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["aws.amazon.com/neuron"].as<int>() == 4);
  const std::string n = file(emit_serving(neuron, ctx, LaunchTarget::slurm), "serve.sbatch").text;
  CHECK(n.find("#SBATCH --array=0-1\n") != std::string::npos);
  CHECK(n.find("(export NEURON_RT_VISIBLE_CORES=16-23; vllm serve meta-llama/Meta-Llama-3-8B-Instruct --tensor-parallel-size 8 ") != std::string::npos);
  CHECK_THROWS_AS(emit_serving(neuron, ctx, LaunchTarget::skypilot), InputError);
}

TEST_CASE("an expert-parallel MoE replica is launched with its layout in every engine's command") {
  LaunchContext ctx;
  ctx.model_id = "deepseek-ai/DeepSeek-V3";
  const ModelSpec& m = *find_model_preset("deepseek-v3");
  InferenceRequest q;
  q.requests_per_second = 5;
  q.weights = WeightFormat::fp8;
  const InferenceWorkload w = make_inference_workload(q);
  const Instance& inst = *cat().find_instance("p5en.48xlarge");
  const ServingLaunch dep8{&m, &w, &inst, &cat().accelerator_of(inst), ServingLayout{8, 1, 8, 8}, 2, 2, 100, 163840};
  const std::string commands = file(emit_serving(dep8, ctx, LaunchTarget::slurm), "serve_commands.sh").text;
  // vLLM: 8 data-parallel engines at TP1, each with its share of the 100 sequences.
  CHECK(commands.find("--tensor-parallel-size 1 --pipeline-parallel-size 1 --data-parallel-size 8 --enable-expert-parallel --max-num-seqs 13 ") !=
        std::string::npos);
  CHECK(commands.find("--tp-size 8 --ep-size 8 --dp-size 8 --enable-dp-attention --max-running-requests 100 ") != std::string::npos);
  CHECK(commands.find("printf 'enable_attention_dp: true\\nenable_chunked_prefill: true\\n' > /tmp/trtllm-options.yaml && trtllm-serve deepseek-ai/DeepSeek-V3 --tp_size 8 --pp_size 1 "
                      "--ep_size 8 --max_batch_size 13 ") != std::string::npos);
  CHECK(commands.find("--extra_llm_api_options /tmp/trtllm-options.yaml") != std::string::npos);
  // 163,840-token requests over an 8192-token step: TensorRT-LLM chunks prefill only when told (enable_chunked_prefill).
  ServingLaunch short_context = dep8;
  short_context.max_model_len = 8192;
  CHECK(file(emit_serving(short_context, ctx, LaunchTarget::slurm), "serve_commands.sh").text.find("enable_chunked_prefill") == std::string::npos);
  CHECK(commands.find("Layout DP8 EP8") != std::string::npos);
  // TP8 EP8: expert parallel, attention tensor parallel; no data-parallel flags.
  const ServingLaunch tp8ep8{&m, &w, &inst, &cat().accelerator_of(inst), ServingLayout{8, 1, 8, 1}, 2, 2, 100, 163840};
  const std::string t = file(emit_serving(tp8ep8, ctx, LaunchTarget::slurm), "serve_commands.sh").text;
  CHECK(t.find("--tensor-parallel-size 8 --pipeline-parallel-size 1 --enable-expert-parallel --max-num-seqs 100 ") != std::string::npos);
  CHECK(t.find("--data-parallel-size") == std::string::npos);
  CHECK(t.find("enable_attention_dp") == std::string::npos);
  // The KV dtype the estimate took goes into the same options file.
  ServingLaunch fp8_kv = tp8ep8;
  fp8_kv.kv_cache = Precision::fp8;
  const std::string k = file(emit_serving(fp8_kv, ctx, LaunchTarget::slurm), "serve_commands.sh").text;
  CHECK(k.find("printf 'enable_chunked_prefill: true\\nkv_cache_config:\\n  dtype: fp8\\n' > /tmp/trtllm-options.yaml && trtllm-serve ") != std::string::npos);
  CHECK(k.find("--kv-cache-dtype fp8 ") != std::string::npos);       // vLLM
  CHECK(k.find("--kv-cache-dtype fp8_e4m3 ") != std::string::npos);  // SGLang
  CHECK(k.find("--kv-cache-dtype fp8_e4m3fn --port 8000") != std::string::npos);  // TGI
  fp8_kv.layout = dep8.layout;
  const std::string both = file(emit_serving(fp8_kv, ctx, LaunchTarget::slurm), "serve_commands.sh").text;
  CHECK(both.find("printf 'enable_attention_dp: true\\nenable_chunked_prefill: true\\nkv_cache_config:\\n  dtype: fp8\\n' > /tmp/trtllm-options.yaml") != std::string::npos);
  // Attention DP over fewer ranks than the replica (vLLM's DP2 at TP4): SGLang and TensorRT-LLM have no such layout and say so.
  const ServingLaunch dp2{&m, &w, &inst, &cat().accelerator_of(inst), ServingLayout{8, 1, 8, 2}, 2, 2, 100, 163840};
  const std::string p = file(emit_serving(dp2, ctx, LaunchTarget::slurm), "serve_commands.sh").text;
  CHECK(p.find("vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 4 --pipeline-parallel-size 1 --data-parallel-size 2 --enable-expert-parallel") !=
        std::string::npos);
  CHECK(p.find("# (none for DP2 TP4 EP8: engine sglang runs attention data parallel over every rank") != std::string::npos);
  CHECK(p.find("trtllm-serve") == std::string::npos);
}

// Every document of a multi-document YAML file, by kind.
std::map<std::string, YAML::Node> documents(const std::string& text) {
  std::map<std::string, YAML::Node> out;
  for (const auto& d : YAML::LoadAll(text)) out[d["kind"].as<std::string>()] = d;
  return out;
}

TEST_CASE("a replica over several instances: the leader waits for its workers before serving, and the autoscaler keeps the sized replicas") {
  LaunchContext ctx;
  ctx.model_id = "deepseek-ai/DeepSeek-V3";
  const ModelSpec& m = *find_model_preset("deepseek-v3");
  InferenceRequest q;
  q.requests_per_second = 2;
  const InferenceWorkload w = make_inference_workload(q);
  const Instance& inst = *cat().find_instance("p5.48xlarge");
  ServingLaunch s{&m, &w, &inst, &cat().accelerator_of(inst), ServingLayout{8, 2}, 3, 6, 64, 163840};
  s.batch_at_load = 24;
  s.target_qps_per_replica = 1.5;
  const auto docs = documents(file(emit_serving(s, ctx, LaunchTarget::k8s), "leaderworkerset.yaml").text);
  const std::string leader =
      docs.at("LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["command"][2].as<std::string>();
  // ray start, then a bounded loop on `ray status` until both instances have joined, then vLLM.
  const auto wait = leader.find("ray status");
  REQUIRE(wait != std::string::npos);
  CHECK(leader.find("ray start --head") < wait);
  CHECK(leader.find("[ $n -ge 2 ] && break") != std::string::npos);
  CHECK(leader.find("seq 240") != std::string::npos);  // a timeout, not a hang
  CHECK(leader.find("exit 1") < leader.find("vllm serve"));
  CHECK(wait < leader.find("vllm serve"));
  CHECK(leader.find("--max-model-len 163840") != std::string::npos);
  // Workers join at the address LWS sets in their environment, expanded by their shell.
  const std::string worker =
      docs.at("LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["command"][2].as<std::string>();
  CHECK(worker.find("ray start --address=$LWS_LEADER_ADDRESS:6379 --block") != std::string::npos);
  const YAML::Node hpa = docs.at("HorizontalPodAutoscaler");
  CHECK(hpa["spec"]["minReplicas"].as<int>() == 3);
  CHECK(hpa["spec"]["maxReplicas"].as<int>() == 6);
  CHECK(hpa["spec"]["scaleTargetRef"]["kind"].as<std::string>() == "LeaderWorkerSet");
  CHECK(hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"].as<std::string>() == "24");
  // SkyPilot and Slurm run the same wait on their first node.
  CHECK(file(emit_serving(s, ctx, LaunchTarget::skypilot), "service.yaml").text.find("ray status") != std::string::npos);
  const std::string sbatch = file(emit_serving(s, ctx, LaunchTarget::slurm), "serve.sbatch").text;
  CHECK(sbatch.find("ray status") != std::string::npos);
  const YAML::Node sky = YAML::Load(file(emit_serving(s, ctx, LaunchTarget::skypilot), "service.yaml").text);
  CHECK(sky["service"]["replica_policy"]["min_replicas"].as<int>() == 3);
  CHECK(sky["service"]["replica_policy"]["target_qps_per_replica"].as<double>() == 1.5);
}

TEST_CASE("Megatron arguments carry llama-3-8b's architecture, the steps and the checkpoints, and DeepSpeed never pairs AutoTP with ZeRO-3") {
  LaunchContext ctx;
  ctx.model_id = hugging_face_id(*find_model_preset("llama-3-8b"));
  const ModelSpec& m = *find_model_preset("llama-3-8b");
  WorkloadRequest req;
  req.task = Task::pretrain;
  req.tokens = 1e10;
  req.seq_len = 8192;
  req.global_batch = 512;
  const TrainingWorkload w = make_workload(req, m);
  const Instance& inst = *cat().find_instance("p5.48xlarge");
  Layout l{2, 1, 16, 1, 1, 2, Recompute::selective};  // tp 2 x dp 16 = 4 instances of 8
  l.zero_stage = 2;
  TrainingLaunch t{&m, &w, &inst, &cat().accelerator_of(inst), 4, l, Precision::bf16};
  t.save_interval_steps = 100;
  auto files = emit_training(t, ctx, LaunchTarget::slurm);
  auto args = megatron(file(files, "megatron_args.txt").text);
  // Hand-checked against meta-llama/Meta-Llama-3-8B config.json.
  CHECK(args["--num-layers"] == "32");
  CHECK(args["--hidden-size"] == "4096");
  CHECK(args["--num-attention-heads"] == "32");
  CHECK(args.count("--group-query-attention"));
  CHECK(args["--num-query-groups"] == "8");
  CHECK(args["--ffn-hidden-size"] == "14336");
  CHECK(args["--seq-length"] == "8192");
  CHECK(args["--max-position-embeddings"] == "8192");
  CHECK(args["--position-embedding-type"] == "rope");
  CHECK(args["--rotary-base"] == "500000");
  CHECK(args["--normalization"] == "RMSNorm");
  CHECK(args.count("--swiglu"));
  CHECK(args.count("--untie-embeddings-and-output-weights"));
  CHECK(args["--tokenizer-type"] == "HuggingFaceTokenizer");
  CHECK(args["--tokenizer-model"] == "meta-llama/Meta-Llama-3-8B");
  // 1e10 tokens / (512 sequences x 8192 tokens = 4,194,304 per step) = 2384.19: 2385 steps.
  CHECK(args["--train-iters"] == "2385");
  CHECK(args["--save-interval"] == "100");
  CHECK(args.count("--save"));
  CHECK(args.count("--load"));
  CHECK_FALSE(args.count("--finetune"));
  CHECK(args.count("--lr"));
  CHECK(file(files, "megatron_args.txt").text.find("# Learning-rate schedule: defaults") != std::string::npos);
  const std::string toml = file(files, "torchtitan.toml").text;
  CHECK(toml.find("flavor = \"8B\"") != std::string::npos);
  CHECK(toml.find("steps = 2385\n") != std::string::npos);
  CHECK(toml.find("interval = 100\n") != std::string::npos);
  // torchtitan accumulates global / (local x dp) forward passes: local is the micro-batch the memory was sized for
  // (2; the rank's whole share, 512 / 16 = 32, ran 16x the activations), and with a pipeline the share its schedule splits.
  CHECK(toml.find("local_batch_size = 2\nglobal_batch_size = 512\n") != std::string::npos);
  TrainingLaunch piped = t;
  piped.layout.pp = 2;
  piped.layout.dp = 8;
  CHECK(file(emit_training(piped, ctx, LaunchTarget::slurm), "torchtitan.toml").text.find("local_batch_size = 64\nglobal_batch_size = 512\n") !=
        std::string::npos);
  // ZeRO-2 has no torchtitan form: sharded (FSDP), said in the file. As replicate each rank would hold the whole optimizer state
  // (a hostile review's 8B layout sized at 79.6 GB per H100 would have needed about 128 GB).
  CHECK(toml.find("# ZeRO-2 is estimated; torchtitan shards fully (FSDP) or not at all: sharded here") != std::string::npos);
  CHECK(toml.find("data_parallel_replicate_degree = 1\ndata_parallel_shard_degree = 16\n") != std::string::npos);
  // AutoTP with ZeRO-2: written.
  auto ds = nlohmann::json::parse(file(files, "deepspeed.json").text);
  CHECK(ds["tensor_parallel"]["autotp_size"] == 2);
  CHECK(ds["zero_optimization"]["stage"] == 2);
  // TP with ZeRO-3: AutoTP does not support it, so no DeepSpeed config, and every header says why.
  t.layout.zero_stage = 3;
  files = emit_training(t, ctx, LaunchTarget::slurm);
  CHECK_FALSE(has_file(files, "deepspeed.json"));
  CHECK(file(files, "job.sbatch").text.find("deepspeed.json is not written: DeepSpeed's AutoTP training combines tensor parallelism with ZeRO "
                                            "stages 0, 1 or 2 only") != std::string::npos);
  args = megatron(file(files, "megatron_args.txt").text);
  CHECK(args.count("--use-torch-fsdp2"));
  CHECK(args.count("--no-gradient-accumulation-fusion"));
  CHECK_FALSE(args.count("--use-distributed-optimizer"));
  // ZeRO-3 without TP: DeepSpeed's own sharding, no AutoTP.
  t.layout = Layout{1, 1, 32, 1, 1, 1, Recompute::selective};
  t.layout.zero_stage = 3;
  ds = nlohmann::json::parse(file(emit_training(t, ctx, LaunchTarget::slurm), "deepspeed.json").text);
  CHECK(ds["zero_optimization"]["stage"] == 3);
  CHECK_FALSE(ds.contains("tensor_parallel"));
  // ZeRO-3 with pipeline stages: Megatron's FSDP2 refuses it, so nothing is written.
  t.layout = Layout{1, 2, 16, 1, 1, 1, Recompute::selective};
  t.layout.zero_stage = 3;
  CHECK_THROWS_WITH(emit_training(t, ctx, LaunchTarget::slurm), Catch::Contains("not supported with pipeline parallelism"));
  // A fine-tune loads the pretrained weights.
  req.task = Task::finetune;
  const TrainingWorkload ft = make_workload(req, m);
  const TrainingLaunch f{&m, &ft, &inst, &cat().accelerator_of(inst), 4, l, Precision::bf16};
  args = megatron(file(emit_training(f, ctx, LaunchTarget::slurm), "megatron_args.txt").text);
  CHECK(args["--load"] == "YOUR_BASE_CHECKPOINT");
  CHECK(args.count("--finetune"));
}

TEST_CASE("cli: --emit writes launch files whose nodes and layout are the recommendation's") {
  const std::string dir = "gpuadvisor_test_emit_" + std::to_string(getpid());
  auto r = run("recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d --exclude trn1 --format json --emit skypilot --emit-dir " + dir);
  REQUIRE(r.code == 0);
  const auto rec = nlohmann::json::parse(r.out)["recommendation"];
  const YAML::Node task = YAML::LoadFile(dir + "/task.yaml");
  CHECK(task["num_nodes"].as<int>() == rec["count"].get<int>());
  CHECK(task["resources"]["instance_type"].as<std::string>() == rec["instance"].get<std::string>());
  CHECK(std::stoi(task["envs"]["TP"].as<std::string>()) == rec["layout"]["tp"].get<int>());
  CHECK(std::stoi(task["envs"]["PP"].as<std::string>()) == rec["layout"]["pp"].get<int>());
  std::ifstream args(dir + "/megatron_args.txt");
  std::string first;
  std::getline(args, first);
  CHECK(first.rfind("# Generated by gpuadvisor", 0) == 0);
  REQUIRE(run("recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d --exclude trn1 --emit slurm --emit-dir " + dir).code == 0);
  CHECK(std::system(("bash -n " + dir + "/job.sbatch").c_str()) == 0);
  REQUIRE(run("recommend --model llama-3-70b --task pretrain --tokens 1T --deadline 30d --exclude trn1 --emit k8s --emit-dir " + dir).code == 0);
  CHECK(YAML::LoadFile(dir + "/pytorchjob.yaml")["kind"].as<std::string>() == "PyTorchJob");
  // Serving: the sized replicas and the engine's tensor-parallel size.
  auto s = run("recommend --model llama-3-8b --task inference --requests-per-second 5 --format json --emit k8s --emit-dir " + dir);
  REQUIRE(s.code == 0);
  const auto pick = nlohmann::json::parse(s.out)["recommendation"];
  const YAML::Node dep = YAML::LoadFile(dir + "/deployment.yaml");
  CHECK(dep["spec"]["replicas"].as<int>() == pick["replicas"].get<int>());
  CHECK(dep["spec"]["template"]["spec"]["containers"][0]["command"][2].as<std::string>().find(
            "--tensor-parallel-size " + std::to_string(pick["layout"]["tp"].get<int>())) != std::string::npos);
  // On Inferentia the tensor-parallel size counts NeuronCores: one Inferentia2 chip is 2 cores.
  auto n = run("recommend --model llama-3-8b --task inference --family inf2 --format json --emit k8s --emit-dir " + dir);
  REQUIRE(n.code == 0);
  const auto npick = nlohmann::json::parse(n.out)["recommendation"];
  CHECK(npick["instance"].get<std::string>().rfind("inf2.", 0) == 0);
  CHECK(YAML::LoadFile(dir + "/deployment.yaml")["spec"]["template"]["spec"]["containers"][0]["command"][2].as<std::string>().find(
            "--tensor-parallel-size " + std::to_string(2 * npick["layout"]["tp"].get<int>())) != std::string::npos);
  CHECK(run("recommend --params 7B --task lora --emit nomad").code == 2);
  CHECK(run("recommend --params 7B --task lora --emit slurm --rank 999 --emit-dir " + dir).code == 2);
  std::filesystem::remove_all(dir);
  // Training on Trainium: the files are CUDA stacks', so --emit exits 2 before any output and writes nothing.
  const std::string neuron_dir = dir + "_trn1";
  for (const std::string args : {"recommend --model llama-3-8b --task pretrain --tokens 100B --family trn1",
                                 "estimate --model llama-3-8b --task pretrain --instance trn1.32xlarge --count 4"}) {
    auto t = run(args + " --format json --emit slurm --emit-dir " + neuron_dir);
    CHECK(t.code == 2);
    CHECK(nlohmann::json::parse(t.out)["error"]["message"].get<std::string>().find("Neuron training (NxD Training) is not written") !=
          std::string::npos);
    CHECK_FALSE(std::filesystem::exists(neuron_dir));
  }
}

TEST_CASE("cli: serving files accept the model's whole context, serve its instruct checkpoint, probe /health and autoscale from the sizing") {
  const std::string dir = "gpuadvisor_test_serve_" + std::to_string(getpid());
  auto r = run("recommend --model llama-3-8b --task inference --requests-per-second 20 --format json --emit k8s --emit-dir " + dir);
  REQUIRE(r.code == 0);
  const auto pick = nlohmann::json::parse(r.out)["recommendation"];
  std::ifstream in(dir + "/deployment.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const auto docs = documents(text.str());
  const YAML::Node container = docs.at("Deployment")["spec"]["template"]["spec"]["containers"][0];
  const std::string command = container["command"][2].as<std::string>();
  CHECK(command.find("--max-model-len 8192 ") != std::string::npos);  // the context length, not the mean request
  CHECK(command.find("vllm serve meta-llama/Meta-Llama-3-8B-Instruct ") == 0);
  CHECK(command.find("--max-num-batched-tokens ") != std::string::npos);
  CHECK(text.str().find("# accepts requests up to 8192 tokens, prompt + output (llama-3-8b's context length)") != std::string::npos);
  CHECK(text.str().find("# serves: meta-llama/Meta-Llama-3-8B-Instruct, the instruct/chat variant of llama-3-8b") != std::string::npos);
  for (const char* probe : {"startupProbe", "livenessProbe", "readinessProbe"}) {
    INFO(probe);
    CHECK(container[probe]["httpGet"]["path"].as<std::string>() == "/health");
    CHECK(container[probe]["httpGet"]["port"].as<int>() == 8000);
  }
  CHECK(docs.at("HorizontalPodAutoscaler")["spec"]["minReplicas"].as<int>() == pick["replicas"].get<int>());
  CHECK(docs.at("HorizontalPodAutoscaler")["spec"]["scaleTargetRef"]["kind"].as<std::string>() == "Deployment");
  // The autoscalers add nothing at the sized load: the HPA's target is the simulated sequences in flight per
  // replica there (batch_at_load), and SkyServe's per-replica target times its minimum covers the load.
  CHECK(std::stoi(docs.at("HorizontalPodAutoscaler")["spec"]["metrics"][0]["pods"]["target"]["averageValue"].as<std::string>()) ==
        pick["batch_at_load"].get<int>());
  {
    auto big = run("recommend --model llama-3-70b --task inference --requests-per-second 10 --emit skypilot --emit-dir " + dir);
    REQUIRE(big.code == 0);
    const YAML::Node service = YAML::LoadFile(dir + "/service.yaml")["service"]["replica_policy"];
    CHECK(service["target_qps_per_replica"].as<double>() * service["min_replicas"].as<int>() >= 10 - 1e-9);
  }
  // A cap within the context is written as given; --hf-model is served exactly as named.
  const std::string base = "recommend --model llama-3-8b --task inference --requests-per-second 20 --emit skypilot --emit-dir " + dir;
  REQUIRE(run(base + " --max-request-tokens 4096 --hf-model my-org/llama-3-8b-chat").code == 0);
  std::ifstream sky(dir + "/service.yaml");
  std::stringstream sky_text;
  sky_text << sky.rdbuf();
  CHECK(sky_text.str().find("vllm serve my-org/llama-3-8b-chat ") != std::string::npos);
  CHECK(sky_text.str().find("--max-model-len 4096 ") != std::string::npos);
  CHECK(sky_text.str().find("# serves: my-org/llama-3-8b-chat (--hf-model)") != std::string::npos);
  // Above the context length, or below the mean request: refused.
  auto above = run(base + " --max-request-tokens 8193");
  CHECK(above.code == 2);
  CHECK(above.err.find("above llama-3-8b's context length of 8192 tokens") != std::string::npos);
  auto below = run(base + " --max-request-tokens 100");
  CHECK(below.code == 2);
  CHECK(below.err.find("below the mean request") != std::string::npos);
  CHECK(run("recommend --model llama-3-8b --task pretrain --tokens 10B --emit slurm --max-request-tokens 4096 --emit-dir " + dir).code == 2);
  CHECK(run("recommend --model llama-3-8b --task inference --max-request-tokens 4096").code == 2);  // needs --emit
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: TensorRT-LLM with fp8 weights says it needs a pre-quantised checkpoint, unless one is named or the model is published in fp8") {
  const std::string dir = "gpuadvisor_test_prequant_" + std::to_string(getpid());
  auto slurp = [&](const char* name) {
    std::ifstream in(dir + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string note = "# weights: TensorRT-LLM serves fp8 weights from a checkpoint quantised beforehand with NVIDIA Model Optimizer";
  const std::string base = "recommend --task inference --requests-per-second 2 --engine trtllm --emit skypilot --emit-dir " + dir;
  REQUIRE(run(base + " --model llama-3-8b --weights fp8").code == 0);
  CHECK(slurp("service.yaml").find(note) != std::string::npos);
  CHECK(slurp("service.yaml").find("kv_cache_config:\\n  dtype: fp8") != std::string::npos);  // the KV the estimate took
  REQUIRE(run(base + " --model llama-3-8b --weights fp8 --hf-model nvidia/Llama-3.1-8B-Instruct-FP8").code == 0);
  CHECK(slurp("service.yaml").find(note) == std::string::npos);
  REQUIRE(run(base + " --model llama-3-8b --weights bf16").code == 0);
  CHECK(slurp("service.yaml").find("# weights: TensorRT-LLM") == std::string::npos);
  CHECK(slurp("service.yaml").find("kv_cache_config") == std::string::npos);
  // Slurm: the options file and the server run in one srun step, inside its container (not split at && on the batch host).
  const std::string slurm = "recommend --task inference --requests-per-second 2 --engine trtllm --model llama-3-8b --emit slurm --emit-dir " + dir;
  REQUIRE(run(slurm + " --weights fp8").code == 0);
  CHECK(slurp("serve.sbatch").find("srun --container-image=YOUR_IMAGE bash -c \"printf 'kv_cache_config:\\\\n  dtype: fp8\\\\n' > "
                                   "/tmp/trtllm-options.yaml && trtllm-serve ") != std::string::npos);
  REQUIRE(run(slurm + " --weights bf16").code == 0);
  CHECK(slurp("serve.sbatch").find("srun --container-image=YOUR_IMAGE trtllm-serve ") != std::string::npos);
  // fp4: every engine needs the pre-quantised checkpoint; vLLM quantises only fp8 at load.
  REQUIRE(run(slurm + " --weights fp4").code == 0);
  CHECK(slurp("serve.sbatch").find("(the other engines' lines need such a checkpoint too)") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: where one request of the whole context would not fit the sized KV cache, the longest request is what fits, and a larger cap is refused") {
  const std::string dir = "gpuadvisor_test_kvfit_" + std::to_string(getpid());
  // Llama 3.1 70B on 4 x 48 GB: the weights leave room for about 47k tokens of KV, not 131,072.
  const std::string base = "estimate --task inference --model llama-3.1-70b --instance g6e.12xlarge --emit k8s --emit-dir " + dir;
  REQUIRE(run(base).code == 0);
  std::stringstream text;
  text << std::ifstream(dir + "/deployment.yaml").rdbuf();
  const auto at = text.str().find("--max-model-len ");
  REQUIRE(at != std::string::npos);
  const int length = std::stoi(text.str().substr(at + 16));
  CHECK(length > 8192);
  CHECK(length < 131072);
  CHECK(text.str().find(fmt::format("# accepts requests up to {} tokens, prompt + output (the most one request's KV cache can hold here; "
                                    "llama-3.1-70b's context length is 131072)", length)) != std::string::npos);
  // The header prices the replica on demand, as recommend's does (it said "cost unknown" from estimate).
  CHECK(text.str().find("# predicted: $") != std::string::npos);
  CHECK(text.str().find("cost unknown") == std::string::npos);
  auto above = run(base + " --max-request-tokens " + std::to_string(length + 1));
  CHECK(above.code == 2);
  CHECK(above.err.find("the KV cache the estimate sized holds one request of at most") != std::string::npos);
  CHECK(run(base + " --max-request-tokens " + std::to_string(length)).code == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: a config.json's max_position_embeddings is the longest request served, and its rope_theta the rotary base") {
  const std::string stem = "gpuadvisor_test_hfconfig_" + std::to_string(getpid());
  std::ofstream(stem + ".json") << R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 4096, "rope_theta": 10000.0})";
  const std::string config = " --model-config " + stem + ".json --emit-dir " + stem;
  REQUIRE(run("estimate --task inference --instance g6e.12xlarge --emit k8s --hf-model my-org/my-model" + config).code == 0);
  const auto docs = documents([&] {
    std::stringstream text;
    text << std::ifstream(stem + "/deployment.yaml").rdbuf();
    return text.str();
  }());
  const std::string command = docs.at("Deployment")["spec"]["template"]["spec"]["containers"][0]["command"][2].as<std::string>();
  CHECK(command.find("vllm serve my-org/my-model ") == 0);
  CHECK(command.find("--max-model-len 4096 ") != std::string::npos);
  REQUIRE(run("estimate --task pretrain --tokens 1B --instance p5.48xlarge --emit slurm" + config).code == 0);
  std::stringstream text;
  text << std::ifstream(stem + "/megatron_args.txt").rdbuf();
  auto args = megatron(text.str());
  CHECK(args["--max-position-embeddings"] == "4096");
  CHECK(args["--rotary-base"] == "10000");
  CHECK(args["--tokenizer-model"] == "YOUR_TOKENIZER");  // no Hugging Face id known: a placeholder, never a guess
  std::filesystem::remove_all(stem);
  std::filesystem::remove(stem + ".json");
}

TEST_CASE("cli: training files carry the steps and the cost model's checkpoint interval, and combinations the frameworks refuse exit 2") {
  const std::string dir = "gpuadvisor_test_train_" + std::to_string(getpid());
  REQUIRE(run("recommend --model llama-3-8b --task pretrain --tokens 100B --family p5 --emit slurm --emit-dir " + dir).code == 0);
  std::ifstream in(dir + "/megatron_args.txt");
  std::stringstream text;
  text << in.rdbuf();
  auto args = megatron(text.str());
  const long long iters = std::stoll(args["--train-iters"]);
  CHECK(iters == static_cast<long long>(std::ceil(100e9 / (std::stod(args["--global-batch-size"]) * std::stod(args["--seq-length"])))));
  CHECK(std::stoll(args["--save-interval"]) >= 1);
  CHECK(std::stoll(args["--save-interval"]) <= iters);
  CHECK(text.str().find("# checkpoints: every " + args["--save-interval"] + " steps") != std::string::npos);
  std::filesystem::remove_all(dir);
  // ZeRO-3 with expert parallelism: Megatron-LM's FSDP2 refuses it, so the files are refused and none is written.
  auto fsdp_ep = run("estimate --model mixtral-8x7b --task pretrain --tokens 10B --instance p5.48xlarge --count 2 --ep 8 --zero-stage 3 "
                     "--format json --emit slurm --emit-dir " + dir);
  CHECK(fsdp_ep.code == 2);
  CHECK(fsdp_ep.out.find("--use-torch-fsdp2 is not supported with expert parallelism") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir));
  // LoRA: no framework written here carries adapters.
  auto lora = run("recommend --params 7B --task lora --emit slurm --emit-dir " + dir);
  CHECK(lora.code == 2);
  CHECK(lora.err.find("lora launch files are not written") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("cli: CI gates compare with a baseline and exit 4 past a threshold, after writing the output") {
  const std::string base = "gpuadvisor_test_base_" + std::to_string(getpid()) + ".json";
  auto b = run("--discount 20% recommend --params 13B --task lora --format json");
  REQUIRE(b.code == 0);
  std::ofstream(base) << b.out;
  auto rose = run("recommend --params 13B --task lora --format json --compare-to " + base + " --fail-if-increase 10%");
  CHECK(rose.code == 4);
  const auto cmp = nlohmann::json::parse(rose.out)["comparison"];  // the output is still written
  CHECK(cmp["cost_delta_fraction"].get<double>() == Approx(0.25).epsilon(0.01));
  CHECK(cmp["pick_changed"] == false);
  CHECK(cmp["time_unit"] == "hours");
  {
    const std::string serving_base = base + ".serving";
    auto sb = run("recommend --model llama-3-8b --task inference --requests-per-second 2 --format json");
    REQUIRE(sb.code == 0);
    std::ofstream(serving_base) << sb.out;
    auto sc = run("recommend --model llama-3-8b --task inference --requests-per-second 2 --format json --compare-to " + serving_base);
    REQUIRE(sc.code == 0);
    CHECK(nlohmann::json::parse(sc.out)["comparison"]["time_unit"] == "seconds per output token");
    // The same run against itself: no change, to the digit (the baseline holds 6 significant digits, as the comparison does).
    const auto same = nlohmann::json::parse(sc.out)["comparison"];
    CHECK(same["time_delta"].get<double>() == 0.0);
    CHECK(same["current"]["time"] == same["base"]["time"]);
    CHECK(sc.err.find("workload differs") == std::string::npos);
    // Twice the load costs more for the load, not for a change of price: said, naming what differs.
    auto twice = run("cost --model llama-3-8b --task inference --requests-per-second 4 --format json --compare-to " + serving_base);
    REQUIRE(twice.code == 0);
    CHECK(twice.err.find("the baseline's workload differs (requests_per_second 2 -> 4): the comparison is across two workloads") !=
          std::string::npos);
    std::remove(serving_base.c_str());
  }
  CHECK(rose.err.find("--fail-if-increase") != std::string::npos);
  CHECK(rose.err.find("across two jobs") == std::string::npos);  // the same job, repriced
  CHECK(rose.err.find("workload differs") == std::string::npos);
  // --fail-if-pick-changes: the same pick passes whatever its cost; another instance type or count exits 4, naming both.
  auto same_pick = run("recommend --params 13B --task lora --format json --compare-to " + base + " --fail-if-pick-changes");
  CHECK(same_pick.code == 0);
  const auto same_gate = nlohmann::json::parse(same_pick.out)["gates"];
  REQUIRE(same_gate.size() == 1);
  CHECK(same_gate[0]["gate"] == "fail_if_pick_changes");
  CHECK(same_gate[0]["passed"] == true);
  CHECK(same_gate[0]["base_pick"] == same_gate[0]["pick"]);
  auto moved = run("recommend --params 13B --task lora --family p4d --format json --compare-to " + base + " --fail-if-pick-changes");
  CHECK(moved.code == 4);
  const auto moved_gate = nlohmann::json::parse(moved.out)["gates"][0];
  CHECK(moved_gate["passed"] == false);
  CHECK(moved.err.find("--fail-if-pick-changes: the pick is " + moved_gate["pick"].get<std::string>() + ", " + base + "'s was " +
                       moved_gate["base_pick"].get<std::string>()) != std::string::npos);
  CHECK(run("recommend --params 13B --task lora --fail-if-pick-changes").code == 2);  // nothing to compare with
  auto longer = run("recommend --params 13B --task lora --tokens 2B --format json --compare-to " + base);
  CHECK(longer.err.find("the baseline's workload differs (tokens 1e+08 -> 2e+09)") != std::string::npos);
  // A baseline for another job is compared, with a warning that says so.
  auto other = run("recommend --model llama-3-8b --task pretrain --tokens 10B --format json --compare-to " + base);
  CHECK(other.code == 0);
  CHECK(other.err.find("the baseline is for 13B-param model lora, this run for llama-3-8b pretrain") != std::string::npos);
  CHECK(run("recommend --params 13B --task lora --compare-to " + base + " --fail-if-increase 30%").code == 0);
  auto md = run("recommend --params 13B --task lora --format markdown --compare-to " + base);
  CHECK(md.out.find("| base |") != std::string::npos);
  CHECK(run("recommend --params 13B --task lora --fail-if-over 5").code == 4);
  CHECK(run("recommend --params 13B --task lora --fail-if-over 1000").code == 0);
  {
    // A script that keeps only the JSON still sees which gate failed and why.
    auto over = run("recommend --params 13B --task lora --fail-if-over 5 --format json");
    CHECK(over.code == 4);
    const auto gates = nlohmann::json::parse(over.out)["gates"];
    REQUIRE(gates.size() == 1);
    CHECK(gates[0]["gate"] == "fail_if_over");
    CHECK(gates[0]["limit_usd"].get<double>() == 5.0);
    CHECK(gates[0]["passed"] == false);
    CHECK(gates[0]["cost_usd"].get<double>() > 5.0);
    CHECK(gates[0]["message"].get<std::string>().find("over the $5.00 limit") != std::string::npos);
    const auto rose_gates = nlohmann::json::parse(rose.out)["gates"];
    REQUIRE(rose_gates.size() == 1);
    CHECK(rose_gates[0]["gate"] == "fail_if_increase");
    CHECK(rose_gates[0]["cost_delta_fraction"].get<double>() == Approx(0.25).epsilon(0.01));
    CHECK(rose_gates[0]["passed"] == false);
    auto none = run("recommend --params 13B --task lora --format json");
    REQUIRE(none.code == 0);
    CHECK(nlohmann::json::parse(none.out)["gates"].empty());
    auto within = run("cost --model llama-3-8b --task lora --tokens 10M --family g6e --fail-if-over 1M --format json");
    REQUIRE(within.code == 0);
    CHECK(nlohmann::json::parse(within.out)["gates"][0]["passed"] == true);
  }
  CHECK(run("cost --instance p5.48xlarge --count 4 --hours 100 --fail-if-over 19k").code == 4);
  CHECK(run("recommend --params 13B --task lora --fail-if-increase 10%").code == 2);  // needs --compare-to
  {
    // The same request against its own baseline has not risen, to the cent.
    std::ofstream(base + ".same") << run("recommend --params 13B --task lora --format json").out;
    auto same = run("recommend --params 13B --task lora --format json --compare-to " + base + ".same --fail-if-increase 0%");
    CHECK(same.code == 0);
    CHECK(nlohmann::json::parse(same.out)["comparison"]["cost_delta_fraction"].get<double>() == 0.0);
    // A service is not compared with a training job.
    auto kinds = run("recommend --params 7B --task inference --compare-to " + base + ".same");
    CHECK(kinds.code == 2);
    CHECK(kinds.err.find("a different kind of request") != std::string::npos);
    // A bare fraction is ambiguous: 5% or 0.05%?
    auto bare = run("recommend --params 13B --task lora --compare-to " + base + ".same --fail-if-increase 0.05");
    CHECK(bare.code == 2);
    CHECK(bare.err.find("is ambiguous: write 5% for a fraction of 0.05") != std::string::npos);
    CHECK(run("recommend --params 13B --task lora --compare-to " + base + ".same --fail-if-increase 5").code == 0);
    std::remove((base + ".same").c_str());
  }
  CHECK(run("recommend --params 13B --task lora --compare-to /nonexistent.json").code == 2);
  std::remove(base.c_str());
}

TEST_CASE("launch files match the golden files (scripts/regen_golden.sh regenerates them)") {
  namespace fs = std::filesystem;
  const std::string golden = std::string(GPUADVISOR_SOURCE_DIR) + "/tests/golden";
  const std::map<std::string, std::string> requests = {
      {"training", "recommend --model llama-3-8b --task pretrain --tokens 100B --family p5 --max-instances 8"},
      {"serving", "recommend --model llama-3-8b --task inference --requests-per-second 5 --family g6e"}};
  int compared = 0;
  for (const char* target : {"skypilot", "slurm", "k8s"})
    for (const auto& [kind, args] : requests) {
      const std::string dir = "OUT";  // the same --emit-dir as the script, so the headers' commands agree
      fs::remove_all(dir);
      REQUIRE(run(args + " --emit " + target + " --emit-dir " + dir).code == 0);
      const std::string expected = golden + "/" + target + "-" + kind;
      REQUIRE(fs::is_directory(expected));
      for (const auto& f : fs::directory_iterator(expected)) {
        std::ifstream a(f.path()), b(dir + "/" + f.path().filename().string());
        std::stringstream sa, sb;
        sa << a.rdbuf();
        sb << b.rdbuf();
        INFO(f.path().string());
        CHECK(sa.str() == sb.str());
        ++compared;
      }
      fs::remove_all(dir);
    }
  CHECK(compared == 18);  // 3 targets x (4 training + 2 serving files)
}

namespace {

std::string read_text(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// "key=value" lines of verl_args.txt.
std::map<std::string, std::string> verl(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    out[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  return out;
}

// A Megatron layout over `count` instances of `instance` for llama-3-8b.
struct Pick {
  const ModelSpec& m = *find_model_preset("llama-3-8b");
  TrainingWorkload w;
  TrainingLaunch t;
  Pick(const char* instance, int count) {
    WorkloadRequest req;
    req.task = Task::pretrain;
    req.tokens = 1e10;
    req.global_batch = 512;
    w = make_workload(req, m);
    const Instance& inst = *cat().find_instance(instance);
    Layout l{1, 1, count * inst.accelerator_count, 1, 1, 1, Recompute::selective};
    l.zero_stage = 1;
    t = TrainingLaunch{&m, &w, &inst, &cat().accelerator_of(inst), count, l, Precision::bf16};
  }
};

}  // namespace

TEST_CASE("a Capacity Block pick's files name the reservation as a required placeholder and carry the block's market, an on-demand pick's do not") {
  Pick p("p5.48xlarge", 8);
  LaunchContext block;
  block.capacity.channel = "capacity-block";
  block.capacity.block_days = 3;
  block.capacity.blocks = 1;
  const std::string sky = file(emit_training(p.t, block, LaunchTarget::skypilot), "task.yaml").text;
  const YAML::Node task = YAML::Load(sky);
  CHECK(task["config"]["aws"]["specific_reservations"][0].as<std::string>() == "YOUR_CAPACITY_RESERVATION_ID");
  CHECK(task["config"]["aws"]["prioritize_reservations"].as<bool>());
  CHECK_FALSE(task["resources"]["use_spot"].as<bool>());
  CHECK(sky.find("MarketType=capacity-block") != std::string::npos);  // the EC2 launch parameters of a block
  const std::string sbatch = file(emit_training(p.t, block, LaunchTarget::slurm), "job.sbatch").text;
  CHECK(sbatch.find("#SBATCH --reservation=YOUR_SLURM_RESERVATION\n") != std::string::npos);
  CHECK(sbatch.find("YOUR_CAPACITY_RESERVATION_ID") != std::string::npos);
  CHECK(sbatch.find("CapacityType CAPACITY_BLOCK") != std::string::npos);
  CHECK(sbatch.find("#SBATCH --reservation") < sbatch.find("set -euo pipefail"));  // sbatch reads directives before the first command
  // The time limit never outruns the block (its instances end with it): 70 h x 1.25 + 1 h would be 3-16:30.
  LaunchContext long_block = block;
  long_block.hours = 70;
  CHECK(file(emit_training(p.t, long_block, LaunchTarget::slurm), "job.sbatch").text.find("#SBATCH --time=3-00:00:00\n") != std::string::npos);
  LaunchContext unbounded;
  unbounded.hours = 70;
  CHECK(file(emit_training(p.t, unbounded, LaunchTarget::slurm), "job.sbatch").text.find("#SBATCH --time=3-16:30:00\n") != std::string::npos);
  const YAML::Node job = YAML::Load(file(emit_training(p.t, block, LaunchTarget::k8s), "pytorchjob.yaml").text);
  for (const char* role : {"Master", "Worker"}) {
    INFO(role);
    const YAML::Node selector = job["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["nodeSelector"];
    CHECK(selector["node.kubernetes.io/instance-type"].as<std::string>() == "p5.48xlarge");
    CHECK(selector["karpenter.sh/capacity-type"].as<std::string>() == "reserved");
    CHECK(selector["karpenter.k8s.aws/capacity-reservation-type"].as<std::string>() == "capacity-block");
    CHECK(selector["karpenter.k8s.aws/capacity-reservation-id"].as<std::string>() == "YOUR_CAPACITY_RESERVATION_ID");
  }
  // An On-Demand Capacity Reservation: the same placeholder, Karpenter's default reservation type, no block market.
  LaunchContext odcr;
  odcr.capacity.channel = "reservation";
  const std::string odcr_sky = file(emit_training(p.t, odcr, LaunchTarget::skypilot), "task.yaml").text;
  CHECK(YAML::Load(odcr_sky)["config"]["aws"]["specific_reservations"][0].as<std::string>() == "YOUR_CAPACITY_RESERVATION_ID");
  CHECK(odcr_sky.find("capacity-block") == std::string::npos);
  CHECK(YAML::Load(file(emit_training(p.t, odcr, LaunchTarget::k8s), "pytorchjob.yaml").text)["spec"]["pytorchReplicaSpecs"]["Master"]["template"]
            ["spec"]["nodeSelector"]["karpenter.k8s.aws/capacity-reservation-type"]
                .as<std::string>() == "default");
  // On demand: no reservation anywhere.
  const LaunchContext on_demand;
  for (LaunchTarget target : {LaunchTarget::skypilot, LaunchTarget::slurm, LaunchTarget::k8s})
    for (const auto& f : emit_training(p.t, on_demand, target)) {
      INFO(f.name);
      CHECK(f.text.find("YOUR_CAPACITY_RESERVATION_ID") == std::string::npos);
      CHECK(f.text.find("capacity-block") == std::string::npos);
      CHECK(f.text.find("--reservation") == std::string::npos);
      CHECK(f.text.find("karpenter") == std::string::npos);
    }
  CHECK_FALSE(YAML::Load(file(emit_training(p.t, on_demand, LaunchTarget::skypilot), "task.yaml").text)["config"]);
}

TEST_CASE("cli: the pick's channel reaches the files: a Capacity Block pick names its reservation, an on-demand one does not, and spot sets use_spot") {
  const std::string dir = "gpuadvisor_test_channel_" + std::to_string(getpid());
  auto r = run("recommend --model llama-3-8b --task pretrain --tokens 100B --family p5 --format json --emit skypilot --emit-dir " + dir);
  REQUIRE(r.code == 0);
  REQUIRE(nlohmann::json::parse(r.out)["recommendation"]["channel"] == "capacity-block");
  std::string text = read_text(dir + "/task.yaml");
  CHECK(YAML::Load(text)["config"]["aws"]["specific_reservations"][0].as<std::string>() == "YOUR_CAPACITY_RESERVATION_ID");
  CHECK(text.find("MarketType=capacity-block") != std::string::npos);
  CHECK(text.find("# bought as: capacity-block (1 Capacity Block of ") != std::string::npos);
  CHECK_FALSE(YAML::Load(text)["resources"]["use_spot"].as<bool>());
  auto od = run("recommend --model llama-3-8b --task finetune --tokens 100M --format json --emit skypilot --emit-dir " + dir);
  REQUIRE(od.code == 0);
  REQUIRE(nlohmann::json::parse(od.out)["recommendation"]["channel"] == "on-demand");
  text = read_text(dir + "/task.yaml");
  CHECK(text.find("YOUR_CAPACITY_RESERVATION_ID") == std::string::npos);
  CHECK_FALSE(YAML::Load(text)["config"]);
  CHECK_FALSE(YAML::Load(text)["resources"]["use_spot"].as<bool>());
  auto spot = run("recommend --model llama-3-8b --task finetune --tokens 100M --pricing spot --format json --emit skypilot --emit-dir " + dir);
  REQUIRE(spot.code == 0);
  REQUIRE(nlohmann::json::parse(spot.out)["recommendation"]["channel"] == "spot");
  CHECK(YAML::Load(read_text(dir + "/task.yaml"))["resources"]["use_spot"].as<bool>());
  std::filesystem::remove_all(dir);
  // use_spot follows the channel, not the pricing asked for: a Capacity Block is never spot.
  Pick p("p5.48xlarge", 8);
  LaunchContext ctx;
  ctx.capacity.channel = "spot";
  CHECK(YAML::Load(file(emit_training(p.t, ctx, LaunchTarget::skypilot), "task.yaml").text)["resources"]["use_spot"].as<bool>());
  ctx.capacity.channel = "capacity-block";
  CHECK_FALSE(YAML::Load(file(emit_training(p.t, ctx, LaunchTarget::skypilot), "task.yaml").text)["resources"]["use_spot"].as<bool>());
}

TEST_CASE("EFA across instances: requested as the catalog's interfaces, checked at start-up before FI_PROVIDER is set, and absent on one instance") {
  for (const char* instance : {"p5.48xlarge", "p4d.24xlarge"}) {
    INFO(instance);
    const Instance& inst = *cat().find_instance(instance);
    REQUIRE(inst.efa_supported);
    REQUIRE(inst.efa_interfaces > 0);
    Pick p(instance, 4);
    const LaunchContext ctx;
    const YAML::Node job = YAML::Load(file(emit_training(p.t, ctx, LaunchTarget::k8s), "pytorchjob.yaml").text);
    for (const char* role : {"Master", "Worker"}) {
      const YAML::Node container = job["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0];
      CHECK(container["resources"]["limits"]["vpc.amazonaws.com/efa"].as<int>() == inst.efa_interfaces);
      for (const auto& e : container["env"]) CHECK(e["name"].as<std::string>() != "FI_PROVIDER");  // only after the check, in the command
      const std::string command = container["command"][2].as<std::string>();
      const auto check = command.find("/dev/infiniband/uverbs*");
      REQUIRE(check != std::string::npos);
      CHECK(command.find(fmt::format("if [ $n -lt {} ]; then", inst.efa_interfaces)) != std::string::npos);
      CHECK(command.find("exit 1; fi;") < command.find("FI_PROVIDER=efa"));
      CHECK(check < command.find("FI_PROVIDER=efa"));
      CHECK(command.find("FI_PROVIDER=efa") < command.find("torchrun"));
    }
    const std::string sky = file(emit_training(p.t, ctx, LaunchTarget::skypilot), "task.yaml").text;
    const YAML::Node task = YAML::Load(sky);
    CHECK(task["resources"]["network_tier"].as<std::string>() == "best");
    CHECK_FALSE(task["envs"]["FI_PROVIDER"]);
    const std::string run_block = task["run"].as<std::string>();
    CHECK(run_block.find("/dev/infiniband/uverbs*") < run_block.find("export FI_PROVIDER=efa"));
    CHECK(run_block.find(fmt::format("{} expected on {}", inst.efa_interfaces, instance)) != std::string::npos);
    const std::string sbatch = file(emit_training(p.t, ctx, LaunchTarget::slurm), "job.sbatch").text;
    CHECK(sbatch.find("/dev/infiniband/uverbs*") < sbatch.find("FI_PROVIDER=efa"));
    CHECK(sbatch.find("export FI_PROVIDER=efa\n") == std::string::npos);  // not set for the batch script before the check
  }
  // The check runs: a host with no EFA devices stops with exit 1 and the reason.
  Pick p("p5.48xlarge", 2);
  const std::string run_block = YAML::Load(file(emit_training(p.t, LaunchContext{}, LaunchTarget::skypilot), "task.yaml").text)["run"].as<std::string>();
  const std::string check_line = run_block.substr(run_block.find("n=0; for d in /dev/infiniband"), run_block.find("\n  export") - run_block.find("n=0; for d in /dev/infiniband"));
  const std::string script = "gpuadvisor_test_efa_" + std::to_string(getpid()) + ".sh";
  std::ofstream(script) << "set -euo pipefail\n" << check_line << "\necho started\n";
  const bool has_efa = std::filesystem::exists("/dev/infiniband");
  if (!has_efa) CHECK(WEXITSTATUS(std::system(("bash " + script + " >/dev/null 2>&1").c_str())) == 1);
  std::filesystem::remove(script);
  // A serving replica pipelined over instances: each checks before Ray starts.
  {
    LaunchContext sctx;
    sctx.model_id = "deepseek-ai/DeepSeek-V3";
    InferenceRequest q;
    const InferenceWorkload sw = make_inference_workload(q);
    const Instance& inst = *cat().find_instance("p5.48xlarge");
    const ServingLaunch s{find_model_preset("deepseek-v3"), &sw, &inst, &cat().accelerator_of(inst), ServingLayout{8, 2}, 1, 2, 64, 163840};
    const auto lws = YAML::Load(file(emit_serving(s, sctx, LaunchTarget::k8s), "leaderworkerset.yaml").text)["spec"]["leaderWorkerTemplate"];
    for (const char* role : {"leaderTemplate", "workerTemplate"}) {
      const std::string command = lws[role]["spec"]["containers"][0]["command"][2].as<std::string>();
      CHECK(command.find("/dev/infiniband/uverbs*") < command.find("FI_PROVIDER=efa"));
      CHECK(command.find("FI_PROVIDER=efa") < command.find("ray start"));
    }
  }
  // One instance: no EFA request, no check, no FI_PROVIDER.
  Pick one("p5.48xlarge", 1);
  for (LaunchTarget target : {LaunchTarget::skypilot, LaunchTarget::slurm, LaunchTarget::k8s})
    for (const auto& f : emit_training(one.t, LaunchContext{}, target)) {
      INFO(f.name);
      CHECK(f.text.find("FI_PROVIDER") == std::string::npos);
      CHECK(f.text.find("uverbs") == std::string::npos);
      CHECK(f.text.find("vpc.amazonaws.com/efa") == std::string::npos);
    }
}

TEST_CASE("cli: --task rl --emit writes verl's configuration: the request's batch and samples, the pick's nodes and GPUs, headed by the prediction") {
  const std::string dir = "gpuadvisor_test_rl_" + std::to_string(getpid());
  for (const char* target : {"skypilot", "slurm", "k8s"}) {
    INFO(target);
    auto r = run(std::string("recommend --params 7B --task rl --prompts-per-step 128 --samples-per-prompt 4 --response-tokens 512 --format json "
                             "--emit ") + target + " --emit-dir " + dir);
    REQUIRE(r.code == 0);
    const auto pick = nlohmann::json::parse(r.out)["recommendation"];
    const std::string text = read_text(dir + "/verl_args.txt");
    auto args = verl(text);
    CHECK(args["actor_rollout_ref.rollout.n"] == "4");
    CHECK(args["data.train_batch_size"] == "128");
    CHECK(args["actor_rollout_ref.rollout.name"] == "vllm");
    CHECK(args["algorithm.adv_estimator"] == "grpo");
    CHECK(std::stoi(args["data.max_response_length"]) >= 512);
    const int gpus = cat().find_instance(pick["instance"].get<std::string>())->accelerator_count;
    CHECK(std::stoi(args["trainer.n_gpus_per_node"]) == gpus);
    const int nodes = std::stoi(args["trainer.nnodes"]) + (args.count("rollout.nnodes") ? std::stoi(args["rollout.nnodes"]) : 0);
    CHECK(nodes == pick["count"].get<int>());
    CHECK(args["actor_rollout_ref.hybrid_engine"] == (pick["rl"]["placement"] == "colocated" ? "True" : "False"));
    CHECK(text.rfind("# Generated by gpuadvisor", 0) == 0);
    CHECK(text.find("# predicted: step ") != std::string::npos);
    CHECK(text.find("# error band: ") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir + "/megatron_args.txt"));
  }
  CHECK(YAML::LoadFile(dir + "/pytorchjob.yaml")["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["command"][2]
            .as<std::string>()
            .find("python3 -m verl.trainer.main_ppo") != std::string::npos);
  // A framework file the set does not hold (here the user's own) is never deleted, only named.
  {
    std::ofstream(dir + "/deepspeed.json") << "{\"mine\": true}\n";
    auto r = run("recommend --params 7B --task rl --emit slurm --emit-dir " + dir);
    REQUIRE(r.code == 0);
    CHECK(read_text(dir + "/deepspeed.json") == "{\"mine\": true}\n");
    CHECK(r.err.find("deepspeed.json is not part of this set of launch files") != std::string::npos);
    // A serving set written beside the RL job's files names them too, and leaves them.
    auto s = run("recommend --model llama-3-8b --task inference --requests-per-second 5 --emit slurm --emit-dir " + dir);
    REQUIRE(s.code == 0);
    CHECK(s.err.find("job.sbatch is not part of this set of launch files") != std::string::npos);
    CHECK(std::filesystem::exists(dir + "/job.sbatch"));
  }
  std::filesystem::remove_all(dir);
  // Split pools: verl's one-step-off-policy recipe, each pool its instances; the Ray head waits for both.
  REQUIRE(run("estimate --task rl --instance p5.48xlarge --count 2 --placement split --model qwen2.5-7b --emit slurm --emit-dir " + dir).code == 0);
  auto split = verl(read_text(dir + "/verl_args.txt"));
  CHECK(split["actor_rollout_ref.hybrid_engine"] == "False");
  CHECK(split["trainer.nnodes"] == "1");
  CHECK(split["rollout.nnodes"] == "1");
  CHECK(split["trainer.n_gpus_per_node"] == "8");
  const std::string sbatch = read_text(dir + "/job.sbatch");
  CHECK(sbatch.find("python3 -m recipe.one_step_off_policy.main_ppo") != std::string::npos);
  CHECK(sbatch.find("[ $n -ge 2 ] && break") != std::string::npos);
  CHECK(std::system(("bash -n " + dir + "/job.sbatch").c_str()) == 0);
  std::filesystem::remove_all(dir);
  // DPO: verl's PPO trainer has no DPO; refused before any file is written.
  auto dpo = run("recommend --params 7B --task rl --algorithm dpo --emit slurm --emit-dir " + dir);
  CHECK(dpo.code == 2);
  CHECK(dpo.err.find("DPO launch files are not written") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("cli: int4 weights name the pre-quantised checkpoint they need, a verifier is refused, and the header's command reads back") {
  const std::string dir = "gpuadvisor_test_emit_review_" + std::to_string(getpid());
  REQUIRE(run("recommend --model llama-3-70b --task inference --requests-per-second 5 --weights int4 --engine tgi --family g6e --emit slurm "
              "--emit-dir " + dir)
              .code == 0);
  CHECK(read_text(dir + "/serve.sbatch").find("# weights: int4 is served from a checkpoint quantised beforehand (AWQ or GPTQ") != std::string::npos);
  REQUIRE(run("recommend --model llama-3-70b --task inference --requests-per-second 5 --weights int4 --engine tgi --family g6e --emit slurm "
              "--hf-model my-org/llama-3-70b-awq --emit-dir " + dir)
              .code == 0);
  CHECK(read_text(dir + "/serve.sbatch").find("# weights:") == std::string::npos);
  const auto verifier = run("recommend --model llama-3-8b --task inference --requests-per-second 5 --samples 8 --verifier-model 8B --emit slurm "
                            "--emit-dir " + dir);
  CHECK(verifier.code == 2);
  CHECK(verifier.err.find("not written with --verifier-model") != std::string::npos);
  std::filesystem::remove_all(dir);
  // A directory named with a quote: the header's command line is quoted as the shell reads it back.
  const std::string quoted = dir + "_it's";
  REQUIRE(run("recommend --model llama-3-8b --task inference --requests-per-second 5 --emit slurm --emit-dir \"" + quoted + "\"").code == 0);
  CHECK(read_text(quoted + "/serve.sbatch").find("--emit-dir '" + dir + "_it'\\''s'\n") != std::string::npos);
  std::filesystem::remove_all(quoted);
}

TEST_CASE("cli: vLLM V0's command asks for the chunked prefill its token budget needs, V1's does not") {
  // V0 (before 0.8) chunks a prefill only when asked at 32K of context and below, and refuses at start a
  // --max-num-batched-tokens below --max-model-len without it (VLLM-V0-CHUNKED): the file would not have run.
  for (const char* release : {"0.7.3", "0.13", ""}) {
    CAPTURE(release);
    const std::string dir = "gpuadvisor_test_v0_" + std::to_string(getpid());
    const std::string engine = *release ? std::string(" --engine vllm@") + release : std::string();
    const auto r = run("recommend --model llama-3-8b --task inference --requests-per-second 2 --emit k8s --emit-dir " + dir + engine);
    REQUIRE(r.code == 0);
    std::ifstream in(dir + "/deployment.yaml");
    std::stringstream text;
    text << in.rdbuf();
    const std::string command =
        documents(text.str()).at("Deployment")["spec"]["template"]["spec"]["containers"][0]["command"][2].as<std::string>();
    CHECK(command.find("--max-num-batched-tokens ") != std::string::npos);
    CHECK((command.find(" --enable-chunked-prefill ") != std::string::npos) == (std::string(release) == "0.7.3"));
    std::filesystem::remove_all(dir);
  }
}
