// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// Reports for --task rl: the ranked table, the JSON of a step, and the
// estimate of one cluster (docs/json.md §RL).
#include <fmt/format.h>

#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/physics/overheads.hpp"
#include "gpuadvisor/catalog/pricing.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "report/detail.hpp"

namespace gpuadvisor {

using namespace report_detail;

namespace report_detail {

std::string rl_placement_text(const RlEstimate& e) {
  if (e.placement == RlPlacement::colocated) return "colocated";
  return fmt::format("split {}+{}{}", e.rollout_instances, e.trainer_instances, e.async ? " async" : "");
}

namespace {
ordered_json stage_json(const RlStage& s) {
  return {{"seconds", sig6(s.seconds)}, {"accelerators", s.accelerators}, {"tokens", sig6(s.tokens)},
          {"tokens_per_second_per_accelerator", sig6(s.tokens_per_second_per_accelerator())}};
}
}  // namespace

ordered_json rl_json(const RlEstimate& e) {
  ordered_json j;
  j["placement"] = to_string(e.placement);
  j["async"] = e.async;
  j["generation_s"] = sig6(e.generation.seconds);
  j["scoring_s"] = sig6(e.scoring.seconds);
  j["training_s"] = sig6(e.training.seconds);
  j["weight_sync_s"] = sig6(e.weight_sync_s);
  j["step_time_s"] = sig6(e.step_time_s);
  j["generation_share"] = sig6(e.generation_share());
  j["stages"] = {{"generation", stage_json(e.generation)},
                 {"scoring", stage_json(e.scoring)},
                 {"training", stage_json(e.training)}};
  j["stages"]["scoring"]["models"] = e.scoring_models;
  j["rollout"] = {{"instances", e.rollout_instances},
                  {"accelerators", e.rollout_accelerators},
                  {"tp", e.rollout_layout.tp},
                  {"generators", e.generators},
                  {"sequences_per_generator", e.sequences_per_generator},
                  {"batch", e.batch},
                  {"decode_step_s", sig6(e.decode_step_s)},
                  {"straggler_bound", e.straggler_bound},
                  {"resident_state_gb", sig6(e.resident_state_gb)},
                  {"offloaded", e.offloaded}};
  j["trainer"] = {{"instances", e.trainer_instances},
                  {"accelerators", e.trainer_accelerators},
                  {"layout", layout_json(e.trainer.layout)},
                  {"mfu", sig6(e.trainer.mfu)},
                  {"memory_per_accelerator_gb", sig6(e.trainer.memory.total_gb())}};
  j["trainer"]["critic_layout"] = e.critic_trainer ? layout_json(e.critic_trainer->layout) : ordered_json(nullptr);
  j["notes"] = e.notes;
  return j;
}

ordered_json rl_workload_json(const RlWorkload& w) {
  return {{"algorithm", to_string(w.algorithm)},
          {"prompts_per_step", w.prompts_per_step},
          {"samples_per_prompt", w.samples_per_prompt},
          {"sequences_per_step", w.sequences_per_step()},
          {"prompt_tokens", sig6(w.prompt_tokens)},
          {"response_tokens", sig6(w.response_tokens)},
          {"response_tokens_max", sig6(w.response_tokens_max)},
          {"steps", sig6(w.steps)},
          {"reward", w.reward_model ? "model" : "rule"},
          {"reward_model", w.reward_model ? ordered_json(w.reward_model->name) : ordered_json(nullptr)},
          {"critic", w.critic ? ordered_json(w.critic->name) : ordered_json(nullptr)},
          {"reference", w.reference},
          {"placement", w.placement ? ordered_json(to_string(*w.placement)) : ordered_json(nullptr)},
          {"async", w.async},
          {"policy_update", w.update.task == Task::lora ? "lora" : "full"},
          {"precision", to_string(w.update.precision)}};
}

Table rl_recommendation_table(const Recommendation& rec, const RecommendContext& ctx) {
  Table t;
  t.columns = {{"rank", "#", true},
               {"instance", "INSTANCE"},
               {"count", "N", true},
               {"accelerators", "ACC", true, true},
               {"placement", "PLACEMENT"},
               {"generation_s", "GEN S", true},
               {"scoring_s", "SCORE S", true, true},
               {"training_s", "TRAIN S", true},
               {"weight_sync_s", "SYNC S", true, true},
               {"step_time_s", "STEP S", true},
               {"generation_share", "GEN", true, true},
               {"total_hours", "TIME", true},
               {"ranked_cost_usd", "COST", true},
               {"channel", "VIA"},
               {"on_demand_cost_usd", "ON-DEMAND", true, true},
               {"spot_cost_usd", "SPOT", true, true},
               {"setup_hours", "SETUP", true, true},
               {"capacity", "CAPACITY", false, true},
               {"pareto", "PARETO", false, true},
               {"pick", "PICK", false, true}};
  for (auto& c : channel_columns()) t.columns.push_back(c);
  for (auto& c : provenance_columns(false, false)) t.columns.push_back(c);
  int rank = 0;
  for (const auto& r : rec.rows) {
    if (rank >= ctx.request->top) break;
    ++rank;
    const RlEstimate& e = *r.rl;
    t.rows.push_back({integer(rank), text(r.instance->name), integer(r.count), integer(r.count * r.instance->accelerator_count),
                      text(rl_placement_text(e)), num(e.generation.seconds, 1), num(e.scoring.seconds, 1), num(e.training.seconds, 1),
                      num(e.weight_sync_s, 1), num(e.step_time_s, 1), pct(e.generation_share()), hours_cell(r.estimate.total_hours),
                      money(r.ranked_cost_usd), channel_cell(r), money(r.on_demand_cost_usd), spot_money(r, r.spot_cost_usd),
                      hours_cell(r.estimate.setup.hours()), capacity_cell(r), {r.pareto ? "yes" : "", r.pareto},
                      pick_cell(rec.pick && r.instance == rec.pick->instance && r.count == rec.pick->count)});
    append_channel(t.rows.back(), r, *ctx.request);
    append_provenance(t.rows.back(), *r.instance, ctx.request->region, "", std::nullopt, r.channel);
  }
  return t;
}

}  // namespace report_detail

namespace {

ordered_json rl_estimate_json(const Catalog& catalog, const RlEstimateContext& ctx) {
  const RecommendRow& r = *ctx.row;
  const RlEstimate& e = *r.rl;
  const JobOverheads& su = r.estimate.setup;
  ordered_json j = envelope(catalog, "estimate");
  j["model"] = model_json(*ctx.model);
  j["workload"] = workload_json(ctx.workload->update);
  j["workload"]["task"] = "rl";
  j["workload"]["policy_update"] = ctx.workload->update.task == Task::lora ? "lora" : "full";
  j["rl_workload"] = rl_workload_json(*ctx.workload);
  ordered_json a = ctx.model->assumptions;
  for (const auto& x : ctx.workload->assumptions) a.push_back(x);
  j["assumptions"] = a;
  j["instance"] = r.instance->name;
  j["count"] = r.count;
  j["accelerators"] = ctx.cluster->accelerators();
  j["region"] = ctx.region;
  j["precision"] = to_string(e.trainer.precision);
  j["fits"] = true;
  j["layout"] = layout_json(e.trainer.layout);
  j["memory"] = {{"per_accelerator_gb", sig6(e.trainer.memory.total_gb())},
                 {"capacity_gb", sig6(e.trainer.memory.capacity_gb)},
                 {"note", "the policy update's peak; while generating, the KV cache uses what the resident training state leaves"}};
  j["rl"] = rl_json(e);
  j["accuracy"] = accuracy_json(ctx.cluster->accelerator->name, "rl");
  j["step_time_s"] = sig6(e.step_time_s);
  j["time"] = {{"steps", sig6(ctx.workload->steps)},
               {"train_hours", sig6(r.estimate.train_hours)},
               {"setup_hours", sig6(su.hours())},
               {"setup", {{"provision_s", sig6(su.provision_s)}, {"image_pull_s", sig6(su.image_pull_s)},
                          {"weight_load_s", sig6(su.weight_load_s)}, {"communicator_init_s", sig6(su.communicator_init_s)},
                          {"neuron_compile_s", sig6(su.neuron_compile_s)}, {"final_checkpoint_s", sig6(su.final_checkpoint_s)}}},
               {"total_hours", sig6(r.estimate.total_hours)}};
  j["cost"] = {{"on_demand_usd_per_hour_per_instance", r.on_demand_usd_per_hour ? ordered_json(rate_json_value(*r.on_demand_usd_per_hour)) : ordered_json(nullptr)},
               {"spot_usd_per_hour_per_instance", r.spot_usd_per_hour ? ordered_json(rate_json_value(*r.spot_usd_per_hour)) : ordered_json(nullptr)},
               {"on_demand_usd", money_json(r.on_demand_cost_usd)},
               {"spot_usd", money_json(r.spot_cost_usd)},
               {"spot_note", "spot_usd assumes no interruptions; `gpuadvisor cost` gives the expected cost with reclaims and failures"}};
  return j;
}

std::string stage_unit(const RlStage& s, const char* what) {
  return fmt::format("s  ({:.0f} {} tokens/s per accelerator, {} accelerators)", s.tokens_per_second_per_accelerator(), what, s.accelerators);
}

}  // namespace

std::string render_rl_estimate(const Catalog& catalog, const RlEstimateContext& ctx, const RenderOptions& o) {
  if (o.format == Format::json) return json_text(rl_estimate_json(catalog, ctx), 2) + "\n";
  const RecommendRow& r = *ctx.row;
  const RlEstimate& e = *r.rl;
  const RlWorkload& w = *ctx.workload;
  Table t = items_table();
  const ItemAdder add = item_adder(t);
  add("config", "instance", text(fmt::format("{} x {}", r.count, r.instance->name)), "");
  add("config", "accelerators", integer(ctx.cluster->accelerators()), ctx.cluster->accelerator->name);
  add("config", "algorithm", text(std::string(to_string(w.algorithm))), w.reward_model ? "reward model " + w.reward_model->name : "rule reward");
  add("config", "sequences per step", integer(w.sequences_per_step()),
      fmt::format("{} prompts x {} samples", w.prompts_per_step, w.samples_per_prompt));
  add("config", "placement", text(rl_placement_text(e)),
      e.placement == RlPlacement::split ? fmt::format("{} accelerators generate, {} train", e.rollout_accelerators, e.trainer_accelerators)
                                        : "the same accelerators generate and train");
  if (w.generates()) {
    add("generation", "generators x tp", text(fmt::format("{} x tp {}", e.generators, e.rollout_layout.tp)), "");
    add("generation", "sequences per generator", integer(e.sequences_per_generator), fmt::format("{} in flight", e.batch));
    add("generation", "decode step", num(e.decode_step_s * 1e3, 1), "ms at that batch");
    if (e.resident_state_gb > 0)
      add("generation", "training state beside it", num(e.resident_state_gb, 1), e.offloaded ? "GB (offloaded to host)" : "GB per accelerator");
    add("generation", "time", num(e.generation.seconds, 1),
        stage_unit(e.generation, "generated") + (e.straggler_bound ? "; the longest response sets it" : ""));
  }
  add("scoring", "forward passes", text(fmt::format("{}", fmt::join(e.scoring_models, ", "))), "");
  add("scoring", "time", num(e.scoring.seconds, 1), stage_unit(e.scoring, "scored"));
  add("training", "update layout", text(layout_text(e.trainer.layout)), fmt::format("MFU {:.0f}%", e.trainer.mfu * 100));
  add("training", "time", num(e.training.seconds, 1), stage_unit(e.training, "trained"));
  if (w.generates()) add("weight sync", "time", num(e.weight_sync_s, 1), e.offloaded ? "s (with the state's round trip to host)" : "s");
  add("step", "step time", num(e.step_time_s, 1),
      e.async ? "s = max(generation, scoring + training) + sync" : "s = generation + scoring + training + sync");
  if (w.generates()) add("step", "generation share", pct(e.generation_share()), "of the step");
  add("time", "steps", num(w.steps, 0), "");
  add("time", "training (steps x step)", hours_cell(r.estimate.train_hours), "");
  add("time", "setup (provision, image, weights, start-up, checkpoint)", hours_cell(r.estimate.setup.hours()), "");
  add("time", "total", hours_cell(r.estimate.total_hours), "");
  add("cost", "on-demand", money(r.on_demand_cost_usd), "USD");
  add("cost", "spot (no interruptions)", money(r.spot_cost_usd), "USD");
  return render_items(std::move(t), catalog, o, accuracy_line(ctx.cluster->accelerator->name, "rl"), e.notes);
}

}  // namespace gpuadvisor

namespace gpuadvisor {

std::string explain_rl(const RlEstimateContext& ctx) {
  const RlEstimate& e = *ctx.row->rl;
  const RlWorkload& w = *ctx.workload;
  std::string out = "How the step is computed (docs/methodology.md §RL post-training):\n";
  out += fmt::format("  sequences per step S = {} prompts x {} samples = {}; tokens T = S x ({:.0f} + {:.0f}) = {:.4g}\n", w.prompts_per_step,
                     w.samples_per_prompt, w.sequences_per_step(), w.prompt_tokens, w.response_tokens, w.tokens_per_step());
  if (w.generates()) {
    out += fmt::format("  generation = n x prefill + max(n x mean / B x (t(B) + h), max_response x (t(b_tail) + h))\n");
    out += fmt::format("             n = ceil(S / {} generators) = {}, B = {} in flight, t(B) + h = {:.1f} ms (h = {:.0f} ms host time per step)\n",
                       e.generators, e.sequences_per_generator, e.batch, e.decode_step_s * 1e3, kRolloutStepOverheadS * 1e3);
    out += fmt::format("             = {:.1f} s ({}-bound)\n", e.generation.seconds, e.straggler_bound ? "straggler" : "throughput");
  }
  out += fmt::format("  scoring = T x forward FLOPs per token x {} models ({}) / ({} accelerators x peak x MFU {:.0f}%) = {:.1f} s\n",
                     e.scoring_models.size(), fmt::join(e.scoring_models, ", "), e.scoring.accelerators, e.trainer.mfu * 100, e.scoring.seconds);
  out += fmt::format("  training = T / {:.0f} tokens/s (update layout {}){} = {:.1f} s\n", e.trainer.tokens_per_second,
                     layout_text(e.trainer.layout), e.critic_trainer ? " + the critic's update" : "", e.training.seconds);
  if (w.generates())
    out += fmt::format("  weight sync = weights over EFA and NVLink{}{} = {:.1f} s\n",
                       e.placement == RlPlacement::colocated ? fmt::format(" + the engine's load at {:.0f} GB/s", kColocatedRefitGbPerS) : "",
                       e.offloaded ? " + the state's round trip to host" : "", e.weight_sync_s);
  out += fmt::format("  step = {} = {:.1f} s; run = {:.0f} steps x step + setup = {}\n",
                     e.async ? "max(generation, scoring + training) + sync" : "generation + scoring + training + sync", e.step_time_s, w.steps,
                     format_duration(ctx.row->estimate.total_hours));
  return out;
}

}  // namespace gpuadvisor
