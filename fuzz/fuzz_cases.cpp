// libFuzzer target: a validation/calibration cases file either parses into
// cases or throws InputError naming the case and the field.
#include <cstdint>
#include <string>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/validation/validation.hpp"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    read_cases("fuzz.json", std::string(reinterpret_cast<const char*>(data), size));
  } catch (const InputError&) {
  }
  return 0;
}
