// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
// Capacity realism (docs/methodology.md §Capacity): whether a pick's instance
// count can plausibly be started on demand, and what a Capacity Block for it
// would be and cost.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/catalog/pricing.hpp"

namespace gpuadvisor {

// EC2 Capacity Blocks for ML (AWS EC2 User Guide): 1-14 days in 1-day steps,
// then 7-day steps up to 182 days; up to 64 instances a block, 256 across blocks.
inline constexpr int kCapacityBlockMaxInstances = 64;
inline constexpr int kCapacityBlocksMaxInstances = 256;
inline constexpr int kCapacityBlockMaxDays = 182;

// Days of the shortest block that covers `hours`; nullopt past 182 days.
std::optional<int> capacity_block_days(double hours);

// How a job's instances are bought (docs/methodology.md §Channels): each
// option is ranked at the cost of the channel that can deliver it.
enum class Channel { on_demand, spot, capacity_block, reservation, savings_1y, savings_3y };
// "on-demand", "spot", "capacity-block", "reservation", "savings-1y", "savings-3y".
std::string_view to_string(Channel c);

// The most instances of a type one usually holds on spot at once: the
// on-demand count (a judgement: spot is the spare capacity on-demand draws
// on, and a synchronous job needs every node at once); empty where unknown.
std::optional<int> usual_spot_max_instances(const Instance& inst);
// Whether `count` instances can be had on spot: sold on spot and within the usual count.
bool spot_offered(const Instance& inst, int count);
// More instances than one usually starts on demand in this family.
bool beyond_usual_on_demand(const Instance& inst, int count);

// The EC2 on-demand vCPU quota a family's instances draw on (Service Quotas,
// service ec2): "Running On-Demand P instances" (L-417A185B), "... G and VT
// instances" (L-DB2E81BA), "... Inf instances" (L-1945791B), "... Trn
// instances" (L-2C3B7624). `key` is what --quota-vcpus names it by.
struct VcpuQuota {
  std::string key, name, code;
};
std::optional<VcpuQuota> on_demand_vcpu_quota(const Instance& inst);

struct CapacityAdvice {
  bool beyond_on_demand = false;     // more instances than one plausibly gets on demand
  std::optional<int> block_days;     // a Capacity Block that covers the run
  int blocks = 0;                    // blocks of at most 64 instances
  std::optional<double> block_cost_usd;  // rate x instances x block days x 24, where a rate is known
  double margin = 0;                 // the block covers hours x (1 + margin): the prediction's p90 error
  bool limit_unknown = false;        // more than one instance of a family with no known on-demand limit
  bool on_spot = false;              // priced on spot
  bool spot_scarce = false;          // on spot, more instances than one usually gets at once
  bool blocks_only = false;          // the type is sold through Capacity Blocks only (not on demand or spot)
  std::string note;                  // one sentence for a person; empty when nothing to say
  // The tables' CAPACITY cell: "capacity blocks only", "capacity block/reservation",
  // "spot, scarce", "spot", "on demand, limit unknown" or "on demand".
  std::string column() const;
};

// For `count` instances for `hours` priced under `pricing` (on-demand and
// best are the prices that assume instances can be started at will). A
// Capacity Block ends at a fixed time, so it is sized to hours x (1 +
// margin), margin the prediction's p90 error (0 for hours the user gave).
CapacityAdvice capacity_advice(const Instance& inst, int count, double hours, std::string_view region, Pricing pricing, double margin = 0);
// A row ranked at a Capacity Block within the usual on-demand count (no known
// limit and the block cheaper, or no on-demand rate): the note says what to buy.
// `quota_exceeded`: why the account's on-demand quota leaves the option out
// (quota_exceeded_text), or empty: then the block is bought as the cheaper.
void advise_block_instead_of_on_demand(CapacityAdvice& a, const Instance& inst, int count, std::string_view region, bool on_demand_priced,
                                       std::string_view quota_exceeded = {});
// For a standing service, which runs without an end: the advice is an
// On-Demand Capacity Reservation (any duration), never a Capacity Block,
// which ends after 1-182 days.
CapacityAdvice service_capacity_advice(const Instance& inst, int count, Pricing pricing);

}  // namespace gpuadvisor
