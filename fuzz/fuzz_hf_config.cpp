// libFuzzer target: a Hugging Face config.json either gives a valid model with
// finite, positive parameter counts or throws InputError.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/workload/model.hpp"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  try {
    ModelSpec m = model_from_hf_config_text(s, "config.json", warnings);
    const double total = m.total_params(), active = m.active_params();
    if (!(total > 0) || !std::isfinite(total) || !(active > 0) || active > total * (1 + 1e-12)) std::abort();
  } catch (const InputError&) {
  }
  return 0;
}
