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

// The bands of the simulated serving figures (data/validation/accuracy_at_load.json):
// the |error| of the cases measured under a load (clients or requests per
// second), per metric, per accelerator and over all. Out of sample only for
// cases the fit has never seen (data/validation/under_load.json): `validate
// --cases FILE --write-accuracy-at-load`.
std::string accuracy_at_load_json(const std::vector<CaseResult>& results, const std::string& cases_file);

}  // namespace gpuadvisor
