#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/base/errors.hpp"

using namespace gpuadvisor;

namespace {
const Catalog& embedded() {
  static const Catalog c = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  return c;
}
std::string data(const std::string& name) { return std::string(GPUADVISOR_TEST_DATA) + "/" + name; }
}  // namespace

TEST_CASE("the product specification's per-GPU figures hold exactly") {
  const Catalog& c = embedded();
  struct Spec {
    const char* name;
    double bf16, fp8;
    std::optional<double> fp4;
    const char* vendor_memory;
    double bandwidth;
  };
  for (const Spec& s : {Spec{"H100-SXM", 989.5, 1979, std::nullopt, "80 GB HBM3", 3350},
                        Spec{"H200", 989.5, 1979, std::nullopt, "141 GB HBM3e", 4800},
                        Spec{"B200", 2250, 4500, 9000, "180 GB HBM3e", 8000},
                        Spec{"B300", 2250, 4500, 13500, "288 GB HBM3e", 8000}}) {
    INFO(s.name);
    const Accelerator* a = c.find_accelerator(s.name);
    REQUIRE(a);
    CHECK(a->tflops(Precision::bf16) == s.bf16);
    CHECK(a->tflops(Precision::fp8) == s.fp8);
    CHECK(a->tflops(Precision::fp4) == s.fp4);
    CHECK(a->memory_vendor_figure == s.vendor_memory);
    CHECK(a->memory_bandwidth_gb_per_s == s.bandwidth);
  }
  // Where EC2 reports usable memory differently, both are kept.
  CHECK(c.find_accelerator("B200")->memory_usable_gib == 179);
  CHECK(c.find_accelerator("B300")->memory_usable_gib == 268);
  CHECK(c.find_accelerator("H100-SXM")->memory_usable_gib == 80);
  // A10G is not the A10: 70 dense FP16 TFLOPS.
  CHECK(c.find_accelerator("A10G")->tflops(Precision::fp16) == 70);
  // Trainium2: 96 GiB used, the EC2-reported 512 kept.
  CHECK(c.find_accelerator("Trainium2")->memory_usable_gib == 96);
  CHECK(c.find_accelerator("Trainium2")->memory_ec2_reported_gib == 512);
}

TEST_CASE("every required family and size is present") {
  const Catalog& c = embedded();
  std::set<std::string> families;
  for (const auto& i : c.instances) families.insert(i.family);
  for (const char* f : {"g4dn", "g5", "g6", "g6e", "inf2", "trn1", "trn1n", "trn2", "p3", "p3dn", "p4d", "p4de", "p5", "p5e",
                        "p5en", "p6-b200", "p6-b300", "p6e-gb200"}) {
    INFO(f);
    CHECK(families.count(f) == 1);
  }
  CHECK(c.find_instance("p5.4xlarge"));
  CHECK(c.find_instance("p5.48xlarge"));
  CHECK(c.find_instance("p6e-gb200.36xlarge")->purchase == "ultraserver_capacity_blocks");
  int g5_sizes = 0;
  for (const auto& i : c.instances) g5_sizes += i.family == "g5";
  CHECK(g5_sizes == 8);
}

TEST_CASE("every instance has a dated, sourced price or an explicit reason, in us-east-1 and us-west-2") {
  const Catalog& c = embedded();
  for (const auto& i : c.instances) {
    for (const char* region : {"us-east-1", "us-west-2"}) {
      INFO(i.name << " " << region);
      const RegionPrices* rp = i.prices_in(region);
      REQUIRE(rp);
      for (const PriceQuote* q : {&rp->on_demand, &rp->spot}) {
        if (q->usd_per_hour) {
          CHECK(*q->usd_per_hour > 0);
          CHECK(days_between("2025-06-01", q->as_of).value_or(-1) >= 0);  // after the June 2025 cut
          CHECK(c.sources.count(q->source) == 1);
        } else {
          CHECK((q->status == "not_listed" || q->status == "not_captured"));
          CHECK_FALSE(q->note.empty());
        }
      }
    }
  }
  // The June 2025 reductions are reflected, not the old figures.
  CHECK(*c.find_instance("p5.48xlarge")->prices_in("us-east-1")->on_demand.usd_per_hour == 55.04);
  CHECK(*c.find_instance("p4d.24xlarge")->prices_in("us-east-1")->on_demand.usd_per_hour == Approx(21.957642));
  CHECK_FALSE(c.find_instance("p6e-gb200.36xlarge")->prices_in("us-east-1")->on_demand.usd_per_hour);
}

TEST_CASE("every accelerator figure has a known source") {
  const Catalog& c = embedded();
  for (const auto& a : c.accelerators) {
    INFO(a.name);
    for (const auto* list : {&a.memory_sources, &a.memory_bandwidth_sources, &a.dense_tflops_sources, &a.link_sources}) {
      CHECK_FALSE(list->empty());
      for (const auto& s : *list) CHECK(c.sources.count(s) == 1);
    }
    // The vector (FP32) figure is optional; when given it is sourced.
    if (a.vector_fp32_tflops) CHECK_FALSE(a.vector_tflops_sources.empty());
    for (const auto& s : a.vector_tflops_sources) CHECK(c.sources.count(s) == 1);
  }
}

TEST_CASE("malformed catalogs are refused naming file, entry and field") {
  struct Case {
    const char* file;
    std::vector<const char*> says;
  };
  const std::vector<Case> cases = {
      {"bad_missing_field.json", {"instances[0] 'test.8x'", "'vcpus'", "missing"}},
      {"bad_negative_price.json", {"'test.8x'", "usd_per_hour", "> 0"}},
      {"bad_unknown_accelerator.json", {"'accelerator'", "NoSuchGPU"}},
      {"bad_schema_version.json", {"schema_version", "99"}},
      {"bad_unknown_source.json", {"accelerators[0] 'TestGPU'", "unknown source key 'NOPE'"}},
      {"bad_duplicate_instance.json", {"duplicate instance 'test.8x'"}},
      {"bad_wrong_type.json", {"'vcpus'", "positive integer", "\"many\""}},
      {"bad_price_without_reason.json", {"on_demand", "'note'", "must say why"}},
      {"bad_price_date.json", {"'as_of'", "YYYY-MM-DD"}},
      {"bad_unknown_precision.json", {"'fp7'", "unknown precision"}},
      {"bad_vector_tflops.json", {"'TestGPU' vector_tflops", "'fp32'"}},
      {"bad_nvlink_domain.json", {"'test.8x'", "'nvlink_domain_accelerators'", "not a whole number of instances of 8"}},
      {"bad_same_silicon.json", {"accelerators[0] 'TestGPU'", "'same_silicon_as'", "'NoSuchSilicon' is not another accelerator"}},
      {"bad_sequence_layer_us.json", {"'TestGPU' efficiency", "'sequence_layer_us'", "at most 1000 us"}},
      {"bad_empty.json", {"empty"}},
      {"bad_truncated.json", {"not valid JSON"}},
      {"bad_not_object.json", {"JSON object"}},
  };
  for (const auto& k : cases) {
    INFO(k.file);
    CatalogSource src = read_catalog_file(data(k.file));
    try {
      load_catalog(src);
      FAIL("accepted a malformed catalog");
    } catch (const InputError& e) {
      std::string msg = e.what();
      CHECK(msg.find(k.file) != std::string::npos);
      for (const char* s : k.says) {
        INFO(msg);
        CHECK(msg.find(s) != std::string::npos);
      }
    }
  }
  CHECK_THROWS_WITH(read_catalog_file(data("no_such_file.json")), Catch::Contains("cannot open"));
}

TEST_CASE("catalog overlays (--catalog-add) override fields and add entries") {
  CatalogSource base{"<embedded catalog>", std::string(embedded_catalog_text())};
  Catalog c = load_catalog(base, {read_catalog_file(data("overlay_team.json"))});
  const Instance* p5 = c.find_instance("p5.48xlarge");
  REQUIRE(p5);
  CHECK(*p5->prices_in("us-east-1")->on_demand.usd_per_hour == 40.0);
  CHECK(p5->prices_in("us-east-1")->on_demand.source == "TEAM");
  // Fields the overlay does not give are kept: spot, specs, other regions.
  CHECK(*p5->prices_in("us-east-1")->spot.usd_per_hour == Approx(17.63));
  CHECK(p5->accelerator_count == 8);
  CHECK(*p5->prices_in("us-west-2")->on_demand.usd_per_hour == 55.04);
  const Instance* dgx = c.find_instance("dgx-h100");
  REQUIRE(dgx);
  CHECK(dgx->accelerator_name == "H100-SXM");
  CHECK(c.instances.size() == load_catalog(base).instances.size() + 1);
  CHECK_THROWS_WITH(load_catalog(base, {read_catalog_file(data("bad_overlay_no_name.json"))}), Catch::Contains("needs a name"));
  CHECK_THROWS_WITH(load_catalog(base, {read_catalog_file(data("bad_overlay_unknown_key.json"))}), Catch::Contains("not allowed in an overlay"));
  // An overlay's error names its own file and its index there, not the merged list's (a hostile review read "instances[47]").
  const CatalogSource negative{"team.json", R"({"instances": [{"name": "p5.48xlarge", "prices": {"us-east-1": {"on_demand": )"
                                            R"({"usd_per_hour": -5, "as_of": "2026-11-01", "source": "AWS-PRICING"}}}}]})"};
  CHECK_THROWS_WITH(load_catalog(base, {negative}), Catch::Contains("team.json: instances[0] 'p5.48xlarge'"));
}

TEST_CASE("suggestions for unknown names and date arithmetic") {
  auto near = embedded().nearest_instance_names("p5.48xlarg");
  REQUIRE_FALSE(near.empty());
  CHECK(near.front() == "p5.48xlarge");
  CHECK(days_between("2026-01-01", "2026-03-01") == 59);
  CHECK(days_between("2024-02-28", "2024-03-01") == 2);
  CHECK_FALSE(days_between("2026-13-01", "2026-01-01"));
}

TEST_CASE("the embedded catalog passes a user file's checks, and the built-in path reads the same catalog without them") {
  // The built-in path skips the duplicate-key and depth checks (start-up time):
  // this is where the embedded text still gets them.
  const Catalog checked = load_catalog({"<embedded catalog>", std::string(embedded_catalog_text())});
  const Catalog built_in = load_catalog(embedded_catalog_source());
  REQUIRE(embedded_catalog_source().built_in);
  CHECK(built_in.instances.size() == checked.instances.size());
  CHECK(built_in.accelerators.size() == checked.accelerators.size());
  CHECK(built_in.catalog_version == checked.catalog_version);
  CHECK(built_in.prices_as_of == checked.prices_as_of);
  // A user's file with a key twice is still refused.
  std::string twice(embedded_catalog_text());
  twice.insert(twice.find('{') + 1, "\"catalog_version\": \"x\",");
  CHECK_THROWS_AS(load_catalog({"mine.json", twice}), InputError);
}
