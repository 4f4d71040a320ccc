// Layer validation: published measurements predicted and scored (cases, calibration, accuracy bands); includes search and below.
// The accuracy table (data/validation/accuracy.json) written from a
// leave-one-source-out run; physics/accuracy.hpp reads it back as bands.
#pragma once
#include <string>
#include <vector>

#include "gpuadvisor/validation/validation.hpp"

namespace gpuadvisor {

// The table's JSON text: per accelerator x task and per task, out of sample
// (RL cases, never fitted, as they are).
std::string accuracy_table_json(const LeaveOneSourceOut& l, const std::vector<CaseResult>& rl_results);

}  // namespace gpuadvisor
