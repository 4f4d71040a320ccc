#include <catch2/catch.hpp>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/physics/estimate.hpp"
#include "gpuadvisor/physics/memory.hpp"
#include "gpuadvisor/search/search.hpp"

using namespace gpuadvisor;

namespace {
const Catalog& cat() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}
TrainingWorkload workload(Task task, int seq = 4096, int batch = 1024) {
  WorkloadRequest r;
  r.task = task;
  r.seq_len = seq;
  r.global_batch = batch;
  r.tokens = 1e9;
  return make_workload(r, *find_model_preset("llama-2-7b"));
}
}  // namespace

TEST_CASE("7B model states under ZeRO-0 and ZeRO-3 on 8 GPUs (hand-computed)") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  const Accelerator& h100 = *cat().find_accelerator("H100-SXM");
  TrainingWorkload w = workload(Task::pretrain);
  // 16 bytes per parameter: 6,738,415,616 x 16 = 107.81 GB.
  Layout z0{1, 1, 8, 1, 0, 1, Recompute::none};
  MemoryBreakdown a = training_memory(m, w, z0, h100);
  CHECK(a.weights_gb + a.gradients_gb + a.optimizer_gb == Approx(107.8146).epsilon(1e-5));
  // ZeRO-3 shards all of it over 8 data-parallel ranks: 13.477 GB.
  Layout z3{1, 1, 8, 1, 3, 1, Recompute::none};
  MemoryBreakdown b = training_memory(m, w, z3, h100);
  CHECK(b.weights_gb + b.gradients_gb + b.optimizer_gb == Approx(13.4768).epsilon(1e-4));
  // ZeRO-1 shards only the 12 optimizer bytes: 4 + 12/8 = 5.5 bytes/param.
  Layout z1{1, 1, 8, 1, 1, 1, Recompute::none};
  MemoryBreakdown c = training_memory(m, w, z1, h100);
  CHECK(c.weights_gb + c.gradients_gb + c.optimizer_gb == Approx(6738415616.0 * 5.5 / 1e9).epsilon(1e-6));
  // Runtime reserve: 1 GB + 5% of 80 GiB.
  CHECK(a.reserve_gb == Approx(1.0 + 0.05 * 85.899345920));
}

TEST_CASE("70B FLOPs per token (hand-computed)") {
  const ModelSpec& m = *find_model_preset("llama-2-70b");
  // Matmul parameters: 68,976,648,192 - 32000 x 8192 (input embedding) - norms (2 x 8192 x 80 + 8192).
  CHECK(matmul_params_per_token(m) == 68713185280.0);
  WorkloadRequest r;
  r.seq_len = 4096;
  r.tokens = 1e9;
  TrainingWorkload w = make_workload(r, m);
  // PaLM's count, the whole attention matrix: 6N + 12 L H Q T =
  // 412,279,111,680 + 32,212,254,720 = 444,491,366,400.
  FlopsPerToken f = training_flops_per_token(m, w, Recompute::none);
  CHECK(f.model_full_attention == 444491366400.0);
  // What a causal model needs (MFU): the lower triangle, 6N + 6 L H Q T.
  CHECK(f.model == 412279111680.0 + 16106127360.0);
  CHECK(f.hardware == f.model_full_attention);
  // Full recompute adds one forward: 2N + 4 L H Q T.
  CHECK(training_flops_per_token(m, w, Recompute::full).hardware == Approx(444491366400.0 + 2 * 68713185280.0 + 4.0 * 80 * 8192 * 4096));
}

TEST_CASE("LoRA adapter parameters for a given rank and targets (hand-computed)") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  // q, k, v, o: 4 x 16 x (4096 + 4096) x 32 layers.
  CHECK(lora_adapter_params(m, 16, LoraTargets::attention) == 16777216.0);
  // + gate, up, down: 3 x 16 x (4096 + 11008) x 32 = 23,199,744.
  CHECK(lora_adapter_params(m, 16, LoraTargets::attention_mlp) == 39976960.0);
  // GQA: llama-2-70b k and v project to 8 x 128 = 1024.
  const ModelSpec& m70 = *find_model_preset("llama-2-70b");
  CHECK(lora_adapter_params(m70, 8, LoraTargets::attention) == 80.0 * 8 * ((8192 + 8192) * 2 + (8192 + 1024) * 2));
}

TEST_CASE("activation bytes for one Llama layer (hand-computed)") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  TrainingWorkload w = workload(Task::pretrain);
  // 4h + 2h + 2h (Q) + 2 x 2 x 4096 (K, V) + 2h + 2h + 6 x 11008 = 131,584 bytes per token.
  CHECK(activation_bytes_per_token_per_layer(m, w, false) == 131584.0);
  // LoRA on attention only keeps no inputs of the frozen MLP matrices: less
  // the MLP input (2h) and the down-projection input (2f); with MLP adapters
  // they are kept.
  TrainingWorkload lora = workload(Task::lora);
  lora.lora_targets = LoraTargets::attention;
  CHECK(activation_bytes_per_token_per_layer(m, lora, false) == 131584.0 - 2 * 4096 - 2 * 11008);
  lora.lora_targets = LoraTargets::attention_mlp;
  CHECK(activation_bytes_per_token_per_layer(m, lora, false) == 131584.0);
  // Without flash attention add 5 x heads x seq = 5 x 32 x 4096.
  w.flash_attention = false;
  CHECK(activation_bytes_per_token_per_layer(m, w, false) == 131584.0 + 5.0 * 32 * 4096);
  // Stored for 32 layers, micro-batch 1 of 4096 tokens, tp 2: / 2.
  w.flash_attention = true;
  Layout l{2, 1, 4, 1, 1, 1, Recompute::none};
  MemoryBreakdown mem = training_memory(m, w, l, *cat().find_accelerator("H100-SXM"));
  CHECK(mem.activations_gb == Approx(32 * 131584.0 * 4096 / 2 / 1e9));
  // Full recompute keeps only the layer inputs: 2 bytes x hidden per token.
  l.recompute = Recompute::full;
  CHECK(training_memory(m, w, l, *cat().find_accelerator("H100-SXM")).activations_gb == Approx(32 * 2.0 * 4096 * 4096 / 2 / 1e9));
  // Mixtral 8x7B (h 4096, 32 q heads, 8 kv heads of 128, expert ffn 14336, top-2):
  // 8h + 4 x 4096 (Q, attention output) + 2 x 2048 (K, V) + 6 x 14336 x 2, plus
  // the 2 routed copies of the input and of the expert outputs (4 x 4096 x 2).
  const ModelSpec& moe = *find_model_preset("mixtral-8x7b");
  CHECK(activation_bytes_per_token_per_layer(moe, workload(Task::pretrain), true) ==
        8.0 * 4096 + 4 * 4096 + 2 * 2048 + 6.0 * 14336 * 2 + 4.0 * 4096 * 2);
}

TEST_CASE("QLoRA keeps the base in 4 bits") {
  const ModelSpec& m = *find_model_preset("llama-2-13b");
  WorkloadRequest r;
  r.task = Task::qlora;
  r.tokens = 1e8;
  TrainingWorkload w = make_workload(r, m);
  Layout l{1, 1, 1, 1, 0, 1, Recompute::full};
  MemoryBreakdown q = training_memory(m, w, l, *cat().find_accelerator("A10G"));
  // Linear weights at 0.5 + 0.127/8 bytes, embeddings at 2 bytes.
  const double emb = m.embedding_params();
  CHECK(q.weights_gb == Approx((emb * 2 + (m.total_params() - emb) * (0.5 + 0.127 / 8)) / 1e9));
  CHECK(q.fits());
  r.task = Task::lora;
  CHECK_FALSE(training_memory(m, make_workload(r, m), l, *cat().find_accelerator("A10G")).fits());
}

TEST_CASE("collectives") {
  // 2 (n-1)/n x bytes / bandwidth + latency.
  CHECK(all_reduce_s(1e9, 8, 100, 0) == Approx(2.0 * 7 / 8 * 1e9 / 100e9));
  CHECK(all_reduce_s(1e9, 1, 100, 1) == 0);
  CHECK(all_gather_s(1e9, 4, 10, 0) == Approx(0.75 * 0.1));
  // p5.48xlarge: 3200 Gbps = 400 GB/s per instance, x 0.7; one accelerator's share is 1/8.
  const Instance& p5 = *cat().find_instance("p5.48xlarge");
  CHECK(inter_node_gb_per_s(p5, cat().accelerator_of(p5)) == Approx(35));
  CHECK(inter_node_gb_per_s(p5, cat().accelerator_of(p5), 8) == Approx(280));
  CHECK(inter_node_gb_per_s(p5, cat().accelerator_of(p5), 2) == Approx(70));
  CHECK(inter_node_gb_per_s(p5, cat().accelerator_of(p5), 99) == Approx(280));
  // NVLink 4: 900 GB/s bidirectional -> 450 per direction x 0.7.
  CHECK(intra_node_gb_per_s(cat().accelerator_of(p5)) == Approx(315));
  // A ring over instances that are each their own NVLink domain: the same share.
  CHECK(ring_across_domains_gb_per_s(p5, cat().accelerator_of(p5), 8) == Approx(280));
  CHECK(ring_across_domains_gb_per_s(p5, cat().accelerator_of(p5), 4) == Approx(140));
}

TEST_CASE("a ring across NVL72 racks gets the share of the rack's network its members hold, at most NVLink's") {
  Instance tray = *cat().find_instance("p6e-gb200.36xlarge");  // 4 GPUs, 3200 Gbps: 100 GB/s per GPU
  tray.nvlink_domain_accelerators = 72;
  const Accelerator& gb200 = cat().accelerator_of(tray);
  const double nvlink = intra_node_gb_per_s(gb200);  // NVLink 5: 1800 / 2 x 0.7
  CHECK(nvlink == Approx(630));
  CHECK(ring_across_domains_gb_per_s(tray, gb200, 36) == Approx(630));  // 36 x 100 x 0.7 = 2520, NVLink-bound
  CHECK(ring_across_domains_gb_per_s(tray, gb200, 4) == Approx(280));   // 4 x 100 x 0.7
  CHECK(ring_across_domains_gb_per_s(tray, gb200, 500) == Approx(630));
  // The instance on its own: its members' share, as inter_node_gb_per_s.
  tray.nvlink_domain_accelerators = 0;
  CHECK(ring_across_domains_gb_per_s(tray, gb200, 36) == Approx(inter_node_gb_per_s(tray, gb200, 4)));
}

TEST_CASE("step time pieces add up and throughput follows") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  TrainingWorkload w = workload(Task::pretrain, 4096, 1024);
  const Instance& p5 = *cat().find_instance("p5.48xlarge");
  Cluster c{&p5, &cat().accelerator_of(p5), 2};
  Layout l{2, 2, 4, 1, 1, 2, Recompute::none};
  REQUIRE_FALSE(layout_problem(m, w, c, l));
  TrainingEstimate e = estimate_training(m, w, c, l);
  CHECK(e.micro_batches == 128);
  CHECK(e.step.bubble_s > 0);
  CHECK(e.step.total_s() == Approx(e.step.compute_s + e.step.elementwise_s + e.step.tensor_parallel_s + e.step.pipeline_p2p_s +
                                   e.step.bubble_s + e.step.data_parallel_s + e.step.memory_bound_s + e.step.expert_parallel_s));
  CHECK(e.tokens_per_second == Approx(1024.0 * 4096 / e.step.total_s()));
  CHECK(e.mfu == Approx(e.model_flops_per_token * e.tokens_per_second / 16 / 989.5e12));
  CHECK(e.mfu < 1);
  CHECK(e.total_hours == Approx(std::ceil(1e9 / (1024.0 * 4096)) * e.step.total_s() / 3600));
}

TEST_CASE("fp8 step: matrices at fp8, attention and the output projection at bf16, elementwise work at memory speed (hand-computed)") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  TrainingWorkload w = workload(Task::pretrain, 4096, 8);
  w.precision = Precision::fp8;
  const Instance& p5 = *cat().find_instance("p5.48xlarge");
  const Accelerator& h100 = cat().accelerator_of(p5);
  Cluster c{&p5, &h100, 1};
  Layout l{1, 1, 8, 1, 1, 1, Recompute::none};
  REQUIRE_FALSE(layout_problem(m, w, c, l));
  const TrainingEstimate e = estimate_training(m, w, c, l);
  REQUIRE(e.micro_batches == 1);
  // Attention forward 4 x 32 layers x 4096 wide x 4096 seq = 2,147,483,648 per
  // token, three times for training.
  const FlopsPerToken f = training_flops_per_token(m, w, Recompute::none);
  CHECK(f.attention == 3 * 2147483648.0);
  CHECK(attention_precision(h100, Precision::fp8) == Precision::bf16);
  const double tokens = 4096;
  const double ramp = 4096.0 / (4096 + 256) * 4096 / (4096 + 256);
  // The output projection, 6 x 32,000 x 4,096 FLOPs per token, stays in bf16.
  const double output_flops = 6.0 * 32000 * 4096;
  CHECK(output_layer_training_flops_per_token(m, false) == output_flops);
  CHECK(output_layer_training_flops_per_token(m, true) == 4.0 * 32000 * 4096);  // frozen base: no weight gradients
  const double matmul_s = (f.hardware - f.attention - output_flops) * tokens / (1979e12 * max_compute_fraction(h100, Precision::fp8) * ramp) +
                          output_flops * tokens / (989.5e12 * max_compute_fraction(h100, Precision::bf16) * ramp);
  // A fused (flash) kernel executes half of the causal score/value FLOPs the convention counts.
  const double attention_s = f.attention * kCausalExecutedShare * tokens / (989.5e12 * max_compute_fraction(h100, Precision::bf16));
  CHECK(e.step.compute_s == Approx(matmul_s + attention_s));
  // 4 passes over the 131,584 bytes per token each of the 32 layers stores,
  // fp8 casts of the matrix inputs (6 bytes x (2 x 4096 + 4096 + 11008) per
  // layer) and 4 passes over the fp32 logits (4 bytes x 32,000).
  const double bytes = 4 * 32 * 131584.0 + 32 * 6.0 * (2 * 4096 + 4096 + 11008) + 4 * 4.0 * 32000;
  CHECK(e.step.elementwise_s == Approx(bytes * tokens / (3350e9 * h100.efficiency.memory_bandwidth_fraction)));
  // bf16: no casts.
  CHECK(elementwise_bytes_per_token(m, w, l, Precision::bf16) == Approx(4 * 32 * 131584.0 + 4 * 4.0 * 32000));
  // GPT-OSS's expert MLP adds, per routed token and MoE layer, its clamped
  // GLU's passes (36 bytes x expert_ffn) and its per-expert bias loop (32
  // bytes x hidden): 36 layers x 4 routed x (36 x 2880 + 32 x 2880) bytes.
  ModelSpec oss = *find_model_preset("gpt-oss-120b");
  REQUIRE(oss.expert_bias);
  REQUIRE(oss.clamped_glu);
  CHECK(expert_mlp_extra_bytes_per_routed_token(oss) == 36.0 * 2880 + 32.0 * 2880);
  const double with_extras = elementwise_bytes_per_token(oss, w, l, Precision::bf16);
  oss.expert_bias = oss.clamped_glu = false;
  CHECK(with_extras - elementwise_bytes_per_token(oss, w, l, Precision::bf16) == Approx(36 * 4 * (36.0 * 2880 + 32.0 * 2880)));
  // Full recompute: 6 passes, and one more forward of attention.
  CHECK(activation_traffic_per_stored_byte(Recompute::full) == 6);
  CHECK(training_flops_per_token(m, w, Recompute::full).attention == 4 * 2147483648.0);
  // Without a fused kernel (2021-era Megatron) the whole matrix is computed: twice the attention time.
  TrainingWorkload unfused = w;
  unfused.flash_attention = false;
  Layout full{1, 1, 8, 1, 1, 1, Recompute::full};  // stored scores need the recompute to fit
  const TrainingEstimate with_flash = estimate_training(m, w, c, full);
  const TrainingEstimate without = estimate_training(m, unfused, c, full);
  const double attention_full_s = training_flops_per_token(m, w, Recompute::full).attention * tokens / (989.5e12 * max_compute_fraction(h100, Precision::bf16));
  CHECK(without.step.compute_s - with_flash.step.compute_s == Approx(attention_full_s * (1 - kCausalExecutedShare)));
}

TEST_CASE("tensor-parallel all-reduces overlap the matrix multiplies, so only a slow link shows them") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  TrainingWorkload w = workload(Task::pretrain, 4096, 64);
  Layout l{4, 1, 2, 1, 1, 1, Recompute::none};
  // NVLink: 4 all-reduces per layer of 2 x 4096 x 4096 bytes are far shorter than the layer's matrices.
  const Instance& p5 = *cat().find_instance("p5.48xlarge");
  CHECK(estimate_training(m, w, Cluster{&p5, &cat().accelerator_of(p5), 1}, l).step.tensor_parallel_s == 0);
  // PCIe (g6e.48xlarge, 8 x L40S): the same traffic outlasts the matrices, and
  // shows less the matrices' time.
  const Instance& g6e = *cat().find_instance("g6e.48xlarge");
  const TrainingEstimate e = estimate_training(m, w, Cluster{&g6e, &cat().accelerator_of(g6e), 1}, l);
  const double comm_s = e.micro_batches * 32.0 * 4 *
                        all_reduce_s(2.0 * 4096 * 4096, 4, intra_node_gb_per_s(cat().accelerator_of(g6e)), kCollectiveLatencyIntraS);
  CHECK(e.step.tensor_parallel_s > 0);
  CHECK(e.step.tensor_parallel_s < comm_s);
  CHECK(e.step.tensor_parallel_s > comm_s - e.step.compute_s);
}

TEST_CASE("interleaved stages may count the embedding and the loss as layers") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");  // 32 layers
  TrainingWorkload w = workload(Task::pretrain, 4096, 1024);
  const Instance& p5 = *cat().find_instance("p5.48xlarge");
  Cluster c{&p5, &cat().accelerator_of(p5), 2};
  CHECK_FALSE(layout_problem(m, w, c, Layout{1, 2, 8, 1, 1, 1, Recompute::none, 17}));  // 34 = 32 + 2
  CHECK(layout_problem(m, w, c, Layout{1, 2, 8, 1, 1, 1, Recompute::none, 18})->find("plus the embedding and the loss") != std::string::npos);
}

TEST_CASE("context parallelism: each rank holds 1/cp of a sequence, K and V go round a ring (hand-computed)") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  TrainingWorkload w = workload(Task::pretrain, 8192, 64);
  const Instance& p4d = *cat().find_instance("p4d.24xlarge");
  const Accelerator& a100 = cat().accelerator_of(p4d);
  Cluster c{&p4d, &a100, 2};
  // tp 8 x cp 2 over two instances: the cp ring crosses them.
  Layout l{8, 1, 1, 1, 1, 1, Recompute::none, 1, 2};
  REQUIRE_FALSE(layout_problem(m, w, c, l));
  // Activations: 32 layers x 131,584 bytes x 8192 / 2 tokens / tp 8.
  const MemoryBreakdown mem = training_memory(m, w, l, a100);
  CHECK(mem.activations_gb == Approx(32 * 131584.0 * 4096 / 8 / 1e9));
  CHECK(mem.logits_gb == Approx(4096.0 * 32000 * 4 / 8 / 1e9));
  // ZeRO-1 shards the optimizer over dp x cp = 2.
  CHECK(mem.optimizer_gb == Approx(m.total_params() / 8 * 12 / 2 / 1e9));
  const TrainingEstimate e = estimate_training(m, w, c, l);
  // Per layer 3 x (cp - 1) sends of K and V: 2 bytes x 8192 wide x 4096 tokens / tp 8,
  // over one accelerator's share of the network, less the attention they
  // overlap (the causal half a fused kernel executes).
  const double kv_bytes = 2.0 * 8192 * 4096 / 8;
  const double ring_s = 32 * 3 * (kv_bytes / (inter_node_gb_per_s(p4d, a100, 1) * 1e9) + kCollectiveLatencyInterS);
  const FlopsPerToken f = training_flops_per_token(m, w, Recompute::none);
  const double attention_s = f.attention * kCausalExecutedShare * 4096 / 8 / (312e12 * max_compute_fraction(a100, Precision::bf16));
  CHECK(e.step.context_parallel_s == Approx(64 * std::max(0.0, ring_s - attention_s)));
  // Two such instances in one 16-GPU NVLink domain: the ring stays on NVLink.
  Instance rack = p4d;
  rack.nvlink_domain_accelerators = 16;
  CHECK(e.step.context_parallel_s > 0);
  CHECK(estimate_training(m, w, Cluster{&rack, &a100, 2}, l).step.context_parallel_s == 0);
  // The same ranks inside one instance: NVLink hides the ring behind attention.
  Cluster one{&p4d, &a100, 1};
  CHECK(estimate_training(m, w, one, Layout{4, 1, 1, 1, 1, 1, Recompute::none, 1, 2}).step.context_parallel_s == 0);
  // The sequence splits into 2 x cp load-balanced chunks.
  CHECK(layout_problem(m, workload(Task::pretrain, 8190, 64), c, l)->find("2 x cp") != std::string::npos);
  CHECK(layout_problem(m, w, c, Layout{8, 1, 2, 1, 1, 1, Recompute::none, 1, 2})->find("cp 2") != std::string::npos);
}

TEST_CASE("block recompute: only some layers of a stage are rebuilt (hand-computed)") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  TrainingWorkload w = workload(Task::pretrain, 4096, 64);
  const Instance& p5 = *cat().find_instance("p5.48xlarge");
  const Accelerator& h100 = cat().accelerator_of(p5);
  Cluster c{&p5, &h100, 1};
  // tp 2 x pp 2: 16 layers per stage, 8 of them rebuilt.
  Layout l{2, 2, 2, 1, 1, 1, Recompute::full, 1, 1, 8};
  REQUIRE_FALSE(layout_problem(m, w, c, l));
  CHECK(l.recompute_share(16) == 0.5);
  // Stored per token per layer: half keep their input (2 x 4096), half all 131,584 bytes;
  // the first stage holds pp = 2 micro-batches of 4096 tokens, over tp 2.
  const MemoryBreakdown mem = training_memory(m, w, l, h100);
  CHECK(mem.activations_gb == Approx(16 * 2 * (0.5 * 2 * 4096 + 0.5 * 131584.0) * 4096 / 2 / 1e9));
  // Half the extra forward: + 0.5 x (2 N_matmul + attention forward).
  const FlopsPerToken none = training_flops_per_token(m, w, Recompute::none);
  const FlopsPerToken half = training_flops_per_token(m, w, Recompute::full, 0.5);
  CHECK(half.hardware == Approx(none.hardware + 0.5 * (2 * matmul_params_per_token(m) + attention_forward_flops_per_token(m, 4096))));
  CHECK(half.model == none.model);
  CHECK(activation_traffic_per_stored_byte(Recompute::full, 0.5) == 5);
  // More rebuilt layers: less memory, more time.
  Layout all = l;
  all.recompute_layers = 0;
  CHECK(training_memory(m, w, all, h100).activations_gb < mem.activations_gb);
  CHECK(estimate_training(m, w, c, all).step.total_s() > estimate_training(m, w, c, l).step.total_s());
  // Only with full recompute, and at most a stage's layers.
  Layout bad = l;
  bad.recompute_layers = 17;
  CHECK(layout_problem(m, w, c, bad)->find("exceed the 16 layers") != std::string::npos);
  bad.recompute_layers = 4;
  bad.recompute = Recompute::selective;
  CHECK(layout_problem(m, w, c, bad)->find("full recompute only") != std::string::npos);
}

TEST_CASE("invalid layouts are explained") {
  const ModelSpec& m = *find_model_preset("llama-2-7b");
  TrainingWorkload w = workload(Task::pretrain, 4096, 1024);
  const Instance& p5 = *cat().find_instance("p5.48xlarge");
  Cluster c{&p5, &cat().accelerator_of(p5), 1};
  CHECK(layout_problem(m, w, c, Layout{3, 1, 1, 1, 0, 1, Recompute::none})->find("does not divide") != std::string::npos);
  CHECK(layout_problem(m, w, c, Layout{2, 2, 4, 1, 0, 1, Recompute::none})->find("does not equal") != std::string::npos);
  CHECK(layout_problem(m, w, c, Layout{1, 2, 4, 1, 3, 1, Recompute::none})->find("ZeRO") != std::string::npos);
  CHECK(layout_problem(m, w, c, Layout{1, 1, 8, 1, 0, 3, Recompute::none})->find("not divisible") != std::string::npos);
  CHECK(layout_problem(m, w, c, Layout{1, 1, 8, 2, 0, 1, Recompute::none})->find("mixture-of-experts") != std::string::npos);
}

TEST_CASE("expert ranks come from the data- and context-parallel ranks") {
  // NeMo 25.02's Mixtral-8x22B on 256 B200s: TP2 PP4 CP8, so dp 4, with EP8
  // drawn from the 32 ranks of dp x cp (Megatron-Core's expert rank generator).
  const ModelSpec& m = *find_model_preset("mixtral-8x22b");
  TrainingWorkload w = workload(Task::pretrain, 65536, 64);
  const Instance& p6 = *cat().find_instance("p6-b200.48xlarge");
  Cluster c{&p6, &cat().accelerator_of(p6), 32};
  Layout l{2, 4, 4, 8, 1, 1, Recompute::none};
  l.cp = 8;
  CHECK_FALSE(layout_problem(m, w, c, l).has_value());
  // Without context parallelism the 8 expert ranks need 8 data-parallel ones.
  Cluster small{&p6, &cat().accelerator_of(p6), 4};
  const auto problem = layout_problem(m, w, small, Layout{2, 4, 4, 8, 1, 1, Recompute::none});
  REQUIRE(problem.has_value());
  CHECK(problem->find("ep 8 does not divide dp 4 x cp 1") != std::string::npos);
}

TEST_CASE("MoE parallel folding: expert ranks from the tensor- and data-parallel ranks together, each expert whole (hand-computed)") {
  // Megatron-Bridge 25.09's Qwen3-235B-A22B on 64 GB200: TP2 PP1 EP64, so dp 32
  // and ep 64 > dp: the experts are not split over tp (etp 1) and the 64
  // expert ranks are drawn from tp x dp = 64.
  const ModelSpec& m = *find_model_preset("qwen3-235b-a22b");
  TrainingWorkload w = workload(Task::pretrain, 4096, 1024);
  const Instance& p6 = *cat().find_instance("p6-b200.48xlarge");
  const Accelerator& b200 = cat().accelerator_of(p6);
  Cluster c{&p6, &b200, 8};
  Layout folded{2, 1, 32, 64, 1, 1, Recompute::full};
  CHECK(layout_problem(m, w, c, folded)->find("ep 64 does not divide dp 32 x cp 1") != std::string::npos);
  folded.etp = 1;
  REQUIRE_FALSE(layout_problem(m, w, c, folded).has_value());
  CHECK(folded.expert_dp() == 1);
  // Each rank keeps 128 / 64 = 2 whole experts per layer; the dense weights split over tp.
  const LocalParameters local = local_parameters(m, folded);
  CHECK(local.experts == Approx(m.expert_params_total() / 64));
  CHECK(local.dense == Approx((m.total_params() - m.expert_params_total()) / 2));
  // Against tp-split experts at ep 32: the same expert bytes per rank, wider matrices.
  Layout split{2, 1, 32, 32, 1, 1, Recompute::full};
  REQUIRE_FALSE(layout_problem(m, w, c, split).has_value());
  CHECK(local_parameters(m, split).experts == Approx(m.expert_params_total() / 64));
  CHECK(split.expert_dp() == 1);
  // ZeRO shards the experts over their own data-parallel group: tp x dp x cp / (ep x etp).
  Layout half = folded;
  half.ep = 32;
  CHECK(half.expert_dp() == 2);
  CHECK(training_memory(m, w, half, b200).optimizer_gb ==
        Approx((local_parameters(m, half).dense * kBytesOptimizer / 32 + local_parameters(m, half).experts * kBytesOptimizer / 2) / 1e9));
  // etp must divide tp; ep x etp must divide tp x dp x cp; folding needs experts.
  Layout bad = folded;
  bad.etp = 3;
  CHECK(layout_problem(m, w, c, bad)->find("etp 3 does not divide tp 2") != std::string::npos);
  bad = folded;
  bad.ep = 128;
  CHECK(layout_problem(m, w, c, bad)->find("ep 128 x etp 1 does not divide tp 2 x dp 32 x cp 1") != std::string::npos);
  Layout dense{2, 1, 32, 1, 1, 1, Recompute::none};
  dense.etp = 1;
  CHECK(layout_problem(*find_model_preset("llama-3-8b"), w, c, dense)->find("mixture-of-experts") != std::string::npos);
  // The search reaches the published layout when ep is fixed above dp x cp.
  LayoutConstraints fixed;
  fixed.tp = 2;
  fixed.pp = 1;
  fixed.ep = 64;
  const ClusterSearch s = search_cluster(m, w, c, fixed);
  REQUIRE(s.best);
  CHECK(s.best->layout.expert_tp() == 1);
  CHECK(s.best->layout.experts_folded());
}
