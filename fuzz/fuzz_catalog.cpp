// libFuzzer target: a catalog document, and the same text as an overlay on the
// built-in catalog, either load or throw InputError.
#include <cstdint>
#include <string>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/base/errors.hpp"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  try {
    load_catalog({"fuzz.json", s});
  } catch (const InputError&) {
  }
  try {
    load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())}, {{"overlay.json", s}});
  } catch (const InputError&) {
  }
  return 0;
}
