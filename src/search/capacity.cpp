// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
#include "gpuadvisor/search/capacity.hpp"

#include <fmt/format.h>

#include <cmath>

#include "gpuadvisor/base/quantity.hpp"

namespace gpuadvisor {

std::optional<int> capacity_block_days(double hours) {
  const int days = std::max(1, static_cast<int>(std::ceil(hours / 24 - 1e-9)));
  if (days <= 14) return days;
  const int weekly = 14 + 7 * static_cast<int>(std::ceil((days - 14) / 7.0));
  if (weekly > kCapacityBlockMaxDays) return std::nullopt;
  return weekly;
}

std::string_view to_string(Channel c) {
  switch (c) {
    case Channel::on_demand: return "on-demand";
    case Channel::spot: return "spot";
    case Channel::capacity_block: return "capacity-block";
    case Channel::reservation: return "reservation";
    case Channel::savings_1y: return "savings-1y";
    case Channel::savings_3y: return "savings-3y";
  }
  return "on-demand";
}

std::optional<int> usual_spot_max_instances(const Instance& inst) { return inst.on_demand_max_instances; }

bool spot_offered(const Instance& inst, int count) {
  if (inst.purchase != "on_demand_and_spot") return false;
  const auto most = usual_spot_max_instances(inst);
  return !most || count <= *most;
}

std::optional<VcpuQuota> on_demand_vcpu_quota(const Instance& inst) {
  const std::string_view f = inst.family;
  if (f.rfind("trn", 0) == 0) return VcpuQuota{"trn", "Running On-Demand Trn instances", "L-2C3B7624"};
  if (f.rfind("inf", 0) == 0) return VcpuQuota{"inf", "Running On-Demand Inf instances", "L-1945791B"};
  if (f.rfind("p", 0) == 0) return VcpuQuota{"p", "Running On-Demand P instances", "L-417A185B"};
  if (f.rfind("g", 0) == 0) return VcpuQuota{"g", "Running On-Demand G and VT instances", "L-DB2E81BA"};
  return std::nullopt;
}

bool beyond_usual_on_demand(const Instance& inst, int count) {
  return inst.on_demand_max_instances && count > *inst.on_demand_max_instances;
}

namespace {

std::string block_text(const Instance& inst, int count, const CapacityAdvice& a, std::string_view region) {
  if (!inst.capacity_blocks) return "a reservation (Capacity Blocks do not sell it)";
  if (count > kCapacityBlocksMaxInstances)
    return fmt::format("a private reservation ({} instances is more than the {} Capacity Blocks sell across blocks)", count,
                       kCapacityBlocksMaxInstances);
  if (!a.block_days) return "a reservation (the run is longer than the 182 days a Capacity Block lasts)";
  std::string s = fmt::format("{} Capacity Block{} of {} day{}", a.blocks, a.blocks > 1 ? "s" : "", *a.block_days, *a.block_days > 1 ? "s" : "");
  const std::string margin =
      a.margin > 0 ? fmt::format("a block ends at a fixed time: sized to the prediction plus its p90 error, +{:.0f}%", a.margin * 100)
                   : std::string("a block ends at a fixed time");
  if (a.block_cost_usd) {
    const RegionPrices* rp = inst.prices_in(region);
    s += fmt::format(" (about ${} at ${:.2f}/h, a rate of {}; block rates move with demand, check the console; {})",
                     format_thousands(*a.block_cost_usd), *rp->capacity_block.usd_per_hour, rp->capacity_block.as_of, margin);
  } else {
    s += fmt::format(" (rate unknown here: see the Capacity Blocks console; {})", margin);
  }
  return s;
}

std::string unknown_limit_note(const Instance& inst, int count) {
  return fmt::format("no on-demand limit is known for {}: {} instances may be more than "
                     "the account can start at once (check the EC2 quota; {} holds them)",
                     inst.name, count, inst.capacity_blocks ? "a Capacity Block or a reservation" : "an On-Demand Capacity Reservation");
}

// Spot without a known usual count: a synchronous job runs only with every
// node, and nothing here says that many are there to be had at once.
std::string unknown_spot_count_note(const Instance& inst, int count) {
  return fmt::format("no usual count is known for {}: {} instances on spot at once may not be there to be had, and a synchronous job runs "
                     "only with every node (EC2's Spot placement score for {} x {} says how likely the request is to be filled; expect "
                     "partial fleets and waits)",
                     inst.name, count, count, inst.name);
}

// On-demand and best are the prices that assume instances can be started at will.
bool at_will(Pricing pricing) { return pricing == Pricing::on_demand || pricing == Pricing::best; }

// What every advice knows from the type, the count and the pricing alone.
CapacityAdvice base_advice(const Instance& inst, int count, Pricing pricing) {
  CapacityAdvice a;
  a.blocks_only = inst.purchase != "on_demand_and_spot";
  a.beyond_on_demand = at_will(pricing) && beyond_usual_on_demand(inst, count);
  a.limit_unknown = !inst.on_demand_max_instances && count > 1;
  a.on_spot = pricing == Pricing::spot;
  a.spot_scarce = a.on_spot && beyond_usual_on_demand(inst, count);
  return a;
}

}  // namespace

CapacityAdvice capacity_advice(const Instance& inst, int count, double hours, std::string_view region, Pricing pricing, double margin) {
  CapacityAdvice a = base_advice(inst, count, pricing);
  a.margin = margin;
  if (inst.capacity_blocks && count <= kCapacityBlocksMaxInstances) {
    a.block_days = capacity_block_days(hours * (1 + margin));
    a.blocks = (count + kCapacityBlockMaxInstances - 1) / kCapacityBlockMaxInstances;
    const RegionPrices* rp = inst.prices_in(region);
    if (a.block_days && rp && rp->capacity_block.usd_per_hour)
      a.block_cost_usd = *rp->capacity_block.usd_per_hour * count * *a.block_days * 24;
  }
  if (a.blocks_only)
    a.note = fmt::format("{} is sold through Capacity Blocks only, not on demand or spot: buy {}", inst.name, block_text(inst, count, a, region));
  else if (a.beyond_on_demand)
    a.note = fmt::format("{} x {} is more than one can usually start on demand (about {}): buy {}", count, inst.name,
                         *inst.on_demand_max_instances, block_text(inst, count, a, region));
  else if (a.limit_unknown && at_will(pricing))
    a.note = unknown_limit_note(inst, count);
  else if (a.spot_scarce)
    a.note = fmt::format("{} x {} on spot: spot capacity of this family is scarce too (about {} at once is usual); expect partial "
                         "fleets and waits, or buy {}", count, inst.name, *inst.on_demand_max_instances, block_text(inst, count, a, region));
  else if (a.limit_unknown && a.on_spot)
    a.note = unknown_spot_count_note(inst, count);
  return a;
}

void advise_block_instead_of_on_demand(CapacityAdvice& a, const Instance& inst, int count, std::string_view region, bool on_demand_priced,
                                       std::string_view quota_exceeded) {
  const std::string buy = block_text(inst, count, a, region);
  if (!quota_exceeded.empty())
    a.note = fmt::format("{} x {} on demand {}; --quota-vcpus does not limit Capacity Blocks: buy {}", count, inst.name, quota_exceeded, buy);
  else if (!on_demand_priced)
    a.note = fmt::format("{} has no on-demand rate in {} in this catalog: buy {}", inst.name, region, buy);
  else if (a.limit_unknown)
    a.note = fmt::format("no on-demand limit is known for {}, and {} instance{} held by Capacity Blocks cost less than on demand: buy {}", inst.name,
                         count, count > 1 ? "s" : "", buy);
  else
    a.note = fmt::format("{} x {} cost less in Capacity Blocks than on demand: buy {}", count, inst.name, buy);
}

CapacityAdvice service_capacity_advice(const Instance& inst, int count, Pricing pricing) {
  CapacityAdvice a = base_advice(inst, count, pricing);
  const std::string reserve = "an On-Demand Capacity Reservation for them (any duration, billed at the on-demand or Savings Plan rate; "
                              "a Capacity Block ends after at most 182 days)";
  if (a.blocks_only)
    a.note = fmt::format("{} is sold through Capacity Blocks only, not on demand or spot: a standing service renews blocks of at most 182 "
                         "days",
                         inst.name);
  else if (a.beyond_on_demand)
    a.note = fmt::format("{} x {} is more than one can usually start on demand (about {}): a standing service needs {}", count,
                         inst.name, *inst.on_demand_max_instances, reserve);
  else if (a.limit_unknown && at_will(pricing))
    a.note = unknown_limit_note(inst, count);
  else if (a.spot_scarce)
    a.note = fmt::format("{} x {} on spot: spot capacity of this family is scarce too (about {} at once is usual); expect reclaimed "
                         "replicas, or hold {}", count, inst.name, *inst.on_demand_max_instances, reserve);
  return a;
}

std::string CapacityAdvice::column() const {
  if (blocks_only) return "capacity blocks only";
  if (beyond_on_demand) return "capacity block/reservation";
  if (on_spot) return spot_scarce ? "spot, scarce" : "spot";
  return limit_unknown ? "on demand, limit unknown" : "on demand";
}

}  // namespace gpuadvisor
