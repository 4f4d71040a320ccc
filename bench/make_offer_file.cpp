// Writes an EC2 offer file in the AWS Price List schema at a chosen size, for
// the import test and benchmark (docs/catalog.md §Importing prices). Around
// four marker rates (the only plain Linux, shared-tenancy, used-capacity
// BoxUsage SKUs of catalog types in us-east-1) it puts their look-alikes:
// Windows, RHEL, SUSE, dedicated, SQL Server, BYOL, capacity reservations,
// a Capacity Block SKU and reserved terms; the rest is filler of other types.
//   gpuadvisor_make_offer FILE MEGABYTES
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Sku {
  std::string sku, type, region, os, tenancy, software, capacity, license, usage, market;
  std::string usd;  // on-demand (or Capacity Block) hourly rate
  bool reserved = false;
};

// The marker rates a test expects to come out exactly.
const std::vector<std::pair<std::string, std::string>> kMarkers = {
    {"p5.48xlarge", "55.0411000000"}, {"p4d.24xlarge", "21.9577000000"}, {"g5.xlarge", "1.0069000000"}, {"inf2.xlarge", "0.7587000000"}};

std::vector<Sku> marker_skus() {
  std::vector<Sku> out;
  int n = 0;
  for (const auto& [type, usd] : kMarkers) {
    auto add = [&](std::string os, std::string tenancy, std::string sw, std::string cap, std::string lic, std::string usage,
                   std::string market, std::string rate) {
      out.push_back({fmt::format("MARK{:04d}", n++), type, "us-east-1", os, tenancy, sw, cap, lic, usage + type, market, rate, false});
    };
    add("Linux", "Shared", "NA", "Used", "No License required", "BoxUsage:", "OnDemand", usd);
    out.back().reserved = true;
    add("Windows", "Shared", "NA", "Used", "No License required", "BoxUsage:", "OnDemand", "99.1000000000");
    add("RHEL", "Shared", "NA", "Used", "No License required", "BoxUsage:", "OnDemand", "98.2000000000");
    add("SUSE", "Shared", "NA", "Used", "No License required", "BoxUsage:", "OnDemand", "97.3000000000");
    add("Linux", "Dedicated", "NA", "Used", "No License required", "DedicatedUsage:", "OnDemand", "96.4000000000");
    add("Linux", "Shared", "SQL Std", "Used", "No License required", "BoxUsage:", "OnDemand", "95.5000000000");
    add("Linux", "Shared", "NA", "Used", "Bring your own license", "BoxUsage:", "OnDemand", "94.6000000000");
    add("Linux", "Shared", "NA", "UnusedCapacityReservation", "No License required", "UnusedBox:", "OnDemand", "93.7000000000");
    add("Linux", "Shared", "NA", "AllocatedCapacityReservation", "No License required", "Reservation:", "OnDemand", "92.8000000000");
    add("Linux", "Shared", "NA", "Used", "No License required", "CapacityBlock:", "CapacityBlock", "12.3400000000");
  }
  return out;
}

Sku filler(long i) {
  static const char* kTypes[] = {"m7i.large", "c7g.xlarge", "r6i.2xlarge", "t3.micro", "m6a.4xlarge", "x2idn.16xlarge"};
  static const char* kRegions[] = {"us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1", "eu-central-1"};
  static const char* kOs[] = {"Linux", "Windows", "RHEL", "SUSE"};
  return {fmt::format("FILL{:09d}", i), kTypes[i % 6], kRegions[(i / 6) % 5], kOs[(i / 30) % 4], "Shared", "NA", "Used",
          "No License required", std::string("BoxUsage:") + kTypes[i % 6], "OnDemand", fmt::format("{:.10f}", 0.01 + (i % 997) / 100.0), i % 3 == 0};
}

void write_product(std::FILE* f, const Sku& s, bool last) {
  fmt::print(f,
             "    \"{0}\": {{\"sku\": \"{0}\", \"productFamily\": \"Compute Instance\", \"attributes\": {{\"servicecode\": \"AmazonEC2\", "
             "\"location\": \"somewhere\", \"locationType\": \"AWS Region\", \"instanceType\": \"{1}\", \"currentGeneration\": \"Yes\", "
             "\"instanceFamily\": \"Accelerated Computing\", \"vcpu\": \"8\", \"memory\": \"32 GiB\", \"storage\": \"EBS only\", "
             "\"networkPerformance\": \"Up to 12500 Megabit\", \"processorArchitecture\": \"64-bit\", \"tenancy\": \"{2}\", "
             "\"operatingSystem\": \"{3}\", \"licenseModel\": \"{4}\", \"usagetype\": \"{5}\", \"operation\": \"RunInstances\", "
             "\"capacitystatus\": \"{6}\", \"preInstalledSw\": \"{7}\", \"regionCode\": \"{8}\", \"marketoption\": \"{9}\", "
             "\"servicename\": \"Amazon Elastic Compute Cloud\"}}}}{10}\n",
             s.sku, s.type, s.tenancy, s.os, s.license, s.usage, s.capacity, s.software, s.region, s.market, last ? "" : ",");
}

void write_on_demand(std::FILE* f, const Sku& s, bool last) {
  fmt::print(f,
             "      \"{0}\": {{\"{0}.JRTCKXETXF\": {{\"offerTermCode\": \"JRTCKXETXF\", \"sku\": \"{0}\", \"effectiveDate\": "
             "\"2026-11-01T00:00:00Z\", \"priceDimensions\": {{\"{0}.JRTCKXETXF.6YS6EN2CT7\": {{\"rateCode\": \"{0}.JRTCKXETXF.6YS6EN2CT7\", "
             "\"description\": \"per Instance Hour\", \"beginRange\": \"0\", \"endRange\": \"Inf\", \"unit\": \"Hrs\", \"appliesTo\": [], "
             "\"pricePerUnit\": {{\"USD\": \"{1}\"}}}}}}, \"termAttributes\": {{}}}}}}{2}\n",
             s.sku, s.usd, last ? "" : ",");
}

void write_reserved(std::FILE* f, const Sku& s, bool last) {
  fmt::print(f,
             "      \"{0}\": {{\"{0}.6QCMYABX3D\": {{\"offerTermCode\": \"6QCMYABX3D\", \"sku\": \"{0}\", \"effectiveDate\": "
             "\"2026-11-01T00:00:00Z\", \"priceDimensions\": {{\"{0}.6QCMYABX3D.2TG2D8R56U\": {{\"unit\": \"Quantity\", "
             "\"pricePerUnit\": {{\"USD\": \"8760.0000000000\"}}}}, \"{0}.6QCMYABX3D.6YS6EN2CT7\": {{\"unit\": \"Hrs\", "
             "\"pricePerUnit\": {{\"USD\": \"0.0000000000\"}}}}}}, \"termAttributes\": {{\"LeaseContractLength\": \"1yr\", "
             "\"OfferingClass\": \"standard\", \"PurchaseOption\": \"All Upfront\"}}}}}}{1}\n",
             s.sku, last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: gpuadvisor_make_offer FILE MEGABYTES\n");
    return 2;
  }
  const long megabytes = std::atol(argv[2]);
  if (megabytes < 1) {
    fmt::print(stderr, "MEGABYTES must be at least 1\n");
    return 2;
  }
  std::vector<Sku> skus = marker_skus();
  // About 1.32 KB per filler product with its terms.
  const long fillers = megabytes * 1000000 / 1320;
  std::FILE* f = std::fopen(argv[1], "w");
  if (!f) {
    fmt::print(stderr, "{}: cannot write\n", argv[1]);
    return 2;
  }
  fmt::print(f, "{{\n  \"formatVersion\": \"v1.0\",\n  \"disclaimer\": \"generated by gpuadvisor_make_offer\",\n  \"offerCode\": \"AmazonEC2\",\n"
                "  \"version\": \"20261101000000\",\n  \"publicationDate\": \"2026-11-01T00:00:00Z\",\n  \"products\": {{\n");
  const long total = static_cast<long>(skus.size()) + fillers;
  auto sku_at = [&](long i) { return i < static_cast<long>(skus.size()) ? skus[i] : filler(i - static_cast<long>(skus.size())); };
  for (long i = 0; i < total; ++i) write_product(f, sku_at(i), i + 1 == total);
  fmt::print(f, "  }},\n  \"terms\": {{\n    \"OnDemand\": {{\n");
  for (long i = 0; i < total; ++i) write_on_demand(f, sku_at(i), i + 1 == total);
  fmt::print(f, "    }},\n    \"Reserved\": {{\n");
  std::vector<long> reserved;
  for (long i = 0; i < total; ++i)
    if (sku_at(i).reserved) reserved.push_back(i);
  for (size_t k = 0; k < reserved.size(); ++k) write_reserved(f, sku_at(reserved[k]), k + 1 == reserved.size());
  fmt::print(f, "    }}\n  }}\n}}\n");
  return std::fclose(f) == 0 ? 0 : 1;
}
