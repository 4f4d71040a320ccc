// libFuzzer target: the same bytes as each of the four price-file kinds;
// the import either returns an overlay that loads or throws InputError.
#include <cstdint>
#include <string>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/catalog/price_import.hpp"

using namespace gpuadvisor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const CatalogSource base{"<embedded catalog>", std::string(embedded_catalog_text())};
  const PriceFile f{"fuzz.json", std::string(reinterpret_cast<const char*>(data), size)};
  for (int kind = 0; kind < 4; ++kind) {
    ImportInputs in;
    in.as_of = "2026-11-29";
    (kind == 0 ? in.offer_files : kind == 1 ? in.savings_plan_files : kind == 2 ? in.spot_histories : in.spot_advisors).push_back(f);
    try {
      import_prices(base, {}, in);
    } catch (const InputError&) {
    }
  }
  return 0;
}
